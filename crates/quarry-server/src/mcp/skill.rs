//! The skill tools: `extract` (the extract skill, as `POST /skill/extract`) and `check` (the
//! output guardrail, as `POST /skill/check`). Neither needs a database or a key's scope.

use std::borrow::Cow;

use rmcp::model::JsonObject;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;
use serde_json::json;

use super::registry::{Access, Effect, ToolDef, tool};
use quarry_detect::skill::CheckInput;

use crate::skill::{ExtractArguments, run_check, run_extract};

/// The `extract` tool's arguments as they came: read by the skill's own request parser
/// (`SkillInput::from_json`), so the tool and `POST /skill/extract` accept and refuse alike.
#[derive(Deserialize)]
#[serde(transparent)]
struct SkillRequest(JsonObject);

impl JsonSchema for SkillRequest {
    fn schema_name() -> Cow<'static, str> {
        ExtractArguments::schema_name()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        ExtractArguments::json_schema(generator)
    }
}

pub(super) fn tools() -> Vec<ToolDef> {
    vec![
        tool(
            "extract",
            "Extract emails, URLs, dates, phone numbers, IP addresses, person names or entities \
             (people, organizations, locations) from text, deterministically and without a model. \
             Answers {\"<target>\": value} (one string, a list for several values, [] for none); \
             with detail, also every match with its code-point offsets.",
            Access::Open,
            Effect::ReadOnly,
            json!({
                "type": "object",
                "description": "{\"<target>\": value or values}, and `matches` with detail",
                "properties": {
                    "matches": {"type": "array", "items": {"type": "object"}}
                },
                "additionalProperties": true
            }),
            |ctx, request: SkillRequest| async move {
                let body = serde_json::to_vec(&request.0).unwrap_or_default();
                run_extract(&ctx.state, &body).await
            },
        ),
        tool(
            "check",
            "Check an extractor's (e.g. a model's) output for the extract skill against the \
             guardrail: valid JSON, the target field, value types and formats, and every value \
             grounded in the source text. Answers the verdict: accepted with each value's evidence, \
             or rejected with one reason per failure.",
            Access::Open,
            Effect::ReadOnly,
            json!({
                "type": "object",
                "properties": {
                    "verdict": {"enum": ["accepted", "rejected"]},
                    "values": {"type": "array", "items": {"type": "object"}},
                    "reasons": {"type": "array", "items": {"type": "object"}}
                },
                "required": ["verdict"]
            }),
            |ctx, request: CheckInput| async move { run_check(&ctx.state, request).await },
        ),
    ]
}
