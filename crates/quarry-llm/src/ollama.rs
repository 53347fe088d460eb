//! Ollama's native chat API: `POST {host}/api/chat`.
//!
//! Beside Ollama's OpenAI-compatible `/v1` (reachable as `openai-compatible:` with a base URL),
//! the native API takes a JSON Schema in `format` and constrains generation to it
//! ([`StructuredOutput::OllamaFormat`]), which the `/v1` route only does in recent versions.
//! Mapping from the neutral types: `temperature` and `max_tokens` go into `options`
//! (`num_predict`); tools are OpenAI-shaped; tool-call arguments are JSON objects both ways; a
//! [`Role::Tool`](crate::Role::Tool) message carries the `tool_name` of the call it answers.
//! `stream` is always sent, since Ollama streams unless told not to; a streamed reply is
//! newline-delimited JSON, the last line `done: true` with the token counts (`prompt_eval_count`,
//! `eval_count`).

use reqwest::header::HeaderMap;
use serde_json::{Map, Value, json};

use crate::LlmError;
use crate::client::TokenSink;
use crate::protocol::{
    Assembler, Parsed, ProtocolClient, WireProtocol, arguments_object, bearer_headers,
    body_with_model, openai_role, openai_tools,
};
use crate::sse::SseEvent;
use crate::structured::{StructuredOutput, WireFormat};
use crate::transport::Endpoint;
use crate::types::{ChatRequest, Message, ToolCall, Usage};

/// Ollama's native chat wire protocol.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ollama;

/// A client for Ollama's native chat API. `OllamaClient::new(endpoint, transport, concurrency)`:
/// `endpoint.base_url` is the host, e.g. `http://localhost:11434`; a key, when given (a proxy
/// or Ollama's cloud), goes as a bearer token.
pub type OllamaClient = ProtocolClient<Ollama>;

impl WireProtocol for Ollama {
    type Assembler = StreamAssembler;

    const TRUNCATED: &'static str = "the stream ended before a line with `done: true`";

    fn url(&self, base_url: &str) -> String {
        format!("{base_url}/api/chat")
    }

    fn headers(&self, endpoint: &Endpoint) -> Result<HeaderMap, LlmError> {
        bearer_headers(endpoint)
    }

    fn request_body(
        &self,
        model: &str,
        request: &ChatRequest,
        format: Option<&WireFormat>,
        stream: bool,
    ) -> Map<String, Value> {
        let mut body = body_with_model(model);
        body.insert("messages".into(), wire_messages(&request.messages));
        if !request.tools.is_empty() {
            body.insert("tools".into(), openai_tools(&request.tools));
        }
        match format {
            Some(WireFormat::Json) => {
                body.insert("format".into(), json!("json"));
            }
            Some(WireFormat::Schema(wire)) => {
                body.insert("format".into(), wire.schema.clone());
            }
            None => {}
        }
        let mut options = Map::new();
        if let Some(temperature) = request.temperature_json() {
            options.insert("temperature".into(), temperature);
        }
        if let Some(max_tokens) = request.max_tokens {
            options.insert("num_predict".into(), json!(max_tokens));
        }
        if !options.is_empty() {
            body.insert("options".into(), Value::Object(options));
        }
        body.insert("stream".into(), Value::Bool(stream));
        body
    }

    fn parse_reply(json: &Value) -> Result<Parsed, String> {
        if let Some(error) = json.get("error").filter(|error| !error.is_null()) {
            return Err(format!("the reply is an error: {error}"));
        }
        let message = json.get("message").ok_or("the reply has no `message`")?;
        Ok(Parsed {
            content: message["content"].as_str().map(str::to_owned),
            tool_calls: tool_calls(message, 0),
            finish_reason: json["done_reason"].as_str().map(str::to_owned),
            usage: read_usage(json).unwrap_or_default(),
        })
    }

    fn read_usage(json: &Value) -> Option<Usage> {
        read_usage(json)
    }

    fn structured_output(&self) -> StructuredOutput {
        StructuredOutput::OllamaFormat
    }
}

