//! `GET /healthz`: answers while the server can serve. `GET /readyz`: answers 200 once the
//! server can also reach its database (whose migrations ran when the store was opened, before
//! the server started), so a load balancer sends it traffic only then.

use axum::Json;
use axum::extract::State;
use serde::Serialize;
use serde_json::{Value, json};

use crate::AppState;
use crate::error::ApiError;

pub async fn healthz() -> Json<Value> {
    Json(json!({"status": "ok"}))
}

/// What `GET /readyz` answers when ready.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Readiness {
    /// Always `ready`.
    status: &'static str,
    /// `reachable` (a query answered, migrations applied) or `none` (a server without a
    /// database serves the skill endpoints only).
    database: &'static str,
}

/// `GET /readyz`: 200 when the database answers a query (or there is none); the error shape
/// (`StorageError`, 500) when it does not.
pub async fn readyz(State(state): State<AppState>) -> Result<Json<Readiness>, ApiError> {
    let database = match &state.store {
        Some(store) => {
            // The cheapest read there is: one indexed row lookup that finds nothing.
            store.project_name("").await?;
            "reachable"
        }
        None => "none",
    };
    Ok(Json(Readiness {
        status: "ready",
        database,
    }))
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use tower::ServiceExt;

    use crate::{ServerConfig, router};

    #[tokio::test]
    async fn a_server_without_a_database_is_ready() {
        let response = router(ServerConfig::default())
            .oneshot(Request::get("/readyz").body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let body = axum::body::to_bytes(response.into_body(), 1024)
            .await
            .unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            body,
            serde_json::json!({"status": "ready", "database": "none"})
        );
    }
}
