//! A JSON body extractor whose rejections use the API's one error shape.

use axum::extract::{FromRequest, Request};
use serde::de::DeserializeOwned;

use crate::error::{ApiError, body_rejected};

/// Like `axum::Json` (an object only), but a wrong content type or malformed body answers
/// `400 {"error": "MalformedRequest", "message": ...}` (413 for an oversize body).
pub struct JsonBody<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        let value = match axum::Json::<serde_json::Value>::from_request(request, state).await {
            Ok(axum::Json(value)) => value,
            Err(rejection) => return Err(body_rejected(rejection.status(), rejection.body_text())),
        };
        // Every body of the API is an object: serde would also read a struct from an array of
        // its fields in order, which the document calls invalid.
        if !value.is_object() {
            return Err(body_rejected(
                axum::http::StatusCode::UNPROCESSABLE_ENTITY,
                "Failed to deserialize the JSON body into the target type: expected a JSON object"
                    .to_owned(),
            ));
        }
        serde_json::from_value(value)
            .map(JsonBody)
            .map_err(|error| {
                body_rejected(
                    axum::http::StatusCode::UNPROCESSABLE_ENTITY,
                    format!("Failed to deserialize the JSON body into the target type: {error}"),
                )
            })
    }
}
