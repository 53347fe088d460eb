//! The conversation knowledge graph: background extraction of named entities and the
//! relationships between them from conversation episodes (`../shared/reference/
//! conversation-entity-graph.md`), with entity resolution before anything is written.
//!
//! An episode is stored (and queued) by [`Store::add_episode`](quarry_core::store::Store); a
//! [`GraphWorker`] claims queued episodes under a lease (renewed by its heartbeat; an expired
//! lease is taken over by another worker), asks the model (at most `concurrency` calls in
//! flight) with the prompt of [`prompt`], reads the reply leniently ([`parse`]), validates,
//! resolves and merges the names ([`process`]) and writes one episode's graph and its end
//! (`done`, with the counts) in one transaction fenced by the lease; a failed extraction writes
//! nothing and puts the episode back in the queue with a backoff when the failure is transient
//! (up to `max_attempts`), else ends it `failed`. Episodes that carry a pre-structured `ingest` skip the model. Reading the graph
//! back is [`neighbors`] and [`find_entities`] (name, then meaning).
//!
//! Code map: `prompt.rs` (what the model reads, the constrained-output schema), `parse.rs` (reply
//! → [`GraphExtraction`](quarry_core::model::GraphExtraction)), `process.rs` (validation,
//! stoplist, resolution cache, merge, relationship mapping, the write), `extractor.rs`
//! ([`GraphExtractor`]: one episode end to end), `worker.rs` (the queue loop), `read.rs`
//! (neighbourhood BFS), `search.rs` (entities by name and by meaning).

mod extractor;
pub mod parse;
mod process;
pub mod prompt;
mod read;
mod search;
mod worker;

use std::time::Duration;

use quarry_core::model::{DEFAULT_GRAPH_TYPES, DEFAULT_STOPLIST};

pub use extractor::{AttemptEnd, ExtractionFailure, FailureKind, GraphExtractor, retry_backoff};
pub use parse::{ParsedReply, parse_reply};
pub use process::normalize_label;
pub use read::{MAX_DEPTH, Neighbor, Neighborhood, neighbors};
pub use search::{EntityMatch, FoundEntity, find_entities};
pub use worker::{GraphWorker, GraphWorkerHandle, WorkerStats};

/// How the graph is extracted.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphConfig {
    /// The model asked; empty uses the client's default model.
    pub model: String,
    /// Entity types the model may use (lower case); other types are skipped.
    pub types: Vec<String>,
    /// Names never stored, compared case-insensitively after trimming.
    pub stoplist: Vec<String>,
    /// How many recent entities the prompt lists as already known.
    pub known_entities: usize,
    /// How long the known entities read from the store are reused before being read again
    /// (entities this extractor inserts are added at once; others, e.g. from another process,
    /// show up within this time). `Duration::ZERO` reads them for every episode.
    pub known_entities_ttl: Duration,
    pub temperature: f32,
    pub max_tokens: u32,
    /// Whether to ask for constrained output (`response_format` with a JSON schema). The client
    /// sends it the provider's native way (OpenAI strict mode, Ollama's `format`, Anthropic's
    /// forced tool, …: see `quarry_llm::structured`) and drops it for a server that refuses it;
    /// servers that ignore it are fine: the reply is parsed leniently either way.
    pub structured_output: bool,
    /// Episodes processed at once by a worker (model calls in flight).
    pub concurrency: usize,
    /// The most episodes a worker claims from the queue in one round trip.
    pub claim_batch: usize,
    /// How long an idle worker sleeps before looking at the queue again when nobody wakes it
    /// (another process may have queued episodes).
    pub idle_poll: Duration,
    /// Longer names (in characters, after trimming) are skipped as garbage.
    pub max_name_chars: usize,
    /// The most entities one episode may store: a runaway or hostile model reply (thousands of
    /// names) is cut here, the rest counted as skipped, so one poison episode cannot flood the
    /// graph or hold the graph lock for long.
    pub max_entities_per_episode: usize,
    /// The most relationships one episode may store; the rest are counted as skipped.
    pub max_relationships_per_episode: usize,
    /// Who claims episodes (recorded as their `lease_owner`): unique per process, e.g.
    /// `pid@host:start_ms`. The default is made of the process id and the time it was first
    /// asked for.
    pub owner: String,
    /// How long a claim holds an episode; the worker's heartbeat renews the leases of the
    /// episodes it holds every `lease / 3`. An episode whose lease expired (its worker died or
    /// stalled) is taken over by the next claim.
    pub lease: Duration,
    /// Attempts per episode, each claim counting one: a transient failure (model unreachable,
    /// rate limited, 5xx) on an earlier attempt puts the episode back in the queue, on the last
    /// one it ends `failed`; a claim beyond this (a worker died on the last attempt) ends it
    /// `failed` without trying ("gave up after N attempts").
    pub max_attempts: u32,
    /// The backoff after a transient failure: `retry_base * 2^(attempt - 1)`, at most 60 s,
    /// ± 20 % jitter.
    pub retry_base: Duration,
}

/// The default [`GraphConfig::owner`]: the process id and the time it was first asked for, the
/// same for the whole process.
fn default_owner() -> String {
    static OWNER: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    OWNER
        .get_or_init(|| {
            let started = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |since| since.as_millis());
            format!("{}@localhost:{started}", std::process::id())
        })
        .clone()
}

impl Default for GraphConfig {
    fn default() -> Self {
        GraphConfig {
            model: String::new(),
            types: DEFAULT_GRAPH_TYPES
                .iter()
                .map(|t| (*t).to_owned())
                .collect(),
            stoplist: DEFAULT_STOPLIST.iter().map(|s| (*s).to_owned()).collect(),
            known_entities: 20,
            known_entities_ttl: Duration::from_secs(1),
            temperature: 0.1,
            max_tokens: 1500,
            structured_output: true,
            concurrency: 8,
            claim_batch: 16,
            idle_poll: Duration::from_secs(2),
            max_name_chars: 200,
            max_entities_per_episode: 200,
            max_relationships_per_episode: 400,
            owner: default_owner(),
            lease: Duration::from_secs(30),
            max_attempts: 5,
            retry_base: Duration::from_secs(1),
        }
    }
}
