//! Talking to language models.
//!
//! [`LlmClient`] is the one trait the engine sees; providers implement it over HTTP and keep the
//! wire format exact (user schemas are sent verbatim).
//!
//! - [`openai`]: the OpenAI-compatible chat API (OpenAI, Ollama, vLLM, llama.cpp, LM Studio).
//! - [`anthropic`]: Anthropic's messages API.
//! - [`transport`]: timeouts, retries, `Retry-After`, concurrency limit, usage across attempts.
//! - [`model_spec`]: `provider:model` strings and [`build_client`]. This crate reads no
//!   environment variables; `model_spec` documents which ones a binary should pass in.

pub mod anthropic;
pub mod client;
pub mod embeddings;
pub mod error;
pub mod model_spec;
pub mod openai;
mod protocol;
pub mod sse;
pub mod transport;
pub mod types;

pub use anthropic::AnthropicClient;
pub use client::{BoxFuture, LlmClient, TokenSink};
pub use embeddings::{Embeddings, EmbeddingsClient, build_embedder};
pub use error::LlmError;
pub use model_spec::{ModelSpec, Provider, ProviderSettings, build_client};
pub use openai::OpenAiClient;
pub use transport::{Endpoint, TransportConfig};
pub use types::{
    ChatRequest, ChatResponse, Message, ResponseFormat, Role, ToolCall, ToolChoice, ToolSpec, Usage,
};
