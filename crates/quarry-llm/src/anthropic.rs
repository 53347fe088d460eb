//! Anthropic's messages API: `POST {base}/v1/messages` (a base URL given with `/v1` works too).
//!
//! Mapping from the neutral types: system messages become the top-level `system` prompt; tools are
//! sent with their schema as `input_schema`; an assistant's [`ToolCall`]s become `tool_use` blocks
//! and [`Role::Tool`] messages become `tool_result` blocks in a user turn. Consecutive messages
//! that land on the same side are merged into one turn, as the API expects. A `json_schema`
//! response format becomes a tool whose `input_schema` is the schema, forced with `tool_choice`;
//! its input comes back as the reply's `content` ([`StructuredOutput::ForcedTool`]). A plain JSON
//! response format has no equivalent and is not sent; vendor fields go through `extra`.

use std::collections::BTreeMap;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};

use crate::LlmError;
use crate::client::TokenSink;
use crate::protocol::{
    Assembler, Parsed, ProtocolClient, WireProtocol, api_key_header, arguments_object,
    body_with_model,
};
use crate::sse::SseEvent;
use crate::structured::{StructuredOutput, WireFormat};
use crate::transport::Endpoint;
use crate::types::{ChatRequest, Message, Role, ToolCall, ToolChoice, Usage};

/// The API version header Quarry speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Sent when a request sets no `max_tokens` (the API requires one).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// Anthropic's messages wire protocol.
#[derive(Debug, Clone, Copy, Default)]
pub struct Anthropic;

/// A client for Anthropic's messages API. `AnthropicClient::new(endpoint, transport,
/// concurrency)`: `endpoint.base_url` is the host, e.g. `https://api.anthropic.com` (with or
/// without `/v1`); `endpoint.api_key` goes into `x-api-key`.
pub type AnthropicClient = ProtocolClient<Anthropic>;

impl WireProtocol for Anthropic {
    type Assembler = StreamAssembler;

    const TRUNCATED: &'static str = "the stream ended before `message_stop`";

    fn url(&self, base_url: &str) -> String {
        match base_url.strip_suffix("/v1") {
            Some(host) => format!("{host}/v1/messages"),
            None => format!("{base_url}/v1/messages"),
        }
    }

    fn headers(&self, endpoint: &Endpoint) -> Result<HeaderMap, LlmError> {
        let mut headers = HeaderMap::new();
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        if let Some(value) = api_key_header(endpoint, "")? {
            headers.insert(HeaderName::from_static("x-api-key"), value);
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
            "max_tokens".into(),
            json!(request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)),
        );
        let system: Vec<&str> = request
            .messages
            .iter()
            .filter(|message| message.role == Role::System)
            .filter_map(|message| message.content.as_deref())
            .collect();
        if !system.is_empty() {
            body.insert("system".into(), json!(system.join("\n\n")));
        }
        body.insert("messages".into(), wire_messages(&request.messages));
        let mut tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.parameters,
                })
            })
            .collect();
        if let Some(WireFormat::Schema(wire)) = format {
            tools.push(json!({
                "name": wire.name,
                "description": FORCED_TOOL_DESCRIPTION,
                "input_schema": wire.schema,
            }));
            body.insert("tools".into(), Value::Array(tools));
            body.insert(
                "tool_choice".into(),
                json!({"type": "tool", "name": wire.name}),
            );
        } else if !tools.is_empty() {
            body.insert("tools".into(), Value::Array(tools));
            if let Some(choice) = &request.tool_choice {
                let choice = match choice {
                    ToolChoice::Auto => json!({"type": "auto"}),
                    ToolChoice::Required => json!({"type": "any"}),
                    ToolChoice::None => json!({"type": "none"}),
                    ToolChoice::Tool(name) => json!({"type": "tool", "name": name}),
                };
                body.insert("tool_choice".into(), choice);
            }
        }
        if let Some(temperature) = request.temperature_json() {
            body.insert("temperature".into(), temperature);
        }
        if stream {
            body.insert("stream".into(), Value::Bool(true));
        }
        body
    }

    fn parse_reply(json: &Value) -> Result<Parsed, String> {
        parse_message(json)
    }

    fn read_usage(json: &Value) -> Option<Usage> {
        read_usage(json)
    }

    fn structured_output(&self) -> StructuredOutput {
        StructuredOutput::ForcedTool
    }

    /// The forced tool's input is the reply.
    fn adopt_reply(&self, mut parsed: Parsed, format: &WireFormat) -> Parsed {
        let WireFormat::Schema(wire) = format else {
            return parsed;
        };
        if let Some(at) = parsed
            .tool_calls
            .iter()
            .position(|call| call.name == wire.name)
        {
            let call = parsed.tool_calls.remove(at);
            parsed.content = Some(call.arguments);
        }
        parsed
    }
}

