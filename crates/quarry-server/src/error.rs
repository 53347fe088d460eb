//! The API's one error shape and the table from error codes to HTTP statuses.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use quarry_core::SkillError;
use serde_json::json;

/// An error answer: `{"error": code, "message": message}` with `status`.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }
}

/// The answer for a request body axum could not read: 413 `InputTooLarge` for an oversize body,
/// 400 `UnsupportedContentType` for a non-JSON one, 400 `MalformedRequest` otherwise.
pub fn body_rejected(status: StatusCode, detail: String) -> ApiError {
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::new(status, "InputTooLarge", detail)
    } else if status == StatusCode::UNSUPPORTED_MEDIA_TYPE {
        ApiError::new(StatusCode::BAD_REQUEST, "UnsupportedContentType", detail)
    } else {
        ApiError::new(StatusCode::BAD_REQUEST, "MalformedRequest", detail)
    }
}

impl From<SkillError> for ApiError {
    fn from(error: SkillError) -> Self {
        let status = match error {
            SkillError::InputTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            _ => StatusCode::BAD_REQUEST,
        };
        ApiError::new(status, error.code(), error.to_string())
    }
}

impl From<quarry_core::store::StoreError> for ApiError {
    fn from(error: quarry_core::store::StoreError) -> Self {
        use quarry_core::store::StoreError;
        let (status, code) = match &error {
            StoreError::NotFound { .. } => (StatusCode::NOT_FOUND, "NotFound"),
            StoreError::Conflict(_) => (StatusCode::CONFLICT, "Conflict"),
            StoreError::InvalidState(_) => (StatusCode::CONFLICT, "InvalidState"),
            StoreError::Backend(_) => (StatusCode::INTERNAL_SERVER_ERROR, "StorageError"),
        };
        ApiError::new(status, code, error.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"error": self.code, "message": self.message});
        (self.status, axum::Json(body)).into_response()
    }
}

pub async fn not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "NotFound",
        "no such route; see POST /skill/extract and GET /healthz",
    )
}

pub async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "MethodNotAllowed",
        "this route does not accept that method",
    )
}
