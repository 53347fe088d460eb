//! Conversation episodes: stored at once as documents and queued for background graph
//! extraction. The answer never waits for a model, and a failed extraction is recorded on the
//! episode (`GET /v1/episodes/{id}`), never returned as an error of the episode call; a failed
//! episode is queued again with `POST /v1/episodes/{id}/retry`.

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use quarry_core::ErrorCode;
use quarry_core::model::{
    Episode, EpisodeStatus, ExtractedEntity, ExtractedRelationship, GraphExtraction, NewEpisode,
};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::AppState;
use crate::api::entities::not_found;
use crate::api::review::paging;
use crate::auth::{Caller, store};
use crate::error::ApiError;
use crate::json::JsonBody;

/// `POST /v1/episodes` body and the MCP `add_episode` tool's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("anyOf" = [
    {"properties": {"user_message": {"pattern": "\\S"}}},
    {"properties": {"assistant_response": {"pattern": "\\S"}}}
]))]
pub struct EpisodeBody {
    /// What the user said in the turn.
    user_message: String,
    /// What the assistant answered.
    assistant_response: String,
    /// When given, must be the key's project.
    #[serde(default)]
    project_id: Option<String>,
    /// Pre-structured graph (the reference's JSON shape: `{"name", "type", "notes"?}`): applied
    /// without a model.
    #[serde(default)]
    entities: Option<Vec<ExtractedEntity>>,
    /// Relationships between those entities by name: `{"from", "fromType", "to", "toType",
    /// "label"}`.
    #[serde(default)]
    relationships: Option<Vec<ExtractedRelationship>>,
}

/// Adding an episode needs this scope.
pub(crate) const ADD_SCOPES: &[&str] = &["documents:write"];
/// Reading episodes needs this scope.
pub(crate) const READ_SCOPES: &[&str] = &["entities:read"];

/// `POST /v1/episodes`: `{"user_message", "assistant_response", "project_id"?, "entities"?,
/// "relationships"?}` → 202 with the stored episode (`status: pending`).
pub async fn add(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(body): JsonBody<EpisodeBody>,
) -> Result<(StatusCode, Json<Episode>), ApiError> {
    Ok((
        StatusCode::ACCEPTED,
        Json(add_episode(&state, &caller, body).await?),
    ))
}

/// What `POST /v1/episodes` and the MCP `add_episode` tool share: the episode stored and queued,
/// the graph worker woken.
pub(crate) async fn add_episode(
    state: &AppState,
    caller: &Caller,
    body: EpisodeBody,
) -> Result<Episode, ApiError> {
    caller.require_scopes(ADD_SCOPES)?;
    caller.require_project(body.project_id.as_deref())?;
    if body.user_message.trim().is_empty() && body.assistant_response.trim().is_empty() {
        return Err(ApiError::new(
            ErrorCode::EmptyInput,
            "user_message and assistant_response are both empty; send the conversation turn",
        ));
    }
    let ingest =
        (body.entities.is_some() || body.relationships.is_some()).then(|| GraphExtraction {
            entities: body.entities.unwrap_or_default(),
            relationships: body.relationships.unwrap_or_default(),
        });
    let episode = store(state)?
        .add_episode(
            &caller.project_id,
            &NewEpisode {
                user_message: body.user_message,
                assistant_response: body.assistant_response,
                ingest,
            },
        )
        .await?;
    if let Some(worker) = &state.graph_worker {
        worker.wake();
    }
    Ok(episode)
}

/// `GET /v1/episodes/{id}`: the episode with the state of its extraction.
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Episode>, ApiError> {
    caller.require_scopes(READ_SCOPES)?;
    store(&state)?
        .get_episode(&caller.project_id, &id)
        .await?
        .map(Json)
        .ok_or_else(|| not_found("episode", &id))
}

/// `POST /v1/episodes/{id}/retry`: a failed episode goes back on the queue (attempts from zero,
/// error cleared) and the worker is woken → 202 with the episode (`status: pending`). An episode
/// that is not failed is 409 `InvalidState`.
pub async fn retry(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<(StatusCode, Json<Episode>), ApiError> {
    caller.require_scopes(ADD_SCOPES)?;
    let mut retried = store(&state)?
        .retry_episodes(&caller.project_id, Some(std::slice::from_ref(&id)))
        .await?;
    let episode = retried.pop().ok_or_else(|| not_found("episode", &id))?;
    if let Some(worker) = &state.graph_worker {
        worker.wake();
    }
    Ok((StatusCode::ACCEPTED, Json(episode)))
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ListQuery {
    /// Only episodes whose extraction is in this state (empty: every state).
    #[serde(default)]
    #[schemars(extend("enum" = ["pending", "running", "done", "failed", ""]))]
    state: Option<String>,
    /// Episodes per page (1 to 200, default 50).
    #[serde(default)]
    #[schemars(with = "Option<u32>", range(min = 1, max = 200))]
    limit: Option<String>,
    /// Episodes to skip.
    #[serde(default)]
    #[schemars(with = "Option<u32>", range(max = u32::MAX))]
    offset: Option<String>,
}

#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct EpisodeList {
    total: i64,
    limit: usize,
    offset: usize,
    episodes: Vec<Episode>,
}

/// `GET /v1/episodes?state=&limit=&offset=`: episodes newest first, each with its extraction's
/// state (`status`: pending, running, done, failed) and error; `state` keeps one of them.
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<ListQuery>,
) -> Result<Json<EpisodeList>, ApiError> {
    caller.require_scopes(READ_SCOPES)?;
    let (limit, offset) = paging(query.limit.as_deref(), query.offset.as_deref())?;
    let status = match query.state.as_deref().filter(|s| !s.is_empty()) {
        None => None,
        Some(raw) => Some(EpisodeStatus::parse(raw).ok_or_else(|| {
            ApiError::new(
                ErrorCode::InvalidArguments,
                format!("state '{raw}' is not one of pending, running, done, failed"),
            )
        })?),
    };
    let page = store(&state)?
        .episode_page(&caller.project_id, status, limit, offset)
        .await?;
    Ok(Json(EpisodeList {
        total: page.total,
        limit,
        offset,
        episodes: page.items,
    }))
}
