//! Talking to language models.
//!
//! [`LlmClient`] is the one trait the engine sees; providers implement it over HTTP and keep the
//! wire format exact (user schemas are sent verbatim).
//!
//! - [`openai`]: the OpenAI-compatible chat API (OpenAI, Azure OpenAI, Gemini, vLLM, llama.cpp,
//!   LM Studio, Ollama's `/v1`).
//! - [`anthropic`]: Anthropic's messages API.
//! - [`ollama`]: Ollama's native chat API (`/api/chat`, JSON-lines streaming).
//! - [`structured`]: which native structured output each provider uses, and the fallback;
//!   [`strict_schema`] rewrites a schema to OpenAI's strict subset and maps replies back.
//! - [`transport`]: timeouts, retries, `Retry-After`, concurrency limit, usage across attempts.
//! - [`metrics`]: process-wide counts of calls, failures, retries and tokens per provider/model.
//! - `local` (feature `local`): GGUF models inside the process, decoded under JSON Schema and
//!   grounded-substring token masks.
//! - [`output_budget`]: a turn's output budget, sized to the schema its reply follows.
//! - [`outbound`]: the one address policy and client for requests made on a user's behalf.
//! - [`model_download`]: fetching a model file, resumable, checked for size and SHA-256.
//! - [`model_spec`]: `provider:model` strings and [`build_client`]. This crate reads no
//!   environment variables; `model_spec` documents which ones a binary should pass in.

pub mod anthropic;
pub mod client;
pub mod embeddings;
pub mod error;
mod http_clients;
pub use http_clients::install_crypto_provider;
mod json_lines;
#[cfg(feature = "local")]
pub mod local;
mod local_settings;
pub mod metrics;
pub mod model_download;
pub mod model_spec;
pub mod ollama;
pub mod openai;
pub mod outbound;
pub mod output_budget;
mod protocol;
pub mod registry;
pub mod sse;
pub mod strict_schema;
pub mod structured;
pub mod transport;
pub mod types;

pub use anthropic::AnthropicClient;
pub use client::{BoxFuture, LlmClient, TokenSink};
pub use embeddings::{Embeddings, EmbeddingsClient, build_embedder};
pub use error::LlmError;
pub use local_settings::LocalSettings;
pub use model_spec::{
    ModelSpec, Provider, ProviderSettings, build_client, models_dir_from, parse_header,
};
pub use ollama::OllamaClient;
pub use openai::{AzureDeployment, OpenAi, OpenAiClient};
pub use output_budget::output_budget;
pub use protocol::ProtocolClient;
pub use registry::{ModelRegistry, ModelSettings};
pub use structured::StructuredOutput;
pub use transport::{Endpoint, TransportConfig};
pub use types::{
    ChatRequest, ChatResponse, Message, PromptTokensDetails, ResponseFormat, Role, ToolCall,
    ToolChoice, ToolSpec, Usage,
};
