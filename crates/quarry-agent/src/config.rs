//! Extractor settings, with the defaults a CLI or server starts from.

use chrono::{DateTime, FixedOffset};
use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq)]
pub struct ExtractorConfig {
    /// Model turns per document (or chunk) before escalating to a person. Default 3.
    pub max_attempts: u32,
    /// Stop before a model call that could take the run's tokens over this (see the `budget`
    /// module docs for the estimate). `None`: no limit.
    pub max_tokens_budget: Option<u64>,
    /// The completion cap sent with every call (`max_tokens`); also what the budget reserves for
    /// the answer. Default 1024.
    pub max_completion_tokens: u32,
    /// Default `Some(0.0)`: extraction wants the most likely reading, not variety.
    pub temperature: Option<f32>,
    /// Documents longer than this many bytes are chunked. Default 16 000 (about 4 000 tokens).
    pub chunk_bytes: usize,
    /// Bytes each chunk repeats from the end of the previous one. Default 800.
    pub chunk_overlap: usize,
    /// Chunks extracted at once. Default 4.
    pub chunk_concurrency: usize,
    /// Vendor fields passed to the provider as they are (e.g. Ollama `options`).
    pub extra: Map<String, Value>,
    /// The reference time relative dates in the document are resolved against ("next Friday")
    /// when the detectors offer a date field's candidates. `None`: the time of the run.
    pub now: Option<DateTime<FixedOffset>>,
}

impl Default for ExtractorConfig {
    fn default() -> Self {
        ExtractorConfig {
            max_attempts: 3,
            max_tokens_budget: None,
            max_completion_tokens: 1024,
            temperature: Some(0.0),
            chunk_bytes: 16_000,
            chunk_overlap: 800,
            chunk_concurrency: 4,
            extra: Map::new(),
            now: None,
        }
    }
}
