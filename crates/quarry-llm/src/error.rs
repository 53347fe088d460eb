//! Why a model call failed, naming the provider, URL and status; and an error's chain of causes
//! as one line ([`error_chain`]).

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
    /// The prompt (with the completion cap) does not fit the model's context window: OpenAI's
    /// `context_length_exceeded`, Anthropic's "prompt is too long", llama.cpp's
    /// `exceed_context_size_error` and the like. Permanent for this prompt: a caller can keep what
    /// it has and stop, or send less.
    #[error(
        "{provider} at {url} refused the prompt as longer than the model's context window \
         (HTTP {status}): {body}"
    )]
    ContextOverflow {
        provider: String,
        url: String,
        status: u16,
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
    /// `variable` is the provider's own key variable (e.g. `OPENAI_API_KEY`); `QUARRY_API_KEY`
    /// or an `Authorization` header would do as well.
    #[error(
        "{variable} is not set: {provider} needs an API key (set {variable} or QUARRY_API_KEY, or \
         send an Authorization header with --header)"
    )]
    MissingKey { provider: String, variable: String },
    /// Settings that cannot work, found before any request is sent (e.g. an OpenAI-compatible
    /// server without a base URL).
    #[error("cannot use {provider}: {reason}")]
    Misconfigured { provider: String, reason: String },
}

impl LlmError {
    /// Whether trying the same call later may succeed: the provider could not be reached, timed
    /// out before answering, was rate limited (408, 429) or failed on its side (5xx other than
    /// 501 Not Implemented). Everything else (other 4xx, 501, unreadable replies, settings) is
    /// permanent: repeating the call gives the same answer.
    pub fn is_transient(&self) -> bool {
        match self {
            LlmError::Unreachable { .. } => true,
            LlmError::Status { status, .. } => is_transient_status(*status),
            LlmError::ContextOverflow { .. }
            | LlmError::BadReply { .. }
            | LlmError::InvalidModel(_)
            | LlmError::MissingKey { .. }
            | LlmError::Misconfigured { .. } => false,
        }
    }
}

/// The one rule for which HTTP statuses may succeed when sent again (the transport retries
/// exactly these): 408, 429 and 5xx other than 501 Not Implemented, which says the server will
/// never do what was asked.
pub fn is_transient_status(status: u16) -> bool {
    matches!(status, 408 | 429) || ((500..=599).contains(&status) && status != 501)
}

/// Whether an error body says the prompt does not fit the context window. The phrases are the
/// ones providers send: OpenAI and Azure (`context_length_exceeded`, "maximum context length"),
/// vLLM ("maximum context length"), Anthropic ("prompt is too long"), llama.cpp
/// (`exceed_context_size_error`, "exceeds the available context size"), Ollama ("context length",
/// "exceeds the context window") and Gemini ("input token count ... exceeds the maximum").
pub fn is_context_overflow(body: &str) -> bool {
    const PHRASES: [&str; 9] = [
        "context_length_exceeded",
        "maximum context length",
        "prompt is too long",
        "exceed_context_size_error",
        "exceeds the available context size",
        "context window",
        "exceeds the context length",
        "input length exceeds the context length",
        "exceeds the maximum number of tokens",
    ];
    let body = body.to_ascii_lowercase();
    PHRASES.iter().any(|phrase| body.contains(phrase))
}

/// The error and its causes, e.g. `client error (Connect): tcp connect error: Connection refused`.
pub fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut causes = Vec::new();
    let mut source = err.source();
    while let Some(cause) = source {
        causes.push(cause.to_string());
        source = cause.source();
    }
    if causes.is_empty() {
        err.to_string()
    } else {
        causes.join(": ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16) -> LlmError {
        LlmError::Status {
            provider: "openai".into(),
            url: "http://127.0.0.1/v1".into(),
            status: code,
            attempts: 1,
            body: String::new(),
        }
    }

    #[test]
    fn rate_limits_timeouts_and_server_errors_are_transient() {
        for code in [408, 429, 500, 502, 503, 504] {
            assert!(status(code).is_transient(), "{code}");
        }
        let unreachable = LlmError::Unreachable {
            provider: "openai".into(),
            url: "http://127.0.0.1/v1".into(),
            attempts: 3,
            reason: "connection refused".into(),
        };
        assert!(unreachable.is_transient());
    }

    #[test]
    fn client_errors_and_not_implemented_are_permanent() {
        for code in [400, 401, 403, 404, 422, 501] {
            assert!(!status(code).is_transient(), "{code}");
        }
        let bad = LlmError::BadReply {
            provider: "openai".into(),
            url: "u".into(),
            reason: "not json".into(),
        };
        assert!(!bad.is_transient());
    }

    #[test]
    fn context_overflow_bodies_of_each_provider_are_recognised() {
        let bodies = [
            r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}"#,
            r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}}"#,
            r#"{"error":"input length exceeds the context length"}"#,
            r#"[{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}]"#,
        ];
        for body in bodies {
            assert!(is_context_overflow(body), "{body}");
        }
        for body in [
            r#"{"error":{"message":"max_tokens is too large","code":"invalid_value"}}"#,
            r#"{"error":{"message":"Invalid schema for response_format 'x'"}}"#,
            "",
        ] {
            assert!(!is_context_overflow(body), "{body}");
        }
    }
}
