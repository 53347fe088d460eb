//! The `Store` trait: what the pipeline and the hosts need from persistence. Implementations
//! (SQLite, PostgreSQL) live in `quarry-store`; this crate only names the contract.
//!
//! Every method is scoped to a project: a caller never sees rows of another project. Writes that
//! belong together happen in one transaction inside the implementation (noted per method).

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde_json::Value;
use thiserror::Error;

use crate::model::{
    ApiKey, Document, DocumentKind, DocumentSummary, Entity, EntityType, Episode, EpisodeOutcome,
    EpisodeStatus, ExtractionResult, ExtractionRun, FeedbackSummary, FieldTask, GraphApplied,
    GraphWrite, NewEntity, NewEpisode, NewResult, NewWorkflow, NodeState, Relation, ReviewDecision,
    RunScope, RunStatus, StoredChunk, TaskCompletion,
};
use crate::model::{
    Correction, Delivery, JobKind, Lease, NewCorrection, PlannedDelivery, Release, WebPage,
};

/// What [`Store::store_document`] did: the document, and whether this call created it (`false`:
/// the project already held a document of the same title and text, which is returned).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredDocument {
    pub document: Document,
    pub created: bool,
}

/// One chunk found by [`Store::vector_search`] (the score: cosine similarity to the query, 1 −
/// distance) or [`Store::text_search`] (the score: the full-text rank): the document, the chunk's
/// ordinal and its code-point offsets (end exclusive).
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkMatch {
    pub document_id: String,
    pub ordinal: i64,
    pub start: usize,
    pub end: usize,
    pub score: f32,
}

/// One entity found by [`Store::entity_vector_search`], with its cosine similarity to the query.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityMatch {
    pub entity_id: String,
    pub score: f32,
}

/// A link between a document and an entity, as [`Store::document_links_since`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentLink {
    pub project_id: String,
    pub document_id: String,
    pub entity_id: String,
    pub created_at: String,
}

/// A signed-in browser session of the web app. Only a hash of the cookie's token is stored;
/// the session acts with the key `key_prefix` names, which is checked again on every request
/// (a revoked key ends its sessions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebSession {
    /// Hex SHA-256 of the cookie's token.
    pub token_hash: String,
    pub project_id: String,
    pub key_prefix: String,
    /// What the page sends back as `X-CSRF-Token` on every mutation.
    pub csrf_token: String,
    pub created_at: String,
    pub expires_at: String,
}

/// One message of a chat conversation, as the chat shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct ChatMessage {
    /// `user` or `assistant`.
    pub role: String,
    pub content: String,
}

/// A new extraction-chat conversation, for [`Store::create_conversation`].
#[derive(Debug, Clone, PartialEq)]
pub struct NewConversation {
    pub title: String,
    /// The schema as the client sent it (an object, or YAML/JSON text as a string).
    pub schema: Value,
    pub document: String,
    pub messages: Vec<ChatMessage>,
    pub status: String,
}

/// A stored extraction-chat conversation. `version` increases with every write; a write names
/// the version it read, so two turns of one conversation can never both be written.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatConversation {
    pub id: String,
    pub project_id: String,
    pub title: String,
    pub schema: Value,
    pub document: String,
    /// The person's answers so far, in order (what the agent retries with).
    pub clarifications: Vec<String>,
    pub messages: Vec<ChatMessage>,
    /// The last turn's `result` payload.
    pub result: Option<Value>,
    /// `running`, `needs_clarification`, `complete` or `failed`.
    pub status: String,
    pub version: i64,
    pub created_at: String,
    pub updated_at: String,
}

/// A conversation as [`Store::list_conversations`] lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatConversationSummary {
    pub id: String,
    pub title: String,
    pub status: String,
    pub updated_at: String,
}

/// How many units the durable queues hold per state, across all projects (what a host's
/// metrics show: the queues are shared by every process on the database).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct QueueDepths {
    /// Workflow field tasks per state of [`QueueDepths::TASK_STATES`], zeros included.
    pub tasks: Vec<(NodeState, u64)>,
    /// Episodes per state of [`QueueDepths::EPISODE_STATES`], zeros included.
    pub episodes: Vec<(EpisodeStatus, u64)>,
}

impl QueueDepths {
    /// The task states counted: every one but `done` and `skipped`, which only grow.
    pub const TASK_STATES: [NodeState; 6] = [
        NodeState::Pending,
        NodeState::Queued,
        NodeState::Running,
        NodeState::WaitingHuman,
        NodeState::Blocked,
        NodeState::Failed,
    ];
    /// The episode states counted: every one but `done`.
    pub const EPISODE_STATES: [EpisodeStatus; 3] = [
        EpisodeStatus::Pending,
        EpisodeStatus::Running,
        EpisodeStatus::Failed,
    ];
}

/// The database's schema against this build's: the newest migration applied (`None` when none
/// is) and the newest one the build carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchemaVersion {
    pub applied: Option<i64>,
    pub latest: i64,
}

