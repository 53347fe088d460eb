//! Documents: stored text the field agents search.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use quarry_core::model::Document;
use serde::Deserialize;

use crate::AppState;
use crate::api::entities::not_found;
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
            StatusCode::BAD_REQUEST,
            "EmptyInput",
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
    let stored = store
        .add_document(&caller.project_id, &document.title, &document.text)
        .await?;
    for entity_id in &document.entity_ids {
        store
            .link_document(&caller.project_id, &stored.id, entity_id)
            .await?;
    }
    Ok((StatusCode::CREATED, Json(stored)))
}
