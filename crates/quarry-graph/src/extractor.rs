//! One episode end to end: known entities → prompt → model → lenient parse → validate, resolve,
//! merge → one transaction (the graph, and with [`GraphExtractor::process_and_finish`] the
//! episode's end, fenced by its lease) → entity index. Failures are outcomes, never errors: the
//! episode is kept and its row says why the extraction failed. Each failure says whether another
//! attempt may succeed ([`FailureKind`]): a claimed episode whose attempt failed transiently goes
//! back to the queue with a backoff, up to `max_attempts`.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use quarry_core::model::{Entity, Episode, EpisodeOutcome, GraphExtraction, Lease};
use quarry_core::retrieval::Retriever;
use quarry_core::store::{QueueStore, Store, StoreError};
use quarry_llm::LlmClient;
use quarry_queue::{Attempts, Failure, Outcome, RetryPolicy, Retryable, Settled};

use crate::GraphConfig;
use crate::parse::{ParsedReply, parse_reply};
use crate::process::{EpisodeWrite, GraphState, count, write_extraction};
use crate::prompt;

/// Whether another attempt of a failed extraction may succeed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// Later it may work: the model could not be reached, timed out, was rate limited or failed
    /// on its side ([`LlmError::is_transient`](quarry_llm::LlmError::is_transient)), or the store
    /// failed (a lost connection, say).
    Transient,
    /// Another attempt would fail the same way (a 4xx, an unreadable reply, a bad write).
    Permanent,
    /// The episode's lease was taken over before its end was written (it expired while this
    /// worker stalled): nothing was written, another worker owns the episode now.
    LeaseLost,
}

/// Why an extraction attempt failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtractionFailure {
    pub kind: FailureKind,
    pub reason: String,
}

impl ExtractionFailure {
    fn transient(reason: String) -> Self {
        ExtractionFailure {
            kind: FailureKind::Transient,
            reason,
        }
    }

    fn permanent(reason: String) -> Self {
        ExtractionFailure {
            kind: FailureKind::Permanent,
            reason,
        }
    }

    /// A store error while writing: a lost lease is no failure of the extraction, a backend
    /// error may pass, anything else (a missing episode or entity) would happen again.
    fn storing(error: StoreError) -> Self {
        let reason = format!("storing the graph failed: {error}");
        let kind = match error {
            StoreError::LeaseLost(_) => FailureKind::LeaseLost,
            StoreError::Backend(_) => FailureKind::Transient,
            _ => FailureKind::Permanent,
        };
        ExtractionFailure { kind, reason }
    }
}

/// How one attempt at a claimed episode ended ([`GraphExtractor::process_and_finish`]).
#[derive(Debug, Clone, PartialEq)]
pub enum AttemptEnd {
    /// The graph and the episode's end (`done`) were written in one transaction.
    Done(EpisodeOutcome),
    /// The episode was ended `failed` (a permanent failure, a transient one on the last attempt,
    /// or a claim past `max_attempts`); `outcome.error` says why, with the attempt count.
    Failed(EpisodeOutcome),
    /// A transient failure: the episode is back in the queue, claimable after `retry_after`.
    Released {
        error: String,
        retry_after: Duration,
    },
    /// The lease was taken over before the end was written: this worker wrote nothing, and must
    /// not retry (another worker owns the episode).
    LeaseLost(String),
    /// Recording the end failed; the episode stays `running` until its lease expires and a claim
    /// takes it over (counting an attempt).
    NotRecorded { error: String, cause: StoreError },
}

/// The backoff after a transient failure of attempt `attempt` (1-based): the queue's
/// ([`quarry_queue::backoff`]).
pub use quarry_queue::backoff as retry_backoff;

/// Extracts and stores the graph of conversation episodes. Cheap to share (`Arc`); holds the
/// per-project resolution caches, so one extractor per process is the intended use.
pub struct GraphExtractor {
    store: Arc<dyn Store>,
    client: Option<Arc<dyn LlmClient>>,
    retriever: Option<Arc<dyn Retriever>>,
    config: GraphConfig,
    state: GraphState,
}

impl GraphExtractor {
    /// Without a `client` only episodes carrying a pre-structured `ingest` can be processed.
    pub fn new(
        store: Arc<dyn Store>,
        client: Option<Arc<dyn LlmClient>>,
        config: GraphConfig,
    ) -> Self {
        GraphExtractor {
            store,
            client,
            retriever: None,
            state: GraphState::new(),
            config,
        }
    }

    /// Every written entity is (re-)indexed for `search_entities`; indexing errors are logged.
    pub fn with_retriever(mut self, retriever: Arc<dyn Retriever>) -> Self {
        self.retriever = Some(retriever);
        self
    }

    pub fn config(&self) -> &GraphConfig {
        &self.config
    }

    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// Whether a model is configured (a worker without one claims only ingest episodes).
    pub fn has_model(&self) -> bool {
        self.client.is_some()
    }

