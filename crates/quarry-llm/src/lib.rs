//! Talking to language models.
//!
//! [`LlmClient`] is the one trait the engine sees; providers implement it over HTTP and keep the
//! wire format exact (user schemas are sent verbatim).

pub mod client;
pub mod error;
pub mod types;

pub use client::{BoxFuture, LlmClient, TokenSink};
pub use error::LlmError;
pub use types::{
    ChatRequest, ChatResponse, Message, ResponseFormat, Role, ToolCall, ToolChoice, ToolSpec, Usage,
};
