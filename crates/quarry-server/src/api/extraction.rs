//! Extraction results: the latest per field, a field's history, review (approve promotes the
//! value; reject with a reason reruns the field with the feedback), external submissions, and
//! the cross-entity feedback summary.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use quarry_core::model::{
    Confidence, ExtractionResult, FeedbackSummary, ReviewDecision, SourceRef,
};
use quarry_pipeline::ReviewOutcome;
use serde::Deserialize;
use serde_json::Value;

use crate::AppState;
use crate::api::entities::not_found;
use crate::api::workflows::{pipeline, pipeline_error};
use crate::auth::{Caller, store};
use crate::error::ApiError;
use crate::json::JsonBody;

/// `GET /v1/extraction/{entity_id}`: the latest non-superseded result per field.
pub async fn latest(
    State(state): State<AppState>,
    caller: Caller,
    Path(entity_id): Path<String>,
) -> Result<Json<Vec<ExtractionResult>>, ApiError> {
    caller.require_any(&["entities:read", "extraction:trigger"])?;
    let store = store(&state)?;
    if store
        .get_entity(&caller.project_id, &entity_id)
        .await?
        .is_none()
    {
        return Err(not_found("entity", &entity_id));
    }
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
    caller.require_any(&["entities:read", "extraction:trigger"])?;
    Ok(Json(
        store(&state)?
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
    caller.require("entities:read")?;
    Ok(Json(
        store(&state)?
            .feedback_summary(&caller.project_id, &entity_type, &field)
            .await?,
    ))
}

#[derive(Debug, Deserialize)]
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
    caller.require("extraction:review")?;
    let decision = match request {
        ReviewRequest::Approve => ReviewDecision::Approve,
        ReviewRequest::Reject { reason } => ReviewDecision::Reject {
            reason: reason.filter(|r| !r.trim().is_empty()),
        },
    };
    let outcome = pipeline(&state)?
        .review(&caller.project_id, &id, decision, &caller.actor())
        .await
        .map_err(pipeline_error)?;
    if outcome.rerun.is_some() {
        state.wake_task_worker();
    }
    Ok(Json(outcome))
}

#[derive(Debug, Deserialize)]
pub struct Submission {
    field_name: String,
    value: Value,
    #[serde(default)]
    sources: Vec<SourceRef>,
    confidence: Confidence,
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
    caller.require("extraction:submit")?;
    let result = pipeline(&state)?
        .submit_external(
            &caller.project_id,
            &entity_id,
            &submission.field_name,
            submission.value,
            submission.sources,
            submission.confidence,
            &submission.agent_id,
        )
        .await
        .map_err(pipeline_error)?;
    Ok((StatusCode::CREATED, Json(result)))
}
