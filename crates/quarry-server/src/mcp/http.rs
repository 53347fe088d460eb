//! `/mcp` on `quarry serve`: MCP's streamable HTTP transport (rmcp's `StreamableHttpService`,
//! stateless, answering JSON), behind the API's own key check.
//!
//! On a server with a database every request needs `Authorization: Bearer qk_…` (401 in the
//! API's error shape otherwise, before any MCP processing); the key's `Caller` rides in the
//! request's extensions to the tools, which list and run only what its scopes allow, inside its
//! project. A server without a database lets anyone use the tools that need none (`extract`,
//! `check`, `extract_with_schema`), as `/skill/*` and `/v1/chat` there. rmcp's `Host` check
//! stays on: loopback names only, plus `ServerConfig::mcp_allowed_hosts`.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::HeaderMap;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use super::QuarryMcp;
use crate::auth::{Caller, authenticate_key, bearer, missing_key, store};
use crate::error::ApiError;
use crate::request_log::RequestProject;
use crate::{AppState, ServerConfig};

/// The names `/mcp` accepts in `Host` whatever the configuration: loopback only, so a web page
/// cannot reach a local server through DNS rebinding.
const LOOPBACK_HOSTS: &[&str] = &["localhost", "127.0.0.1", "::1"];

/// The `/mcp` route for `state`.
pub fn routes(state: &AppState, config: &ServerConfig) -> Router<AppState> {
    let server = QuarryMcp {
        state: state.clone(),
        local: None,
    };
    let allowed_hosts = LOOPBACK_HOSTS
        .iter()
        .map(|host| (*host).to_owned())
        .chain(config.mcp_allowed_hosts.iter().cloned());
    let mcp_config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_allowed_hosts(allowed_hosts)
        .with_max_request_body_bytes(config.max_body_bytes);
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(NeverSessionManager::default()),
        mcp_config,
    );
    Router::new()
        .route_service("/mcp", service)
        .route_layer(middleware::from_fn_with_state(state.clone(), authenticate))
}

/// On a server with a database: 401 unless the request carries a valid key, whose `Caller` then
/// rides in the request's extensions to the tools.
async fn authenticate(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    if state.store.is_some() {
        match caller_of(&state, request.headers()).await {
            Ok(caller) => {
                RequestProject::record(request.extensions(), &caller.project_id);
                request.extensions_mut().insert(caller);
            }
            Err(error) => return error.into_response(),
        }
    }
    next.run(request).await
}

/// The caller of a bearer key: only keys, never the web app's cookie (a page must not drive the
/// tools with a signed-in person's session).
async fn caller_of(state: &AppState, headers: &HeaderMap) -> Result<Caller, ApiError> {
    let store = store(state)?;
    let presented = bearer(headers).ok_or_else(missing_key)??;
    Ok(authenticate_key(store.as_ref(), presented).await?.0)
}
