//! Agent names in entity types are model strings (`openai:gpt-4o-mini`, `ollama:qwen2.5:3b`,
//! `openai-compatible:my-model` with `--base-url`): the process's one `ModelRegistry`
//! (quarry-llm; `AgentRegistry` for the pipeline) builds one client per name on first use. This
//! file sets up the pipeline over it and checks a run's agents before work is queued.

use std::sync::Arc;

use quarry_core::ErrorCode;
use quarry_core::retrieval::Retriever;
use quarry_core::store::Store;
use quarry_llm::ModelRegistry;
use quarry_pipeline::{Pipeline, PipelineConfig};

use crate::args::{ModelArgs, QueueArgs};
use crate::config::Config;
use crate::failure::Failure;
use crate::model::{model_failure, registry};

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
    queue: &QueueArgs,
) -> Result<Pipeline, Failure> {
    let config = PipelineConfig {
        default_agent: models.default_model().map(str::to_owned),
        max_concurrency: models.settings().concurrency.max(1),
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
    file: &Config,
    queue: &QueueArgs,
) -> Result<(Pipeline, Arc<ModelRegistry>), Failure> {
    let registry = registry(args, file);
    let pipeline = pipeline(store, retriever, registry.clone(), queue)?;
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
            registry.client(&agent).map_err(model_failure)?;
        }
    }
    Ok(())
}
