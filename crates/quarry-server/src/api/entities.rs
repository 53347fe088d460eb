//! Entity types and entities.

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use quarry_core::ErrorCode;
use quarry_core::model::{Entity, EntityType, NewEntity};
use serde::Deserialize;
use serde_json::Value;

use crate::AppState;
use crate::auth::{Caller, store};
use crate::error::ApiError;
use crate::json::JsonBody;

/// `PUT /v1/entity-types/{slug}`: creates or replaces a type; invalid ones (unknown dependency,
/// cycle, bad source) answer 400 naming the fields.
pub async fn put_type(
    State(state): State<AppState>,
    caller: Caller,
    Path(slug): Path<String>,
    JsonBody(mut body): JsonBody<Value>,
) -> Result<Json<EntityType>, ApiError> {
    caller.require_scopes(WRITE_SCOPES)?;
    let invalid = |message: String| ApiError::new(ErrorCode::InvalidEntityType, message);
    let Some(object) = body.as_object_mut() else {
        return Err(invalid(
            "the body must be an entity type object like {\"fields\": [...]}".to_owned(),
        ));
    };
    // The path names the type; a slug in the body, if any, is overridden (but must be a string).
    if object.get("slug").is_some_and(|given| !given.is_string()) {
        return Err(invalid(
            "slug must be a string (the path names the type)".to_owned(),
        ));
    }
    object.insert("slug".to_owned(), Value::String(slug));
    let entity_type = quarry_pipeline::entity_type_from_value(body)
        .map_err(|error| invalid(error.to_string()))?;
    quarry_pipeline::check_webhook_targets(&entity_type, &state.outbound)
        .map_err(|error| invalid(error.to_string()))?;
    store(&state)?
        .put_entity_type(&caller.project_id, &entity_type)
        .await?;
    Ok(Json(entity_type))
}

/// `PUT /v1/entity-types/{slug}` body as documented: an entity type whose `slug` may be left
/// out (the path names the type; the handler reads the body as a JSON object and sets it).
pub(crate) struct EntityTypeBody;

impl schemars::JsonSchema for EntityTypeBody {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "EntityTypeBody".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut schema = EntityType::json_schema(generator);
        if let Some(required) = schema
            .as_object_mut()
            .and_then(|object| object.get_mut("required"))
            .and_then(Value::as_array_mut)
        {
            required.retain(|name| name != "slug");
        }
        schema
    }
}

/// Defining entity types and creating entities needs this scope.
pub(crate) const WRITE_SCOPES: &[&str] = &["entities:write"];

/// Reading entity types and entities needs this scope.
pub(crate) const READ_SCOPES: &[&str] = &["entities:read"];

pub async fn get_type(
    State(state): State<AppState>,
    caller: Caller,
    Path(slug): Path<String>,
) -> Result<Json<EntityType>, ApiError> {
    Ok(Json(get_entity_type(&state, &caller, &slug).await?))
}

/// What `GET /v1/entity-types/{slug}` and the MCP resource `quarry://entity-types/{slug}` share.
pub(crate) async fn get_entity_type(
    state: &AppState,
    caller: &Caller,
    slug: &str,
) -> Result<EntityType, ApiError> {
    caller.require_scopes(READ_SCOPES)?;
    store(state)?
        .get_entity_type(&caller.project_id, slug)
        .await?
        .ok_or_else(|| not_found("entity type", slug))
}

pub async fn list_types(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<Vec<EntityType>>, ApiError> {
    Ok(Json(list_entity_types(&state, &caller).await?))
}

/// What `GET /v1/entity-types` and the MCP resource list share.
pub(crate) async fn list_entity_types(
    state: &AppState,
    caller: &Caller,
) -> Result<Vec<EntityType>, ApiError> {
    caller.require_scopes(READ_SCOPES)?;
    Ok(store(state)?.list_entity_types(&caller.project_id).await?)
}

/// `POST /v1/entities`: `{"entity_type", "title", "parent_id"?, "fields"?, "metadata"?}`.
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(entity): JsonBody<NewEntity>,
) -> Result<(StatusCode, Json<Entity>), ApiError> {
    caller.require_scopes(WRITE_SCOPES)?;
    let store = store(&state)?;
    if store
        .get_entity_type(&caller.project_id, &entity.entity_type)
        .await?
        .is_none()
    {
        return Err(ApiError::new(
            ErrorCode::UnknownEntityType,
            format!(
                "no entity type '{}'; define it with PUT /v1/entity-types/{}",
                entity.entity_type, entity.entity_type
            ),
        ));
    }
    if entity.title.trim().is_empty() {
        return Err(ApiError::new(
            ErrorCode::InvalidEntity,
            "title is empty; give the entity a title",
        ));
    }
    let max_attempts = state.pipeline.as_ref().map_or(
        quarry_pipeline::PipelineConfig::default().max_attempts,
        |p| p.config().max_attempts,
    );
    let (created, run) = quarry_pipeline::on_create::create_entity(
        store.as_ref(),
        &caller.project_id,
        &entity,
        max_attempts,
    )
    .await
    .map_err(crate::error::pipeline_error)?;
    if run.is_some() {
        // Its type says extract_on_create: a run was queued with it.
        state.wake_task_worker();
    }
    // Searchable by meaning at once; a failure only delays that to the next start's rebuild.
    if let Some(retriever) = &state.retriever
        && let Err(error) = retriever.index_entity(&created)
    {
        tracing::warn!(entity = %created.id, %error, "indexing a new entity failed");
    }
    Ok((StatusCode::CREATED, Json(created)))
}

/// The most entities one `GET /v1/entities` lists.
const MAX_LIMIT: usize = 1000;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ListQuery {
    /// Only entities of this type.
    #[serde(rename = "type")]
    entity_type: Option<String>,
    /// How many at most (0 to 1000, default 100).
    #[schemars(range(max = MAX_LIMIT))]
    limit: Option<usize>,
}

pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<ListQuery>,
) -> Result<Json<Vec<Entity>>, ApiError> {
    caller.require_scopes(READ_SCOPES)?;
    let limit = query.limit.unwrap_or(100);
    if limit > MAX_LIMIT {
        return Err(ApiError::new(
            ErrorCode::InvalidLimit,
            format!("limit must be at most {MAX_LIMIT}"),
        ));
    }
    Ok(Json(
        store(&state)?
            .list_entities(&caller.project_id, query.entity_type.as_deref(), limit)
            .await?,
    ))
}

pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Entity>, ApiError> {
    Ok(Json(get_entity(&state, &caller, &id).await?))
}

/// What `GET /v1/entities/{id}` and the MCP resource `quarry://entities/{id}` share.
pub(crate) async fn get_entity(
    state: &AppState,
    caller: &Caller,
    id: &str,
) -> Result<Entity, ApiError> {
    caller.require_scopes(READ_SCOPES)?;
    entity_in_project(store(state)?.as_ref(), &caller.project_id, id).await
}

/// Entity `id` of `project`, else 404 `NotFound` naming it (another project's entity is not
/// found either).
pub(crate) async fn entity_in_project(
    store: &dyn quarry_core::store::Store,
    project: &str,
    id: &str,
) -> Result<Entity, ApiError> {
    store
        .get_entity(project, id)
        .await?
        .ok_or_else(|| not_found("entity", id))
}

pub fn not_found(what: &str, id: &str) -> ApiError {
    ApiError::new(
        ErrorCode::NotFound,
        format!("no {what} '{id}' in this project"),
    )
}
