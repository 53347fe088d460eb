//! Result tools: `submit_value` (an external agent's value, as
//! `POST /v1/extraction/{entity_id}/submit`), `list_pending_results` (the review queue, as
//! `GET /v1/review-queue`), `approve_result` and `reject_result` (as
//! `PATCH /v1/extraction/results/{id}`).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::registry::{Access, Effect, ToolDef, tool};
use crate::api::extraction::{
    REVIEW_SCOPES, ReviewRequest, SUBMIT_SCOPES, Submission, review_result, submit_value,
};
use crate::api::review::{QUEUE_SCOPES, QueueQuery, review_queue};

#[derive(Debug, Deserialize, JsonSchema)]
struct SubmitArguments {
    /// The entity the value belongs to.
    entity_id: String,
    #[serde(flatten)]
    submission: Submission,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct QueueArguments {
    /// The entity type whose pending results to list.
    entity_type: String,
    /// How many at most (1 to 200, default 50).
    #[serde(default)]
    limit: Option<u64>,
    /// How many to skip.
    #[serde(default)]
    offset: Option<u64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ApproveArguments {
    /// The result to approve (its value is promoted into the entity).
    result_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RejectArguments {
    /// The result to reject.
    result_id: String,
    /// Why; with a reason the field is extracted again with it as feedback.
    #[serde(default)]
    reason: Option<String>,
}

/// One extraction result (the reference's `ExtractionResult`).
fn result_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "entity_id": {"type": "string"},
            "field_name": {"type": "string"},
            "value": {},
            "status": {"enum": ["pending", "approved", "rejected", "superseded"]},
            "agent_id": {"type": "string"},
            "sources": {"type": "array"}
        },
        "required": ["id", "entity_id", "field_name", "value", "status"]
    })
}

fn review_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "result": result_schema(),
            "entity": {"type": ["object", "null"]},
            "rerun": {"type": ["object", "null"]}
        },
        "required": ["result"]
    })
}

pub(super) fn tools() -> Vec<ToolDef> {
    vec![
        tool(
            "submit_value",
            "Submit a value an outside agent found for an entity's field, with its sources and \
             confidence: checked against the field's type like any extraction and recorded as \
             pending for review.",
            Access::Scoped(SUBMIT_SCOPES),
            Effect::Writes,
            result_schema(),
            |ctx, arguments: SubmitArguments| async move {
                submit_value(
                    &ctx.state,
                    ctx.caller()?,
                    &arguments.entity_id,
                    arguments.submission,
                )
                .await
            },
        ),
        tool(
            "list_pending_results",
            "The review queue of an entity type: its pending results, oldest first, each with \
             its entity's title.",
            Access::Scoped(QUEUE_SCOPES),
            Effect::ReadOnly,
            json!({
                "type": "object",
                "properties": {
                    "total": {"type": "integer"},
                    "limit": {"type": "integer"},
                    "offset": {"type": "integer"},
                    "items": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "result": result_schema(),
                                "entity_title": {"type": "string"},
                                "entity_type": {"type": "string"}
                            },
                            "required": ["result", "entity_title", "entity_type"]
                        }
                    }
                },
                "required": ["total", "limit", "offset", "items"]
            }),
            |ctx, arguments: QueueArguments| async move {
                let query = QueueQuery {
                    entity_type: Some(arguments.entity_type),
                    limit: arguments.limit.map(|n| n.to_string()),
                    offset: arguments.offset.map(|n| n.to_string()),
                };
                review_queue(&ctx.state, ctx.caller()?, query).await
            },
        ),
        tool(
            "approve_result",
            "Approve a pending result: its value is promoted into the entity, and fields waiting \
             for it move on.",
            Access::Scoped(REVIEW_SCOPES),
            Effect::Idempotent,
            review_schema(),
            |ctx, arguments: ApproveArguments| async move {
                review_result(
                    &ctx.state,
                    ctx.caller()?,
                    &arguments.result_id,
                    ReviewRequest::Approve,
                )
                .await
            },
        ),
        tool(
            "reject_result",
            "Reject a result; with a reason the field is extracted again with the reason as \
             feedback (`rerun` names the queued run).",
            Access::Scoped(REVIEW_SCOPES),
            Effect::Writes,
            review_schema(),
            |ctx, arguments: RejectArguments| async move {
                let request = ReviewRequest::Reject {
                    reason: arguments.reason,
                };
                review_result(&ctx.state, ctx.caller()?, &arguments.result_id, request).await
            },
        ),
    ]
}