impl SchemaVersion {
    /// Every migration this build knows is applied. A database migrated further by a newer
    /// build counts too: during a rolling upgrade the older servers keep serving.
    pub fn is_current(&self) -> bool {
        self.applied.is_some_and(|applied| applied >= self.latest)
    }
}

/// A boxed, sendable future, so `Store` is object-safe (`Arc<dyn Store>`).
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum StoreError {
    #[error("no {what} '{id}' in this project")]
    NotFound { what: &'static str, id: String },
    #[error("{0}")]
    Conflict(String),
    /// The operation does not apply to the row's state, e.g. approving a superseded result.
    #[error("{0}")]
    InvalidState(String),
    #[error("storage failed: {0}")]
    Backend(String),
    /// A completion whose lease was taken over (it expired and another worker claimed the
    /// unit): nothing was written.
    #[error("lease lost: {0}")]
    LeaseLost(String),
}

impl StoreError {
    /// The failure's row in the [`crate::ErrorCode`] table (status, exit status, hint).
    pub fn code(&self) -> crate::ErrorCode {
        use crate::ErrorCode;
        match self {
            StoreError::NotFound { .. } => ErrorCode::NotFound,
            StoreError::Conflict(_) => ErrorCode::Conflict,
            StoreError::InvalidState(_) => ErrorCode::InvalidState,
            StoreError::Backend(_) => ErrorCode::StorageError,
            StoreError::LeaseLost(_) => ErrorCode::LeaseLost,
        }
    }
}

/// One page of a listing: its rows, and how many rows match in all.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    pub total: i64,
    pub items: Vec<T>,
}

/// A pending result in a review queue, with the title of its entity.
#[derive(Debug, Clone, PartialEq)]
pub struct QueuedResult {
    pub result: ExtractionResult,
    pub entity_title: String,
}

/// The outcome of a review, written in one transaction with the status change.
#[derive(Debug, Clone, PartialEq)]
pub struct Reviewed {
    pub result: ExtractionResult,
    /// For an approval: the entity with the value promoted into its fields.
    pub entity: Option<Entity>,
    /// The feedback rerun queued with the review.
    pub rerun: Option<ExtractionRun>,
    /// Runs whose tasks waited for this approval and now move on (their dependents queued).
    pub resumed: Vec<String>,
}

/// Projects and their API keys.
pub trait ProjectStore: Send + Sync {
    /// The project's id, creating the project on first use.
    fn ensure_project<'a>(&'a self, name: &'a str) -> StoreFuture<'a, String>;
    fn create_api_key<'a>(&'a self, key: &'a ApiKey) -> StoreFuture<'a, ()>;
    /// Every project id (index rebuilds walk projects).
    fn list_project_ids(&self) -> StoreFuture<'_, Vec<String>>;
    /// The project's name (what `--project` and `QUARRY_PROJECT` call it); `None` if no such id.
    fn project_name<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<String>>;
    /// The key with this prefix, in any project (authentication happens before scoping).
    fn find_api_key<'a>(&'a self, prefix: &'a str) -> StoreFuture<'a, Option<ApiKey>>;
    /// Revokes the project's key with this prefix and deletes its web sessions (the key is
    /// checked on every request anyway, so they end at once either way); `false` when the
    /// project has no such key.
    fn revoke_api_key<'a>(&'a self, project: &'a str, prefix: &'a str) -> StoreFuture<'a, bool>;
}

/// The web app's sessions and stored extraction chats.
pub trait SessionStore: Send + Sync {
    /// Starts a web session of `key_prefix`'s key in `project`, valid for `lifetime` from now.
    /// Also deletes every expired session (housekeeping).
    fn create_web_session<'a>(
        &'a self,
        project: &'a str,
        token_hash: &'a str,
        key_prefix: &'a str,
        csrf_token: &'a str,
        lifetime: Duration,
    ) -> StoreFuture<'a, WebSession>;
    /// The unexpired session whose token hashes to `token_hash`, in any project
    /// (authentication happens before scoping).
    fn web_session<'a>(&'a self, token_hash: &'a str) -> StoreFuture<'a, Option<WebSession>>;
    /// Ends a session; `false` when there was none.
    fn delete_web_session<'a>(&'a self, token_hash: &'a str) -> StoreFuture<'a, bool>;
    /// Stores a new conversation (version 0, no answers, no result) under a fresh id.
    fn create_conversation<'a>(
        &'a self,
        project: &'a str,
        conversation: &'a NewConversation,
    ) -> StoreFuture<'a, ChatConversation>;
    fn get_conversation<'a>(
        &'a self,
        project: &'a str,
        id: &'a str,
    ) -> StoreFuture<'a, Option<ChatConversation>>;
    /// The project's conversations, most recently updated first, at most `limit`.
    fn list_conversations<'a>(
        &'a self,
        project: &'a str,
        limit: usize,
    ) -> StoreFuture<'a, Vec<ChatConversationSummary>>;
    /// Writes `conversation`'s title, answers, messages, result and status, only while the
    /// stored version is still `conversation.version` (else [`StoreError::Conflict`] and
    /// nothing written; an unknown id is `NotFound`). Returns the row with its new version and
    /// `updated_at`.
    fn update_conversation<'a>(
        &'a self,
        project: &'a str,
        conversation: &'a ChatConversation,
    ) -> StoreFuture<'a, ChatConversation>;
}

