//! A JSON body extractor whose rejections use the API's one error shape.

use axum::extract::{FromRequest, Request};
use serde::de::DeserializeOwned;

use crate::error::{ApiError, body_rejected};

/// Like `axum::Json`, but a wrong content type or malformed body answers
/// `400 {"error": "MalformedRequest", "message": ...}` (413 for an oversize body).
pub struct JsonBody<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        match axum::Json::<T>::from_request(request, state).await {
            Ok(axum::Json(value)) => Ok(JsonBody(value)),
            Err(rejection) => Err(body_rejected(rejection.status(), rejection.body_text())),
        }
    }
}
