//! The one implementation of the store traits (`quarry_core::store`, one per area), expanded for
//! each backend's pool type. Both backends run
//! the same statements (`sql.rs`) and row mapping (`rows.rs`); sqlx's executor and transaction
//! types differ per database, and a macro keeps that difference out of the logic without the
//! wall of trait bounds a generic function would need.
//!
//! One file per area, each a macro of its `Store` methods (and, where it has them, one of its
//! private items): `keys.rs` (projects and API keys), `sessions.rs` (web app sessions), `conversations.rs`
//! (extraction-chat conversations), `entities.rs` (entity types, entities,
//! relations), `documents.rs` (documents, links and chunks), `runs.rs`, `results.rs` (results,
//! review and feedback), `queue.rs` (the leased queue every job kind shares), `tasks.rs` (field tasks), `graph.rs` (episodes and the graph write) and `review.rs` (the web app's
//! pages and field locks) and `operations.rs` (queue depths and the schema version, for
//! metrics and readiness). This file holds the imports and helpers they share and `impl_store!`, which puts them together per backend.
//!
//! SQLite note: a transaction that reads before it writes can fail with `SQLITE_BUSY` when
//! another connection commits in between (the busy timeout cannot help an upgrade). So every
//! transaction here *writes first*, taking the write lock (waiting on the busy timeout), and
//! reads afterwards. The first write locks the entity concerned (`sql::LOCK_ENTITY`), which on
//! PostgreSQL serialises writers of one entity's results under READ COMMITTED. Graph writes
//! (`apply_graph`) lock the project row first (`sql::LOCK_PROJECT`) instead, so their look-up of
//! an entity by (type, title) before inserting it cannot race another graph write.

pub(crate) mod changes;
pub(crate) mod conversations;
pub(crate) mod corrections;
pub(crate) mod deliveries;
pub(crate) mod documents;
pub(crate) mod entities;
pub(crate) mod graph;
pub(crate) mod keys;
pub(crate) mod operations;
pub(crate) mod queue;
pub(crate) mod results;
pub(crate) mod retrieval;
pub(crate) mod review;
pub(crate) mod runs;
pub(crate) mod sessions;
pub(crate) mod tasks;

