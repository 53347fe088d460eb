//! The API's one error shape; the HTTP status of each code comes from [`ErrorCode`]'s table.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use quarry_core::{ErrorCode, SkillError};
use serde_json::json;

/// An error answer: `{"error": code, "message": message}` with the code's HTTP status.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError {
            code,
            message: message.into(),
        }
    }

    /// The HTTP status, from the [`ErrorCode`] table.
    pub fn status(&self) -> StatusCode {
        StatusCode::from_u16(self.code.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }
}

/// The answer for a request body axum could not read: 413 `InputTooLarge` for an oversize body,
/// 400 `UnsupportedContentType` for a non-JSON one, 400 `MalformedRequest` otherwise.
pub fn body_rejected(status: StatusCode, detail: String) -> ApiError {
    let code = if status == StatusCode::PAYLOAD_TOO_LARGE {
        ErrorCode::InputTooLarge
    } else if status == StatusCode::UNSUPPORTED_MEDIA_TYPE {
        ErrorCode::UnsupportedContentType
    } else {
        ErrorCode::MalformedRequest
    };
    ApiError::new(code, detail)
}

impl From<SkillError> for ApiError {
    fn from(error: SkillError) -> Self {
        ApiError::new(error.error_code(), error.to_string())
    }
}

impl From<quarry_core::store::StoreError> for ApiError {
    fn from(error: quarry_core::store::StoreError) -> Self {
        ApiError::new(error.code(), error.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"error": self.code.as_str(), "message": self.message});
        (self.status(), axum::Json(body)).into_response()
    }
}

pub async fn not_found() -> ApiError {
    ApiError::new(
        ErrorCode::NotFound,
        "no such route; see POST /skill/extract and GET /healthz",
    )
}

pub async fn method_not_allowed() -> ApiError {
    ApiError::new(
        ErrorCode::MethodNotAllowed,
        "this route does not accept that method",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use quarry_core::store::StoreError;

    #[test]
    fn statuses_come_from_the_code_table() {
        let lost = ApiError::from(StoreError::LeaseLost("task t1".into()));
        assert_eq!(
            (lost.code, lost.status()),
            (ErrorCode::LeaseLost, StatusCode::CONFLICT)
        );
        let backend = ApiError::from(StoreError::Backend("down".into()));
        assert_eq!(backend.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let big = ApiError::from(SkillError::InputTooLarge { size: 2, limit: 1 });
        assert_eq!(big.status(), StatusCode::PAYLOAD_TOO_LARGE);
        for &code in ErrorCode::ALL {
            assert_eq!(
                ApiError::new(code, "").status().as_u16(),
                code.http_status()
            );
        }
    }
}
