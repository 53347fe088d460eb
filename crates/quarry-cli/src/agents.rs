//! Agent names in entity types are model strings (`openai:gpt-4o-mini`, `ollama:qwen2.5:3b`,
//! `openai-compatible:my-model` with `--base-url`); this registry builds one client per name on
//! first use, with keys and hosts from the environment like `--model` does.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use quarry_core::retrieval::Retriever;
use quarry_core::store::Store;
use quarry_llm::{ModelSpec, build_client};
use quarry_pipeline::{AgentRegistry, Pipeline, PipelineConfig, ResolvedAgent};

use crate::args::ModelArgs;
use crate::model::{chosen_base_url, chosen_model, model_headers, provider_settings};

pub struct ModelRegistry {
    base_url: Option<String>,
    headers: Vec<(String, String)>,
    retries: u32,
    concurrency: usize,
    built: Mutex<HashMap<String, Option<ResolvedAgent>>>,
}

impl ModelRegistry {
    pub fn new(args: &ModelArgs) -> Self {
        ModelRegistry {
            base_url: chosen_base_url(args),
            headers: model_headers(&args.headers),
            retries: args.retries,
            concurrency: args.concurrency,
            built: Mutex::new(HashMap::new()),
        }
    }

    fn build(&self, agent: &str) -> Option<ResolvedAgent> {
        let spec = ModelSpec::parse(agent).ok()?;
        let settings = quarry_llm::ProviderSettings {
            headers: self.headers.clone(),
            ..provider_settings(&spec, self.base_url.clone(), self.retries, self.concurrency)
        };
        let client = build_client(&spec, settings).ok()?;
        Some(ResolvedAgent {
            client,
            model: spec.model,
        })
    }
}

impl AgentRegistry for ModelRegistry {
    fn resolve(&self, agent: &str) -> Option<ResolvedAgent> {
        let mut built = self
            .built
            .lock()
            .expect("the registry lock is never poisoned");
        built
            .entry(agent.to_owned())
            .or_insert_with(|| self.build(agent))
            .clone()
    }
}

/// The entity pipeline over `store`, with agents built from model strings and the chosen model
/// (`--model` / `QUARRY_MODEL`) as the default agent.
pub fn pipeline(
    store: Arc<dyn Store>,
    retriever: Arc<dyn Retriever>,
    args: &ModelArgs,
) -> Pipeline {
    let config = PipelineConfig {
        default_agent: chosen_model(args),
        max_concurrency: args.concurrency.max(1),
        max_attempts: i64::from(args.task_attempts.max(1)),
        ..PipelineConfig::default()
    };
    Pipeline::new(store, retriever, Arc::new(ModelRegistry::new(args)), config)
}
