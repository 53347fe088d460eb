//! The one store, [`SqlStore`], and its implementation of the store traits
//! (`quarry_core::store`, one per area), written once for both backends. Every statement runs
//! through the database layer (`db.rs`): `self.pool` is SQLite's or PostgreSQL's pool, a
//! transaction a [`Tx`] of either, and the statements (`sql.rs`) and row mapping (`rows.rs`)
//! are shared. Where the backends differ, the code says so next to its twin: a statement picked
//! per dialect (`Dialect::pick`, e.g. the queue's take), SQLite's in-process writer queue
//! (`write_gate`), and the PostgreSQL-only searches and work feed (`self.postgres`, see
//! `postgres.rs`), which SQLite answers with "none of its own".
//!
//! One file per area, each an `impl` of its trait for `SqlStore` (and, where it has them, its
//! private steps): `keys.rs` (projects and API keys), `sessions.rs` (web app sessions; with the
//! conversations of `conversations.rs`, the `SessionStore`), `conversations.rs`
//! (extraction-chat conversations), `entities.rs` (entity types, entities, relations),
//! `documents.rs` (documents and their links), `runs.rs` (runs; with the results of
//! `results.rs`, the `RunStore`), `results.rs` (results, review and feedback), `queue.rs` (the
//! leased queue every job kind shares), `tasks.rs` (field tasks), `graph.rs` (episodes and the
//! graph write), `retrieval.rs` (chunks and their searches), `changes.rs` (the change feed),
//! `corrections.rs`, `deliveries.rs` (webhook deliveries), `review.rs` (the web app's pages and
//! field locks) and `operations.rs` (queue depths and the schema version, for metrics and
//! readiness). This file holds the store itself, its backend dispatch, and the helpers the
//! areas share.
//!
//! SQLite note: a transaction that reads before it writes can fail with `SQLITE_BUSY` when
//! another connection commits in between (the busy timeout cannot help an upgrade). So every
//! transaction here *writes first*, taking the write lock (waiting on the busy timeout), and
//! reads afterwards. The first write locks the entity concerned (`sql::LOCK_ENTITY`), which on
//! PostgreSQL serialises writers of one entity's results under READ COMMITTED. Graph writes
//! (`apply_graph`) lock the project row first (`sql::LOCK_PROJECT`) instead, so their look-up of
//! an entity by (type, title) before inserting it cannot race another graph write.

use std::collections::BTreeSet;

use quarry_core::model::{Document, Entity};
use quarry_core::store::StoreError;
use sqlx::AssertSqlSafe;

use crate::db::{Dialect, Pool, Query, Record, query, query_as};
use crate::postgres::PostgresExtras;
use crate::sql;

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

/// Quarry's store on SQLite or PostgreSQL (open one with [`crate::open`],
/// [`crate::SqliteStore::connect`] or [`crate::PostgresStore::connect`]).
pub struct SqlStore {
    pool: Pool,
    /// SQLite only: one writer at a time within this process. SQLite allows one writer per
    /// database; without this queue, writers that find the file locked sleep in SQLite's busy
    /// handler (1 ms, then up to 100 ms per try), which put whole tens of milliseconds on a
    /// request behind a background write. Queued here they wait only for the write ahead of
    /// them. Other processes still meet the busy timeout. PostgreSQL takes concurrent writers
    /// itself (row locks): `None`.
    writes: Option<tokio::sync::Mutex<()>>,
    /// PostgreSQL only: the server's extensions (pgvector, pg_trgm) and the work feed.
    postgres: Option<PostgresExtras>,
}

impl SqlStore {
    /// The store over `pool`, after the backfills every open runs (the migrations have run).
    pub(crate) async fn open(
        pool: Pool,
        writes: Option<tokio::sync::Mutex<()>>,
        postgres: Option<PostgresExtras>,
    ) -> Result<Self, StoreError> {
        let store = SqlStore {
            pool,
            writes,
            postgres,
        };
        store.backfill_name_keys().await?;
        Ok(store)
    }

