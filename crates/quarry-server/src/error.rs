//! The API's one error shape; the HTTP status of each code comes from [`ErrorCode`]'s table.
//! Also the answers for what the framework rejects and for a pipeline failure.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use quarry_core::{ErrorCode, SkillError};
use quarry_pipeline::PipelineError;
use serde::Serialize;

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
    ApiError::new(code_for_status(status), detail)
}

/// The code for an error status the framework chose (a rejection, not a handler's `ApiError`).
pub fn code_for_status(status: StatusCode) -> ErrorCode {
    match status {
        StatusCode::UNAUTHORIZED => ErrorCode::Unauthorized,
        StatusCode::FORBIDDEN => ErrorCode::Forbidden,
        StatusCode::NOT_FOUND => ErrorCode::NotFound,
        StatusCode::METHOD_NOT_ALLOWED => ErrorCode::MethodNotAllowed,
        StatusCode::PAYLOAD_TOO_LARGE => ErrorCode::InputTooLarge,
        StatusCode::URI_TOO_LONG => ErrorCode::UriTooLong,
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ErrorCode::UnsupportedContentType,
        StatusCode::SERVICE_UNAVAILABLE => ErrorCode::Overloaded,
        StatusCode::REQUEST_TIMEOUT | StatusCode::GATEWAY_TIMEOUT => ErrorCode::DeadlineExceeded,
        status if status.is_server_error() => ErrorCode::Internal,
        _ => ErrorCode::MalformedRequest,
    }
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

/// The one error shape on the wire (and in the OpenAPI document).
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "Error")]
pub(crate) struct ErrorBody<'a> {
    /// The error code, e.g. `NotFound`, `Forbidden`, `MalformedRequest`.
    pub error: &'a str,
    /// What was wrong and what to do about it.
    pub message: &'a str,
}

/// Seconds an `Overloaded` answer asks the client to wait before retrying (`Retry-After`).
pub const RETRY_AFTER_SECONDS: u32 = 1;

impl ApiError {
    /// The JSON body of the answer.
    fn body(&self) -> String {
        serde_json::to_string(&ErrorBody {
            error: self.code.as_str(),
            message: &self.message,
        })
        .unwrap_or_default()
    }

    /// The whole answer as HTTP/1.1 bytes with `Connection: close`, for the connection layer
    /// that answers before (or instead of) handing a connection to the router: a connection
    /// over the cap, a request line over the limit.
    pub fn to_http1_bytes(&self) -> Vec<u8> {
        let status = self.status();
        let body = self.body();
        let mut head = format!(
            "HTTP/1.1 {} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
            status.as_u16(),
            status.canonical_reason().unwrap_or(""),
            body.len()
        );
        if self.code == ErrorCode::Overloaded {
            head.push_str(&format!("retry-after: {RETRY_AFTER_SECONDS}\r\n"));
        }
        head.push_str("\r\n");
        head.push_str(&body);
        head.into_bytes()
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (
            self.status(),
            [(header::CONTENT_TYPE, "application/json")],
            self.body(),
        )
            .into_response();
        if self.code == ErrorCode::Overloaded {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECONDS));
        }
        response
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

/// The API's answer for a pipeline failure.
pub fn pipeline_error(error: PipelineError) -> ApiError {
    match error {
        PipelineError::Store(store_error) => store_error.into(),
        other => ApiError::new(other.code(), other.to_string()),
    }
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
