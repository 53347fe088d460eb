//! `extract_with_schema`: the schema agent, as `POST /v1/chat` runs it. A document and a schema
//! start a conversation; when fields stay unresolved the result carries `status:
//! needs_clarification` and a `question`, and the agent answers by calling the tool again with
//! the `conversation_id` and its `answer` (the conversation is stored like a chat's: in the
//! caller's project, or in memory on a server without a database).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::registry::{Access, Ctx, Effect, ToolDef, tool};
use crate::chat::{CHAT_SCOPES, ChatRequest, begin_turn, chat_project, finish_turn};
use crate::error::ApiError;
use quarry_core::ErrorCode;

/// Start with `document` and `schema`, or answer a question with `conversation_id` and `answer`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SchemaExtractArguments {
    /// The document to extract from (starts a conversation; needs `schema`).
    #[serde(default)]
    document: Option<String>,
    /// The fields to extract: a JSON Schema object, or JSON Schema / Quarry YAML as text.
    #[serde(default)]
    schema: Option<Value>,
    /// The conversation whose question `answer` answers (from an earlier result).
    #[serde(default)]
    conversation_id: Option<String>,
    /// The answer to that conversation's question, in words.
    #[serde(default)]
    answer: Option<String>,
}

/// What one turn answered.
#[derive(Debug, Serialize)]
struct SchemaExtraction {
    /// Answer the question with this id.
    conversation_id: String,
    /// `complete`, or `needs_clarification` when `question` asks for what is missing.
    status: Value,
    /// The extracted object so far.
    value: Value,
    /// Per field: value, grounding spans, confidence, attempts.
    fields: Value,
    usage: Value,
    /// What the agent needs to know to finish (only with `needs_clarification`).
    question: Option<String>,
}

impl SchemaExtractArguments {
    /// The chat message the arguments stand for.
    fn into_chat(self) -> Result<ChatRequest, ApiError> {
        let invalid = |message: &str| {
            ApiError::new(
                ErrorCode::InvalidArguments,
                format!(
                    "{message}: start with document and schema, or answer a question with \
                     conversation_id and answer"
                ),
            )
        };
        match self.conversation_id {
            Some(conversation_id) => {
                if self.document.is_some() || self.schema.is_some() {
                    return Err(invalid("an answer takes no document or schema"));
                }
                let answer = self.answer.ok_or_else(|| invalid("answer is missing"))?;
                Ok(ChatRequest {
                    conversation_id: Some(conversation_id),
                    message: answer,
                    schema: None,
                })
            }
            None => {
                if self.answer.is_some() {
                    return Err(invalid("an answer needs the conversation_id it answers"));
                }
                let document = self
                    .document
                    .ok_or_else(|| invalid("document is missing"))?;
                Ok(ChatRequest {
                    conversation_id: None,
                    message: document,
                    schema: self.schema,
                })
            }
        }
    }
}

async fn extract_with_schema(
    ctx: Ctx,
    arguments: SchemaExtractArguments,
) -> Result<SchemaExtraction, ApiError> {
    let project = chat_project(&ctx.state, ctx.caller.as_ref())?;
    let request = arguments.into_chat()?;
    let turn = begin_turn(&ctx.state, project, request).await?;
    let conversation_id = turn.conversation.id.clone();
    let answer = finish_turn(turn, &|_: &str| {}).await?;
    let field = |name: &str| answer.result.get(name).cloned().unwrap_or(Value::Null);
    Ok(SchemaExtraction {
        conversation_id,
        status: field("status"),
        value: field("value"),
        fields: field("fields"),
        usage: field("usage"),
        question: answer.question,
    })
}

pub(super) fn tools() -> Vec<ToolDef> {
    vec![tool(
        "extract_with_schema",
        "Extract the fields of a JSON Schema (or Quarry YAML schema) from a document with the \
         model: every value validated and grounded in the document. When fields stay unresolved \
         the result has status needs_clarification and a question; answer it by calling this tool \
         again with conversation_id and answer (no document or schema).",
        Access::ScopedWithDatabase(CHAT_SCOPES),
        Effect::Writes,
        json!({
            "type": "object",
            "properties": {
                "conversation_id": {"type": "string"},
                "status": {"enum": ["complete", "needs_clarification"]},
                "value": {},
                "fields": {},
                "usage": {},
                "question": {"type": ["string", "null"]}
            },
            "required": ["conversation_id", "status", "value", "question"]
        }),
        extract_with_schema,
    )]
}