/// Entity types, entities and relations.
pub trait EntityStore: Send + Sync {
    fn put_entity_type<'a>(
        &'a self,
        project: &'a str,
        entity_type: &'a EntityType,
    ) -> StoreFuture<'a, ()>;
    fn get_entity_type<'a>(
        &'a self,
        project: &'a str,
        slug: &'a str,
    ) -> StoreFuture<'a, Option<EntityType>>;
    fn list_entity_types<'a>(&'a self, project: &'a str) -> StoreFuture<'a, Vec<EntityType>>;
    fn create_entity<'a>(
        &'a self,
        project: &'a str,
        entity: &'a NewEntity,
    ) -> StoreFuture<'a, Entity>;
    fn get_entity<'a>(&'a self, project: &'a str, id: &'a str) -> StoreFuture<'a, Option<Entity>>;
    /// Entities of `entity_type` (all types when `None`), newest first, at most `limit`.
    fn list_entities<'a>(
        &'a self,
        project: &'a str,
        entity_type: Option<&'a str>,
        limit: usize,
    ) -> StoreFuture<'a, Vec<Entity>>;
    /// Case-insensitive title match within a type (cascade dedup).
    fn find_entity_by_title<'a>(
        &'a self,
        project: &'a str,
        entity_type: &'a str,
        title: &'a str,
    ) -> StoreFuture<'a, Option<Entity>>;
    /// Replaces the entity's metadata (e.g. `locked_fields`).
    fn set_entity_metadata<'a>(
        &'a self,
        project: &'a str,
        id: &'a str,
        metadata: &'a serde_json::Map<String, Value>,
    ) -> StoreFuture<'a, Entity>;
    /// Adds a labelled relation, or increments `mention_count` of the same (from, to, label).
    fn upsert_relation<'a>(
        &'a self,
        project: &'a str,
        from_id: &'a str,
        to_id: &'a str,
        label: &'a str,
    ) -> StoreFuture<'a, Relation>;
    /// Entities related to `id` in either direction, at most `limit`.
    fn connected_entities<'a>(
        &'a self,
        project: &'a str,
        id: &'a str,
        limit: usize,
    ) -> StoreFuture<'a, Vec<Entity>>;
}

/// Documents and their links to entities.
pub trait DocumentStore: Send + Sync {
    /// Stores a file document, idempotently: when the project already holds a file document of
    /// exactly this title and text (by a SHA-256 content hash, unique per project), that one is
    /// returned with `created: false` and nothing is written.
    fn store_document<'a>(
        &'a self,
        project: &'a str,
        title: &'a str,
        text: &'a str,
    ) -> StoreFuture<'a, StoredDocument>;
    /// Stores a web page a field agent read as a document of kind `web` with its URL and fetch
    /// time, idempotently like [`store_document`](Self::store_document): the same page (URL,
    /// title and text) read again returns the document stored the first time.
    fn store_web_page<'a>(
        &'a self,
        project: &'a str,
        page: &'a WebPage,
    ) -> StoreFuture<'a, StoredDocument>;
    /// [`store_document`](Self::store_document), the document only.
    fn add_document<'a>(
        &'a self,
        project: &'a str,
        title: &'a str,
        text: &'a str,
    ) -> StoreFuture<'a, Document> {
        Box::pin(async move { Ok(self.store_document(project, title, text).await?.document) })
    }
    /// The entities a document is linked to (empty for an unknown document).
    fn document_entity_ids<'a>(
        &'a self,
        project: &'a str,
        document_id: &'a str,
    ) -> StoreFuture<'a, Vec<String>>;
    fn link_document<'a>(
        &'a self,
        project: &'a str,
        document_id: &'a str,
        entity_id: &'a str,
    ) -> StoreFuture<'a, ()>;
    /// Documents linked to `entity_id`, or every document of the project when `None`.
    fn documents<'a>(
        &'a self,
        project: &'a str,
        entity_id: Option<&'a str>,
    ) -> StoreFuture<'a, Vec<Document>>;
}

