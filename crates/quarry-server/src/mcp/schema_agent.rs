//! `extract_with_schema`: the schema agent, as `POST /v1/chat` runs it. A document and a schema
//! start a conversation; when fields stay unresolved the result carries `status:
//! needs_clarification` and a `question`, and the agent answers by calling the tool again with
//! the `conversation_id` and its `answer` (the conversation is stored like a chat's: in the
//! caller's project, or in memory on a server without a database).

use quarry_agent::FieldReport;
use quarry_llm::Usage;
use rmcp::handler::server::common::schema_for_output;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::registry::{Access, Ctx, Effect, ToolDef, tool};
use crate::chat::{CHAT_SCOPES, ChatRequest, begin_turn, chat_project, finish_turn};
use crate::conversations::{COMPLETE, NEEDS_CLARIFICATION};
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

/// What one turn answered: the parts of the chat turn's result (`TurnResult`), whose schema the
/// output schema derives from quarry-agent's and quarry-llm's types.
#[derive(Debug, Serialize, JsonSchema)]
struct SchemaExtraction {
    /// Answer the question with this id.
    conversation_id: String,
    /// `complete`, or `needs_clarification` when `question` asks for what is missing.
    #[schemars(with = "String", extend("enum" = [COMPLETE, NEEDS_CLARIFICATION]))]
    status: Value,
    /// The extracted object so far.
    value: Value,
    /// Per field: value, grounding spans, confidence, attempts, repairs and problems.
    #[schemars(with = "Vec<FieldReport>")]
    fields: Value,
    /// Tokens spent on the turn's model calls.
    #[schemars(with = "Usage")]
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
                    now: None,
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
                    now: None,
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
        Value::Object(schema_for_output::<SchemaExtraction>().as_ref().clone()),
        extract_with_schema,
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The output schema is derived: a field report's parts are typed, as in `TurnResult`.
    #[test]
    fn output_schema_types_the_field_reports() {
        let tool = &tools()[0].tool;
        let schema = Value::Object(tool.output_schema.as_deref().unwrap().clone());
        let properties = &schema["properties"];
        assert_eq!(
            properties["status"]["enum"],
            serde_json::json!([COMPLETE, NEEDS_CLARIFICATION])
        );
        assert_eq!(properties["fields"]["items"]["$ref"], "#/$defs/FieldReport");
        assert_eq!(properties["usage"]["$ref"], "#/$defs/Usage");
        let report = &schema["$defs"]["FieldReport"]["properties"];
        assert_eq!(report["grounding"]["$ref"], "#/$defs/GroundingStatus");
        assert_eq!(report["spans"]["items"]["$ref"], "#/$defs/Span");
        let required = schema["required"].as_array().unwrap();
        for name in [
            "conversation_id",
            "status",
            "value",
            "fields",
            "usage",
            "question",
        ] {
            assert!(required.contains(&Value::from(name)), "{name}");
        }
    }
}
