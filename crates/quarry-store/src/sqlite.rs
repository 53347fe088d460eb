//! The embedded SQLite backend: one file (WAL journal, foreign keys on, a busy timeout so
//! concurrent writers wait instead of failing), or `:memory:` for throwaway use.

use std::str::FromStr;
use std::time::Duration;

use quarry_core::store::StoreError;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

use crate::error::{backend, migration};
use crate::store_impl::impl_store;

/// How long a writer waits for another connection's write lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);
const MAX_CONNECTIONS: u32 = 8;

pub struct SqliteStore {
    pool: SqlitePool,
    /// One writer at a time within this process. SQLite allows one writer per database; without
    /// this queue, writers that find the file locked sleep in SQLite's busy handler (1 ms, then
    /// up to 100 ms per try), which put whole tens of milliseconds on a request behind a
    /// background write. Queued here they wait only for the write ahead of them. Other processes
    /// still meet the busy timeout.
    writes: tokio::sync::Mutex<()>,
}

impl SqliteStore {
    /// This backend's migrations, embedded in the binary (`schema_version` compares against
    /// the newest).
    fn migrator() -> &'static sqlx::migrate::Migrator {
        static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");
        &MIGRATOR
    }

    /// Opens (creating if missing) `sqlite://path`, a plain path, or `:memory:`, and applies the
    /// migrations.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let in_memory = matches!(url, ":memory:" | "sqlite::memory:" | "sqlite://:memory:");
        let options = if in_memory {
            SqliteConnectOptions::from_str("sqlite::memory:").map_err(backend)?
        } else if url.starts_with("sqlite:") {
            SqliteConnectOptions::from_str(url).map_err(backend)?
        } else {
            SqliteConnectOptions::new().filename(url)
        };
        let options = options
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(BUSY_TIMEOUT);
        // Every connection to `:memory:` is its own database: keep exactly one, forever.
        let pool = if in_memory {
            SqlitePoolOptions::new()
                .max_connections(1)
                .min_connections(1)
                .idle_timeout(None)
                .max_lifetime(None)
        } else {
            SqlitePoolOptions::new().max_connections(MAX_CONNECTIONS)
        }
        .connect_with(options)
        .await
        .map_err(backend)?;
        Self::migrator().run(&pool).await.map_err(migration)?;
        let store = SqliteStore {
            pool,
            writes: tokio::sync::Mutex::new(()),
        };
        store.backfill_name_keys().await?;
        Ok(store)
    }

    /// The embedded store keeps no name index: resolution uses the process's cache.
    async fn native_resolution_candidates(
        &self,
        _project: &str,
        _entity_type: &str,
        _names: &[String],
    ) -> Result<Option<Vec<quarry_core::model::Entity>>, StoreError> {
        Ok(None)
    }

    /// SQLite has no notifications: one process writes and wakes its own workers.
    async fn native_work_signal(
        &self,
        _kind: quarry_core::model::JobKind,
    ) -> Result<u64, StoreError> {
        Ok(0)
    }

    async fn native_work_queued(
        &self,
        _kind: quarry_core::model::JobKind,
        _seen: u64,
    ) -> Result<(), StoreError> {
        std::future::pending().await
    }

    /// Waits for this process's turn to write (see `writes`).
    async fn write_gate(&self) -> Option<tokio::sync::MutexGuard<'_, ()>> {
        Some(self.writes.lock().await)
    }

    /// SQLite keeps no search index: the chunk rows feed the in-process one.
    async fn index_written_chunks(
        &self,
        _tx: &mut sqlx::SqliteConnection,
        _project: &str,
        _document_id: &str,
        _chunks: &[quarry_core::model::StoredChunk],
    ) -> Result<(), StoreError> {
        Ok(())
    }

    /// No text search of its own (`Store::text_search` answers `None`).
    async fn native_text_search(
        &self,
        _project: &str,
        _query: &str,
        _k: usize,
        _document_ids: Option<&[String]>,
    ) -> Result<Option<Vec<quarry_core::store::ChunkMatch>>, StoreError> {
        Ok(None)
    }

    /// No entity vectors: the in-process index keeps them.
    async fn native_put_entity_vector(
        &self,
        _entity: &quarry_core::model::Entity,
        _embedder: &str,
        _text: &str,
        _vector: &[f32],
    ) -> Result<bool, StoreError> {
        Ok(false)
    }

    async fn native_entity_vector_search(
        &self,
        _project: &str,
        _embedder: &str,
        _query: &[f32],
        _entity_type: Option<&str>,
        _k: usize,
    ) -> Result<Option<Vec<quarry_core::store::EntityMatch>>, StoreError> {
        Ok(None)
    }

    /// No vector indexes to prepare.
    async fn native_prepare_vector_search(&self, _dims: usize) -> Result<(), StoreError> {
        Ok(())
    }

    async fn native_entities_without_vectors(
        &self,
        _embedder: &str,
        _limit: usize,
    ) -> Result<Vec<quarry_core::model::Entity>, StoreError> {
        Ok(Vec::new())
    }

    /// No vector search of its own (`Store::vector_search` answers `None`).
    async fn native_vector_search(
        &self,
        _project: &str,
        _embedder: &str,
        _query: &[f32],
        _k: usize,
        _document_ids: Option<&[String]>,
    ) -> Result<Option<Vec<quarry_core::store::ChunkMatch>>, StoreError> {
        Ok(None)
    }
}

impl_store!(
    SqliteStore,
    sqlx::Sqlite,
    crate::sql::FIELD_TASK_QUEUE_SQLITE,
    crate::sql::EPISODE_QUEUE_SQLITE,
    crate::sql::DELIVERY_QUEUE_SQLITE
);