/// Extraction runs, their results, review and feedback.
pub trait RunStore: Send + Sync {
    fn start_run<'a>(
        &'a self,
        project: &'a str,
        entity_id: &'a str,
        scope: RunScope,
        triggered_by: &'a str,
        fields: Option<&'a [String]>,
    ) -> StoreFuture<'a, ExtractionRun>;
    fn finish_run<'a>(
        &'a self,
        project: &'a str,
        run_id: &'a str,
        status: RunStatus,
        error: Option<&'a str>,
    ) -> StoreFuture<'a, ExtractionRun>;
    fn get_run<'a>(
        &'a self,
        project: &'a str,
        run_id: &'a str,
    ) -> StoreFuture<'a, Option<ExtractionRun>>;
    /// Runs of an entity, newest first.
    fn list_runs<'a>(
        &'a self,
        project: &'a str,
        entity_id: &'a str,
        limit: usize,
    ) -> StoreFuture<'a, Vec<ExtractionRun>>;
    /// A page of an entity's runs, newest first: those started before the run `before` (the
    /// last one of the previous page; `None`: from the newest). An unknown `before` is
    /// `NotFound`.
    fn runs_page<'a>(
        &'a self,
        project: &'a str,
        entity_id: &'a str,
        before: Option<&'a str>,
        limit: usize,
    ) -> StoreFuture<'a, Vec<ExtractionRun>>;
    /// One transaction: every earlier pending/approved result of each (entity, field) in
    /// `results` becomes superseded, then `results` are inserted.
    fn record_results<'a>(
        &'a self,
        project: &'a str,
        results: &'a [NewResult],
    ) -> StoreFuture<'a, Vec<ExtractionResult>>;
    fn get_result<'a>(
        &'a self,
        project: &'a str,
        id: &'a str,
    ) -> StoreFuture<'a, Option<ExtractionResult>>;
    /// The latest non-superseded result per field of an entity.
    fn latest_results<'a>(
        &'a self,
        project: &'a str,
        entity_id: &'a str,
    ) -> StoreFuture<'a, Vec<ExtractionResult>>;
    /// Every result of one field, superseded ones included, oldest first.
    fn field_history<'a>(
        &'a self,
        project: &'a str,
        entity_id: &'a str,
        field: &'a str,
    ) -> StoreFuture<'a, Vec<ExtractionResult>>;
    /// One transaction: the result's status and review columns, a review event, and for an
    /// approval the value promoted into the entity's fields. Only pending results can be reviewed.
    /// An approval ends the field's tasks that wait for a person (`done`; their runs settle, so
    /// dependents are queued); a rejection fails the task that waited on this result. `rerun`
    /// (the feedback rerun of a rejection with a reason) is created in the same transaction.
    fn review_result<'a>(
        &'a self,
        project: &'a str,
        id: &'a str,
        decision: &'a ReviewDecision,
        reviewer: &'a str,
        rerun: Option<&'a NewWorkflow>,
    ) -> StoreFuture<'a, Reviewed> {
        self.review_result_notifying(project, id, decision, reviewer, rerun, &[], &[])
    }
    /// [`review_result`](Self::review_result), queuing the field's webhooks for the review's
    /// event (`deliveries`) and creating the runs its actions start (`runs`) in the same
    /// transaction.
    #[allow(clippy::too_many_arguments)]
    fn review_result_notifying<'a>(
        &'a self,
        project: &'a str,
        id: &'a str,
        decision: &'a ReviewDecision,
        reviewer: &'a str,
        rerun: Option<&'a NewWorkflow>,
        deliveries: &'a [PlannedDelivery],
        runs: &'a [NewWorkflow],
    ) -> StoreFuture<'a, Reviewed>;
    fn feedback_summary<'a>(
        &'a self,
        project: &'a str,
        entity_type: &'a str,
        field: &'a str,
    ) -> StoreFuture<'a, FeedbackSummary>;
}

/// The leased queue every job kind shares (see `crate::model::queue`).
pub trait QueueStore: Send + Sync {
    /// The heartbeat: pushes the lease to now + `lease_for` while `held` is still the job's
    /// lease; `false` when it was taken over (or the job ended).
    fn renew_lease<'a>(&'a self, held: &'a Lease, lease_for: Duration) -> StoreFuture<'a, bool>;
    /// A transient failure: the job goes back to the queue (a task `queued`, an episode
    /// `pending`, its attempts kept), claimable after `release.retry_after`, with the error kept
    /// and the attempt's cost added. Fenced: only while the job is `running` under exactly
    /// `held`, else [`StoreError::LeaseLost`] (`NotFound` when there is no such job) and nothing
    /// is written.
    fn release_job<'a>(
        &'a self,
        project: &'a str,
        held: &'a Lease,
        release: &'a Release,
    ) -> StoreFuture<'a, ()>;
    /// A counter of the times jobs of `kind` became claimable in any process, as far as this
    /// store hears of it (PostgreSQL: `LISTEN`, started by the first call; `0` forever where the
    /// store has no notifications, as on SQLite, where one process writes and wakes its own
    /// workers). Read it before a claim, then wait with [`work_queued`](Self::work_queued).
    fn work_signal(&self, kind: JobKind) -> StoreFuture<'_, u64>;
    /// Resolves once [`work_signal`](Self::work_signal) of `kind` has passed `seen`; never on a
    /// store without notifications (callers also poll).
    fn work_queued(&self, kind: JobKind, seen: u64) -> StoreFuture<'_, ()>;
}

