//! Framework rejections in the one error shape: any 4xx or 5xx answer whose body is not JSON —
//! axum's `Query`, `Path`, `Json` and body-limit rejections, answers no handler wrote — is
//! rewritten here, in one place, into `{"error": "<Code>", "message": "..."}` with the code's
//! status; its text becomes the message.

use axum::extract::Request;
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::{ApiError, code_for_status};

/// The most of a rejection's text kept as the message.
const MAX_MESSAGE_BYTES: usize = 4096;

/// Middleware: passes every answer through, rewriting non-JSON error answers.
pub async fn json_errors(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) || is_json(&response) {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, MAX_MESSAGE_BYTES)
        .await
        .map(|bytes| String::from_utf8_lossy(&bytes).trim().to_owned())
        .unwrap_or_default();
    let message = if text.is_empty() {
        parts
            .status
            .canonical_reason()
            .unwrap_or("the request was refused")
            .to_owned()
    } else {
        text
    };
    ApiError::new(code_for_status(parts.status), message).into_response()
}

fn is_json(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/json"))
}
