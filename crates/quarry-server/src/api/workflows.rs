//! Workflows: run extraction for an entity and read its status and history.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use quarry_core::ErrorCode;
use quarry_core::model::{ExtractionResult, ExtractionRun};
use quarry_pipeline::{Pipeline, PipelineError, RunReport};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

use crate::AppState;
use crate::api::entities::not_found;
use crate::auth::{Caller, store};
use crate::error::ApiError;

#[derive(Debug, Default, Deserialize)]
pub struct RunRequest {
    /// Only these fields (default: every field not locked).
    #[serde(default)]
    fields: Option<Vec<String>>,
}

/// `POST /v1/workflows/{entity_id}`: runs the entity's extraction and answers with the report.
pub async fn trigger(
    State(state): State<AppState>,
    caller: Caller,
    Path(entity_id): Path<String>,
    body: Bytes,
) -> Result<Json<RunReport>, ApiError> {
    caller.require("extraction:trigger")?;
    // The body is optional: none (or empty) runs every field.
    let request: RunRequest = if body.iter().all(u8::is_ascii_whitespace) {
        RunRequest::default()
    } else {
        serde_json::from_slice(&body).map_err(|error| {
            ApiError::new(
                ErrorCode::MalformedRequest,
                format!("expected {{\"fields\"?: [\"name\", ...]}}: {error}"),
            )
        })?
    };
    let report = pipeline(&state)?
        .run(
            &caller.project_id,
            &entity_id,
            request.fields,
            &caller.actor(),
        )
        .await
        .map_err(pipeline_error)?;
    Ok(Json(report))
}

#[derive(Debug, Serialize)]
pub struct WorkflowStatus {
    /// The latest run, if the entity was ever extracted.
    run: Option<ExtractionRun>,
    /// The latest non-superseded result per field.
    results: Vec<ExtractionResult>,
}

/// `GET /v1/workflows/{entity_id}`.
pub async fn status(
    State(state): State<AppState>,
    caller: Caller,
    Path(entity_id): Path<String>,
) -> Result<Json<WorkflowStatus>, ApiError> {
    caller.require_any(&["entities:read", "extraction:trigger"])?;
    let store = store(&state)?;
    if store
        .get_entity(&caller.project_id, &entity_id)
        .await?
        .is_none()
    {
        return Err(not_found("entity", &entity_id));
    }
    let run = store
        .list_runs(&caller.project_id, &entity_id, 1)
        .await?
        .into_iter()
        .next();
    let results = store.latest_results(&caller.project_id, &entity_id).await?;
    Ok(Json(WorkflowStatus { run, results }))
}

/// `GET /v1/workflows/{entity_id}/history`: runs, newest first.
pub async fn history(
    State(state): State<AppState>,
    caller: Caller,
    Path(entity_id): Path<String>,
) -> Result<Json<Vec<ExtractionRun>>, ApiError> {
    caller.require_any(&["entities:read", "extraction:trigger"])?;
    Ok(Json(
        store(&state)?
            .list_runs(&caller.project_id, &entity_id, 100)
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

/// The API's answer for a pipeline failure.
pub fn pipeline_error(error: PipelineError) -> ApiError {
    let message = error.to_string();
    match error {
        PipelineError::Store(store_error) => store_error.into(),
        PipelineError::EntityNotFound(_) | PipelineError::ResultNotFound(_) => {
            ApiError::new(ErrorCode::NotFound, message)
        }
        PipelineError::EntityTypeNotFound(_) => {
            ApiError::new(ErrorCode::UnknownEntityType, message)
        }
        PipelineError::UnknownField { .. } => ApiError::new(ErrorCode::UnknownField, message),
        PipelineError::InvalidValue { .. } => ApiError::new(ErrorCode::InvalidValue, message),
        PipelineError::EntityType(_) => ApiError::new(ErrorCode::InvalidEntityType, message),
    }
}
