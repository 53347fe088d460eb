//! Documents: stored text the field agents search.

use axum::Json;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use quarry_core::ErrorCode;
use quarry_core::model::Document;
use quarry_pipeline::documents::DocumentsError;
use serde::{Deserialize, Serialize};

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

/// What `POST /v1/documents` answers: the stored document, and what failed after it was
/// stored (links, indexing, storing its chunks) when something did.
#[derive(Debug, Serialize)]
pub struct AddedDocument {
    #[serde(flatten)]
    document: Document,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<String>,
}

/// `POST /v1/documents`: `{"title", "text", "entity_ids"?}`. Idempotent by content: 201 with the
/// new document, or 200 with the document of the same title and text stored earlier (its links
/// still applied), so a client may retry after a timeout. Once the document is stored, a later
/// step that fails does not turn the answer into an error: the document comes back with
/// `warnings` naming what failed.
pub async fn add(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(document): JsonBody<NewDocument>,
) -> Result<(StatusCode, Json<AddedDocument>), ApiError> {
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
    let added = pipeline(&state)?
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
    for warning in &added.warnings {
        tracing::warn!(document = %added.document.id, "{warning}");
    }
    let status = if added.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        Json(AddedDocument {
            document: added.document,
            warnings: added.warnings,
        }),
    ))
}

const DEFAULT_LIMIT: usize = 10;
const MAX_LIMIT: usize = 100;

#[derive(Debug, Deserialize)]
pub struct SearchQuery {
    q: String,
    #[serde(default)]
    limit: Option<usize>,
}

/// One passage found: the document and code-point offsets into its text, end exclusive.
#[derive(Debug, Serialize)]
pub struct Passage {
    document_id: String,
    start: usize,
    end: usize,
    score: f32,
}

/// `GET /v1/documents/search?q=&limit=`: the project's passages best matching `q` by words and
/// meaning (the index the field agents search), best first.
pub async fn search(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<SearchQuery>,
) -> Result<Json<Vec<Passage>>, ApiError> {
    caller.require("entities:read")?;
    let limit = query.limit.unwrap_or(DEFAULT_LIMIT);
    if limit == 0 || limit > MAX_LIMIT {
        return Err(ApiError::new(
            ErrorCode::InvalidLimit,
            format!("limit must be between 1 and {MAX_LIMIT}"),
        ));
    }
    store(&state)?;
    let Some(retriever) = state.retriever.clone() else {
        return Ok(Json(Vec::new()));
    };
    let project = caller.project_id.clone();
    let hits = tokio::task::spawn_blocking(move || {
        retriever.search_documents(&project, &query.q, None, limit)
    })
    .await
    .map_err(|error| ApiError::new(ErrorCode::IndexError, error.to_string()))?
    .map_err(|error| ApiError::new(ErrorCode::IndexError, error.to_string()))?;
    Ok(Json(
        hits.into_iter()
            .map(|hit| Passage {
                document_id: hit.document_id,
                start: hit.start,
                end: hit.end,
                score: hit.score,
            })
            .collect(),
    ))
}
