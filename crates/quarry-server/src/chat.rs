//! `POST /v1/chat`: schema extraction as a conversation, streamed as Server-Sent Events.
//!
//! The first message of a conversation carries the document (`message`) and the `schema`; the
//! answer streams `conversation` (the id), `token` (the model's text as it arrives), `result`
//! (the extraction so far), and — when fields stay unresolved — the clarification question as an
//! ordinary assistant `message`. The client answers by posting the next user message with the
//! same `conversation_id`; the agent re-attempts with the answer in context. The stream ends
//! with `done` (or `error` in the API's error shape).
//!
//! On a server with a database the caller needs a key (or a web session) with the
//! `extraction:trigger` scope, and conversations are stored in its project (`chat_conversations`):
//! they survive a restart, any server on the database continues them, and `GET
//! /v1/chat/conversations[/{id}]` lists and reopens them. Each turn is written before its reply
//! streams, so the next message always finds it; two answers racing on one conversation cannot
//! both be taken (the loser gets 409 `Conflict`). A server without a database keeps them in memory
//! and needs no key, as before.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use quarry_agent::{Extraction, FieldReport, Schema};
use quarry_core::ErrorCode;
use quarry_llm::Usage;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use quarry_core::store::{ChatConversation, ChatMessage, NewConversation};

use crate::AppState;
use crate::auth::{Caller, store};
use crate::conversations::{COMPLETE, FAILED, NEEDS_CLARIFICATION, RUNNING};
use crate::error::ApiError;
use crate::skill::json_body;
use crate::turn_events::TurnEvents;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct ChatRequest {
    #[serde(default)]
    pub conversation_id: Option<String>,
    pub message: String,
    /// JSON Schema or Quarry schema, as an object or as YAML/JSON text. Required to start.
    #[serde(default)]
    pub schema: Option<Value>,
    /// The time relative dates in the document are read against ("next Friday"), RFC 3339;
    /// default: when the turn runs.
    #[serde(default)]
    pub now: Option<String>,
}

/// The scope `/v1/chat` (and the MCP `extract_with_schema` tool) needs on a server with a
/// database.
pub(crate) const CHAT_SCOPES: &[&str] = &["extraction:trigger"];
/// Reading past conversations: a key that may chat, or one that may read the project.
pub(crate) const READ_SCOPES: &[&str] = &["extraction:trigger", "entities:read"];

/// Longest conversation title taken from the document, in characters.
const TITLE_CHARS: usize = 60;

pub async fn chat(
    State(state): State<AppState>,
    caller: Result<Caller, ApiError>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let caller = match &state.store {
        Some(_) => Some(caller?),
        None => None,
    };
    let project = chat_project(&state, caller.as_ref())?;
    let body = json_body(&headers, body)?;
    let request: ChatRequest = serde_json::from_slice(&body).map_err(|error| {
        ApiError::new(ErrorCode::MalformedRequest, format!("expected {{\"message\": \"...\", \"schema\"?: {{...}}, \"conversation_id\"?: \"...\", \"now\"?: \"RFC 3339\"}}: {error}"),
        )
    })?;
    let turn = begin_turn(&state, project, request).await?;

    let (events, receiver) = mpsc::unbounded_channel::<Event>();
    let work = async move {
        let _ = events.send(event(
            "conversation",
            &json!({"conversation_id": turn.conversation.id}),
        ));
        let token_events = events.clone();
        let on_token = move |text: &str| {
            let _ = token_events.send(event("token", &json!({"text": text})));
        };
        match finish_turn(turn, &on_token).await {
            Ok(answer) => {
                let _ = events.send(event("result", &answer.result));
                let _ = events.send(event(
                    "message",
                    &json!({"role": "assistant", "content": answer.reply}),
                ));
            }
            Err(error) => {
                let _ = events.send(error_event(&error));
            }
        }
        let _ = events.send(event("done", &json!({})));
    };
    let stream = TurnEvents::new(receiver, work);
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response())
}

/// The project a conversation lives in: the caller's, checked for the chat scope, on a server
/// with a database; none (`""`, conversations in memory) on a server without one.
pub(crate) fn chat_project(state: &AppState, caller: Option<&Caller>) -> Result<String, ApiError> {
    match (&state.store, caller) {
        (None, _) => Ok(String::new()),
        (Some(_), Some(caller)) => {
            caller.require_scopes(CHAT_SCOPES)?;
            Ok(caller.project_id.clone())
        }
        (Some(_), None) => Err(crate::auth::missing_key()),
    }
}

/// One turn of a conversation, ready to run: its record (the new one, or the old one with the
/// person's answer added, both already written) and its schema.
pub(crate) struct Turn {
    agent: Arc<quarry_agent::Extractor>,
    conversations: Arc<crate::conversations::Conversations>,
    project: String,
    pub conversation: ChatConversation,
    schema: Arc<Schema>,
}

/// What a turn answered: the result (`status`, `value`, `fields`, `usage`), the assistant's reply
/// (the clarification question, or that every field is extracted) and the question alone.
pub(crate) struct TurnAnswer {
    pub result: Value,
    pub reply: String,
    pub question: Option<String>,
}

