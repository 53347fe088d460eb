//! The trait every model provider implements.

use std::future::Future;
use std::pin::Pin;

use crate::structured::StructuredOutput;
use crate::types::{ChatRequest, ChatResponse};

/// A boxed, sendable future, so `LlmClient` stays object-safe (`Arc<dyn LlmClient>`).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Receives streamed assistant text as it arrives.
pub type TokenSink<'a> = &'a (dyn Fn(&str) + Send + Sync);

/// A chat model behind some transport.
pub trait LlmClient: Send + Sync {
    /// One chat completion. Transport retries happen inside; the response's `usage`, `latency`
    /// and `attempts` cover all of them.
    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, crate::LlmError>>;

    /// Like [`chat`](Self::chat), streaming assistant text to `on_token` as it arrives (SSE);
    /// returns the assembled response.
    fn chat_stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_token: TokenSink<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, crate::LlmError>>;

    /// `provider:model` for logs and error messages.
    fn describe(&self) -> String;

    /// How this client makes a reply follow the schema of a request's
    /// [`ResponseFormat::JsonSchema`](crate::ResponseFormat::JsonSchema). Callers choose by it
    /// between asking for the schema alone ([`StructuredOutput::is_native`]) and offering tools
    /// with lenient parsing. Clients that know nothing better say [`StructuredOutput::None`].
    fn structured_output(&self) -> StructuredOutput {
        StructuredOutput::None
    }

    /// Whether a field agent on this client should be handed the retrieved passages and asked
    /// once (retrieve-then-extract) rather than run a loop of tool calls: true for models that
    /// use tools poorly (the small local ones).
    fn prefers_retrieval(&self) -> bool {
        false
    }

    /// Whether replies are decoded under a token mask that lets a plain string of the schema be
    /// only text of the request's `grounding` source (the local models).
    fn decodes_grounded(&self) -> bool {
        false
    }
}
