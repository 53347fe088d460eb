//! One episode end to end: known entities → prompt → model → lenient parse → validate, resolve,
//! merge → one transaction (the graph, and with [`GraphExtractor::process_and_finish`] the
//! episode's end) → entity index. Failures are outcomes, never errors: the episode is kept and
//! its row says why the extraction failed.

use std::sync::Arc;

use quarry_core::model::{Entity, Episode, EpisodeOutcome, GraphExtraction};
use quarry_core::retrieval::Retriever;
use quarry_core::store::{Store, StoreError};
use quarry_llm::LlmClient;

use crate::GraphConfig;
use crate::parse::{ParsedReply, parse_reply};
use crate::process::{EpisodeWrite, GraphState, count, write_extraction};
use crate::prompt;

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
            .unwrap_or_else(failure)
    }

    /// [`process`](Self::process), and the outcome recorded on the episode: a successful
    /// extraction's graph and the episode's end (`done`) are one transaction; after a failure
    /// (nothing written) the episode is ended `failed` with
    /// [`Store::finish_episode`](quarry_core::store::Store::finish_episode). The second value
    /// is whether recording worked (if not, the episode stays `running` until a restart
    /// requeues it).
    pub async fn process_and_finish(
        &self,
        episode: &Episode,
    ) -> (EpisodeOutcome, Result<(), StoreError>) {
        match self.run(episode, EpisodeWrite::Complete(&episode.id)).await {
            Ok(outcome) => (outcome, Ok(())),
            Err(error) => {
                let outcome = failure(error);
                let recorded = self.finish(episode, &outcome).await;
                (outcome, recorded)
            }
        }
    }

    /// Ends `episode` with `outcome`.
    pub(crate) async fn finish(
        &self,
        episode: &Episode,
        outcome: &EpisodeOutcome,
    ) -> Result<(), StoreError> {
        self.store
            .finish_episode(&episode.project_id, &episode.id, outcome)
            .await
            .map(drop)
    }

    /// One episode's graph written (and, for `EpisodeWrite::Complete`, the episode ended): its
    /// `ingest` when present, otherwise the model's answer; then indexed for search.
    async fn run(
        &self,
        episode: &Episode,
        target: EpisodeWrite<'_>,
    ) -> Result<EpisodeOutcome, String> {
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
        .map_err(|e| format!("storing the graph failed: {e}"))?;
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
    async fn ask_model(&self, episode: &Episode) -> Result<ParsedReply, String> {
        let Some(client) = &self.client else {
            return Err("no model is configured for graph extraction".to_owned());
        };
        let known = self.known_entities(&episode.project_id).await?;
        let request = prompt::request(
            &self.config,
            &known,
            &episode.user_message,
            &episode.assistant_response,
        );
        let response = client
            .chat(&request)
            .await
            .map_err(|e| format!("model call failed: {e}"))?;
        let reply = match response.content.as_deref().map(str::trim) {
            Some(content) if !content.is_empty() => content.to_owned(),
            _ => response
                .tool_calls
                .first()
                .map(|call| call.arguments.clone())
                .unwrap_or_default(),
        };
        parse_reply(&reply)
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
