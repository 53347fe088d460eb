//! Project corrections (`/v1/corrections`): short rules reviewers write ("revenue is always in
//! USD"), scoped to the project, an entity type, or one field, injected into every matching
//! extraction prompt (see `quarry_pipeline::corrections`).

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use quarry_core::model::{Correction, NewCorrection};
use serde::Deserialize;

use crate::AppState;
use crate::api::entities::not_found;
use crate::auth::{Caller, store};
use crate::error::ApiError;
use crate::error::pipeline_error;
use crate::json::JsonBody;

/// Adding and removing corrections needs this scope.
pub(crate) const WRITE_SCOPES: &[&str] = &["extraction:review"];
/// Listing them needs one of these.
pub(crate) const READ_SCOPES: &[&str] = &["entities:read", "extraction:review"];

/// `POST /v1/corrections` body.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CorrectionBody {
    /// The rule, 1 to 500 characters.
    text: String,
    /// Only for this entity type (default: the whole project).
    #[serde(default)]
    entity_type: Option<String>,
    /// Only for this field of `entity_type`.
    #[serde(default)]
    field_name: Option<String>,
}

/// `POST /v1/corrections`: adds a correction; every later prompt it matches carries it.
pub async fn add(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(body): JsonBody<CorrectionBody>,
) -> Result<(StatusCode, Json<Correction>), ApiError> {
    caller.require_scopes(WRITE_SCOPES)?;
    let store = store(&state)?;
    let new = NewCorrection {
        entity_type: body.entity_type,
        field_name: body.field_name,
        text: body.text,
        created_by: caller.actor(),
    };
    let correction =
        quarry_pipeline::corrections::add_correction(store.as_ref(), &caller.project_id, &new)
            .await
            .map_err(pipeline_error)?;
    Ok((StatusCode::CREATED, Json(correction)))
}

/// `GET /v1/corrections`: the project's corrections, oldest first.
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<Vec<Correction>>, ApiError> {
    caller.require_scopes(READ_SCOPES)?;
    Ok(Json(
        store(&state)?.list_corrections(&caller.project_id).await?,
    ))
}

/// `DELETE /v1/corrections/{id}`: removes one; prompts no longer carry it.
pub async fn remove(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    caller.require_scopes(WRITE_SCOPES)?;
    if store(&state)?
        .remove_correction(&caller.project_id, &id)
        .await?
    {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(not_found("correction", &id))
    }
}
