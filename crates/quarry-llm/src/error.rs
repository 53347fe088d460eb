//! Why a model call failed, naming the provider, URL and status.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum LlmError {
    #[error("{provider} at {url} answered HTTP {status} after {attempts} attempt(s): {body}")]
    Status {
        provider: String,
        url: String,
        status: u16,
        attempts: u32,
        body: String,
    },
    #[error("cannot reach {provider} at {url} after {attempts} attempt(s): {reason}")]
    Unreachable {
        provider: String,
        url: String,
        attempts: u32,
        reason: String,
    },
    #[error("{provider} at {url} sent a reply Quarry cannot read: {reason}")]
    BadReply {
        provider: String,
        url: String,
        reason: String,
    },
    #[error(
        "invalid model '{0}': expected provider:model, e.g. openai:gpt-4o-mini or ollama:qwen2.5:3b"
    )]
    InvalidModel(String),
    #[error("no API key for {provider}: set {variable}")]
    MissingKey { provider: String, variable: String },
    /// Settings that cannot work, found before any request is sent (e.g. an OpenAI-compatible
    /// server without a base URL).
    #[error("cannot use {provider}: {reason}")]
    Misconfigured { provider: String, reason: String },
}
