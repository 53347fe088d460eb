//! Quarry's HTTP host.
//!
//! **Architecture Invariant:** this is the only crate that knows HTTP: request/response DTOs,
//! status codes and the one error shape `{"error": "<Code>", "message": "..."}` live here.

mod api;
mod auth;
mod chat;
mod connection;
mod conversations;
mod deadline;
mod error;
mod health;
mod json;
pub mod keys;
mod listener;
pub mod mcp;
mod metrics;
mod openapi;
mod rejections;
mod request_log;
mod routes;
mod session;
mod skill;
mod state;
mod turn_events;
mod web;
mod work;

use std::future::Future;
use std::net::SocketAddr;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::middleware;
use tokio::net::TcpListener;

pub use error::ApiError;
pub use listener::{ConnectionLimits, DEFAULT_MAX_CONNECTIONS};
pub use routes::openapi_document;
pub use state::{AppState, DEFAULT_BODY_LIMIT, DEFAULT_REQUEST_TIMEOUT, ServerConfig};
pub use work::{DEFAULT_BUDGET_BYTES, WorkLimits};

/// Every route of the server.
pub fn router(config: ServerConfig) -> Router {
    let state = AppState::new(&config);
    routes::operations()
        .into_iter()
        .fold(Router::new(), |router, operation| {
            router.route(operation.path, operation.handler)
        })
        // The deadline bounds every route above, not /mcp: its extract_with_schema runs a model
        // conversation inline (as /v1/chat streams one); its extract and check tools still go
        // through the work limits.
        .layer(middleware::from_fn_with_state(
            config.request_timeout,
            deadline::within_deadline,
        ))
        .merge(mcp::routes(&state, &config))
        .fallback(error::not_found)
        .method_not_allowed_fallback(error::method_not_allowed)
        .layer(DefaultBodyLimit::max(config.max_body_bytes))
        .layer(middleware::from_fn(rejections::json_errors))
        // Outermost, so the log line and the metrics see the status the client gets.
        .layer(middleware::from_fn_with_state(
            state.clone(),
            request_log::observe,
        ))
        .with_state(state)
}

/// Binds `addr`, prints the bound address on stderr (`listening on http://…`, so port 0 is
/// usable), and serves until `shutdown` completes (e.g. [`shutdown_signal`]); then requests in
/// flight get the configured grace period before their connections are closed.
pub async fn serve(
    addr: SocketAddr,
    config: ServerConfig,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let listener = TcpListener::bind(addr).await?;
    eprintln!("listening on http://{}", listener.local_addr()?);
    let connections = config.connections;
    listener::serve(listener, router(config), connections, shutdown).await;
    Ok(())
}

/// Ctrl-C or SIGTERM: what ends the server, `quarry worker` and `quarry mcp`. The handlers are
/// installed when this is called (inside a tokio runtime), not when the future is first polled,
/// so a signal that arrives any time after the call is seen.
pub fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let terminate = signal(SignalKind::terminate()).ok();
        let interrupt = signal(SignalKind::interrupt()).ok();
        async move {
            let wait = |listener: Option<tokio::signal::unix::Signal>| async move {
                match listener {
                    Some(mut listener) => {
                        listener.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                () = wait(terminate) => {},
                () = wait(interrupt) => {},
            }
        }
    }
    #[cfg(not(unix))]
    async {
        let _ = tokio::signal::ctrl_c().await;
    }
}
