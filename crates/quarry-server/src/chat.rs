//! `POST /v1/chat`: schema extraction as a conversation, streamed as Server-Sent Events.
//!
//! The first message of a conversation carries the document (`message`) and the `schema`; the
//! answer streams `conversation` (the id), `token` (the model's text as it arrives), `result`
//! (the extraction so far), and — when fields stay unresolved — the clarification question as an
//! ordinary assistant `message`. The client answers by posting the next user message with the
//! same `conversation_id`; the agent re-attempts with the answer in context. The stream ends
//! with `done` (or `error` in the API's error shape).

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream;
use quarry_agent::{Extraction, Schema};
use quarry_core::ErrorCode;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::AppState;
use crate::conversations::Conversation;
use crate::error::ApiError;
use crate::skill::json_body;

#[derive(Debug, Deserialize)]
struct ChatRequest {
    #[serde(default)]
    conversation_id: Option<String>,
    message: String,
    /// JSON Schema or Quarry schema, as an object or as YAML/JSON text. Required to start.
    #[serde(default)]
    schema: Option<Value>,
}

pub async fn chat(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let body = json_body(&headers, body)?;
    let request: ChatRequest = serde_json::from_slice(&body).map_err(|error| {
        ApiError::new(ErrorCode::MalformedRequest, format!("expected {{\"message\": \"...\", \"schema\"?: {{...}}, \"conversation_id\"?: \"...\"}}: {error}"),
        )
    })?;
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
    let (id, conversation) =
        match &request.conversation_id {
            Some(id) => {
                let conversation = state
                .conversations
                .answer(id, request.message.clone())
                .ok_or_else(|| {
                    ApiError::new(ErrorCode::UnknownConversation, format!(
                            "no conversation '{id}'; start one by posting a message with a schema"
                        ),
                    )
                })?;
                (id.clone(), conversation)
            }
            None => {
                let schema = parse_schema(request.schema.as_ref())?;
                let conversation = Conversation::new(schema, request.message.clone());
                (
                    state.conversations.start(conversation.clone()),
                    conversation,
                )
            }
        };

    let (events, receiver) = mpsc::unbounded_channel::<Event>();
    let conversations = state.conversations.clone();
    tokio::spawn(async move {
        let _ = events.send(event("conversation", &json!({"conversation_id": id})));
        let token_events = events.clone();
        let on_token = move |text: &str| {
            let _ = token_events.send(event("token", &json!({"text": text})));
        };
        let outcome = agent
            .extract_streaming(
                &conversation.schema,
                &conversation.document,
                &conversation.clarifications,
                &on_token,
            )
            .await;
        match outcome {
            Ok(extraction) => {
                let complete = extraction.is_complete();
                conversations.finish_turn(&id, complete);
                let _ = events.send(event("result", &result_payload(&extraction)));
                let reply = match extraction.question() {
                    Some(question) => question.to_owned(),
                    None => "All fields are extracted and grounded in the document.".to_owned(),
                };
                let _ = events.send(event(
                    "message",
                    &json!({"role": "assistant", "content": reply}),
                ));
            }
            Err(error) => {
                let _ = events.send(event(
                    "error",
                    &json!({"error": ErrorCode::ModelError.as_str(), "message": error.to_string()}),
                ));
            }
        }
        let _ = events.send(event("done", &json!({})));
    });
    let stream = stream::unfold(receiver, |mut receiver| async move {
        receiver
            .recv()
            .await
            .map(|event| (Ok::<_, Infallible>(event), receiver))
    });
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response())
}

fn parse_schema(schema: Option<&Value>) -> Result<Arc<Schema>, ApiError> {
    let invalid = |message: String| ApiError::new(ErrorCode::InvalidSchema, message);
    let parsed = match schema {
        None => {
            return Err(invalid(
                "a new conversation needs a schema (JSON Schema or Quarry YAML)".to_owned(),
            ));
        }
        Some(Value::String(text)) => Schema::parse(text),
        Some(value) => Schema::from_value(value),
    };
    parsed
        .map(Arc::new)
        .map_err(|error| invalid(error.to_string()))
}

fn result_payload(extraction: &Extraction) -> Value {
    json!({
        "status": if extraction.is_complete() { "complete" } else { "needs_clarification" },
        "value": extraction.value,
        "fields": extraction.fields,
        "usage": extraction.usage,
    })
}

fn event(name: &str, data: &Value) -> Event {
    Event::default().event(name).data(data.to_string())
}