    /// Extracts and stores the graph of one episode: its `ingest` when present (no model call),
    /// otherwise the model's answer. Never fails: errors are in `outcome.error`.
    /// The episode's status is left alone (see [`process_and_finish`](Self::process_and_finish)).
    pub async fn process(&self, episode: &Episode) -> EpisodeOutcome {
        self.run(episode, EpisodeWrite::Link(&episode.id))
            .await
            .unwrap_or_else(|failed| failure(failed.reason))
    }

    /// One attempt at a claimed episode (one returned by
    /// [`Store::claim_episodes`](quarry_core::store::Store::claim_episodes), carrying its
    /// lease), settled by the queue's one retry policy ([`quarry_queue::settle`]): a successful
    /// extraction's graph and the episode's end (`done`) are one transaction; after a transient
    /// failure with attempts left the episode goes back to the queue with a backoff; after any
    /// other failure (nothing written) it is ended `failed`, the reason naming the attempts. A
    /// claim past `max_attempts` (a worker died on the last one) ends it `failed` without trying.
    /// A lease taken over meanwhile is [`AttemptEnd::LeaseLost`]: nothing is written.
    pub async fn process_and_finish(&self, episode: &Episode) -> AttemptEnd {
        let Some(held) = episode.lease() else {
            return AttemptEnd::NotRecorded {
                error: "the episode was not claimed".to_owned(),
                cause: StoreError::InvalidState(format!(
                    "episode '{}' is {} without a lease; claim it first",
                    episode.id,
                    episode.status.as_str()
                )),
            };
        };
        match quarry_queue::settle(self, episode, &held).await {
            Settled::Ended { value, .. } => AttemptEnd::Done(value),
            Settled::Failed { reason } => AttemptEnd::Failed(failure(reason)),
            Settled::Released {
                reason,
                retry_after,
            } => AttemptEnd::Released {
                error: reason,
                retry_after,
            },
            Settled::LeaseLost(lost) => AttemptEnd::LeaseLost(lost),
            Settled::NotRecorded { reason, cause } => AttemptEnd::NotRecorded {
                error: reason,
                cause,
            },
        }
    }

    /// One attempt's extraction, its graph and the episode's end written under `held`; a
    /// failure is reported for the retry policy. A panic is a permanent failure (panics come
    /// from parsing and resolving, before the transaction).
    pub(crate) async fn attempt(&self, episode: &Episode, held: &Lease) -> Outcome<EpisodeOutcome> {
        let run = AssertUnwindSafe(self.run(episode, EpisodeWrite::Complete(held)));
        let failed = match run.catch_unwind().await {
            Ok(Ok(outcome)) => {
                return Outcome::Ended {
                    written: Ok(outcome),
                    failed: false,
                };
            }
            Ok(Err(failed)) => failed,
            Err(_) => {
                return Outcome::Failed(Failure::new(format!(
                    "graph extraction panicked (attempt {}; not retried)",
                    episode.attempts
                )));
            }
        };
        match failed.kind {
            FailureKind::LeaseLost => Outcome::Ended {
                written: Err(StoreError::LeaseLost(failed.reason)),
                failed: true,
            },
            FailureKind::Transient => Outcome::Transient(Failure::new(failed.reason)),
            FailureKind::Permanent => Outcome::Failed(Failure::new(format!(
                "{} (attempt {}; not retried: the failure is permanent)",
                failed.reason, episode.attempts
            ))),
        }
    }

    /// One episode's graph written (and, for `EpisodeWrite::Complete`, the episode ended): its
    /// `ingest` when present, otherwise the model's answer; then indexed for search.
    async fn run(
        &self,
        episode: &Episode,
        target: EpisodeWrite<'_>,
    ) -> Result<EpisodeOutcome, ExtractionFailure> {
        let answered;
        let (extraction, source, skipped) = match &episode.ingest {
            Some(ingest) => (ingest, "ingest", EpisodeOutcome::default()),
            None => {
                answered = self.ask_model(episode).await?;
                // Counted before the write: a completing write records the whole outcome.
                let skipped = EpisodeOutcome {
                    entities_skipped: count(answered.entities_skipped),
                    relationships_skipped: count(answered.relationships_skipped),
                    ..EpisodeOutcome::default()
                };
                (&answered.extraction, "extraction", skipped)
            }
        };
        let written = write_extraction(
            self.store.as_ref(),
            &self.state,
            &self.config,
            &episode.project_id,
            target,
            extraction,
            source,
            skipped,
        )
        .await
        .map_err(ExtractionFailure::storing)?;
        self.index(Some(episode), written.entities).await;
        Ok(written.outcome)
    }

    /// Validates, resolves and stores a pre-structured extraction (the no-model path), linked to
    /// `episode_id` when given; `source` becomes `metadata.source` of new entities.
    pub async fn ingest(
        &self,
        project: &str,
        episode_id: Option<&str>,
        extraction: &GraphExtraction,
        source: &str,
    ) -> Result<EpisodeOutcome, StoreError> {
        let target = match episode_id {
            Some(id) => EpisodeWrite::Link(id),
            None => EpisodeWrite::None,
        };
        let written = write_extraction(
            self.store.as_ref(),
            &self.state,
            &self.config,
            project,
            target,
            extraction,
            source,
            EpisodeOutcome::default(),
        )
        .await?;
        self.index(None, written.entities).await;
        Ok(written.outcome)
    }