/// Checks a chat message and writes its turn: a new conversation (`message` is the document,
/// `schema` required) or the answer to conversation `conversation_id`'s question. What
/// `POST /v1/chat` and the MCP `extract_with_schema` tool share.
pub(crate) async fn begin_turn(
    state: &AppState,
    project: String,
    request: ChatRequest,
) -> Result<Turn, ApiError> {
    let Some(agent) = state.agent.clone() else {
        return Err(ApiError::new(
            ErrorCode::ModelNotConfigured,
            "this server has no model; start it with quarry serve --model provider:model",
        ));
    };
    if request.message.trim().is_empty() {
        return Err(ApiError::new(
            ErrorCode::EmptyInput,
            "message is empty; send the document, or your answer to the question",
        ));
    }
    let now = match request.now.as_deref() {
        Some(raw) => chrono::DateTime::parse_from_rfc3339(raw).map_err(|error| {
            ApiError::new(
                ErrorCode::InvalidArguments,
                format!("now is {raw:?}, not an RFC 3339 time such as 2024-11-04T09:00:00+00:00: {error}"),
            )
        })?,
        None => chrono::Utc::now().fixed_offset(),
    };
    let agent = Arc::new(agent.at(now));
    let conversations = state.conversations.clone();
    let (conversation, schema) = match request.conversation_id {
        Some(id) => {
            let conversation = conversations
                .answer(&project, &id, &request.message)
                .await?;
            let schema = parse_schema(state, Some(&conversation.schema))?;
            (conversation, schema)
        }
        None => {
            let schema = parse_schema(state, request.schema.as_ref())?;
            let new = NewConversation {
                title: title_of(&schema, &request.message),
                schema: request.schema.unwrap_or(Value::Null),
                messages: vec![message("user", &request.message)],
                document: request.message,
                status: RUNNING.to_owned(),
            };
            (conversations.start(&project, new).await?, schema)
        }
    };
    Ok(Turn {
        agent,
        conversations,
        project,
        conversation,
        schema,
    })
}

/// Runs the turn's extraction (the model's text to `on_token` as it arrives) and writes its
/// end before answering, so an answer to its question finds the turn ended. A model failure
/// marks the conversation failed and answers `ModelError`.
pub(crate) async fn finish_turn(
    turn: Turn,
    on_token: &(dyn Fn(&str) + Send + Sync),
) -> Result<TurnAnswer, ApiError> {
    let Turn {
        agent,
        conversations,
        project,
        mut conversation,
        schema,
    } = turn;
    // The turn reads its own copy: the record is written while the extraction runs.
    let (document, clarifications) = (
        conversation.document.clone(),
        conversation.clarifications.clone(),
    );
    let extraction = agent.extract_streaming(&schema, &document, &clarifications, on_token);
    tokio::pin!(extraction);
    // The turn holds its conversation by writing it every heartbeat: a process that dies
    // mid-turn stops writing, and its turn then reads as failed (`Conversations::lost_turn`).
    let outcome = loop {
        tokio::select! {
            outcome = &mut extraction => break outcome,
            () = tokio::time::sleep(conversations.heartbeat()) => {
                if let Err(error) = conversations.save(&project, &mut conversation).await {
                    tracing::warn!(conversation = %conversation.id, error = %error.message, "could not renew a chat turn's lease");
                }
            }
        }
    };
    match outcome {
        Ok(extraction) => {
            let payload = result_payload(&extraction);
            let question = extraction.question().map(str::to_owned);
            let reply = question.clone().unwrap_or_else(|| {
                "All fields are extracted and grounded in the document.".to_owned()
            });
            conversation.messages.push(message("assistant", &reply));
            conversation.result = Some(payload.clone());
            conversation.status = if extraction.is_complete() {
                COMPLETE
            } else {
                NEEDS_CLARIFICATION
            }
            .to_owned();
            conversations.save(&project, &mut conversation).await?;
            Ok(TurnAnswer {
                result: payload,
                reply,
                question,
            })
        }
        Err(error) => {
            conversation.status = FAILED.to_owned();
            if let Err(saved) = conversations.save(&project, &mut conversation).await {
                tracing::warn!(conversation = %conversation.id, error = %saved.message, "could not record a failed chat turn");
            }
            Err(ApiError::new(ErrorCode::ModelError, error.to_string()))
        }
    }
}

/// A conversation as `GET /v1/chat/conversations` lists it.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct ConversationSummary {
    pub id: String,
    pub title: String,
    /// `running`, `needs_clarification`, `complete` or `failed`.
    #[schemars(extend("enum" = STATUSES))]
    pub status: String,
    pub updated_at: String,
}

/// A conversation as `GET /v1/chat/conversations/{id}` answers it, to reopen it.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct ConversationView<'a> {
    pub id: &'a str,
    pub title: &'a str,
    /// `running`, `needs_clarification`, `complete` or `failed`.
    #[schemars(extend("enum" = STATUSES))]
    pub status: &'a str,
    /// The schema as the client sent it: a JSON Schema object, or YAML/JSON text.
    pub schema: &'a Value,
    /// The document the conversation extracts from.
    pub document: &'a str,
    pub messages: &'a [ChatMessage],
    /// The last turn's result, `null` before the first turn ends (it is what the turn's
    /// `result` event streamed).
    #[schemars(with = "Option<TurnResult<'static>>")]
    pub result: Option<&'a Value>,
    pub created_at: &'a str,
    pub updated_at: &'a str,
}