/// What the model reads about the forced tool that carries a structured reply.
pub const FORCED_TOOL_DESCRIPTION: &str =
    "Give your answer as this tool's input; it is the whole reply.";

/// Non-system messages as alternating `user` / `assistant` turns of content blocks.
fn wire_messages(messages: &[Message]) -> Value {
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in messages {
        let (side, blocks) = match message.role {
            Role::System => continue,
            Role::User => ("user", text_block(message)),
            Role::Assistant => {
                let mut blocks = text_block(message);
                for call in &message.tool_calls {
                    blocks.push(json!({
                        "type": "tool_use",
                        "id": call.id,
                        "name": call.name,
                        "input": arguments_object(&call.arguments),
                    }));
                }
                ("assistant", blocks)
            }
            Role::Tool => (
                "user",
                vec![json!({
                    "type": "tool_result",
                    "tool_use_id": message.tool_call_id.as_deref().unwrap_or(""),
                    "content": message.content.as_deref().unwrap_or(""),
                })],
            ),
        };
        if blocks.is_empty() {
            continue; // the API rejects empty turns
        }
        match turns.last_mut() {
            Some((last_side, last_blocks)) if *last_side == side => last_blocks.extend(blocks),
            _ => turns.push((side, blocks)),
        }
    }
    turns
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect()
}

fn text_block(message: &Message) -> Vec<Value> {
    match message.content.as_deref() {
        Some(text) if !text.is_empty() => vec![json!({"type": "text", "text": text})],
        _ => Vec::new(),
    }
}

/// Input tokens include the prompt-cache reads and writes, which are billed as input too.
fn read_usage(json: &Value) -> Option<Usage> {
    let usage = json.get("usage").filter(|usage| usage.is_object())?;
    let field = |name: &str| usage[name].as_u64().unwrap_or(0);
    Some(Usage {
        prompt_tokens: field("input_tokens")
            + field("cache_creation_input_tokens")
            + field("cache_read_input_tokens"),
        completion_tokens: field("output_tokens"),
        ..Usage::default()
    })
}

fn parse_message(json: &Value) -> Result<Parsed, String> {
    if json["type"] == "error" {
        return Err(format!("the reply is an error: {}", json["error"]));
    }
    let blocks = json["content"]
        .as_array()
        .ok_or("the reply has no `content` array")?;
    let mut content = String::new();
    let mut tool_calls = Vec::new();
    for block in blocks {
        match block["type"].as_str() {
            Some("text") => content.push_str(block["text"].as_str().unwrap_or("")),
            Some("tool_use") => tool_calls.push(ToolCall {
                id: block["id"].as_str().unwrap_or("").to_string(),
                name: block["name"].as_str().unwrap_or("").to_string(),
                arguments: block["input"].to_string(),
            }),
            _ => {} // thinking and other blocks carry nothing the engine reads
        }
    }
    Ok(Parsed {
        content: Some(content),
        tool_calls,
        finish_reason: json["stop_reason"].as_str().map(str::to_string),
        usage: read_usage(json).unwrap_or_default(),
    })
}

/// Builds a response from the event stream: `content_block_start` opens a text or `tool_use`
/// block, `content_block_delta` extends it (`text_delta` / `input_json_delta`), `message_delta`
/// carries the stop reason and the output token count.
#[derive(Debug, Default)]
pub struct StreamAssembler {
    content: String,
    calls: BTreeMap<u64, ToolCall>,
    finish_reason: Option<String>,
    usage: Usage,
}

