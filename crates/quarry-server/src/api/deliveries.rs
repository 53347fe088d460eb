//! The webhook delivery log (`GET /v1/deliveries`): every field action's delivery, its state,
//! attempts and last answer (see `webhooks.rs`).

use axum::Json;
use axum::extract::{Query, State};
use quarry_core::ErrorCode;
use quarry_core::model::Delivery;
use serde::Deserialize;

use crate::AppState;
use crate::auth::{Caller, store};
use crate::error::ApiError;

/// Reading the log needs one of these scopes.
pub(crate) const READ_SCOPES: &[&str] = &["entities:read", "extraction:review"];

/// The most deliveries one page lists.
const MAX_LIMIT: usize = 500;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ListQuery {
    /// How many, newest first (1 to 500, default 100).
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    limit: Option<usize>,
}

/// `GET /v1/deliveries`: the project's webhook deliveries, newest first.
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<ListQuery>,
) -> Result<Json<Vec<Delivery>>, ApiError> {
    caller.require_scopes(READ_SCOPES)?;
    let limit = query.limit.unwrap_or(100);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(ApiError::new(
            ErrorCode::InvalidArguments,
            format!("limit {limit} is out of range; give 1 to {MAX_LIMIT}"),
        ));
    }
    Ok(Json(
        store(&state)?
            .list_deliveries(&caller.project_id, limit)
            .await?,
    ))
}