    /// The model's reply for `episode`, read leniently.
    async fn ask_model(&self, episode: &Episode) -> Result<ParsedReply, ExtractionFailure> {
        let Some(client) = &self.client else {
            return Err(ExtractionFailure::permanent(
                "no model is configured for graph extraction".to_owned(),
            ));
        };
        let known = self
            .known_entities(&episode.project_id)
            .await
            .map_err(ExtractionFailure::transient)?;
        let request = prompt::request(
            &self.config,
            &known,
            &episode.user_message,
            &episode.assistant_response,
        );
        let response = client.chat(&request).await.map_err(|e| ExtractionFailure {
            kind: if e.is_transient() {
                FailureKind::Transient
            } else {
                FailureKind::Permanent
            },
            reason: format!("model call failed: {e}"),
        })?;
        let reply = match response.content.as_deref().map(str::trim) {
            Some(content) if !content.is_empty() => content.to_owned(),
            _ => response
                .tool_calls
                .first()
                .map(|call| call.arguments.clone())
                .unwrap_or_default(),
        };
        parse_reply(&reply).map_err(ExtractionFailure::permanent)
    }

    /// The prompt's known entities: read from the store at most once per
    /// `known_entities_ttl`, with what this extractor inserts since added at once.
    async fn known_entities(&self, project: &str) -> Result<Vec<Entity>, String> {
        if self.config.known_entities == 0 {
            return Ok(Vec::new());
        }
        let ttl = self.config.known_entities_ttl;
        if let Some(known) = self.state.recent(project, ttl) {
            return Ok(known);
        }
        let known = self
            .store
            .recent_entities(project, &self.config.types, self.config.known_entities)
            .await
            .map_err(|e| format!("reading known entities failed: {e}"))?;
        if !ttl.is_zero() {
            self.state.set_recent(project, known.clone());
        }
        Ok(known)
    }

    /// Indexes written entities and the episode's document (linked to them, so entity filters
    /// find the conversation) on a blocking thread, since embedding may be slow; the document's
    /// chunks are stored so a restart does not embed them again. Errors are logged: search is
    /// then rebuilt from the store at the next start.
    async fn index(&self, episode: Option<&Episode>, entities: Vec<Entity>) {
        let Some(retriever) = self.retriever.clone() else {
            return;
        };
        let document = episode.map(Episode::document);
        let indexed = tokio::task::spawn_blocking(move || {
            for entity in &entities {
                if let Err(error) = retriever.index_entity(entity) {
                    tracing::warn!(entity = %entity.id, %error, "indexing a graph entity failed");
                }
            }
            let document = document?;
            let linked: Vec<String> = entities.into_iter().map(|entity| entity.id).collect();
            match retriever.index_document(&document, &linked) {
                Ok(chunks) => Some((document, chunks)),
                Err(error) => {
                    tracing::warn!(episode = %document.id, %error, "indexing an episode failed");
                    None
                }
            }
        })
        .await;
        match indexed {
            Ok(Some((document, chunks))) => {
                if let Err(error) = self
                    .store
                    .put_chunks(&document.project_id, &document.id, &chunks)
                    .await
                {
                    tracing::warn!(episode = %document.id, %error, "storing episode chunks failed");
                }
            }
            Ok(None) => {}
            Err(error) => tracing::warn!(%error, "indexing graph entities failed"),
        }
    }
}

/// A failed extraction's outcome: the error, nothing stored.
fn failure(error: String) -> EpisodeOutcome {
    EpisodeOutcome {
        error: Some(error),
        ..EpisodeOutcome::default()
    }
}

/// Episodes under the queue's one retry policy (see [`GraphExtractor::process_and_finish`]).
impl Retryable for GraphExtractor {
    type Job = Episode;
    type Done = EpisodeOutcome;

    fn store(&self) -> &dyn QueueStore {
        self.store.as_ref()
    }

    fn attempts<'a>(&self, episode: &'a Episode) -> Attempts<'a> {
        Attempts {
            made: episode.attempts,
            max: i64::from(self.config.max_attempts),
            last_error: episode.error.as_deref(),
        }
    }

    fn project<'a>(&self, episode: &'a Episode) -> &'a str {
        &episode.project_id
    }

    fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy::from_base(self.config.retry_base)
    }

    fn attempt<'a>(
        &'a self,
        episode: &'a Episode,
        held: &'a Lease,
    ) -> BoxFuture<'a, Outcome<EpisodeOutcome>> {
        Box::pin(GraphExtractor::attempt(self, episode, held))
    }

    /// Ends the claimed episode `failed` with the failure's reason, under its lease.
    fn record_failure<'a>(
        &'a self,
        episode: &'a Episode,
        held: &'a Lease,
        failure: &'a Failure,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            self.store
                .finish_episode(
                    &episode.project_id,
                    &episode.id,
                    Some(held),
                    &self::failure(failure.reason.clone()),
                )
                .await
                .map(drop)
        })
    }
}
