//! The PostgreSQL backend (`postgres://...`), for deployments that outgrow one file.

use quarry_core::store::StoreError;
use sqlx::postgres::{PgPool, PgPoolOptions};

use crate::error::{backend, migration};
use crate::store_impl::impl_store;

const MAX_CONNECTIONS: u32 = 16;

pub struct PostgresStore {
    pool: PgPool,
    /// The server has pgvector: chunk vectors are kept and searched in the database
    /// (`pgvector.rs`).
    pgvector: bool,
    /// Vector widths whose HNSW indexes this process has made sure of.
    vector_indexes: std::sync::Mutex<std::collections::HashSet<usize>>,
    /// The server has pg_trgm: resolution candidates include near titles (`name_search.rs`).
    trigram: bool,
    /// Other processes' wake-ups (`LISTEN`; started by the first `work_signal`).
    work: std::sync::Arc<crate::work_feed::WorkFeed>,
}

impl PostgresStore {
    /// This backend's migrations, embedded in the binary (`schema_version` compares against
    /// the newest).
    fn migrator() -> &'static sqlx::migrate::Migrator {
        static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");
        &MIGRATOR
    }

    /// Connects and applies the migrations (sqlx holds an advisory lock while it migrates, so
    /// several processes may start at once).
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let pool = PgPoolOptions::new()
            .max_connections(MAX_CONNECTIONS)
            .connect(url)
            .await
            .map_err(backend)?;
        Self::migrator().run(&pool).await.map_err(migration)?;
        let pgvector = crate::pgvector::setup(&pool).await?;
        let trigram = crate::name_search::setup(&pool).await?;
        let store = PostgresStore {
            pool,
            pgvector,
            trigram,
            vector_indexes: std::sync::Mutex::default(),
            work: std::sync::Arc::default(),
        };
        store.backfill_name_keys().await?;
        Ok(store)
    }

    /// Whether entity resolution finds near-duplicate titles in the database (`pg_trgm`).
    pub fn has_trigram(&self) -> bool {
        self.trigram
    }

    /// Whether vector search runs in the database (the `vector` extension is there).
    pub fn has_pgvector(&self) -> bool {
        self.pgvector
    }

    /// `put_chunks`'s hook, in its transaction: the chunks' words for full-text search, and
    /// their vectors when pgvector is on.
    async fn index_written_chunks(
        &self,
        tx: &mut sqlx::PgConnection,
        project: &str,
        document_id: &str,
        chunks: &[quarry_core::model::StoredChunk],
    ) -> Result<(), StoreError> {
        crate::text_search::index_chunk_text(tx, project, document_id).await?;
        if !self.pgvector {
            return Ok(());
        }
        crate::pgvector::write_chunk_vectors(tx, project, chunks).await
    }

    async fn native_text_search(
        &self,
        project: &str,
        query: &str,
        k: usize,
        document_ids: Option<&[String]>,
    ) -> Result<Option<Vec<quarry_core::store::ChunkMatch>>, StoreError> {
        crate::text_search::text_search(&self.pool, project, query, k, document_ids)
            .await
            .map(Some)
    }

    async fn native_put_entity_vector(
        &self,
        entity: &quarry_core::model::Entity,
        embedder: &str,
        text: &str,
        vector: &[f32],
    ) -> Result<bool, StoreError> {
        if !self.pgvector {
            return Ok(false);
        }
        crate::pgvector::put_entity_vector(&self.pool, entity, embedder, text, vector).await?;
        Ok(true)
    }

    async fn native_entity_vector_search(
        &self,
        project: &str,
        embedder: &str,
        query: &[f32],
        entity_type: Option<&str>,
        k: usize,
    ) -> Result<Option<Vec<quarry_core::store::EntityMatch>>, StoreError> {
        if !self.pgvector {
            return Ok(None);
        }
        crate::pgvector::entity_vector_search(&self.pool, project, embedder, query, entity_type, k)
            .await
            .map(Some)
    }

    async fn native_entities_without_vectors(
        &self,
        embedder: &str,
        limit: usize,
    ) -> Result<Vec<quarry_core::model::Entity>, StoreError> {
        if !self.pgvector {
            return Ok(Vec::new());
        }
        crate::pgvector::entities_without_vectors(&self.pool, embedder, limit).await
    }

    async fn native_vector_search(
        &self,
        project: &str,
        embedder: &str,
        query: &[f32],
        k: usize,
        document_ids: Option<&[String]>,
    ) -> Result<Option<Vec<quarry_core::store::ChunkMatch>>, StoreError> {
        if !self.pgvector {
            return Ok(None);
        }
        crate::pgvector::vector_search(&self.pool, project, embedder, query, k, document_ids)
            .await
            .map(Some)
    }

    /// The HNSW indexes for vectors of width `dims` (see `pgvector::ensure_vector_index`).
    async fn native_prepare_vector_search(&self, dims: usize) -> Result<(), StoreError> {
        if !self.pgvector {
            return Ok(());
        }
        crate::pgvector::ensure_vector_index(&self.pool, &self.vector_indexes, dims).await
    }

    async fn native_resolution_candidates(
        &self,
        project: &str,
        entity_type: &str,
        names: &[String],
    ) -> Result<Option<Vec<quarry_core::model::Entity>>, StoreError> {
        crate::name_search::candidates(&self.pool, self.trigram, project, entity_type, names)
            .await
            .map(Some)
    }

    async fn native_work_signal(
        &self,
        kind: quarry_core::model::JobKind,
    ) -> Result<u64, StoreError> {
        self.work.signal(&self.pool, kind).await
    }

    async fn native_work_queued(
        &self,
        kind: quarry_core::model::JobKind,
        seen: u64,
    ) -> Result<(), StoreError> {
        self.work.queued(kind, seen).await;
        Ok(())
    }

    /// PostgreSQL takes concurrent writers itself (row locks): no in-process queue.
    async fn write_gate(&self) -> Option<tokio::sync::MutexGuard<'_, ()>> {
        None
    }
}

impl_store!(
    PostgresStore,
    sqlx::Postgres,
    crate::sql::FIELD_TASK_QUEUE_POSTGRES,
    crate::sql::EPISODE_QUEUE_POSTGRES,
    crate::sql::DELIVERY_QUEUE_POSTGRES
);
