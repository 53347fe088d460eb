//! Workflows: queue extraction for an entity, read its run and node states, retry failed
//! fields, and its history.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use quarry_core::ErrorCode;
use quarry_core::model::{
    AttemptRecord, ExtractionResult, ExtractionRun, FieldTask, NodeState, RunInstructions,
    TaskView, shown_state, waiting_on,
};
use quarry_pipeline::Pipeline;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

use crate::AppState;
use crate::api::entities::entity_in_project;
use crate::auth::{Caller, store};
use crate::error::{ApiError, pipeline_error};

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct RunRequest {
    /// Only these fields (default: every field not locked).
    #[serde(default)]
    pub fields: Option<Vec<String>>,
    /// Additional instructions for this run, given to the field prompts and recorded on the
    /// run: one text for every field, or an object of field name to text (`"*"`: every field).
    #[serde(default)]
    pub instructions: Option<TriggerInstructions>,
}

/// `instructions` of a trigger: for all fields, or per field.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum TriggerInstructions {
    /// For every field.
    All(String),
    /// Per field name; `"*"` for every field.
    PerField(std::collections::BTreeMap<String, String>),
}

impl TriggerInstructions {
    fn into_run_instructions(self) -> RunInstructions {
        match self {
            TriggerInstructions::All(text) => RunInstructions {
                all: Some(text),
                ..RunInstructions::default()
            },
            TriggerInstructions::PerField(mut fields) => RunInstructions {
                all: fields.remove("*"),
                fields,
            },
        }
    }
}

/// Triggering and retrying need this scope.
pub(crate) const TRIGGER_SCOPES: &[&str] = &["extraction:trigger"];
/// Reading a workflow's status needs one of these scopes.
pub(crate) const READ_SCOPES: &[&str] = &["entities:read", "extraction:trigger"];

/// `POST /v1/workflows/{entity_id}`: queues the entity's extraction and answers 202 at once
/// with the run and its field tasks; workers do the rest (`GET` shows progress).
pub async fn trigger(
    State(state): State<AppState>,
    caller: Caller,
    Path(entity_id): Path<String>,
    body: Bytes,
) -> Result<(StatusCode, Json<WorkflowStatus>), ApiError> {
    // The body is optional: none (or empty) runs every field.
    let request: RunRequest = read_optional_body(
        &body,
        "{\"fields\"?: [\"name\", ...], \"instructions\"?: \"text\" | {\"field\": \"text\"}}",
    )?;
    let status = trigger_workflow(&state, &caller, &entity_id, request).await?;
    Ok((StatusCode::ACCEPTED, Json(status)))
}

/// What `POST /v1/workflows/{entity_id}` and the MCP `trigger_workflow` tool share: the run
/// queued, the worker woken, the run and its nodes.
pub(crate) async fn trigger_workflow(
    state: &AppState,
    caller: &Caller,
    entity_id: &str,
    request: RunRequest,
) -> Result<WorkflowStatus, ApiError> {
    caller.require_scopes(TRIGGER_SCOPES)?;
    let instructions = request
        .instructions
        .map(TriggerInstructions::into_run_instructions)
        .unwrap_or_default();
    let (run, tasks) = pipeline(state)?
        .start_instructed(
            &caller.project_id,
            entity_id,
            request.fields,
            &caller.actor(),
            &instructions,
        )
        .await
        .map_err(pipeline_error)?;
    state.wake_task_worker();
    let store = store(state)?;
    let results = store.latest_results(&caller.project_id, entity_id).await?;
    let missing_required =
        missing_required(store.as_ref(), &caller.project_id, entity_id, &results).await?;
    Ok(WorkflowStatus {
        nodes: nodes(&tasks),
        run: Some(run),
        results,
        missing_required,
    })
}