/// Workflow runs' field tasks on the leased queue.
pub trait WorkflowStore: Send + Sync {
    /// One transaction: a run (`running`) and its field tasks, settled at once (pending tasks
    /// whose dependencies are done become queued; a run with nothing to do ends at once).
    fn create_workflow<'a>(
        &'a self,
        project: &'a str,
        workflow: &'a NewWorkflow,
    ) -> StoreFuture<'a, (ExtractionRun, Vec<FieldTask>)>;
    /// Takes up to `limit` tasks of any project, atomically: queued ones whose backoff has
    /// passed and running ones whose lease expired. Each becomes `running` under `owner` until
    /// now + `lease`, with one more attempt. With `root_run_id`, only tasks under that root.
    fn claim_tasks<'a>(
        &'a self,
        owner: &'a str,
        lease: Duration,
        limit: usize,
        root_run_id: Option<&'a str>,
    ) -> StoreFuture<'a, Vec<FieldTask>>;
    /// One transaction, fenced by `held` (else [`StoreError::LeaseLost`] and nothing written):
    /// the results recorded (earlier ones of the field superseded), the task ended, the
    /// follow-up runs created, the run settled.
    fn complete_task<'a>(
        &'a self,
        project: &'a str,
        held: &'a Lease,
        completion: &'a TaskCompletion,
    ) -> StoreFuture<'a, FieldTask>;
    fn get_task<'a>(&'a self, project: &'a str, id: &'a str) -> StoreFuture<'a, Option<FieldTask>>;
    /// A run's tasks in the order they were created (the entity type's field order).
    fn run_tasks<'a>(
        &'a self,
        project: &'a str,
        run_id: &'a str,
    ) -> StoreFuture<'a, Vec<FieldTask>>;
    /// The run and every run started under it (cascades), oldest first.
    fn runs_under_root<'a>(
        &'a self,
        project: &'a str,
        root_run_id: &'a str,
    ) -> StoreFuture<'a, Vec<ExtractionRun>>;
    /// One transaction: the latest task of each field of the entity (of `fields` when given)
    /// that is failed or blocked starts over (attempts from zero; blocked ones wait for their
    /// dependencies again) and its run is settled again. Returns the tasks restarted.
    fn retry_tasks<'a>(
        &'a self,
        project: &'a str,
        entity_id: &'a str,
        fields: Option<&'a [String]>,
    ) -> StoreFuture<'a, Vec<FieldTask>>;
}

/// The conversation graph: episodes on the leased queue and the graph they write.
pub trait GraphStore: Send + Sync {
    /// One transaction: the episode's document (kind `episode`, text
    /// [`Episode::document_text`], title from the user message) and its `pending` queue row.
    fn add_episode<'a>(
        &'a self,
        project: &'a str,
        episode: &'a NewEpisode,
    ) -> StoreFuture<'a, Episode>;
    fn get_episode<'a>(&'a self, project: &'a str, id: &'a str)
    -> StoreFuture<'a, Option<Episode>>;
    /// Takes up to `limit` episodes of any project, atomically (two workers never take the same
    /// one): `running` episodes whose lease expired (their worker died or stalled) first, then
    /// `pending` ones whose `available_at` is unset or passed, oldest first. Each becomes
    /// `running` under `owner` until now + `lease`, with one more attempt; the returned episodes
    /// carry their [`Lease`](crate::model::Lease) (`Episode::lease`). With
    /// `ingest_only`, only episodes carrying a pre-structured `ingest` (a worker without a model
    /// leaves the others queued).
    fn claim_episodes<'a>(
        &'a self,
        owner: &'a str,
        lease: Duration,
        limit: usize,
        ingest_only: bool,
    ) -> StoreFuture<'a, Vec<Episode>>;
    /// Ends an episode: `done` when `outcome.error` is `None`, else `failed`; the lease is
    /// cleared. With `held`, fenced: only while the episode is `running` under exactly that lease
    /// (else [`StoreError::LeaseLost`] and nothing written); without, unconditionally.
    fn finish_episode<'a>(
        &'a self,
        project: &'a str,
        id: &'a str,
        held: Option<&'a Lease>,
        outcome: &'a EpisodeOutcome,
    ) -> StoreFuture<'a, Episode>;
    /// One transaction: the `failed` episodes `ids` (every failed episode of the project when
    /// `None`) go back to `pending`, claimable at once, attempts from zero and the error
    /// cleared. An id that is not a failed episode is [`StoreError::InvalidState`] (or
    /// `NotFound`) and nothing changes. Returns the episodes requeued.
    fn retry_episodes<'a>(
        &'a self,
        project: &'a str,
        ids: Option<&'a [String]>,
    ) -> StoreFuture<'a, Vec<Episode>>;
    /// Episodes linked to an entity, newest first, at most `limit`.
    fn entity_episodes<'a>(
        &'a self,
        project: &'a str,
        entity_id: &'a str,
        limit: usize,
    ) -> StoreFuture<'a, Vec<Episode>>;
    /// One transaction. Per entity: update `existing_id` (or the entity of the same exact
    /// (type, title), else the oldest of that type with the same
    /// [`name_key`](crate::resolve::name_key)) with mention_count + 1, last_seen_at = now and notes replaced only when
    /// given; otherwise insert with mention_count 1. Each entity is linked to `episode_id` when
    /// given. Per relationship: upsert on (from, to, label), mention_count + 1, notes kept when
    /// none are given.
    fn apply_graph<'a>(
        &'a self,
        project: &'a str,
        episode_id: Option<&'a str>,
        write: &'a GraphWrite,
    ) -> StoreFuture<'a, GraphApplied>;
    /// One transaction: [`apply_graph`](Self::apply_graph) of `write` linked to the episode
    /// `held.job_id`, and the episode ended as by [`finish_episode`](Self::finish_episode)
    /// with `outcome` (recorded as given: the caller counts what it stores and skipped). What a
    /// successful extraction calls, so the graph and the episode's status never disagree. The
    /// first statement is the fence: unless the episode is still `running` under exactly `held`
    /// it is [`StoreError::LeaseLost`] (no such episode in this project: `NotFound`) and nothing
    /// is written, so a worker whose lease was taken over never writes the graph a second time.
    /// On any error nothing is written and the episode keeps its status (`running` for a
    /// claimed one), so the caller can still record the failure with `finish_episode`.
    fn complete_episode<'a>(
        &'a self,
        project: &'a str,
        held: &'a Lease,
        write: &'a GraphWrite,
        outcome: &'a EpisodeOutcome,
    ) -> StoreFuture<'a, GraphApplied>;
    /// Entity resolution's candidates for `names` of `entity_type`, read from the database,
    /// oldest first: the entities of the same title or name key
    /// ([`name_key`](crate::resolve::name_key)) and each name's nearest titles, which the
    /// resolver decides among as over the full list. `None` where the store keeps no such index
    /// (SQLite, the embedded single-process default): the caller resolves against its own
    /// cache of the type's entities.
    fn resolution_candidates<'a>(
        &'a self,
        project: &'a str,
        entity_type: &'a str,
        names: &'a [String],
    ) -> StoreFuture<'a, Option<Vec<Entity>>>;
    /// Entities of `types` (all types when empty), most recently created first, at most `limit`
    /// (the prompt's known-entities block).
    fn recent_entities<'a>(
        &'a self,
        project: &'a str,
        types: &'a [String],
        limit: usize,
    ) -> StoreFuture<'a, Vec<Entity>>;
    /// Entities whose title contains `query` case-insensitively (every entity when `query` is
    /// empty), optionally of one type; exact titles first, then by mention_count, at most `limit`.
    fn find_entities_by_name<'a>(
        &'a self,
        project: &'a str,
        query: &'a str,
        entity_type: Option<&'a str>,
        limit: usize,
    ) -> StoreFuture<'a, Vec<Entity>>;
    /// Entities by id (missing ids are left out), in no particular order.
    fn get_entities<'a>(
        &'a self,
        project: &'a str,
        ids: &'a [String],
    ) -> StoreFuture<'a, Vec<Entity>>;
    /// Relations with either endpoint in `ids`.
    fn relations_touching<'a>(
        &'a self,
        project: &'a str,
        ids: &'a [String],
    ) -> StoreFuture<'a, Vec<Relation>>;
}

