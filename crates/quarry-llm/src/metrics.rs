//! Process-wide counters of model calls per provider, model and operation (chat or
//! embeddings): calls, failures, transport retries and tokens. Every
//! [`ProtocolClient`](crate::ProtocolClient) call and every request an
//! [`EmbeddingsClient`](crate::EmbeddingsClient) sends (one batch of texts) is counted once it
//! ends, whoever made it (a request handler, a worker, the schema agent, a retriever); a host
//! reads [`snapshot`] to export them (`quarry-server` renders them on `GET /metrics`).
//!
//! The counts are totals since the process started (Prometheus counters). Distinct
//! (provider, model, operation) series are capped at [`MAX_SERIES`]: model names come from
//! configuration and entity types, and a host must not grow without bound if something names a
//! new one per call.

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};

use crate::LlmError;
use crate::types::{ChatResponse, Embeddings, Usage};

/// Most distinct (provider, model, operation) series counted apart; later ones count under the
/// model [`OTHER_MODEL`].
pub const MAX_SERIES: usize = 256;

/// The model name under which series beyond [`MAX_SERIES`] are counted.
pub const OTHER_MODEL: &str = "_other";

/// What a model call asked for: the API it went to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Operation {
    /// A chat completion (`ProtocolClient`, every provider's chat API).
    Chat,
    /// One embeddings request: a batch of texts to vectors (`EmbeddingsClient`).
    Embeddings,
}

impl Operation {
    /// `chat` or `embeddings`: the name a host exports it under (OpenTelemetry's
    /// `gen_ai.operation.name` values).
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Chat => "chat",
            Operation::Embeddings => "embeddings",
        }
    }
}

/// What was counted for one (provider, model, operation) series.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelCounts {
    /// Calls that ended, successful or not.
    pub requests: u64,
    /// Calls that ended in an error.
    pub failures: u64,
    /// HTTP attempts beyond the first (the transport's retries), of successful and failed calls.
    pub retries: u64,
    /// Prompt (for embeddings: input) tokens the provider reported (failed attempts before a
    /// success included).
    pub prompt_tokens: u64,
    /// Completion tokens the provider reported (none for embeddings).
    pub completion_tokens: u64,
}

/// One (provider, model, operation) series and its counts, as [`snapshot`] reads them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelSeries {
    pub provider: String,
    pub model: String,
    pub operation: Operation,
    pub counts: ModelCounts,
}

type Series = BTreeMap<(String, String, Operation), ModelCounts>;

fn series() -> &'static Mutex<Series> {
    static SERIES: OnceLock<Mutex<Series>> = OnceLock::new();
    SERIES.get_or_init(|| Mutex::new(BTreeMap::new()))
}

/// Every series counted so far, ordered by provider, model, then operation.
pub fn snapshot() -> Vec<ModelSeries> {
    let series = series()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    series
        .iter()
        .map(|((provider, model, operation), counts)| ModelSeries {
            provider: provider.clone(),
            model: model.clone(),
            operation: *operation,
            counts: counts.clone(),
        })
        .collect()
}

/// How one call ended, whatever its operation.
struct Ended {
    failed: bool,
    /// HTTP attempts made (1 when none was retried).
    attempts: u32,
    usage: Usage,
}

/// Counts one ended chat call of `model` at `provider`.
pub(crate) fn record(provider: &str, model: &str, outcome: &Result<ChatResponse, LlmError>) {
    let ended = match outcome {
        Ok(response) => Ended {
            failed: false,
            attempts: response.attempts,
            usage: response.usage,
        },
        Err(error) => failed(error),
    };
    count(provider, model, Operation::Chat, ended);
}

/// Counts one ended embeddings request (one batch) of `model` at `provider`.
pub(crate) fn record_embeddings(
    provider: &str,
    model: &str,
    outcome: &Result<Embeddings, LlmError>,
) {
    let ended = match outcome {
        Ok(batch) => Ended {
            failed: false,
            attempts: batch.attempts,
            usage: batch.usage,
        },
        Err(error) => failed(error),
    };
    count(provider, model, Operation::Embeddings, ended);
}

fn failed(error: &LlmError) -> Ended {
    Ended {
        failed: true,
        attempts: attempts_of(error),
        usage: Usage::default(),
    }
}

fn count(provider: &str, model: &str, operation: Operation, ended: Ended) {
    let mut series = series()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let key = (provider.to_owned(), model.to_owned(), operation);
    let key = if series.contains_key(&key) || series.len() < MAX_SERIES {
        key
    } else {
        (provider.to_owned(), OTHER_MODEL.to_owned(), operation)
    };
    let counts = series.entry(key).or_default();
    counts.requests += 1;
    counts.failures += u64::from(ended.failed);
    counts.retries += u64::from(ended.attempts.saturating_sub(1));
    counts.prompt_tokens += ended.usage.prompt_tokens;
    counts.completion_tokens += ended.usage.completion_tokens;
}

/// HTTP attempts a failed call made (1 when the error names none: it failed on its first).
fn attempts_of(error: &LlmError) -> u32 {
    match error {
        LlmError::Status { attempts, .. } | LlmError::Unreachable { attempts, .. } => *attempts,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn counts_of(provider: &str, model: &str, operation: Operation) -> ModelCounts {
        snapshot()
            .into_iter()
            .find(|series| {
                series.provider == provider
                    && series.model == model
                    && series.operation == operation
            })
            .map(|series| series.counts)
            .unwrap_or_default()
    }

    #[test]
    fn successes_and_failures_count_tokens_and_retries() {
        let reply = ChatResponse {
            content: Some("ok".into()),
            tool_calls: Vec::new(),
            finish_reason: None,
            usage: Usage {
                prompt_tokens: 10,
                completion_tokens: 3,
                ..Usage::default()
            },
            latency: Duration::ZERO,
            attempts: 2,
        };
        record("unit-test", "m", &Ok(reply));
        let failed = LlmError::Status {
            provider: "unit-test".into(),
            url: "http://x".into(),
            status: 503,
            attempts: 4,
            body: String::new(),
        };
        record("unit-test", "m", &Err(failed));
        assert_eq!(
            counts_of("unit-test", "m", Operation::Chat),
            ModelCounts {
                requests: 2,
                failures: 1,
                retries: 1 + 3,
                prompt_tokens: 10,
                completion_tokens: 3,
            }
        );
    }
}
