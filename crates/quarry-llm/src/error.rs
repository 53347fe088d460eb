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

impl LlmError {
    /// Whether trying the same call later may succeed: the provider could not be reached, timed
    /// out before answering, was rate limited (408, 429) or failed on its side (5xx other than
    /// 501 Not Implemented). Everything else (other 4xx, 501, unreadable replies, settings) is
    /// permanent: repeating the call gives the same answer.
    pub fn is_transient(&self) -> bool {
        match self {
            LlmError::Unreachable { .. } => true,
            LlmError::Status { status, .. } => {
                matches!(status, 408 | 429) || (*status >= 500 && *status != 501)
            }
            LlmError::BadReply { .. }
            | LlmError::InvalidModel(_)
            | LlmError::MissingKey { .. }
            | LlmError::Misconfigured { .. } => false,
        }
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
}
