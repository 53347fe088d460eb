//! Quarry's HTTP host.
//!
//! **Architecture Invariant:** this is the only crate that knows HTTP: request/response DTOs,
//! status codes and the one error shape `{"error": "<Code>", "message": "..."}` live here.

mod error;
mod health;
mod skill;

use std::net::SocketAddr;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use tokio::net::TcpListener;

pub use error::ApiError;

/// Request bodies over this many bytes are refused with 413 unless configured otherwise.
pub const DEFAULT_BODY_LIMIT: usize = 16 * 1024 * 1024 + 64 * 1024;

#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Largest request body, in bytes.
    pub max_body_bytes: usize,
    /// Largest `text` the skill accepts, in bytes.
    pub max_input_bytes: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            max_body_bytes: DEFAULT_BODY_LIMIT,
            max_input_bytes: quarry_detect::skill::DEFAULT_MAX_INPUT_BYTES,
        }
    }
}

/// Every route of the server.
pub fn router(config: ServerConfig) -> Router {
    Router::new()
        .route("/healthz", get(health::healthz))
        .route("/skill/extract", post(skill::extract))
        .route("/skill/check", post(skill::check))
        .fallback(error::not_found)
        .method_not_allowed_fallback(error::method_not_allowed)
        .layer(DefaultBodyLimit::max(config.max_body_bytes))
        .with_state(config)
}

/// Binds `addr`, prints the bound address on stderr (`listening on http://…`, so port 0 is
/// usable), and serves until Ctrl-C or SIGTERM.
pub async fn serve(addr: SocketAddr, config: ServerConfig) -> std::io::Result<()> {
    let listener = TcpListener::bind(addr).await?;
    eprintln!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, router(config))
        .with_graceful_shutdown(shutdown_signal())
        .await
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}