/// `impl Store for $store` over `self.pool`. `$field_tasks` and `$episodes` are the backend's
/// queue statements (`sql::*_QUEUE_*`), whose take differs between the dialects.
macro_rules! impl_store {
    ($store:ty, $db:ty, $field_tasks:expr, $episodes:expr, $deliveries:expr) => {
        const _: () = {
            use std::collections::{BTreeMap, BTreeSet};

            use quarry_core::model::{
                ApiKey, Confidence, Correction, Document, DocumentKind, DocumentSummary, Entity,
                EntityType, Episode, EpisodeOutcome, EpisodeStatus, ExtractionResult,
                ExtractionRun, FeedbackSummary, GraphApplied, GraphEntityWrite, GraphWrite,
                NewCorrection, NewEntity, NewEpisode, NewResult, Relation, ResultStatus,
                ReviewDecision, RunScope, RunStatus, StoredChunk,
            };
            use quarry_core::model::{
                AttemptRecord, CascadeWrite, FieldTask, NewWorkflow, NodeState, TaskCompletion,
                TaskEnd, TaskView, settle,
            };
            use quarry_core::model::{Delivery, JobKind, Lease, PlannedDelivery, Release, WebPage};
            use quarry_core::store::prelude::*;
            use quarry_core::store::{
                DocumentLink, Page, QueueDepths, QueuedResult, Reviewed, SchemaVersion, StoreError,
                StoreFuture, StoredDocument,
            };
            use serde_json::{Map, Value};
            use sqlx::AssertSqlSafe;
            use sqlx::types::Json;

            use $crate::clock::{millis_between, new_id, now};
            use $crate::error::{backend, not_found};
            use $crate::rows::{
                ApiKeyRow, ChunkRow, CorrectionRow, DeliveryRow, DocumentRow, DocumentSummaryRow,
                EntityRow, EntityTypeRow, EpisodeRow, QueuedRow, ReasonCountRow, RelationRow,
                ResultRow, RunRow, StatusCountRow, TaskRow, encode_embedding, enum_text,
                parse_enum,
            };
            use $crate::sql;

            /// Most values bound into one `IN (...)` list (SQLite allows 32766 parameters).
            const LIST_CHUNK: usize = 512;

            type Arguments = <$db as sqlx::Database>::Arguments;

            /// The connection under a transaction: the write steps take `&mut tx` as this.
            type Connection = <$db as sqlx::Database>::Connection;

            /// The one INSERT of an entity row (API, cascade and graph inserts alike).
            fn insert_entity(entity: &Entity) -> sqlx::query::Query<'_, $db, Arguments> {
                insert_entity_as(sql::INSERT_ENTITY, entity)
            }

            /// `statement` (an INSERT of the entity columns in order) bound to `entity`.
            fn insert_entity_as<'q>(
                statement: &'static str,
                entity: &'q Entity,
            ) -> sqlx::query::Query<'q, $db, Arguments> {
                sqlx::query(statement)
                    .bind(&entity.id)
                    .bind(&entity.project_id)
                    .bind(&entity.entity_type)
                    .bind(&entity.title)
                    .bind(&entity.parent_id)
                    .bind(Json(&entity.fields))
                    .bind(Json(&entity.metadata))
                    .bind(&entity.created_at)
                    .bind(&entity.updated_at)
                    .bind(entity.mention_count)
                    .bind(&entity.notes)
                    .bind(&entity.last_seen_at)
                    .bind(quarry_core::resolve::name_key(
                        &entity.title,
                        &entity.entity_type,
                    ))
            }

            /// The one INSERT of a document row (files and episodes alike); with a
            /// `content_hash` (files) it inserts nothing when the project already holds that
            /// content.
            fn insert_document<'q>(
                document: &'q Document,
                content_hash: Option<&'q str>,
            ) -> sqlx::query::Query<'q, $db, Arguments> {
                sqlx::query(sql::INSERT_DOCUMENT)
                    .bind(&document.id)
                    .bind(&document.project_id)
                    .bind(&document.title)
                    .bind(&document.text)
                    .bind(document.kind.as_str())
                    .bind(&document.created_at)
                    .bind(&document.url)
                    .bind(&document.fetched_at)
                    .bind(content_hash)
            }

            /// A file document's content hash: SHA-256 (hex) of the title's length in bytes,
            /// the title and the text, so no two (title, text) pairs share one.
            fn content_hash(title: &str, text: &str) -> String {
                hash_parts(&[title], text)
            }

            /// A web page's content hash: its address, title and text (a page read again
            /// unchanged is the same document; a file of the same text is another).
            fn web_content_hash(url: &str, title: &str, text: &str) -> String {
                hash_parts(&["web", url, title], text)
            }

            /// SHA-256 (hex) of each head part's length in bytes and the part, then `text`.
            fn hash_parts(heads: &[&str], text: &str) -> String {
                use sha2::Digest;
                let mut hasher = sha2::Sha256::new();
                for head in heads {
                    hasher.update((head.len() as u64).to_le_bytes());
                    hasher.update(head.as_bytes());
                }
                hasher.update(text.as_bytes());
                hasher
                    .finalize()
                    .iter()
                    .map(|byte| format!("{byte:02x}"))
                    .collect()
            }

            fn sql_limit(limit: usize) -> i64 {
                i64::try_from(limit).unwrap_or(i64::MAX)
            }

            fn sql_offset(what: &str, value: usize) -> Result<i64, StoreError> {
                i64::try_from(value)
                    .map_err(|_| StoreError::Conflict(format!("{what} {value} is out of range")))
            }

            /// The distinct `values` in lists of at most [`LIST_CHUNK`], each padded (repeating
            /// its last value, harmless in `IN`) to a power of two: a handful of statement texts
            /// serve every length, so the per-connection statement cache stays small.
            fn padded_lists(values: &[String]) -> Vec<Vec<&str>> {
                let distinct: Vec<&str> = values
                    .iter()
                    .map(String::as_str)
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect();
                distinct
                    .chunks(LIST_CHUNK)
                    .map(|list| {
                        let mut padded = list.to_vec();
                        padded.resize(list.len().next_power_of_two(), list[list.len() - 1]);
                        padded
                    })
                    .collect()
            }

            $crate::store_impl::entities::entities_items!($store);
            $crate::store_impl::runs::runs_items!($store);
            $crate::store_impl::results::results_items!($store);
            $crate::store_impl::graph::graph_items!($store);
            $crate::store_impl::tasks::tasks_items!($store);
            $crate::store_impl::queue::queue_items!(
                $store,
                $db,
                $field_tasks,
                $episodes,
                $deliveries
            );
            $crate::store_impl::deliveries::deliveries_items!($store);
            $crate::store_impl::documents::documents_items!($store);
            $crate::store_impl::review::review_items!();

            impl ProjectStore for $store {
                $crate::store_impl::keys::keys_methods!();
            }
            impl SessionStore for $store {
                $crate::store_impl::sessions::sessions_methods!();
                $crate::store_impl::conversations::conversations_methods!();
            }
            impl EntityStore for $store {
                $crate::store_impl::entities::entities_methods!();
            }
            impl DocumentStore for $store {
                $crate::store_impl::documents::documents_methods!();
            }
            impl RunStore for $store {
                $crate::store_impl::runs::runs_methods!();
                $crate::store_impl::results::results_methods!();
            }
            impl QueueStore for $store {
                $crate::store_impl::queue::queue_methods!();
            }
            impl WorkflowStore for $store {
                $crate::store_impl::tasks::tasks_methods!();
            }
            impl GraphStore for $store {
                $crate::store_impl::graph::graph_methods!();
            }
            impl RetrievalStore for $store {
                $crate::store_impl::retrieval::retrieval_methods!();
            }
            impl ChangeFeed for $store {
                $crate::store_impl::changes::changes_methods!();
            }
            impl CorrectionStore for $store {
                $crate::store_impl::corrections::corrections_methods!();
            }
            impl DeliveryStore for $store {
                $crate::store_impl::deliveries::deliveries_methods!();
            }
            impl ReviewViewStore for $store {
                $crate::store_impl::review::review_methods!();
            }
            impl OperationsStore for $store {
                $crate::store_impl::operations::operations_methods!();
            }
        };
    };
}
pub(crate) use impl_store;
