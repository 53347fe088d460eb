//! Provider-neutral chat types. Providers translate them to and from their wire format. Also
//! what an embeddings call returns ([`Embeddings`]).

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// One chat message. Assistant messages may carry tool calls; tool messages answer one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For `Role::Tool`: the id of the call this message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    pub fn system(content: impl Into<String>) -> Self {
        Message::text(Role::System, content)
    }

    pub fn user(content: impl Into<String>) -> Self {
        Message::text(Role::User, content)
    }

    pub fn assistant(content: impl Into<String>) -> Self {
        Message::text(Role::Assistant, content)
    }

    pub fn tool_result(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Message {
            role: Role::Tool,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: Some(call_id.into()),
        }
    }

    fn text(role: Role, content: impl Into<String>) -> Self {
        Message {
            role,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }
}

/// A tool the model may call; `parameters` is a JSON Schema sent verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// A call the model made. `arguments` is the raw text the model produced (often, but not always,
/// valid JSON — lenient parsing happens in the engine).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoice {
    Auto,
    Required,
    None,
    /// Force this tool.
    Tool(String),
}

/// Constrained output, where the server supports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResponseFormat {
    JsonObject,
    /// A JSON Schema sent verbatim (OpenAI `response_format: {type: json_schema}`).
    JsonSchema {
        name: String,
        schema: Value,
        strict: bool,
    },
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ChatRequest {
    pub model: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    pub tool_choice: Option<ToolChoice>,
    pub response_format: Option<ResponseFormat>,
    pub temperature: Option<f32>,
    pub max_tokens: Option<u32>,
    /// The source text the reply's plain strings must come from, for clients that can constrain
    /// decoding to it (local models: grounded decoding); HTTP providers never send it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grounding: Option<String>,
    /// Vendor fields merged into the request body as they are (e.g. Ollama `options`, vLLM
    /// `guided_json`); an object the protocol also sets (Ollama's `options`) is merged key by
    /// key, the vendor's value winning.
    pub extra: Map<String, Value>,
}

impl ChatRequest {
    /// `temperature` as JSON, written the way it was given: `0.2`, not `0.20000000298023224`.
    pub(crate) fn temperature_json(&self) -> Option<Value> {
        let shortest: f64 = self.temperature?.to_string().parse().ok()?;
        serde_json::Number::from_f64(shortest).map(Value::Number)
    }
}

/// Tokens a call consumed, summed over transport retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// What the prompt's count is made of, as OpenAI reports it; absent when nothing was cached.
    #[serde(default, skip_serializing_if = "PromptTokensDetails::is_empty")]
    pub prompt_tokens_details: PromptTokensDetails,
}

/// Of a prompt's tokens, those the model did not have to read again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct PromptTokensDetails {
    /// Prompt tokens whose key-value state came from the model's prefix cache.
    #[serde(default)]
    pub cached_tokens: u64,
}

impl PromptTokensDetails {
    fn is_empty(&self) -> bool {
        self.cached_tokens == 0
    }
}

impl Usage {
    /// A call's counts, nothing cached.
    pub fn new(prompt_tokens: u64, completion_tokens: u64) -> Usage {
        Usage {
            prompt_tokens,
            completion_tokens,
            prompt_tokens_details: PromptTokensDetails::default(),
        }
    }

    pub fn total(&self) -> u64 {
        self.prompt_tokens + self.completion_tokens
    }

    /// Prompt tokens read from a cache.
    pub fn cached_tokens(&self) -> u64 {
        self.prompt_tokens_details.cached_tokens
    }

    pub fn add(&mut self, other: Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.prompt_tokens_details.cached_tokens += other.prompt_tokens_details.cached_tokens;
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChatResponse {
    pub content: Option<String>,
    pub tool_calls: Vec<ToolCall>,
    pub finish_reason: Option<String>,
    pub usage: Usage,
    /// Wall time of the call including retries and backoff.
    pub latency: Duration,
    /// HTTP attempts made (1 when the first succeeded).
    pub attempts: u32,
}

/// Vectors and what it took to get them.
#[derive(Debug, Clone, PartialEq)]
pub struct Embeddings {
    /// One vector per input text, in input order.
    pub vectors: Vec<Vec<f32>>,
    /// Tokens reported by the server, summed over batches and failed attempts
    /// (`prompt_tokens` only: embeddings produce no completion tokens).
    pub usage: Usage,
    /// HTTP requests made, retries included.
    pub attempts: u32,
    /// Wall time of the whole call, every batch and retry included.
    pub latency: Duration,
}
