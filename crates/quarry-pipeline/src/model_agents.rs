//! The process's model registry ([`quarry_llm::ModelRegistry`]) as the pipeline's agents: an agent
//! named in an entity type is a model string, and resolves to that model's one client.

use quarry_llm::ModelRegistry;

use crate::run::{AgentRegistry, ResolvedAgent};

impl AgentRegistry for ModelRegistry {
    fn resolve(&self, agent: &str) -> Option<ResolvedAgent> {
        match self.client(agent) {
            Ok((client, spec)) => Some(ResolvedAgent {
                client,
                model: spec.model,
            }),
            Err(error) => {
                tracing::warn!(agent, "cannot use agent: {error}");
                None
            }
        }
    }
}