fn wire_messages(messages: &[Message]) -> Value {
    messages
        .iter()
        .map(|message| {
            let role = openai_role(message.role);
            let mut wire = Map::new();
            wire.insert("role".into(), json!(role));
            wire.insert(
                "content".into(),
                json!(message.content.as_deref().unwrap_or("")),
            );
            if !message.tool_calls.is_empty() {
                let calls = message
                    .tool_calls
                    .iter()
                    .map(|call| {
                        json!({"function": {"name": call.name, "arguments": arguments_object(&call.arguments)}})
                    })
                    .collect();
                wire.insert("tool_calls".into(), Value::Array(calls));
            }
            if let Some(name) = message
                .tool_call_id
                .as_deref()
                .and_then(|id| called_tool(messages, id))
            {
                wire.insert("tool_name".into(), json!(name));
            }
            Value::Object(wire)
        })
        .collect()
}

/// The name of the tool call `id` answers, from the assistant turns before it.
fn called_tool<'m>(messages: &'m [Message], id: &str) -> Option<&'m str> {
    messages
        .iter()
        .flat_map(|message| &message.tool_calls)
        .find(|call| call.id == id)
        .map(|call| call.name.as_str())
}

/// The calls in `message`, numbered from `first` where the server gave no id.
fn tool_calls(message: &Value, first: usize) -> Vec<ToolCall> {
    message["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(index, call)| {
            let arguments = match &call["function"]["arguments"] {
                Value::String(text) => text.clone(),
                Value::Null => "{}".to_owned(),
                other => other.to_string(),
            };
            ToolCall {
                id: call["id"]
                    .as_str()
                    .map_or_else(|| format!("call_{}", first + index), str::to_owned),
                name: call["function"]["name"].as_str().unwrap_or("").to_owned(),
                arguments,
            }
        })
        .collect()
}

fn read_usage(json: &Value) -> Option<Usage> {
    let prompt = json.get("prompt_eval_count").and_then(Value::as_u64);
    let completion = json.get("eval_count").and_then(Value::as_u64);
    if prompt.is_none() && completion.is_none() {
        return None;
    }
    Some(Usage {
        prompt_tokens: prompt.unwrap_or(0),
        completion_tokens: completion.unwrap_or(0),
        ..Usage::default()
    })
}

/// Builds a response from the lines of a streamed reply: text in order, tool calls as they come
/// (whole, one line each), the counts and `done_reason` from the `done` line.
#[derive(Debug, Default)]
pub struct StreamAssembler {
    content: String,
    calls: Vec<ToolCall>,
    finish_reason: Option<String>,
    usage: Usage,
}

impl Assembler for StreamAssembler {
    /// A line with `done: true` ends the stream.
    fn apply(&mut self, event: &SseEvent, on_token: TokenSink<'_>) -> Result<bool, String> {
        let line = event.json()?;
        if let Some(error) = line.get("error").filter(|error| !error.is_null()) {
            return Err(format!("the stream reported an error: {error}"));
        }
        let message = &line["message"];
        if let Some(text) = message["content"].as_str().filter(|text| !text.is_empty()) {
            on_token(text);
            self.content.push_str(text);
        }
        let first = self.calls.len();
        self.calls.extend(tool_calls(message, first));
        if line["done"] == Value::Bool(true) {
            self.finish_reason = Some(line["done_reason"].as_str().unwrap_or("stop").to_owned());
            self.usage = read_usage(&line).unwrap_or_default();
            return Ok(true);
        }
        Ok(false)
    }

    fn has_finish_reason(&self) -> bool {
        self.finish_reason.is_some()
    }

    fn finish(self) -> Parsed {
        Parsed {
            content: Some(self.content),
            tool_calls: self.calls,
            finish_reason: self.finish_reason,
            usage: self.usage,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_results_name_their_tool_and_arguments_are_objects() {
        let mut assistant = Message::assistant("");
        assistant.content = None;
        assistant.tool_calls = vec![ToolCall {
            id: "call_0".into(),
            name: "submit".into(),
            arguments: r#"{"a":1}"#.into(),
        }];
        let wire = wire_messages(&[
            Message::user("Extract."),
            assistant,
            Message::tool_result("call_0", "ACCEPTED"),
        ]);
        assert_eq!(
            wire,
            json!([
                {"role": "user", "content": "Extract."},
                {"role": "assistant", "content": "",
                 "tool_calls": [{"function": {"name": "submit", "arguments": {"a": 1}}}]},
                {"role": "tool", "content": "ACCEPTED", "tool_name": "submit"}
            ])
        );
    }
}
