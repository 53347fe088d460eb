//! What the server is configured with ([`ServerConfig`], read once by [`router`](crate::router)
//! and [`serve`](crate::serve)) and what every handler can reach ([`AppState`]).

use std::sync::Arc;
use std::time::Duration;

use crate::listener::ConnectionLimits;
use crate::work::WorkLimits;
use crate::{conversations, metrics, work};

/// Request bodies over this many bytes are refused with 413 unless configured otherwise.
pub const DEFAULT_BODY_LIMIT: usize = 16 * 1024 * 1024 + 64 * 1024;

#[derive(Clone)]
pub struct ServerConfig {
    /// Largest request body, in bytes.
    pub max_body_bytes: usize,
    /// Largest `text` the skill accepts, in bytes.
    pub max_input_bytes: usize,
    /// The schema agent behind `POST /v1/chat`; `None` when the server runs without a model.
    pub agent: Option<Arc<quarry_agent::Extractor>>,
    /// Chat conversations kept in memory at once (a server without `store`; with one they are
    /// stored in the database).
    pub max_conversations: usize,
    /// The database behind the `/v1` REST API; `None` serves the skill endpoints only.
    pub store: Option<Arc<dyn quarry_core::store::Store>>,
    /// The entity pipeline over `store`; `None` when the server cannot run extractions.
    pub pipeline: Option<Arc<quarry_pipeline::Pipeline>>,
    /// Search by meaning for `/v1/graph/entities` (the pipeline's own retriever, so one index
    /// serves both); `None` answers name matches only.
    pub retriever: Option<Arc<dyn quarry_core::retrieval::Retriever>>,
    /// The background worker of the episode queue, woken when an episode arrives; `None` leaves
    /// episodes to its idle poll or to another process.
    pub graph_worker: Option<Arc<quarry_graph::GraphWorkerHandle>>,
    /// The in-process worker of the workflow task queue, woken when work is queued; `None`
    /// leaves tasks to other processes (`quarry worker`) and the worker's poll.
    pub task_worker: Option<Arc<quarry_pipeline::QueueControl>>,
    /// Mark the web app's session cookie `Secure` on every response (the server is reached over
    /// TLS through a proxy that does not send `X-Forwarded-Proto: https`).
    pub secure_cookies: bool,
    /// Timeouts, the connection cap and the shutdown grace period ([`serve`](crate::serve) only).
    pub connections: ConnectionLimits,
    /// Bounds on extraction work: concurrency, input bytes in flight.
    pub work: WorkLimits,
    /// A request not answered within this gets 504 `DeadlineExceeded`.
    pub request_timeout: Duration,
    /// `Host` names `/mcp` accepts beside the loopback ones (localhost, 127.0.0.1, ::1), which
    /// guard a local server against DNS rebinding.
    pub mcp_allowed_hosts: Vec<String>,
    /// How long a chat turn in flight holds its conversation without a heartbeat: past it, the
    /// turn is taken to have lost its process and reads as failed.
    pub turn_lease: Duration,
    /// The outbound policy's allow-list: webhook targets on a private host not named here are
    /// refused when an entity type is created.
    pub outbound: quarry_llm::outbound::HostPolicy,
}

/// Default request deadline.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// How many chat schemas stay loaded (compiled validator, prompt block) between turns.
const SCHEMA_CACHE_CAPACITY: std::num::NonZeroUsize = std::num::NonZeroUsize::new(64).unwrap();

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            max_body_bytes: DEFAULT_BODY_LIMIT,
            max_input_bytes: quarry_detect::skill::DEFAULT_MAX_INPUT_BYTES,
            agent: None,
            max_conversations: 10_000,
            store: None,
            pipeline: None,
            retriever: None,
            graph_worker: None,
            task_worker: None,
            secure_cookies: false,
            connections: ConnectionLimits::default(),
            work: WorkLimits::default(),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            mcp_allowed_hosts: Vec::new(),
            turn_lease: conversations::DEFAULT_TURN_LEASE,
            outbound: quarry_llm::outbound::HostPolicy::default(),
        }
    }
}

/// What every handler can reach.
#[derive(Clone)]
pub struct AppState {
    pub max_input_bytes: usize,
    pub agent: Option<Arc<quarry_agent::Extractor>>,
    pub conversations: Arc<conversations::Conversations>,
    /// Chat schemas loaded before, by their text: a schema is compiled once, not per turn.
    pub schemas: Arc<quarry_agent::SchemaCache>,
    pub secure_cookies: bool,
    pub store: Option<Arc<dyn quarry_core::store::Store>>,
    pub pipeline: Option<Arc<quarry_pipeline::Pipeline>>,
    pub retriever: Option<Arc<dyn quarry_core::retrieval::Retriever>>,
    pub graph_worker: Option<Arc<quarry_graph::GraphWorkerHandle>>,
    pub task_worker: Option<Arc<quarry_pipeline::QueueControl>>,
    /// The limits every endpoint that runs detectors goes through.
    pub work: Arc<work::WorkLimiter>,
    /// Requests and latencies per route, for `GET /metrics`.
    pub http_metrics: Arc<metrics::HttpMetrics>,
    /// Private hosts webhook targets may name ([`ServerConfig::outbound`]).
    pub outbound: quarry_llm::outbound::HostPolicy,
}

impl AppState {
    /// What the handlers reach, from the server's configuration.
    pub fn new(config: &ServerConfig) -> AppState {
        AppState {
            max_input_bytes: config.max_input_bytes,
            agent: config.agent.clone(),
            conversations: Arc::new(conversations::Conversations::new(
                config.store.clone(),
                config.max_conversations,
                config.turn_lease,
            )),
            schemas: Arc::new(quarry_agent::SchemaCache::new(SCHEMA_CACHE_CAPACITY)),
            secure_cookies: config.secure_cookies,
            store: config.store.clone(),
            pipeline: config.pipeline.clone(),
            retriever: config.retriever.clone(),
            graph_worker: config.graph_worker.clone(),
            task_worker: config.task_worker.clone(),
            work: Arc::new(work::WorkLimiter::new(config.work)),
            http_metrics: Arc::new(metrics::HttpMetrics::default()),
            outbound: config.outbound.clone(),
        }
    }

    /// Work was queued: the in-process task worker looks at the queue now.
    pub fn wake_task_worker(&self) {
        if let Some(worker) = &self.task_worker {
            worker.wake();
        }
    }
}