    /// Whether entity resolution finds near-duplicate titles in the database (`pg_trgm`; never
    /// on SQLite).
    pub fn has_trigram(&self) -> bool {
        self.postgres.as_ref().is_some_and(|pg| pg.trigram)
    }

    /// Whether vector search runs in the database (PostgreSQL with the `vector` extension).
    pub fn has_pgvector(&self) -> bool {
        self.postgres.as_ref().is_some_and(|pg| pg.pgvector)
    }

    fn dialect(&self) -> Dialect {
        self.pool.dialect()
    }

    /// This backend's migrations, embedded in the binary (`schema_version` compares against
    /// the newest).
    fn migrator(&self) -> &'static sqlx::migrate::Migrator {
        self.dialect()
            .pick(crate::sqlite::migrator(), crate::postgres::migrator())
    }

    /// The rows of `template` (a statement on `$1` the project and an `IN` list from `$2`,
    /// see `sql::with_list`) for the distinct `ids`, one statement per padded list
    /// ([`padded_lists`]), in list order.
    async fn rows_among<R: Record>(
        &self,
        template: &str,
        project: &str,
        ids: &[String],
    ) -> Result<Vec<R>, StoreError> {
        let mut found = Vec::new();
        for list in padded_lists(ids) {
            let text = sql::with_list(template, 2, list.len());
            let mut query = query_as::<R>(AssertSqlSafe(text)).bind(project);
            for id in list {
                query = query.bind(id);
            }
            found.extend(query.fetch_all(&self.pool).await?);
        }
        Ok(found)
    }

    /// Waits for this process's turn to write (see `writes`); `None` on PostgreSQL.
    async fn write_gate(&self) -> Option<tokio::sync::MutexGuard<'_, ()>> {
        match &self.writes {
            Some(writes) => Some(writes.lock().await),
            None => None,
        }
    }
}

/// Most values bound into one `IN (...)` list (SQLite allows 32766 parameters).
const LIST_CHUNK: usize = 512;

/// The one INSERT of an entity row (API, cascade and graph inserts alike).
fn insert_entity(entity: &Entity) -> Query {
    insert_entity_as(sql::INSERT_ENTITY, entity)
}

/// `statement` (an INSERT of the entity columns in order) bound to `entity`.
fn insert_entity_as(statement: &'static str, entity: &Entity) -> Query {
    query(statement)
        .bind(&entity.id)
        .bind(&entity.project_id)
        .bind(&entity.entity_type)
        .bind(&entity.title)
        .bind(&entity.parent_id)
        .bind(sqlx::types::Json(&entity.fields))
        .bind(sqlx::types::Json(&entity.metadata))
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

/// The one INSERT of a document row (files and episodes alike); with a `content_hash` (files)
/// it inserts nothing when the project already holds that content.
fn insert_document(document: &Document, content_hash: Option<&str>) -> Query {
    query(sql::INSERT_DOCUMENT)
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

/// A file document's content hash: SHA-256 (hex) of the title's length in bytes, the title and
/// the text, so no two (title, text) pairs share one.
fn content_hash(title: &str, text: &str) -> String {
    hash_parts(&[title], text)
}

/// A web page's content hash: its address, title and text (a page read again unchanged is the
/// same document; a file of the same text is another).
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

/// The distinct `values` in lists of at most [`LIST_CHUNK`], each padded (repeating its last
/// value, harmless in `IN`) to a power of two: a handful of statement texts serve every length,
/// so the per-connection statement cache stays small.
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

/// `query` as a `LIKE` pattern matching it anywhere (`%`, `_` and `\` escaped).
fn contains_pattern(query: &str) -> String {
    let mut pattern = String::with_capacity(query.len() + 2);
    pattern.push('%');
    for c in query.chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}
