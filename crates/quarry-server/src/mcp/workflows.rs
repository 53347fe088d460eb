//! Workflow tools (the field-extraction reference's triggering, status and `retryNode`):
//! `trigger_workflow` (as `POST /v1/workflows/{entity_id}`), `get_workflow_status` (as `GET`)
//! and `retry_fields` (as `POST /v1/workflows/{entity_id}/retry`).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::registry::{Access, Effect, ToolDef, tool};
use crate::api::workflows::{
    READ_SCOPES, RetryRequest, RunRequest, TRIGGER_SCOPES, retry_fields, trigger_workflow,
    workflow_status,
};

#[derive(Debug, Deserialize, JsonSchema)]
struct TriggerArguments {
    /// The entity to extract.
    entity_id: String,
    #[serde(flatten)]
    run: RunRequest,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct StatusArguments {
    /// The entity whose latest run to read.
    entity_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct RetryArguments {
    /// The entity whose failed or blocked fields start over.
    entity_id: String,
    #[serde(flatten)]
    retry: RetryRequest,
}

/// A workflow's run, its nodes (one per field task) and the latest result per field.
fn status_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "run": {"type": ["object", "null"]},
            "nodes": {"type": "array", "items": node_schema()},
            "results": {"type": "array", "items": {"type": "object"}}
        },
        "required": ["run", "nodes", "results"]
    })
}

fn node_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "field": {"type": "string"},
            "state": {"type": "string"},
            "waiting_on": {"type": "array", "items": {"type": "string"}},
            "attempts": {"type": "integer"},
            "last_error": {"type": ["string", "null"]},
            "result_id": {"type": ["string", "null"]}
        },
        "required": ["field", "state", "attempts"]
    })
}

pub(super) fn tools() -> Vec<ToolDef> {
    vec![
        tool(
            "trigger_workflow",
            "Queue the extraction of an entity's fields (all not locked, or `fields`): answers at \
             once with the run and its nodes; workers extract in the background. Follow it with \
             get_workflow_status.",
            Access::Scoped(TRIGGER_SCOPES),
            Effect::Writes,
            status_schema(),
            |ctx, arguments: TriggerArguments| async move {
                trigger_workflow(
                    &ctx.state,
                    ctx.caller()?,
                    &arguments.entity_id,
                    arguments.run,
                )
                .await
            },
        ),
        tool(
            "get_workflow_status",
            "The entity's latest extraction run: its status, each field's node state (queued, \
             running, waiting_human, done, failed, blocked, skipped, pending), attempts and \
             errors, and the latest result per field.",
            Access::Scoped(READ_SCOPES),
            Effect::ReadOnly,
            status_schema(),
            |ctx, arguments: StatusArguments| async move {
                workflow_status(&ctx.state, ctx.caller()?, &arguments.entity_id).await
            },
        ),
        tool(
            "retry_fields",
            "Start the failed or blocked fields of an entity's latest runs over (all, or \
             `fields`): answers the field tasks queued again.",
            Access::Scoped(TRIGGER_SCOPES),
            Effect::Writes,
            json!({
                "type": "object",
                "properties": {"retried": {"type": "array", "items": node_schema()}},
                "required": ["retried"]
            }),
            |ctx, arguments: RetryArguments| async move {
                retry_fields(
                    &ctx.state,
                    ctx.caller()?,
                    &arguments.entity_id,
                    arguments.retry,
                )
                .await
            },
        ),
    ]
}
