//! The request deadline: a request not answered (its response head ready) within it gets 504
//! `DeadlineExceeded`, and its handler is dropped, with any extraction still queued behind the
//! work limits (`work.rs`). Reading the body counts, so a body trickled in slowly ends too.
//! Streams already answered (Server-Sent Events) are not cut.

use std::time::Duration;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use quarry_core::ErrorCode;

use crate::error::ApiError;

/// Middleware: answers 504 when `deadline` passes first.
pub async fn within_deadline(
    State(deadline): State<Duration>,
    request: Request,
    next: Next,
) -> Response {
    match tokio::time::timeout(deadline, next.run(request)).await {
        Ok(response) => response,
        Err(_elapsed) => ApiError::new(
            ErrorCode::DeadlineExceeded,
            format!(
                "the request was not answered within the server's {} s deadline; its work was abandoned",
                deadline.as_secs_f64()
            ),
        )
        .into_response(),
    }
}
