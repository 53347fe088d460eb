//! Reading the conversation graph: find entities by name and by meaning, one entity with its
//! episodes, and its neighbourhood (relations followed in both directions).

use axum::Json;
use axum::extract::{Path, Query, State};
use quarry_core::ErrorCode;
use quarry_core::model::{Entity, Episode, Relation};
use quarry_graph::{FoundEntity, Neighborhood, find_entities, neighbors};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::AppState;
use crate::api::entities::not_found;
use crate::auth::{Caller, store};
use crate::error::ApiError;

const DEFAULT_LIMIT: usize = 20;
const MAX_LIMIT: usize = 500;
const MAX_DEPTH: usize = 3;

/// `GET /v1/graph/entities` query and the MCP `search_graph` tool's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchQuery {
    /// Name or words to look for (empty lists the most mentioned entities).
    #[serde(default)]
    q: Option<String>,
    /// Only entities of this type (e.g. person, organization).
    #[serde(default, rename = "type")]
    entity_type: Option<String>,
    /// When given, must be the key's project.
    #[serde(default)]
    project_id: Option<String>,
    /// How many entities at most (1 to 500, default 20).
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    limit: Option<usize>,
}

/// Reading the graph needs this scope.
pub(crate) const READ_SCOPES: &[&str] = &["entities:read"];

/// `GET /v1/graph/entities?q=&type=&project_id=&limit=`: name matches first, then entities close
/// in meaning; each item says which (`"match": "name" | "meaning"`).
pub async fn search(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<SearchQuery>,
) -> Result<Json<Vec<FoundEntity>>, ApiError> {
    Ok(Json(search_entities(&state, &caller, query).await?))
}

/// What `GET /v1/graph/entities` and the MCP `search_graph` tool share.
pub(crate) async fn search_entities(
    state: &AppState,
    caller: &Caller,
    query: SearchQuery,
) -> Result<Vec<FoundEntity>, ApiError> {
    caller.require_scopes(READ_SCOPES)?;
    caller.require_project(query.project_id.as_deref())?;
    let limit = query.limit.unwrap_or(DEFAULT_LIMIT);
    if limit == 0 || limit > MAX_LIMIT {
        return Err(ApiError::new(
            ErrorCode::InvalidLimit,
            format!("limit must be between 1 and {MAX_LIMIT}"),
        ));
    }
    let store = store(state)?;
    find_entities(
        store.as_ref(),
        state.retriever.as_deref(),
        &caller.project_id,
        query.q.as_deref().unwrap_or(""),
        query.entity_type.as_deref(),
        limit,
    )
    .await
    .map_err(ApiError::from)
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct EntityWithEpisodes {
    #[serde(flatten)]
    entity: Entity,
    episodes: Vec<Episode>,
    relations: Vec<Relation>,
}

/// `GET /v1/graph/entities/{id}`: the entity, the episodes that mention it (newest first) and its
/// direct relations.
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<EntityWithEpisodes>, ApiError> {
    Ok(Json(entity_with_episodes(&state, &caller, &id).await?))
}

/// What `GET /v1/graph/entities/{id}` and the MCP `get_entity` tool share.
pub(crate) async fn entity_with_episodes(
    state: &AppState,
    caller: &Caller,
    id: &str,
) -> Result<EntityWithEpisodes, ApiError> {
    caller.require_scopes(READ_SCOPES)?;
    let store = store(state)?;
    let entity = store
        .get_entity(&caller.project_id, id)
        .await?
        .ok_or_else(|| not_found("entity", id))?;
    let episodes = store
        .entity_episodes(&caller.project_id, id, MAX_LIMIT)
        .await?;
    let id = id.to_owned();
    let relations = store
        .relations_touching(&caller.project_id, std::slice::from_ref(&id))
        .await?;
    Ok(EntityWithEpisodes {
        entity,
        episodes,
        relations,
    })
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct NeighborsQuery {
    /// Hops to follow (1 to 3, default 2).
    #[serde(default)]
    #[schemars(range(min = 1, max = 3))]
    depth: Option<usize>,
    /// Reached entities at most (1 to 500, default 500).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_LIMIT))]
    limit: Option<usize>,
}

/// `GET /v1/graph/entities/{id}/neighbors?depth=2`: entities reachable through relations in either
/// direction, each with its hop count, and the relations followed.
pub async fn neighborhood(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(query): Query<NeighborsQuery>,
) -> Result<Json<Neighborhood>, ApiError> {
    caller.require_scopes(READ_SCOPES)?;
    let depth = query.depth.unwrap_or(2);
    if depth == 0 || depth > MAX_DEPTH {
        return Err(ApiError::new(
            ErrorCode::InvalidDepth,
            format!("depth must be between 1 and {MAX_DEPTH}"),
        ));
    }
    let limit = query.limit.unwrap_or(MAX_LIMIT);
    if limit == 0 || limit > MAX_LIMIT {
        return Err(ApiError::new(
            ErrorCode::InvalidLimit,
            format!("limit must be between 1 and {MAX_LIMIT}"),
        ));
    }
    let store = store(&state)?;
    Ok(Json(
        neighbors(store.as_ref(), &caller.project_id, &id, depth, limit).await?,
    ))
}
