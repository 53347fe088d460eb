//! The `Store` trait: what the pipeline and the hosts need from persistence. Implementations
//! (SQLite, PostgreSQL) live in `quarry-store`; this crate only names the contract.
//!
//! Every method is scoped to a project: a caller never sees rows of another project. Writes that
//! belong together happen in one transaction inside the implementation (noted per method).

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;
use thiserror::Error;

use crate::model::{
    ApiKey, Document, Entity, EntityType, ExtractionResult, ExtractionRun, FeedbackSummary,
    NewEntity, NewResult, Relation, ReviewDecision, RunScope, RunStatus,
};

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
}

/// The outcome of a review, written in one transaction with the status change.
#[derive(Debug, Clone, PartialEq)]
pub struct Reviewed {
    pub result: ExtractionResult,
    /// For an approval: the entity with the value promoted into its fields.
    pub entity: Option<Entity>,
}

pub trait Store: Send + Sync {
    // --- projects and keys ---------------------------------------------------------------
    /// The project's id, creating the project on first use.
    fn ensure_project<'a>(&'a self, name: &'a str) -> StoreFuture<'a, String>;
    fn create_api_key<'a>(&'a self, key: &'a ApiKey) -> StoreFuture<'a, ()>;
    /// The key with this prefix, in any project (authentication happens before scoping).
    fn find_api_key<'a>(&'a self, prefix: &'a str) -> StoreFuture<'a, Option<ApiKey>>;

    // --- entity types --------------------------------------------------------------------
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

    // --- entities and relations ----------------------------------------------------------
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

    // --- documents -----------------------------------------------------------------------
    fn add_document<'a>(
        &'a self,
        project: &'a str,
        title: &'a str,
        text: &'a str,
    ) -> StoreFuture<'a, Document>;
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

    // --- runs and results ----------------------------------------------------------------
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
    /// On start-up: runs left `running` by a crash are marked `failed`; returns how many.
    fn fail_interrupted_runs(&self) -> StoreFuture<'_, u64>;
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
    fn review_result<'a>(
        &'a self,
        project: &'a str,
        id: &'a str,
        decision: &'a ReviewDecision,
        reviewer: &'a str,
    ) -> StoreFuture<'a, Reviewed>;
    fn feedback_summary<'a>(
        &'a self,
        project: &'a str,
        entity_type: &'a str,
        field: &'a str,
    ) -> StoreFuture<'a, FeedbackSummary>;
}
