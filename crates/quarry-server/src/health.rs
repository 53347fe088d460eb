//! `GET /healthz`: answers while the server can serve. `GET /readyz`: answers 200 once the
//! server can also reach its database and that database holds every migration this build
//! carries, so a load balancer sends it traffic only then. The migrations ran when the store was
//! opened, before the server started; checking again catches a database replaced under a
//! running server (restored from an older backup, a failover to a stale replica).

use axum::Json;
use axum::extract::State;
use quarry_core::ErrorCode;
use serde::Serialize;

use crate::AppState;
use crate::error::ApiError;

/// What `GET /healthz` answers.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Health {
    /// Always `ok`.
    #[schemars(extend("const" = "ok"))]
    status: &'static str,
}

pub async fn healthz() -> Json<Health> {
    Json(Health { status: "ok" })
}

/// What `GET /readyz` answers when ready.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Readiness {
    /// Always `ready`.
    #[schemars(extend("const" = "ready"))]
    status: &'static str,
    /// `reachable` (a query answered, migrations applied) or `none` (a server without a
    /// database serves the skill endpoints only).
    #[schemars(extend("enum" = ["reachable", "none"]))]
    database: &'static str,
    /// The newest migration applied to the database (absent without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    schema_version: Option<i64>,
}

/// `GET /readyz`: 200 when the database answers and has every migration (or there is none);
/// the error shape (`StorageError`, 500) when it does not.
pub async fn readyz(State(state): State<AppState>) -> Result<Json<Readiness>, ApiError> {
    let Some(store) = &state.store else {
        return Ok(Json(Readiness {
            status: "ready",
            database: "none",
            schema_version: None,
        }));
    };
    // One read of sqlx's migration table answers both questions.
    let version = store.schema_version().await?;
    if !version.is_current() {
        let applied = version
            .applied
            .map_or_else(|| "none".to_owned(), |applied| applied.to_string());
        return Err(ApiError::new(
            ErrorCode::StorageError,
            format!(
                "the database's schema is at migration {applied}, this server needs {}; restart the server (it migrates the database on start)",
                version.latest
            ),
        ));
    }
    Ok(Json(Readiness {
        status: "ready",
        database: "reachable",
        schema_version: version.applied,
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
