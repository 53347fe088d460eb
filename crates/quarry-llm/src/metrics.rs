//! Process-wide counters of model calls per provider and model: calls, failures, transport
//! retries and tokens. Every [`ProtocolClient`](crate::ProtocolClient) call is counted once it
//! ends, whoever made it (a request handler, a worker, the schema agent); a host reads
//! [`snapshot`] to export them (`quarry-server` renders them on `GET /metrics`).
//!
//! The counts are totals since the process started (Prometheus counters). Distinct
//! (provider, model) pairs are capped at [`MAX_SERIES`]: model names come from configuration and
//! entity types, and a host must not grow without bound if something names a new one per call.

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};

use crate::LlmError;
use crate::types::ChatResponse;

/// Most distinct (provider, model) pairs counted apart; later ones count under the model
/// [`OTHER_MODEL`].
pub const MAX_SERIES: usize = 256;

/// The model name under which pairs beyond [`MAX_SERIES`] are counted.
pub const OTHER_MODEL: &str = "_other";

/// What was counted for one (provider, model) pair.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelCounts {
    /// Calls that ended, successful or not.
    pub requests: u64,
    /// Calls that ended in an error.
    pub failures: u64,
    /// HTTP attempts beyond the first (the transport's retries), of successful and failed calls.
    pub retries: u64,
    /// Prompt tokens the provider reported (failed attempts before a success included).
    pub prompt_tokens: u64,
    /// Completion tokens the provider reported.
    pub completion_tokens: u64,
}

/// One (provider, model) pair and its counts, as [`snapshot`] reads them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelSeries {
    pub provider: String,
    pub model: String,
    pub counts: ModelCounts,
}

type Series = BTreeMap<(String, String), ModelCounts>;

fn series() -> &'static Mutex<Series> {
    static SERIES: OnceLock<Mutex<Series>> = OnceLock::new();
    SERIES.get_or_init(|| Mutex::new(BTreeMap::new()))
}

/// Every pair counted so far, ordered by provider then model.
pub fn snapshot() -> Vec<ModelSeries> {
    let series = series()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    series
        .iter()
        .map(|((provider, model), counts)| ModelSeries {
            provider: provider.clone(),
            model: model.clone(),
            counts: counts.clone(),
        })
        .collect()
}

/// Counts one ended call of `model` at `provider`.
pub(crate) fn record(provider: &str, model: &str, outcome: &Result<ChatResponse, LlmError>) {
    let mut series = series()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let key = (provider.to_owned(), model.to_owned());
    let key = if series.contains_key(&key) || series.len() < MAX_SERIES {
        key
    } else {
        (provider.to_owned(), OTHER_MODEL.to_owned())
    };
    let counts = series.entry(key).or_default();
    counts.requests += 1;
    match outcome {
        Ok(response) => {
            counts.retries += u64::from(response.attempts.saturating_sub(1));
            counts.prompt_tokens += response.usage.prompt_tokens;
            counts.completion_tokens += response.usage.completion_tokens;
        }
        Err(error) => {
            counts.failures += 1;
            counts.retries += u64::from(attempts_of(error).saturating_sub(1));
        }
    }
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
    use crate::types::Usage;

    fn counts_of(provider: &str, model: &str) -> ModelCounts {
        snapshot()
            .into_iter()
            .find(|series| series.provider == provider && series.model == model)
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
            counts_of("unit-test", "m"),
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
