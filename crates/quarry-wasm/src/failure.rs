//! A failure as it crosses into JavaScript: the error code from Quarry's one table (or the
//! guardrail's `MalformedOutput` for text that is not JSON at all) and the human message, thrown
//! as the HTTP host's error JSON for the wrapper to turn into a `SkillError`.

use quarry_core::guardrail::ViolationKind;
use quarry_core::json::to_spaced_string;
use quarry_core::{ErrorCode, SkillError};
use quarry_detect::entity::EntityDataError;
use serde::Serialize;
use wasm_bindgen::JsValue;

/// `{"error": "<Code>", "message": "…"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failure {
    pub error: &'static str,
    pub message: String,
}

impl From<SkillError> for Failure {
    fn from(error: SkillError) -> Self {
        Failure {
            error: error.code(),
            message: error.to_string(),
        }
    }
}

impl Failure {
    /// The lenient parser found no JSON it could read.
    pub fn unparsable(error: &quarry_parse::ParseError) -> Self {
        Failure {
            error: ViolationKind::MalformedOutput.code(),
            message: error.to_string(),
        }
    }

    /// A schema given to `parse` that is not JSON.
    pub fn bad_schema(error: &serde_json::Error) -> Self {
        SkillError::MalformedRequest(format!("the schema is not JSON: {error}")).into()
    }

    /// Entity data that could not be installed: `Conflict` when some already is, else
    /// `EntityDataNotLoaded` (the bytes were refused, so `entity` and `name` still cannot run).
    pub fn entity_data(error: &EntityDataError) -> Self {
        let code = match error {
            EntityDataError::AlreadyLoaded => ErrorCode::Conflict,
            EntityDataError::NotEntityData | EntityDataError::Damaged(_) => {
                ErrorCode::EntityDataNotLoaded
            }
        };
        Failure {
            error: code.as_str(),
            message: error.to_string(),
        }
    }
}

/// The value thrown into JavaScript for `failure`.
pub fn thrown(failure: Failure) -> JsValue {
    JsValue::from_str(&to_spaced_string(&failure))
}