/// The entity's `required` fields without a value, given its current `results`.
async fn missing_required(
    store: &dyn quarry_core::store::Store,
    project: &str,
    entity_id: &str,
    results: &[ExtractionResult],
) -> Result<Vec<String>, ApiError> {
    let Some(entity) = store.get_entity(project, entity_id).await? else {
        return Ok(Vec::new());
    };
    Ok(
        match store.get_entity_type(project, &entity.entity_type).await? {
            Some(entity_type) => entity_type.missing_required(&entity.fields, results),
            None => Vec::new(),
        },
    )
}

fn read_optional_body<T: Default + serde::de::DeserializeOwned>(
    body: &Bytes,
    shape: &str,
) -> Result<T, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    let malformed = |why: String| {
        ApiError::new(
            ErrorCode::MalformedRequest,
            format!("expected {shape}: {why}"),
        )
    };
    // An object only: serde would also read a struct from an array of its fields in order.
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|error| malformed(error.to_string()))?;
    if !value.is_object() {
        return Err(malformed("the body is not a JSON object".to_owned()));
    }
    serde_json::from_value(value).map_err(|error| malformed(error.to_string()))
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct WorkflowStatus {
    /// The latest run, if the entity was ever extracted.
    run: Option<ExtractionRun>,
    /// The latest run's field tasks (the workflow nodes), in layer order.
    nodes: Vec<Node>,
    /// The latest non-superseded result per field.
    results: Vec<ExtractionResult>,
    /// The type's `required` fields that have no value yet (none on the entity, no pending or
    /// approved result).
    missing_required: Vec<String>,
}

/// One workflow node: a field task's state and what it cost.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Node {
    /// The node's id (its field task): results it recorded carry it as
    /// `workflow_node_run_id`.
    id: String,
    field: String,
    /// queued, running, waiting_human, done, failed, blocked, skipped; `pending` while it
    /// waits for fields of the same run that are still being extracted.
    state: NodeState,
    /// Fields of the run it still waits for.
    waiting_on: Vec<String>,
    attempts: i64,
    max_attempts: i64,
    last_error: Option<String>,
    /// Every attempt as it ended (done, failed, retry after a transient failure, abandoned by a
    /// worker that stopped).
    attempt_log: Vec<AttemptRecord>,
    result_id: Option<String>,
    tokens_used: i64,
    duration_ms: i64,
    /// Who holds the lease while it runs (process id, host, start time).
    lease_owner: Option<String>,
    updated_at: String,
}

fn nodes(tasks: &[FieldTask]) -> Vec<Node> {
    let views: Vec<TaskView<'_>> = tasks.iter().map(FieldTask::view).collect();
    tasks
        .iter()
        .enumerate()
        .map(|(i, task)| Node {
            id: task.id.clone(),
            field: task.field_name.clone(),
            state: shown_state(&views, i),
            waiting_on: waiting_on(&views[i], &views),
            attempts: task.attempts,
            max_attempts: task.max_attempts,
            last_error: task.last_error.clone(),
            attempt_log: task.attempt_log.clone(),
            result_id: task.result_id.clone(),
            tokens_used: task.tokens_used,
            duration_ms: task.duration_ms,
            lease_owner: task
                .lease_owner
                .clone()
                .filter(|_| task.state == NodeState::Running),
            updated_at: task.updated_at.clone(),
        })
        .collect()
}

/// `GET /v1/workflows/{entity_id}`: the latest run with each field's node state.
pub async fn status(
    State(state): State<AppState>,
    caller: Caller,
    Path(entity_id): Path<String>,
) -> Result<Json<WorkflowStatus>, ApiError> {
    Ok(Json(workflow_status(&state, &caller, &entity_id).await?))
}

