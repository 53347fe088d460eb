//! Resources: the project's entity types (`quarry://entity-types/{slug}`, each listed) and its
//! entities (`quarry://entities/{id}`, a template), as JSON; read through the functions of
//! `GET /v1/entity-types/{slug}` and `GET /v1/entities/{id}`, with their scope
//! (`entities:read`). A caller without it lists none; a failed read is a JSON-RPC error carrying
//! the API's code (`resource_not_found` for `NotFound`).

use quarry_core::ErrorCode;
use rmcp::ErrorData;
use rmcp::model::{ReadResourceResult, Resource, ResourceContents, ResourceTemplate};
use serde::Serialize;
use serde_json::json;

use super::registry::Ctx;
use crate::api::entities::{READ_SCOPES, get_entity, get_entity_type, list_entity_types};
use crate::error::ApiError;

const TYPE_PREFIX: &str = "quarry://entity-types/";
const ENTITY_PREFIX: &str = "quarry://entities/";
const JSON: &str = "application/json";

/// The entity types the caller may read, one resource each; none without the scope.
pub(super) async fn list(ctx: &Ctx) -> Result<Vec<Resource>, ErrorData> {
    let Some(caller) = ctx
        .caller
        .as_ref()
        .filter(|c| c.require_scopes(READ_SCOPES).is_ok())
    else {
        return Ok(Vec::new());
    };
    let types = list_entity_types(&ctx.state, caller)
        .await
        .map_err(|error| protocol_error(&error))?;
    Ok(types
        .into_iter()
        .map(|entity_type| {
            let mut resource = Resource::new(
                format!("{TYPE_PREFIX}{}", entity_type.slug),
                entity_type.slug.clone(),
            )
            .with_mime_type(JSON);
            if let Some(name) = entity_type.name.filter(|n| !n.trim().is_empty()) {
                resource = resource.with_title(name);
            }
            if let Some(description) = entity_type.description.filter(|d| !d.trim().is_empty()) {
                resource = resource.with_description(description);
            }
            resource
        })
        .collect())
}

/// The URI templates of entity types and entities.
pub(super) fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(format!("{TYPE_PREFIX}{{slug}}"), "entity-type")
            .with_title("Entity type")
            .with_description("An entity type of the project: its fields and their extraction")
            .with_mime_type(JSON),
        ResourceTemplate::new(format!("{ENTITY_PREFIX}{{entity_id}}"), "entity")
            .with_title("Entity")
            .with_description("An entity of the project with its approved field values")
            .with_mime_type(JSON),
    ]
}

/// The resource at `uri`, as JSON text.
pub(super) async fn read(ctx: &Ctx, uri: &str) -> Result<ReadResourceResult, ErrorData> {
    let answer = async {
        let caller = ctx.caller()?;
        if let Some(slug) = uri.strip_prefix(TYPE_PREFIX).filter(|s| !s.is_empty()) {
            json_text(&get_entity_type(&ctx.state, caller, slug).await?)
        } else if let Some(id) = uri.strip_prefix(ENTITY_PREFIX).filter(|s| !s.is_empty()) {
            json_text(&get_entity(&ctx.state, caller, id).await?)
        } else {
            Err(ApiError::new(
                ErrorCode::NotFound,
                format!(
                    "no resource '{uri}'; read {TYPE_PREFIX}<slug> or {ENTITY_PREFIX}<entity id>"
                ),
            ))
        }
    }
    .await;
    match answer {
        Ok(text) => Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, uri).with_mime_type(JSON),
        ])),
        Err(error) => Err(protocol_error(&error)),
    }
}

fn json_text<T: Serialize>(value: &T) -> Result<String, ApiError> {
    serde_json::to_string(value).map_err(|error| {
        ApiError::new(
            ErrorCode::Internal,
            format!("could not write the resource: {error}"),
        )
    })
}

/// A failed read as a JSON-RPC error: its message, and the API's code in `data.error`.
fn protocol_error(error: &ApiError) -> ErrorData {
    let data = Some(json!({"error": error.code.as_str()}));
    match error.code {
        ErrorCode::NotFound => ErrorData::resource_not_found(error.message.clone(), data),
        _ => ErrorData::invalid_params(error.message.clone(), data),
    }
}
