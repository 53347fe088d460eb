//! `POST /skill/extract`: `{"text", "target", "now"?, "region"?, "detail"?}` in, the same JSON as
//! `quarry extract` out.

use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::Local;
use quarry_core::json::to_spaced_string;
use quarry_detect::skill::{self, SkillDefaults, SkillInput};

use crate::ServerConfig;
use crate::error::ApiError;

pub async fn extract(
    State(config): State<ServerConfig>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    require_json(&headers)?;
    let body = body.map_err(|rejection| {
        let status = rejection.status();
        let code = if status == StatusCode::PAYLOAD_TOO_LARGE {
            "InputTooLarge"
        } else {
            "MalformedRequest"
        };
        ApiError::new(status, code, rejection.body_text())
    })?;
    let input = SkillInput::from_json(&body)?;
    let mut defaults = SkillDefaults::new(Local::now().fixed_offset());
    defaults.max_input_bytes = config.max_input_bytes;
    // Detection is CPU-bound; keep it off the async workers so large texts do not stall others.
    let result = tokio::task::spawn_blocking(move || skill::run(&input, &defaults))
        .await
        .map_err(|_| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Internal",
                "the extraction task failed; please report this input",
            )
        })??;
    Ok((
        [(header::CONTENT_TYPE, "application/json")],
        to_spaced_string(&result),
    )
        .into_response())
}

fn require_json(headers: &HeaderMap) -> Result<(), ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("");
    let media_type = content_type.split(';').next().unwrap_or("").trim();
    if media_type.eq_ignore_ascii_case("application/json") {
        Ok(())
    } else {
        Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "UnsupportedContentType",
            format!(
                "expected Content-Type: application/json, got '{}'",
                if content_type.is_empty() { "none" } else { content_type }
            ),
        ))
    }
}
