//! Extraction results: the latest per field, a field's history, review (approve promotes the
//! value; reject with a reason reruns the field with the feedback), external submissions, and
//! the cross-entity feedback summary.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use quarry_core::ErrorCode;
use quarry_core::model::{
    Confidence, ExtractionResult, FeedbackSummary, ReviewDecision, SourceRef,
};
use quarry_pipeline::ReviewOutcome;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::AppState;
use crate::api::entities::entity_in_project;
use crate::api::workflows::pipeline;
use crate::auth::{Caller, store};
use crate::error::ApiError;
use crate::error::pipeline_error;
use crate::json::JsonBody;

/// `GET /v1/extraction/{entity_id}`: the latest non-superseded result per field.
pub async fn latest(
    State(state): State<AppState>,
    caller: Caller,
    Path(entity_id): Path<String>,
) -> Result<Json<Vec<ExtractionResult>>, ApiError> {
    caller.require_scopes(READ_SCOPES)?;
    let store = store(&state)?;
    entity_in_project(store.as_ref(), &caller.project_id, &entity_id).await?;
    Ok(Json(
        store.latest_results(&caller.project_id, &entity_id).await?,
    ))
}

/// `GET /v1/extraction/{entity_id}/history/{field}`: every result of the field, oldest first.
pub async fn history(
    State(state): State<AppState>,
    caller: Caller,
    Path((entity_id, field)): Path<(String, String)>,
) -> Result<Json<Vec<ExtractionResult>>, ApiError> {
    caller.require_scopes(READ_SCOPES)?;
    let store = store(&state)?;
    entity_in_project(store.as_ref(), &caller.project_id, &entity_id).await?;
    Ok(Json(
        store
            .field_history(&caller.project_id, &entity_id, &field)
            .await?,
    ))
}

/// `GET /v1/feedback/{entity_type}/{field}`.
pub async fn feedback(
    State(state): State<AppState>,
    caller: Caller,
    Path((entity_type, field)): Path<(String, String)>,
) -> Result<Json<FeedbackSummary>, ApiError> {
    caller.require_scopes(FEEDBACK_SCOPES)?;
    Ok(Json(
        store(&state)?
            .feedback_summary(&caller.project_id, &entity_type, &field)
            .await?,
    ))
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "action")]
pub enum ReviewRequest {
    Approve,
    Reject {
        #[serde(default)]
        reason: Option<String>,
    },
}

/// `PATCH /v1/extraction/results/{id}`: `{"action": "approve"}` or
/// `{"action": "reject", "reason": "..."}`; a rejection with a reason queues the feedback
/// rerun (`rerun` in the answer: the queued run; an approval names the run it resumed).
pub async fn review(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    JsonBody(request): JsonBody<ReviewRequest>,
) -> Result<Json<ReviewOutcome>, ApiError> {
    Ok(Json(review_result(&state, &caller, &id, request).await?))
}

/// Reviewing a result needs this scope.
/// Reading results needs one of these scopes.
pub(crate) const READ_SCOPES: &[&str] = &["entities:read", "extraction:trigger"];
/// Reading the feedback summary needs this scope.
pub(crate) const FEEDBACK_SCOPES: &[&str] = &["entities:read"];
pub(crate) const REVIEW_SCOPES: &[&str] = &["extraction:review"];
/// Submitting an external value needs this scope.
pub(crate) const SUBMIT_SCOPES: &[&str] = &["extraction:submit"];

/// What `PATCH /v1/extraction/results/{id}` and the MCP `approve_result`/`reject_result` tools
/// share.
pub(crate) async fn review_result(
    state: &AppState,
    caller: &Caller,
    id: &str,
    request: ReviewRequest,
) -> Result<ReviewOutcome, ApiError> {
    caller.require_scopes(REVIEW_SCOPES)?;
    let decision = match request {
        ReviewRequest::Approve => ReviewDecision::Approve,
        ReviewRequest::Reject { reason } => ReviewDecision::Reject {
            reason: reason.filter(|r| !r.trim().is_empty()),
        },
    };
    let outcome = pipeline(state)?
        .review(&caller.project_id, id, decision, &caller.actor())
        .await
        .map_err(pipeline_error)?;
    if outcome.rerun.is_some() {
        state.wake_task_worker();
    }
    Ok(outcome)
}

/// `POST /v1/extraction/{entity_id}/submit` body and the MCP `submit_value` tool's arguments
/// (beside the entity id).
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Submission {
    /// The field of the entity's type the value is for. Also accepted as `fieldName`, the
    /// field-extraction reference's spelling.
    #[serde(alias = "fieldName")]
    field_name: String,
    /// The value, of the field's type.
    value: Value,
    /// Where the value was found, e.g. `{"type": "document", "document_id", "start", "end"}`
    /// (code points) or `{"type": "url", "url"}`.
    #[serde(default)]
    sources: Vec<SourceRef>,
    /// low, medium or high.
    confidence: Confidence,
    /// Who found it (recorded as the result's agent). Also accepted as `agentId`.
    #[serde(alias = "agentId")]
    agent_id: String,
}

/// `POST /v1/extraction/{entity_id}/submit`: an external agent's value, recorded as pending for
/// the same review workflow.
pub async fn submit(
    State(state): State<AppState>,
    caller: Caller,
    Path(entity_id): Path<String>,
    JsonBody(submission): JsonBody<Submission>,
) -> Result<(StatusCode, Json<ExtractionResult>), ApiError> {
    let result = submit_value(&state, &caller, &entity_id, submission).await?;
    Ok((StatusCode::CREATED, Json(result)))
}

/// What `POST /v1/extraction/{entity_id}/submit` and the MCP `submit_value` tool share: the
/// same validation, recorded as pending for review.
pub(crate) async fn submit_value(
    state: &AppState,
    caller: &Caller,
    entity_id: &str,
    submission: Submission,
) -> Result<ExtractionResult, ApiError> {
    caller.require_scopes(SUBMIT_SCOPES)?;
    let pipeline = pipeline(state)?;
    // A source is stored as given and shown beside the value: one citing a document of another
    // project (or none) would point a reviewer at nothing of theirs.
    let store = store(state)?;
    for source in &submission.sources {
        if let SourceRef::Document { document_id, .. } = source
            && store
                .get_document(&caller.project_id, document_id)
                .await?
                .is_none()
        {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!(
                    "no document '{document_id}' in this project; a source must cite one of its documents"
                ),
            ));
        }
    }
    pipeline
        .submit_external(
            &caller.project_id,
            entity_id,
            &submission.field_name,
            submission.value,
            submission.sources,
            submission.confidence,
            &submission.agent_id,
        )
        .await
        .map_err(pipeline_error)
}
