//! What the scripted server answers and records: the [`Reply`] kinds and their [`Scripted`]
//! delay and usage, the FIFO [`Script`] (per model or any model), how `/v1/embeddings` answers,
//! the [`Recorded`] requests, and the [`Shared`] state the handlers in `lib.rs`, the control
//! routes (`control.rs`) and [`FakeWeb`](crate::FakeWeb) read through [`lock`].

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Value, json};

/// What the server answers to one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// An assistant message with this text: prose, fenced JSON, malformed JSON, anything.
    Content(String),
    /// One tool call; `arguments` is sent as the raw text (it need not be valid JSON).
    ToolCall { name: String, arguments: String },
    /// Several tool calls in one assistant turn, as `(name, arguments)`.
    ToolCalls(Vec<(String, String)>),
    /// An HTTP error with this body, and a `Retry-After: <seconds>` header when set.
    Status {
        code: u16,
        body: String,
        retry_after: Option<u64>,
    },
    /// Exactly these bytes with this status and content type (for replies no server should send).
    Raw {
        code: u16,
        content_type: String,
        body: String,
    },
}

impl Reply {
    pub fn content(text: impl Into<String>) -> Reply {
        Reply::Content(text.into())
    }

    pub fn tool_call(name: impl Into<String>, arguments: impl Into<String>) -> Reply {
        Reply::ToolCall {
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    pub fn status(code: u16, body: impl Into<String>) -> Reply {
        Reply::Status {
            code,
            body: body.into(),
            retry_after: None,
        }
    }

    /// HTTP 429 with `Retry-After: seconds`.
    pub fn rate_limited(retry_after_seconds: u64) -> Reply {
        Reply::Status {
            code: 429,
            body: json!({"error": {"message": "rate limited", "type": "rate_limit_error"}})
                .to_string(),
            retry_after: Some(retry_after_seconds),
        }
    }

    /// This reply, sent after `delay` (a slow model).
    pub fn after(self, delay: Duration) -> Scripted {
        Scripted::from(self).after(delay)
    }

    /// This reply, reporting this token usage.
    pub fn with_usage(self, prompt_tokens: u64, completion_tokens: u64) -> Scripted {
        Scripted::from(self).with_usage(prompt_tokens, completion_tokens)
    }
}

/// Token usage a reply reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenUsage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// A [`Reply`] with its delay and reported usage. By default: no delay, 10 prompt and 5
/// completion tokens.
#[derive(Debug, Clone, PartialEq)]
pub struct Scripted {
    pub reply: Reply,
    pub delay: Duration,
    pub usage: TokenUsage,
}

impl Scripted {
    pub const DEFAULT_USAGE: TokenUsage = TokenUsage {
        prompt_tokens: 10,
        completion_tokens: 5,
    };

    pub fn after(mut self, delay: Duration) -> Scripted {
        self.delay = delay;
        self
    }

    pub fn with_usage(mut self, prompt_tokens: u64, completion_tokens: u64) -> Scripted {
        self.usage = TokenUsage {
            prompt_tokens,
            completion_tokens,
        };
        self
    }
}

impl From<Reply> for Scripted {
    fn from(reply: Reply) -> Scripted {
        Scripted {
            reply,
            delay: Duration::ZERO,
            usage: Scripted::DEFAULT_USAGE,
        }
    }
}

/// One request the server received.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// `/v1/chat/completions`, `/v1/messages`, `/api/chat`, `/v1/embeddings`, ….
    pub path: String,
    /// The query string without `?` (`api-version=2024-10-21`), empty when there is none.
    pub query: String,
    /// Header names in lower case.
    pub headers: BTreeMap<String, String>,
    /// The JSON body (a JSON string holding the raw text if the body was not JSON).
    pub body: Value,
}

#[derive(Default)]
pub(crate) struct Script {
    pub(crate) any_model: VecDeque<Scripted>,
    pub(crate) by_model: HashMap<String, VecDeque<Scripted>>,
}

impl Script {
    pub(crate) fn next_for(&mut self, model: &str) -> Option<Scripted> {
        if let Some(reply) = self.by_model.get_mut(model).and_then(VecDeque::pop_front) {
            return Some(reply);
        }
        self.any_model.pop_front()
    }

    pub(crate) fn len(&self) -> usize {
        self.any_model.len() + self.by_model.values().map(VecDeque::len).sum::<usize>()
    }
}

/// How `/v1/embeddings` answers.
pub(crate) struct EmbeddingsSetup {
    pub(crate) dimensions: usize,
    /// Send `data` in reverse input order (each item still carries its `index`).
    pub(crate) reversed: bool,
    pub(crate) script: VecDeque<Scripted>,
}

impl Default for EmbeddingsSetup {
    fn default() -> Self {
        EmbeddingsSetup {
            dimensions: DEFAULT_EMBEDDING_DIMENSIONS,
            reversed: false,
            script: VecDeque::new(),
        }
    }
}

/// Dimensions of the vectors `/v1/embeddings` answers with unless set otherwise.
pub const DEFAULT_EMBEDDING_DIMENSIONS: usize = 8;

/// Answers a chat request (its JSON body) when the script has no reply queued for it: for
/// long-running tests (many processes, crashes, retries) whose requests cannot be scripted one by
/// one in order.
pub type Responder = Arc<dyn Fn(&Value) -> Scripted + Send + Sync>;

#[derive(Default)]
pub(crate) struct Shared {
    pub(crate) script: Mutex<Script>,
    pub(crate) responder: Mutex<Option<Responder>>,
    pub(crate) embeddings: Mutex<EmbeddingsSetup>,
    pub(crate) recorded: Mutex<Vec<Recorded>>,
    pub(crate) in_flight: AtomicUsize,
    pub(crate) max_in_flight: AtomicUsize,
}

/// Locks even if a panicking test thread poisoned the mutex: the data is still what was recorded.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