/// Chunks, their vectors and the searches over them.
pub trait RetrievalStore: Send + Sync {
    /// Replaces the stored chunks (with embeddings) of a document.
    fn put_chunks<'a>(
        &'a self,
        project: &'a str,
        document_id: &'a str,
        chunks: &'a [StoredChunk],
    ) -> StoreFuture<'a, ()>;
    /// Every stored chunk of every project, as (project id, chunk), ordered by document and
    /// ordinal: what an index is rebuilt from at start.
    fn all_chunks(&self) -> StoreFuture<'_, Vec<(String, StoredChunk)>>;
    /// Every document as (document id, project id, linked entity ids), all projects (index
    /// rebuild); a document without links has an empty list.
    fn all_document_links(&self) -> StoreFuture<'_, Vec<(String, String, Vec<String>)>>;
    /// A document's stored chunks, by ordinal (empty when none are stored).
    fn document_chunks<'a>(
        &'a self,
        project: &'a str,
        document_id: &'a str,
    ) -> StoreFuture<'a, Vec<StoredChunk>>;
    /// The `k` stored chunks of the project nearest to `query` by cosine distance, among vectors
    /// of `embedder` with `query`'s width (and of `document_ids` when given), best first.
    /// `Ok(None)` when this backend has no vector search of its own (SQLite, PostgreSQL without
    /// the pgvector extension): callers then search their in-process index. With `k` = 0 it
    /// answers at once (`Some(empty)` or `None`): the probe for whether the backend can.
    fn vector_search<'a>(
        &'a self,
        project: &'a str,
        embedder: &'a str,
        query: &'a [f32],
        k: usize,
        document_ids: Option<&'a [String]>,
    ) -> StoreFuture<'a, Option<Vec<ChunkMatch>>>;
    /// The `k` chunks of the project that best match the words of `query` (any of them; more
    /// and rarer matches rank higher), among `document_ids` when given, best first. `Ok(None)`
    /// when this backend keeps no text index of its own (SQLite: the in-process index does);
    /// with `k` = 0 it answers at once, the probe. Never fails on what the query says.
    fn text_search<'a>(
        &'a self,
        project: &'a str,
        query: &'a str,
        k: usize,
        document_ids: Option<&'a [String]>,
    ) -> StoreFuture<'a, Option<Vec<ChunkMatch>>>;
    /// The ids of the project's documents linked to any of `entity_ids`.
    fn linked_document_ids<'a>(
        &'a self,
        project: &'a str,
        entity_ids: &'a [String],
    ) -> StoreFuture<'a, Vec<String>>;
    /// Keeps `vector` (of `embedder`, made from `text`) as the entity's for
    /// [`entity_vector_search`](Self::entity_vector_search), replacing the one it had. `false`
    /// when this backend keeps no entity vectors (nothing is written).
    fn put_entity_vector<'a>(
        &'a self,
        entity: &'a Entity,
        embedder: &'a str,
        text: &'a str,
        vector: &'a [f32],
    ) -> StoreFuture<'a, bool>;
    /// The `k` entities of the project (of `entity_type` when given) whose vectors of `embedder`
    /// are nearest to `query`, best first; `Ok(None)` when this backend keeps no entity vectors.
    fn entity_vector_search<'a>(
        &'a self,
        project: &'a str,
        embedder: &'a str,
        query: &'a [f32],
        entity_type: Option<&'a str>,
        k: usize,
    ) -> StoreFuture<'a, Option<Vec<EntityMatch>>>;
    /// Makes sure vectors of width `dims` are searched through an index: on PostgreSQL with
    /// pgvector, builds the HNSW indexes of chunk and entity vectors of that width when missing
    /// (a while over many rows, once; searches meanwhile are exact); a no-op elsewhere. Searches
    /// and writes never build one themselves, so none of them waits for a build.
    fn prepare_vector_search(&self, dims: usize) -> StoreFuture<'_, ()>;
    /// Up to `limit` entities (any project) with no vector of `embedder` yet, for a backfill.
    fn entities_without_vectors<'a>(
        &'a self,
        embedder: &'a str,
        limit: usize,
    ) -> StoreFuture<'a, Vec<Entity>>;
}

