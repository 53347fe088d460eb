//! The OpenAI-compatible chat completions API: `POST {base}/chat/completions`.
//!
//! One protocol serves OpenAI, Azure OpenAI, Gemini's OpenAI-compatible endpoint, Ollama's `/v1`,
//! vLLM, the llama.cpp server and LM Studio; they differ in base URL, key, the vendor fields a
//! caller puts in [`ChatRequest::extra`](crate::ChatRequest::extra), and the [`OpenAi`] value:
//! how `response_format: json_schema` is sent ([`StructuredOutput`]: OpenAI's strict rewrite, or
//! the schema as given) and, for Azure, the deployment URL with `api-version` and the `api-key`
//! header. Tool schemas go on the wire exactly as given.

use std::collections::BTreeMap;

use reqwest::header::{HeaderMap, HeaderName};
use serde_json::{Map, Value, json};

use crate::LlmError;
use crate::client::TokenSink;
use crate::protocol::{
    Assembler, Parsed, ProtocolClient, WireProtocol, api_key_header, bearer_headers,
    body_with_model, openai_role, openai_tools,
};
use crate::sse::SseEvent;
use crate::structured::{StructuredOutput, WireFormat};
use crate::transport::Endpoint;
use crate::types::{ChatRequest, Message, ToolCall, ToolChoice, Usage};

/// The OpenAI-compatible chat wire protocol. The default sends `response_format` as given and
/// promises nothing about it ([`StructuredOutput::None`]), for a server Quarry knows nothing of.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenAi {
    /// How a `json_schema` response format is sent.
    pub structured: StructuredOutput,
    /// Azure OpenAI's deployment URL and `api-key` header instead of OpenAI's.
    pub azure: Option<AzureDeployment>,
}

impl Default for OpenAi {
    fn default() -> Self {
        OpenAi {
            structured: StructuredOutput::None,
            azure: None,
        }
    }
}

/// Where an Azure OpenAI model is: `{resource}/openai/deployments/{deployment}/chat/completions
/// ?api-version={api_version}`, with the key in `api-key`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AzureDeployment {
    pub deployment: String,
    pub api_version: String,
}

/// The Azure OpenAI `api-version` used when none is configured: the GA version with structured
/// outputs.
pub const AZURE_API_VERSION: &str = "2024-10-21";

/// A client for the OpenAI-compatible chat API. `OpenAiClient::new(endpoint, transport,
/// concurrency)`: `endpoint.api_key` is sent as a bearer token when present; local servers need
/// none. [`ProtocolClient::with_protocol`] takes an [`OpenAi`] with another structured-output
/// mode or an Azure deployment.
pub type OpenAiClient = ProtocolClient<OpenAi>;

impl WireProtocol for OpenAi {
    type Assembler = StreamAssembler;

    const TRUNCATED: &'static str = "the stream ended before a `finish_reason` or `[DONE]`";

    fn url(&self, base_url: &str) -> String {
        match &self.azure {
            Some(azure) => format!(
                "{base_url}/openai/deployments/{}/chat/completions?api-version={}",
                azure.deployment, azure.api_version
            ),
            None => format!("{base_url}/chat/completions"),
        }
    }

    fn headers(&self, endpoint: &Endpoint) -> Result<HeaderMap, LlmError> {
        if self.azure.is_none() {
            return bearer_headers(endpoint);
        }
        let mut headers = HeaderMap::new();
        if let Some(value) = api_key_header(endpoint, "")? {
            headers.insert(HeaderName::from_static("api-key"), value);
        }
        Ok(headers)
    }

