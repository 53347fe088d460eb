//! A JSON body extractor whose rejections use the API's one error shape.

use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use serde::de::DeserializeOwned;

use crate::error::ApiError;

/// Like `axum::Json`, but a wrong content type or malformed body answers
/// `400 {"error": "MalformedRequest", "message": ...}` (413 for an oversize body).
pub struct JsonBody<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        match axum::Json::<T>::from_request(request, state).await {
            Ok(axum::Json(value)) => Ok(JsonBody(value)),
            Err(rejection) => {
                let status = rejection.status();
                let (status, code) = if status == StatusCode::PAYLOAD_TOO_LARGE {
                    (status, "InputTooLarge")
                } else if status == StatusCode::UNSUPPORTED_MEDIA_TYPE {
                    (StatusCode::BAD_REQUEST, "UnsupportedContentType")
                } else {
                    (StatusCode::BAD_REQUEST, "MalformedRequest")
                };
                Err(ApiError::new(status, code, rejection.body_text()))
            }
        }
    }
}