/// What other processes wrote since a time (the followers of the in-process indexes).
pub trait ChangeFeed: Send + Sync {
    // Across all projects, oldest first by (time, id), at most `limit`, times at or after
    // `since` (RFC 3339 as the store writes them). Times come from each writer's clock and a
    // row commits a little after its time is taken, so followers re-read an overlap and
    // de-duplicate by id.
    /// Documents (files and episodes) created at or after `since`.
    fn documents_created_since<'a>(
        &'a self,
        since: &'a str,
        limit: usize,
    ) -> StoreFuture<'a, Vec<Document>>;
    /// Document links created at or after `since`.
    fn document_links_since<'a>(
        &'a self,
        since: &'a str,
        limit: usize,
    ) -> StoreFuture<'a, Vec<DocumentLink>>;
    /// Entities created or changed (`updated_at`: mentions, fields, metadata) at or after
    /// `since`.
    fn entities_changed_since<'a>(
        &'a self,
        since: &'a str,
        limit: usize,
    ) -> StoreFuture<'a, Vec<Entity>>;
    /// Entities of one project and type created at or after `since`, oldest first (what a
    /// resolver cache adds to stay current).
    fn entities_created_since<'a>(
        &'a self,
        project: &'a str,
        entity_type: &'a str,
        since: &'a str,
        limit: usize,
    ) -> StoreFuture<'a, Vec<Entity>>;
}

/// Project corrections (see [`Correction`]).
pub trait CorrectionStore: Send + Sync {
    /// Stores a correction (as given: callers check it) and returns it with its id and time.
    fn add_correction<'a>(
        &'a self,
        project: &'a str,
        correction: &'a NewCorrection,
    ) -> StoreFuture<'a, Correction>;
    /// The project's corrections, oldest first.
    fn list_corrections<'a>(&'a self, project: &'a str) -> StoreFuture<'a, Vec<Correction>>;
    /// Removes one; `false` when the project has no such correction.
    fn remove_correction<'a>(&'a self, project: &'a str, id: &'a str) -> StoreFuture<'a, bool>;
}

/// Webhook deliveries (job kind `delivery` of the leased queue) and their log.
pub trait DeliveryStore: Send + Sync {
    /// Takes up to `limit` deliveries due, as any queue take does, but none of the projects in
    /// `busy_projects` (those holding their share of the worker's slots already).
    fn claim_deliveries<'a>(
        &'a self,
        owner: &'a str,
        lease: Duration,
        limit: usize,
        busy_projects: &'a [String],
    ) -> StoreFuture<'a, Vec<Delivery>>;
    /// Ends a delivery under its lease: `done` (answered 2xx) or `dead` for good (dead-lettered:
    /// its attempts ran out, or its target is refused), with the last answer's status and
    /// error. Fenced like every queue end.
    fn finish_delivery<'a>(
        &'a self,
        project: &'a str,
        held: &'a Lease,
        done: bool,
        response_status: Option<i64>,
        error: Option<&'a str>,
    ) -> StoreFuture<'a, Delivery>;
    /// The project's deliveries, newest first, at most `limit`.
    fn list_deliveries<'a>(
        &'a self,
        project: &'a str,
        limit: usize,
    ) -> StoreFuture<'a, Vec<Delivery>>;
    /// Queues an ended delivery (`dead` or `done`) of the project again, due now, with
    /// `more_attempts` attempts beyond those it made (attempts only grow, so an old lease can
    /// never fence the new run). `NotFound` for no such delivery in the project; `Conflict` when
    /// it is queued or running already.
    fn redeliver<'a>(
        &'a self,
        project: &'a str,
        id: &'a str,
        more_attempts: i64,
    ) -> StoreFuture<'a, Delivery>;
}