    fn request_body(
        &self,
        model: &str,
        request: &ChatRequest,
        format: Option<&WireFormat>,
        stream: bool,
    ) -> Map<String, Value> {
        let mut body = body_with_model(model);
        body.insert(
            "messages".into(),
            request.messages.iter().map(wire_message).collect(),
        );
        if !request.tools.is_empty() {
            body.insert("tools".into(), openai_tools(&request.tools));
            if let Some(choice) = &request.tool_choice {
                body.insert("tool_choice".into(), wire_tool_choice(choice));
            }
        }
        match format {
            Some(WireFormat::Json) => {
                body.insert("response_format".into(), json!({"type": "json_object"}));
            }
            Some(WireFormat::Schema(wire)) => {
                body.insert(
                    "response_format".into(),
                    json!({
                        "type": "json_schema",
                        "json_schema": {"name": wire.name, "schema": wire.schema, "strict": wire.strict},
                    }),
                );
            }
            None => {}
        }
        if let Some(temperature) = request.temperature_json() {
            body.insert("temperature".into(), temperature);
        }
        if let Some(max_tokens) = request.max_tokens {
            body.insert("max_tokens".into(), json!(max_tokens));
        }
        if stream {
            body.insert("stream".into(), Value::Bool(true));
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        body
    }

    fn parse_reply(json: &Value) -> Result<Parsed, String> {
        parse_completion(json)
    }

    fn read_usage(json: &Value) -> Option<Usage> {
        read_usage(json)
    }

    fn structured_output(&self) -> StructuredOutput {
        self.structured
    }
}

fn wire_message(message: &Message) -> Value {
    let mut wire = Map::new();
    let role = openai_role(message.role);
    wire.insert("role".into(), json!(role));
    wire.insert(
        "content".into(),
        message.content.as_deref().map_or(Value::Null, |c| json!(c)),
    );
    if !message.tool_calls.is_empty() {
        let calls = message
            .tool_calls
            .iter()
            .map(|call| {
                json!({
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                })
            })
            .collect();
        wire.insert("tool_calls".into(), Value::Array(calls));
    }
    if let Some(id) = &message.tool_call_id {
        wire.insert("tool_call_id".into(), json!(id));
    }
    Value::Object(wire)
}

fn wire_tool_choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::Required => json!("required"),
        ToolChoice::None => json!("none"),
        ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
    }
}

fn read_usage(json: &Value) -> Option<Usage> {
    let usage = json.get("usage").filter(|usage| usage.is_object())?;
    Some(Usage {
        prompt_tokens: usage["prompt_tokens"].as_u64().unwrap_or(0),
        completion_tokens: usage["completion_tokens"].as_u64().unwrap_or(0),
        // OpenAI's, and llama.cpp's server's: prompt tokens it did not read again.
        prompt_tokens_details: crate::types::PromptTokensDetails {
            cached_tokens: usage["prompt_tokens_details"]["cached_tokens"]
                .as_u64()
                .unwrap_or(0),
        },
    })
}

fn parse_completion(json: &Value) -> Result<Parsed, String> {
    if let Some(error) = json.get("error").filter(|error| !error.is_null()) {
        return Err(format!("the reply is an error: {error}"));
    }
    let choice = json
        .get("choices")
        .and_then(|choices| choices.get(0))
        .ok_or("the reply has no `choices[0]`")?;
    let message = choice
        .get("message")
        .ok_or("the reply has no `choices[0].message`")?;
    let tool_calls = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .enumerate()
                .map(|(index, call)| ToolCall {
                    id: call["id"]
                        .as_str()
                        .map_or_else(|| format!("call_{index}"), str::to_string),
                    name: call["function"]["name"].as_str().unwrap_or("").to_string(),
                    arguments: arguments_text(&call["function"]["arguments"]),
                })
                .collect()
        })
        .unwrap_or_default();
    // Under strict structured outputs a model that declines answers `refusal` instead of
    // content; its words are the only reply there is.
    let content = content_text(&message["content"])
        .or_else(|| message["refusal"].as_str().map(str::to_string));
    Ok(Parsed {
        content,
        tool_calls,
        finish_reason: choice["finish_reason"].as_str().map(str::to_string),
        usage: read_usage(json).unwrap_or_default(),
    })
}

/// `content` is usually a string; some servers send an array of `{type: text, text}` parts.
fn content_text(content: &Value) -> Option<String> {
    match content {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|part| part["text"].as_str())
                .collect(),
        ),
        _ => None,
    }
}