/// Every state a conversation can be in.
const STATUSES: [&str; 4] = [RUNNING, NEEDS_CLARIFICATION, COMPLETE, FAILED];

/// `GET /v1/chat/conversations`: the caller's project's conversations, most recent first.
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<Vec<ConversationSummary>>, ApiError> {
    caller.require_scopes(READ_SCOPES)?;
    let listed = store(&state)?
        .list_conversations(&caller.project_id, 200)
        .await?;
    Ok(Json(
        listed
            .into_iter()
            .map(|summary| ConversationSummary {
                id: summary.id,
                title: summary.title,
                status: state
                    .conversations
                    .seen_status(summary.status, &summary.updated_at),
                updated_at: summary.updated_at,
            })
            .collect(),
    ))
}

/// `GET /v1/chat/conversations/{id}`: one conversation, to reopen it.
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    caller.require_scopes(READ_SCOPES)?;
    let conversation = state
        .conversations
        .get(&caller.project_id, &id)
        .await?
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::UnknownConversation,
                format!("no conversation '{id}' in this project"),
            )
        })?;
    let conversation = state.conversations.as_seen(conversation);
    Ok(Json(conversation_view(&conversation)).into_response())
}

fn conversation_view(conversation: &ChatConversation) -> ConversationView<'_> {
    ConversationView {
        id: &conversation.id,
        title: &conversation.title,
        status: &conversation.status,
        schema: &conversation.schema,
        document: &conversation.document,
        messages: &conversation.messages,
        result: conversation.result.as_ref(),
        created_at: &conversation.created_at,
        updated_at: &conversation.updated_at,
    }
}

/// The schema's own title, else the document's first 60 characters (runs of whitespace as one
/// space).
fn title_of(schema: &Schema, document: &str) -> String {
    if schema.name != "extraction" && !schema.name.trim().is_empty() {
        return schema.name.trim().to_owned();
    }
    let words = document.split_whitespace().collect::<Vec<_>>().join(" ");
    words.chars().take(TITLE_CHARS).collect()
}

fn message(role: &str, content: &str) -> ChatMessage {
    ChatMessage {
        role: role.to_owned(),
        content: content.to_owned(),
    }
}

fn error_event(error: &ApiError) -> Event {
    event(
        "error",
        &json!({"error": error.code.as_str(), "message": error.message}),
    )
}

fn parse_schema(state: &AppState, schema: Option<&Value>) -> Result<Arc<Schema>, ApiError> {
    let Some(schema) = schema else {
        return Err(ApiError::new(
            ErrorCode::InvalidSchema,
            "a new conversation needs a schema (JSON Schema or Quarry YAML)",
        ));
    };
    state
        .schemas
        .load(schema)
        .map_err(|error| ApiError::new(ErrorCode::InvalidSchema, error.to_string()))
}

/// What a turn extracted: the `result` event, and the conversation's `result` until the next
/// turn ends.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct TurnResult<'a> {
    /// `complete`, or `needs_clarification` when fields stay unresolved.
    #[schemars(extend("enum" = [COMPLETE, NEEDS_CLARIFICATION]))]
    pub status: &'static str,
    /// The extracted object, shaped by the conversation's schema (`null` where a field has no
    /// value).
    pub value: &'a Value,
    /// Per top-level field: its value, spans, grounding, confidence, attempts, repairs and
    /// problems (quarry-agent's `FieldReport`).
    pub fields: &'a [FieldReport],
    /// Tokens spent on the turn's model calls.
    pub usage: &'a Usage,
    /// Model calls the turn made.
    pub model_calls: u32,
}

fn result_payload(extraction: &Extraction) -> Value {
    let result = TurnResult {
        status: if extraction.is_complete() {
            COMPLETE
        } else {
            NEEDS_CLARIFICATION
        },
        value: &extraction.value,
        fields: &extraction.fields,
        usage: &extraction.usage,
        model_calls: extraction.model_calls,
    };
    serde_json::to_value(result).expect("a turn's result is plain JSON")
}

fn event(name: &str, data: &Value) -> Event {
    Event::default().event(name).data(data.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_come_from_the_schema_or_the_document() {
        let titled = Schema::from_value(&json!({"title": "Invoice", "type": "object",
            "properties": {"a": {"type": "string"}}}))
        .unwrap();
        assert_eq!(title_of(&titled, "anything"), "Invoice");
        let untitled =
            Schema::from_value(&json!({"type": "object", "properties": {"a": {"type": "string"}}}))
                .unwrap();
        assert_eq!(title_of(&untitled, "  short\n text "), "short text");
        let long = "日本語".repeat(30);
        assert_eq!(title_of(&untitled, &long), "日本語".repeat(20));
    }
}
