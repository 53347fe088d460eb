//! Agent names in entity types are model strings (`openai:gpt-4o-mini`, `ollama:qwen2.5:3b`,
//! `openai-compatible:my-model` with `--base-url`); this registry builds one client per name on
//! first use, with keys and hosts from the environment like `--model` does.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use quarry_core::ErrorCode;
use quarry_core::retrieval::Retriever;
use quarry_core::store::Store;
use quarry_llm::build_client;
use quarry_pipeline::{AgentRegistry, Pipeline, PipelineConfig, ResolvedAgent};

use crate::args::{ModelArgs, QueueArgs};
use crate::failure::Failure;
use crate::model::{
    chosen_base_url, chosen_model, model_failure, model_headers, parse_model, provider_settings,
};

pub struct ModelRegistry {
    base_url: Option<String>,
    headers: Vec<(String, String)>,
    retries: u32,
    concurrency: usize,
    local: quarry_llm::LocalSettings,
    /// Each agent name's client, or why it cannot be built (kept, so it is said once).
    built: Mutex<HashMap<String, Result<ResolvedAgent, String>>>,
}

impl ModelRegistry {
    pub fn new(args: &ModelArgs) -> Self {
        ModelRegistry {
            base_url: chosen_base_url(args),
            headers: model_headers(&args.headers),
            retries: args.retries,
            concurrency: args.concurrency,
            local: args.local_flags(),
            built: Mutex::new(HashMap::new()),
        }
    }

    fn build(&self, agent: &str) -> Result<ResolvedAgent, Failure> {
        let spec = parse_model(agent).map_err(model_failure)?;
        let settings = quarry_llm::ProviderSettings {
            headers: self.headers.clone(),
            local: crate::model::local_settings(&spec, self.local),
            ..provider_settings(&spec, self.base_url.clone(), self.retries, self.concurrency)
        };
        let client = build_client(&spec, settings).map_err(model_failure)?;
        Ok(ResolvedAgent {
            client,
            model: spec.model,
        })
    }

    /// The agent's client, built on first use; the failure says why it cannot be (a missing key
    /// names its variable).
    pub fn check(&self, agent: &str) -> Result<ResolvedAgent, Failure> {
        let mut built = self
            .built
            .lock()
            .expect("the registry lock is never poisoned");
        if let Some(Ok(resolved)) = built.get(agent) {
            return Ok(resolved.clone());
        }
        let outcome = self.build(agent);
        built.insert(
            agent.to_owned(),
            outcome
                .as_ref()
                .map(Clone::clone)
                .map_err(|failure| failure.to_string()),
        );
        outcome
    }
}

impl AgentRegistry for ModelRegistry {
    fn resolve(&self, agent: &str) -> Option<ResolvedAgent> {
        match self.check(agent) {
            Ok(resolved) => Some(resolved),
            Err(failure) => {
                tracing::warn!(agent, "cannot use agent: {failure}");
                None
            }
        }
    }
}

/// The entity pipeline over `store`, with agents built from model strings and the chosen model
/// (`--model` / `QUARRY_MODEL`) as the default agent.
///
/// `models` is the process's one registry: an agent named by several parts of the process (the
/// pipeline's default agent, the graph's model, the schema agent) gets one client, whose
/// `--concurrency` limit then holds for the whole process.
pub fn pipeline(
    store: Arc<dyn Store>,
    retriever: Arc<dyn Retriever>,
    models: Arc<ModelRegistry>,
    args: &ModelArgs,
    queue: &QueueArgs,
) -> Result<Pipeline, Failure> {
    let config = PipelineConfig {
        default_agent: chosen_model(args),
        max_concurrency: args.concurrency.max(1),
        max_attempts: i64::from(queue.task_attempts.max(1)),
        ..PipelineConfig::default()
    };
    let pipeline = Pipeline::new(store, retriever, models, config);
    Ok(match web_source()? {
        Some(web) => pipeline.with_web(web),
        None => pipeline,
    })
}

/// The `web` source from `QUARRY_WEB_SEARCH` and its settings (none when unset).
fn web_source() -> Result<Option<quarry_web::Web>, Failure> {
    let invalid = |message: String| Failure::coded(ErrorCode::Usage, message);
    let Some(config) = quarry_web::WebConfig::from_env().map_err(|error| invalid(error.0))? else {
        return Ok(None);
    };
    quarry_web::Web::from_config(&config)
        .map(Some)
        .map_err(|error| invalid(format!("cannot set up the web source: {error}")))
}

/// [`pipeline`], and its registry to check agents with before work is queued.
pub fn checked_pipeline(
    store: Arc<dyn Store>,
    retriever: Arc<dyn Retriever>,
    args: &ModelArgs,
    queue: &QueueArgs,
) -> Result<(Pipeline, Arc<ModelRegistry>), Failure> {
    let registry = Arc::new(ModelRegistry::new(args));
    let pipeline = pipeline(store, retriever, registry.clone(), args, queue)?;
    Ok((pipeline, registry))
}

/// Fails at once, before anything is queued, when an agent that would extract one of `fields`
/// of the entity (every field when `None`) cannot be used from here: a missing API key names
/// its variable, a provider without its `--base-url` is a usage error. Fields a person answers
/// need no agent.
pub async fn check_agents(
    pipeline: &Pipeline,
    registry: &ModelRegistry,
    project: &str,
    entity_id: &str,
    fields: Option<&[String]>,
) -> Result<(), Failure> {
    let store = pipeline.store();
    let Some(entity) = store
        .get_entity(project, entity_id)
        .await
        .map_err(crate::failure::storage)?
    else {
        return Ok(()); // the pipeline reports the missing entity itself
    };
    let Some(entity_type) = store
        .get_entity_type(project, &entity.entity_type)
        .await
        .map_err(crate::failure::storage)?
    else {
        return Ok(());
    };
    let chosen = entity_type.fields.iter().filter(|field| {
        !field.human_input && fields.is_none_or(|names| names.contains(&field.name))
    });
    for field in chosen {
        for agent in pipeline.agents_of(&entity_type, field) {
            registry.check(&agent)?;
        }
    }
    Ok(())
}