/// The web app's review pages and field locks.
pub trait ReviewViewStore: Send + Sync {
    // Pages of rows in a bounded number of statements, whatever the page holds.
    /// Entities of `entity_type` whose title contains `query` case-insensitively (all when
    /// `None`), ordered by title then id, `limit` rows from `offset`, with how many match.
    fn entity_page<'a>(
        &'a self,
        project: &'a str,
        entity_type: &'a str,
        query: Option<&'a str>,
        limit: usize,
        offset: usize,
    ) -> StoreFuture<'a, Page<Entity>>;
    /// The latest non-superseded result of each (entity, field) of `entity_ids`, in no
    /// particular order.
    fn latest_results_of<'a>(
        &'a self,
        project: &'a str,
        entity_ids: &'a [String],
    ) -> StoreFuture<'a, Vec<ExtractionResult>>;
    /// The latest task (by creation) of each (entity, field) of `entity_ids`, in no particular
    /// order.
    fn latest_tasks_of<'a>(
        &'a self,
        project: &'a str,
        entity_ids: &'a [String],
    ) -> StoreFuture<'a, Vec<FieldTask>>;
    /// Pending results of entities of `entity_type`, oldest first (by creation, then id), `limit`
    /// from `offset`, each with its entity's title; `total` counts every pending result of the
    /// type (read from the feedback tallies, which count exactly the non-superseded results).
    fn review_queue<'a>(
        &'a self,
        project: &'a str,
        entity_type: &'a str,
        limit: usize,
        offset: usize,
    ) -> StoreFuture<'a, Page<QueuedResult>>;
    /// One transaction: `field` added to (`locked`) or removed from the entity's
    /// `metadata.locked_fields`, the rest of the metadata kept (concurrent lock changes of one
    /// entity queue on the entity's lock, so none is lost). Returns the entity.
    fn set_field_lock<'a>(
        &'a self,
        project: &'a str,
        entity_id: &'a str,
        field: &'a str,
        locked: bool,
    ) -> StoreFuture<'a, Entity>;
    fn get_document<'a>(
        &'a self,
        project: &'a str,
        id: &'a str,
    ) -> StoreFuture<'a, Option<Document>>;
    /// Documents whose title contains `query` case-insensitively (all when `None`), of `kind`
    /// when given, newest first, `limit` from `offset`, without their text.
    fn document_page<'a>(
        &'a self,
        project: &'a str,
        query: Option<&'a str>,
        kind: Option<DocumentKind>,
        limit: usize,
        offset: usize,
    ) -> StoreFuture<'a, Page<DocumentSummary>>;
    /// Episodes (of `status` when given), newest first, `limit` from `offset`.
    fn episode_page<'a>(
        &'a self,
        project: &'a str,
        status: Option<EpisodeStatus>,
        limit: usize,
        offset: usize,
    ) -> StoreFuture<'a, Page<Episode>>;
}

/// Metrics and readiness.
pub trait OperationsStore: Send + Sync {
    /// Tasks and episodes per state across all projects ([`QueueDepths`]): counted off the
    /// queue indexes, cheap enough for every metrics scrape.
    fn queue_depths(&self) -> StoreFuture<'_, QueueDepths>;
    /// The newest migration applied to the database against the newest this build carries.
    fn schema_version(&self) -> StoreFuture<'_, SchemaVersion>;
}

/// The whole store, for the composition root (the CLI opens one and hands it on). The areas are
/// small traits along the seams of the implementation; a part of Quarry that needs a few of
/// them takes those (the queue's worker loop takes a [`QueueStore`]), and a test fake
/// implements only what it serves. Every type that implements all of them is a `Store`.
pub trait Store:
    ProjectStore
    + SessionStore
    + EntityStore
    + DocumentStore
    + RunStore
    + QueueStore
    + WorkflowStore
    + GraphStore
    + RetrievalStore
    + ChangeFeed
    + CorrectionStore
    + DeliveryStore
    + ReviewViewStore
    + OperationsStore
{
}

impl<T> Store for T where
    T: ProjectStore
        + SessionStore
        + EntityStore
        + DocumentStore
        + RunStore
        + QueueStore
        + WorkflowStore
        + GraphStore
        + RetrievalStore
        + ChangeFeed
        + CorrectionStore
        + DeliveryStore
        + ReviewViewStore
        + OperationsStore
{
}

/// Every store trait, for `use quarry_core::store::prelude::*`: a method of a supertrait is
/// called through `dyn Store` only where its trait is in scope.
pub mod prelude {
    pub use super::{
        ChangeFeed, CorrectionStore, DeliveryStore, DocumentStore, EntityStore, GraphStore,
        OperationsStore, ProjectStore, QueueStore, RetrievalStore, ReviewViewStore, RunStore,
        SessionStore, Store, WorkflowStore,
    };
}