/// What `GET /v1/workflows/{entity_id}` and the MCP `get_workflow_status` tool share.
pub(crate) async fn workflow_status(
    state: &AppState,
    caller: &Caller,
    entity_id: &str,
) -> Result<WorkflowStatus, ApiError> {
    caller.require_scopes(READ_SCOPES)?;
    let store = store(state)?;
    let entity = entity_in_project(store.as_ref(), &caller.project_id, entity_id).await?;
    let run = store
        .list_runs(&caller.project_id, entity_id, 1)
        .await?
        .into_iter()
        .next();
    let tasks = match &run {
        Some(run) => store.run_tasks(&caller.project_id, &run.id).await?,
        None => Vec::new(),
    };
    let results = store.latest_results(&caller.project_id, entity_id).await?;
    let missing_required =
        missing_required(store.as_ref(), &caller.project_id, &entity.id, &results).await?;
    Ok(WorkflowStatus {
        run,
        nodes: nodes(&tasks),
        results,
        missing_required,
    })
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct RetryRequest {
    /// Only these fields (default: every failed or blocked field).
    #[serde(default)]
    pub fields: Option<Vec<String>>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Retried {
    /// The field tasks queued again.
    retried: Vec<Node>,
}

/// `POST /v1/workflows/{entity_id}/retry` (the reference's `retryNode`): failed or blocked
/// fields of the entity's latest runs start over. 202 with the tasks queued again.
pub async fn retry(
    State(state): State<AppState>,
    caller: Caller,
    Path(entity_id): Path<String>,
    body: Bytes,
) -> Result<(StatusCode, Json<Retried>), ApiError> {
    let request: RetryRequest = read_optional_body(&body, "{\"fields\"?: [\"name\", ...]}")?;
    let retried = retry_fields(&state, &caller, &entity_id, request).await?;
    Ok((StatusCode::ACCEPTED, Json(retried)))
}

/// What `POST /v1/workflows/{entity_id}/retry` and the MCP `retry_fields` tool share.
pub(crate) async fn retry_fields(
    state: &AppState,
    caller: &Caller,
    entity_id: &str,
    request: RetryRequest,
) -> Result<Retried, ApiError> {
    caller.require_scopes(TRIGGER_SCOPES)?;
    let tasks = pipeline(state)?
        .retry(&caller.project_id, entity_id, request.fields.as_deref())
        .await
        .map_err(pipeline_error)?;
    state.wake_task_worker();
    Ok(Retried {
        retried: nodes(&tasks),
    })
}

/// The most runs one history page holds.
const MAX_HISTORY_PAGE: usize = 100;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct HistoryQuery {
    /// Runs per page (1 to 100, default 100).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    limit: Option<usize>,
    /// The cursor: the id of the last run of the previous page; this page starts after it.
    #[serde(default)]
    before: Option<String>,
}

/// `GET /v1/workflows/{entity_id}/history`: runs, newest first, a page at a time (pass the
/// last run's id as `before` for the next page; a short page is the last).
pub async fn history(
    State(state): State<AppState>,
    caller: Caller,
    Path(entity_id): Path<String>,
    Query(query): Query<HistoryQuery>,
) -> Result<Json<Vec<ExtractionRun>>, ApiError> {
    caller.require_scopes(READ_SCOPES)?;
    let limit = query.limit.unwrap_or(MAX_HISTORY_PAGE);
    if !(1..=MAX_HISTORY_PAGE).contains(&limit) {
        return Err(ApiError::new(
            ErrorCode::InvalidArguments,
            format!("limit {limit} is out of range; give 1 to {MAX_HISTORY_PAGE}"),
        ));
    }
    let store = store(&state)?;
    entity_in_project(store.as_ref(), &caller.project_id, &entity_id).await?;
    Ok(Json(
        store
            .runs_page(
                &caller.project_id,
                &entity_id,
                query.before.as_deref(),
                limit,
            )
            .await?,
    ))
}

/// The pipeline, or 503 when the server has no database or no agents.
pub fn pipeline(state: &AppState) -> Result<Arc<Pipeline>, ApiError> {
    state.pipeline.clone().ok_or_else(|| {
        ApiError::new(ErrorCode::PipelineNotConfigured, "this server cannot run extractions; start it with quarry serve --db PATH --model provider:model",
        )
    })
}