impl Assembler for StreamAssembler {
    /// `message_stop` ends the stream.
    fn apply(&mut self, event: &SseEvent, on_token: TokenSink<'_>) -> Result<bool, String> {
        let data = event.json()?;
        let kind = event
            .event
            .as_deref()
            .or_else(|| data["type"].as_str())
            .unwrap_or("");
        match kind {
            "message_start" => {
                if let Some(usage) = read_usage(&data["message"]) {
                    self.usage = usage;
                }
            }
            "content_block_start" => {
                let block = &data["content_block"];
                if block["type"] == "tool_use" {
                    let index = data["index"].as_u64().unwrap_or(self.calls.len() as u64);
                    self.calls.insert(
                        index,
                        ToolCall {
                            id: block["id"].as_str().unwrap_or("").to_string(),
                            name: block["name"].as_str().unwrap_or("").to_string(),
                            arguments: String::new(),
                        },
                    );
                } else if let Some(text) = block["text"].as_str().filter(|t| !t.is_empty()) {
                    on_token(text);
                    self.content.push_str(text);
                }
            }
            "content_block_delta" => {
                let delta = &data["delta"];
                match delta["type"].as_str() {
                    Some("text_delta") => {
                        let text = delta["text"].as_str().unwrap_or("");
                        if !text.is_empty() {
                            on_token(text);
                            self.content.push_str(text);
                        }
                    }
                    Some("input_json_delta") => {
                        let index = data["index"].as_u64().unwrap_or(0);
                        if let Some(call) = self.calls.get_mut(&index) {
                            call.arguments
                                .push_str(delta["partial_json"].as_str().unwrap_or(""));
                        }
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(reason) = data["delta"]["stop_reason"].as_str() {
                    self.finish_reason = Some(reason.to_string());
                }
                // `output_tokens` here is cumulative; input counts appear when the server
                // reports them at the end instead of in `message_start`.
                let usage = &data["usage"];
                if let Some(output) = usage["output_tokens"].as_u64() {
                    self.usage.completion_tokens = output;
                }
                if usage["input_tokens"].as_u64().is_some() {
                    self.usage.prompt_tokens = read_usage(&data).unwrap_or_default().prompt_tokens;
                }
            }
            "message_stop" => return Ok(true),
            "error" => return Err(format!("the stream reported an error: {}", data["error"])),
            _ => {} // ping, content_block_stop
        }
        Ok(false)
    }

    fn has_finish_reason(&self) -> bool {
        self.finish_reason.is_some()
    }

    fn finish(self) -> Parsed {
        let tool_calls = self
            .calls
            .into_values()
            .map(|mut call| {
                if call.arguments.trim().is_empty() {
                    call.arguments = "{}".into();
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

    #[test]
    fn tool_results_join_the_user_turn_and_system_is_split_out() {
        let mut assistant = Message::assistant("Let me check.");
        assistant.tool_calls = vec![
            ToolCall {
                id: "t1".into(),
                name: "validate".into(),
                arguments: r#"{"a":1}"#.into(),
            },
            ToolCall {
                id: "t2".into(),
                name: "validate".into(),
                arguments: "{broken".into(),
            },
        ];
        let messages = vec![
            Message::system("Be exact."),
            Message::user("Extract."),
            assistant,
            Message::tool_result("t1", "ok"),
            Message::tool_result("t2", "invalid JSON"),
            Message::user("Try again."),
        ];
        let wire = wire_messages(&messages);
        assert_eq!(
            wire,
            json!([
                {"role":"user","content":[{"type":"text","text":"Extract."}]},
                {"role":"assistant","content":[
                    {"type":"text","text":"Let me check."},
                    {"type":"tool_use","id":"t1","name":"validate","input":{"a":1}},
                    {"type":"tool_use","id":"t2","name":"validate","input":{}}]},
                {"role":"user","content":[
                    {"type":"tool_result","tool_use_id":"t1","content":"ok"},
                    {"type":"tool_result","tool_use_id":"t2","content":"invalid JSON"},
                    {"type":"text","text":"Try again."}]}
            ])
        );
    }

    #[test]
    fn cache_tokens_count_as_input() {
        let usage = read_usage(
            &json!({"usage":{"input_tokens":5,"cache_read_input_tokens":100,"output_tokens":7}}),
        );
        assert_eq!(
            usage,
            Some(Usage {
                prompt_tokens: 105,
                completion_tokens: 7,
                ..Usage::default()
            })
        );
    }
}
