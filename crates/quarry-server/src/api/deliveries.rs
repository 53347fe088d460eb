//! The webhook delivery log (`GET /v1/deliveries`): every field action's delivery, its state,
//! attempts and last answer (see `webhooks.rs`).

use axum::Json;
use axum::extract::{Path, Query, State};
use quarry_core::ErrorCode;
use quarry_core::model::Delivery;
use serde::Deserialize;

use crate::AppState;
use crate::auth::{Caller, store};
use crate::error::ApiError;

/// Reading the log needs one of these scopes.
pub(crate) const READ_SCOPES: &[&str] = &["entities:read", "extraction:review"];

/// Redelivering needs one of these scopes (the keys that may change what fires them).
pub(crate) const WRITE_SCOPES: &[&str] = &["entities:write", "extraction:review"];

/// Attempts a redelivered delivery gets.
const REDELIVERY_ATTEMPTS: i64 = 5;

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

/// `POST /v1/deliveries/{id}/redeliver`: an ended delivery queued again, due now.
pub async fn redeliver(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Delivery>, ApiError> {
    caller.require_scopes(WRITE_SCOPES)?;
    let delivery = store(&state)?
        .redeliver(&caller.project_id, &id, REDELIVERY_ATTEMPTS)
        .await?;
    // The delivery workers poll the queue; it is due now.
    Ok(Json(delivery))
}
