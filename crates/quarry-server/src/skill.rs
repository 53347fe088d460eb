//! The skill endpoints: `POST /skill/extract` (`{"text", "target", "now"?, "region"?, "detail"?}`
//! in, the same JSON as `quarry extract` out) and `POST /skill/check` (the output guardrail).

use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use chrono::Local;
use quarry_core::guardrail::Verdict;
use quarry_core::json::to_spaced_string;
use quarry_core::{ErrorCode, Target};
use quarry_detect::skill::{self, CheckInput, SkillDefaults, SkillInput, SkillOutput};
use schemars::JsonSchema;
use serde::Serialize;

use crate::AppState;
use crate::error::{ApiError, body_rejected};

pub async fn extract(
    State(config): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let body = json_body(&headers, body)?;
    Ok(spaced_json(&run_extract(&config, &body).await?))
}

/// The skill on one request body (`{"text", "target", "now"?, "region"?, "detail"?}`): what
/// `POST /skill/extract` and the MCP `extract` tool both answer.
pub(crate) async fn run_extract(state: &AppState, body: &[u8]) -> Result<SkillOutput, ApiError> {
    let admission = state.work.admit(body.len()).await?;
    let input = SkillInput::from_json(body)?;
    let mut defaults = SkillDefaults::new(Local::now().fixed_offset());
    defaults.max_input_bytes = state.max_input_bytes;
    // Detection is CPU-bound: it runs off the async workers, within the server's work limits.
    let result = admission
        .run(move || skill::run(&input, &defaults))
        .await??;
    Ok(result)
}

/// A 200 answer whose body is byte-identical to what the CLI prints.
fn spaced_json<T: Serialize>(value: &T) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        to_spaced_string(value),
    )
        .into_response()
}

/// The body of a JSON request, or the error answer for a wrong content type or unreadable body.
pub(crate) fn json_body(
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Bytes, ApiError> {
    require_json(headers)?;
    body.map_err(|rejection| body_rejected(rejection.status(), rejection.body_text()))
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
            ErrorCode::UnsupportedContentType,
            format!(
                "expected Content-Type: application/json, got '{}'",
                if content_type.is_empty() {
                    "none"
                } else {
                    content_type
                }
            ),
        ))
    }
}

/// `POST /skill/extract` body (and the MCP `extract` tool's arguments) as documented: the
/// request itself is read by the skill's own parser (`SkillInput::from_json`).
#[derive(JsonSchema)]
#[allow(dead_code)]
pub(crate) struct ExtractArguments {
    /// The text to read.
    #[schemars(length(min = 1))]
    text: String,
    /// What to extract: email, url, date, phone, ip, name or entity.
    #[schemars(extend("enum" = Target::ALL.map(Target::as_str)))]
    target: String,
    /// Reference time for relative dates ("next Friday"), RFC 3339 (default: now).
    #[schemars(extend("format" = "date-time"))]
    now: Option<String>,
    /// Default phone region, ISO 3166 alpha-2 (e.g. US, DE).
    #[schemars(pattern(r"^[A-Za-z]{2}$"))]
    region: Option<String>,
    /// Also list every match with code-point offsets and its normalised value.
    detail: Option<bool>,
}

/// `POST /skill/check`: the guardrail's verdict on an output, 200 whether accepted or rejected
/// (the request was fine; the verdict is the answer). Bad requests get the error shape.
pub async fn check(
    State(config): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let body = json_body(&headers, body)?;
    let request = CheckInput::from_json(&body)?;
    Ok(spaced_json(&run_check(&config, request).await?))
}

/// The guardrail's verdict on one request: what `POST /skill/check` and the MCP `check` tool
/// both answer.
pub(crate) async fn run_check(state: &AppState, request: CheckInput) -> Result<Verdict, ApiError> {
    let admission = state
        .work
        .admit(request.text.len() + request.output.len())
        .await?;
    let target = request.target.parse()?;
    let max_input_bytes = state.max_input_bytes;
    Ok(admission
        .run(move || skill::check(&request.text, target, &request.output, max_input_bytes))
        .await??)
}