/// Arguments are a JSON string on the wire; a few servers send the object itself.
fn arguments_text(arguments: &Value) -> String {
    match arguments {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Builds a response from `chat.completion.chunk` events: text deltas in order, tool calls
/// assembled from fragments keyed by their `index`.
#[derive(Debug, Default)]
pub struct StreamAssembler {
    content: String,
    calls: BTreeMap<u64, ToolCall>,
    finish_reason: Option<String>,
    usage: Usage,
}

impl Assembler for StreamAssembler {
    /// `[DONE]` ends the stream.
    fn apply(&mut self, event: &SseEvent, on_token: TokenSink<'_>) -> Result<bool, String> {
        if event.is_done() {
            return Ok(true);
        }
        let chunk = event.json()?;
        if let Some(error) = chunk.get("error").filter(|error| !error.is_null()) {
            return Err(format!("the stream reported an error: {error}"));
        }
        if let Some(usage) = read_usage(&chunk) {
            self.usage = usage;
        }
        let Some(choices) = chunk.get("choices").and_then(Value::as_array) else {
            return Ok(false);
        };
        for choice in choices {
            let delta = &choice["delta"];
            if let Some(text) = delta["content"].as_str().filter(|text| !text.is_empty()) {
                on_token(text);
                self.content.push_str(text);
            }
            for fragment in delta["tool_calls"].as_array().into_iter().flatten() {
                let index = fragment["index"]
                    .as_u64()
                    .unwrap_or(self.calls.len() as u64);
                let call = self.calls.entry(index).or_insert_with(|| ToolCall {
                    id: String::new(),
                    name: String::new(),
                    arguments: String::new(),
                });
                if let Some(id) = fragment["id"].as_str() {
                    call.id = id.to_string();
                }
                if let Some(name) = fragment["function"]["name"].as_str() {
                    call.name.push_str(name);
                }
                call.arguments
                    .push_str(&arguments_text(&fragment["function"]["arguments"]));
            }
            if let Some(reason) = choice["finish_reason"].as_str() {
                self.finish_reason = Some(reason.to_string());
            }
        }
        Ok(false)
    }

    fn has_finish_reason(&self) -> bool {
        self.finish_reason.is_some()
    }

    fn finish(self) -> Parsed {
        let tool_calls = self
            .calls
            .into_iter()
            .map(|(index, mut call)| {
                if call.id.is_empty() {
                    call.id = format!("call_{index}");
                }
                call
            })
            .collect();
        Parsed {
            content: Some(self.content),
            tool_calls,
            finish_reason: self.finish_reason,
            usage: self.usage,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(data: Value) -> SseEvent {
        SseEvent {
            event: None,
            data: data.to_string(),
        }
    }

    #[test]
    fn tool_call_fragments_assemble_by_index() {
        let mut assembler = StreamAssembler::default();
        let sink = |_: &str| {};
        let events = [
            json!({"choices":[{"index":0,"delta":{"tool_calls":[
                {"index":0,"id":"a","type":"function","function":{"name":"submit","arguments":""}},
                {"index":1,"id":"b","type":"function","function":{"name":"validate","arguments":"{\"x\""}}]}}]}),
            json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"y\":"}}]}}]}),
            json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":":1}"}}]}}]}),
            json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"2}"}}]},"finish_reason":"tool_calls"}]}),
            json!({"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}}),
        ];
        for data in events {
            assembler.apply(&event(data), &sink).unwrap();
        }
        let parsed = assembler.finish();
        assert_eq!(parsed.tool_calls[0].arguments, r#"{"y":2}"#);
        assert_eq!(parsed.tool_calls[1].name, "validate");
        assert_eq!(parsed.tool_calls[1].arguments, r#"{"x":1}"#);
        assert_eq!(parsed.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(parsed.usage.total(), 7);
    }

    #[test]
    fn a_refusal_is_the_reply() {
        let parsed = parse_completion(&json!({
            "choices":[{"message":{"content":null,"refusal":"I can't help with that."},
                        "finish_reason":"stop"}]
        }))
        .unwrap();
        assert_eq!(parsed.content.as_deref(), Some("I can't help with that."));
    }

    #[test]
    fn object_arguments_and_missing_ids_are_tolerated() {
        let parsed = parse_completion(&json!({
            "choices":[{"message":{"content":null,"tool_calls":[
                {"function":{"name":"submit","arguments":{"a":1}}}]},"finish_reason":"tool_calls"}]
        }))
        .unwrap();
        assert_eq!(parsed.tool_calls[0].id, "call_0");
        assert_eq!(parsed.tool_calls[0].arguments, r#"{"a":1}"#);
        assert_eq!(parsed.content, None);
    }
}
