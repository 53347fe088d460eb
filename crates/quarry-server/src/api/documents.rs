//! Documents: stored text the field agents search.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use quarry_core::ErrorCode;
use quarry_core::model::Document;
use quarry_pipeline::documents::DocumentsError;
use serde::Deserialize;

use crate::AppState;
use crate::api::entities::not_found;
use crate::api::workflows::pipeline;
use crate::auth::{Caller, store};
use crate::error::ApiError;
use crate::json::JsonBody;

#[derive(Debug, Deserialize)]
pub struct NewDocument {
    title: String,
    text: String,
    /// Entities to link the document to.
    #[serde(default)]
    entity_ids: Vec<String>,
}

/// `POST /v1/documents`: `{"title", "text", "entity_ids"?}`.
pub async fn add(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(document): JsonBody<NewDocument>,
) -> Result<(StatusCode, Json<Document>), ApiError> {
    caller.require("documents:write")?;
    if document.text.trim().is_empty() {
        return Err(ApiError::new(
            ErrorCode::EmptyInput,
            "text is empty; send the document's text",
        ));
    }
    let store = store(&state)?;
    for entity_id in &document.entity_ids {
        if store
            .get_entity(&caller.project_id, entity_id)
            .await?
            .is_none()
        {
            return Err(not_found("entity", entity_id));
        }
    }
    // Stored, linked and indexed in one path (searchable by the field agents at once).
    let stored = pipeline(&state)?
        .documents()
        .add(
            &caller.project_id,
            &document.title,
            &document.text,
            &document.entity_ids,
        )
        .await
        .map_err(|error| match error {
            DocumentsError::Store(error) => ApiError::from(error),
            DocumentsError::Retrieval(error) => {
                ApiError::new(ErrorCode::IndexError, error.to_string())
            }
        })?;
    Ok((StatusCode::CREATED, Json(stored)))
}
