//! The PostgreSQL backend (`postgres://...`), for deployments that outgrow one file. This file
//! opens the pool, migrates, and holds what only PostgreSQL has ([`PostgresExtras`]): the
//! extensions found at open (pgvector: `pgvector.rs`; pg_trgm: `name_search.rs`), full-text
//! search (`text_search.rs`) and the work feed (`LISTEN`: `work_feed.rs`). The store is
//! [`SqlStore`] (`store_impl/`), which calls these where SQLite has nothing of its own.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use quarry_core::model::{Entity, JobKind, StoredChunk};
use quarry_core::store::{ChunkMatch, EntityMatch, StoreError};
use sqlx::postgres::{PgConnection, PgPool, PgPoolOptions};

use crate::db::Pool;
use crate::error::{backend, migration};
use crate::work_feed::WorkFeed;

const MAX_CONNECTIONS: u32 = 16;

/// This backend's migrations, embedded in the binary.
pub(crate) fn migrator() -> &'static sqlx::migrate::Migrator {
    static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");
    &MIGRATOR
}

/// Connects and applies the migrations (sqlx holds an advisory lock while it migrates, so several
/// processes may start at once); the pool, and what only PostgreSQL has.
pub(crate) async fn connect(url: &str) -> Result<(Pool, PostgresExtras), StoreError> {
    let pool = PgPoolOptions::new()
        .max_connections(MAX_CONNECTIONS)
        .connect(url)
        .await
        .map_err(backend)?;
    migrator().run(&pool).await.map_err(migration)?;
    let pgvector = crate::pgvector::setup(&pool).await?;
    let trigram = crate::name_search::setup(&pool).await?;
    let extras = PostgresExtras {
        pool: pool.clone(),
        pgvector,
        trigram,
        vector_indexes: Mutex::default(),
        work: Arc::default(),
    };
    Ok((Pool::Postgres(pool), extras))
}

/// What only the PostgreSQL store has.
pub(crate) struct PostgresExtras {
    /// The store's pool (the same one).
    pool: PgPool,
    /// The server has pgvector: chunk and entity vectors are kept and searched in the database
    /// (`pgvector.rs`).
    pub(crate) pgvector: bool,
    /// Vector widths whose HNSW indexes this process has made sure of.
    vector_indexes: Mutex<HashSet<usize>>,
    /// The server has pg_trgm: resolution candidates include near titles (`name_search.rs`).
    pub(crate) trigram: bool,
    /// Other processes' wake-ups (`LISTEN`; started by the first `work_signal`).
    work: Arc<WorkFeed>,
}

impl PostgresExtras {
    /// `put_chunks`'s hook, in its transaction: the chunks' words for full-text search, and
    /// their vectors when pgvector is on.
    pub(crate) async fn index_written_chunks(
        &self,
        tx: &mut PgConnection,
        project: &str,
        document_id: &str,
        chunks: &[StoredChunk],
    ) -> Result<(), StoreError> {
        crate::text_search::index_chunk_text(tx, project, document_id).await?;
        if !self.pgvector {
            return Ok(());
        }
        crate::pgvector::write_chunk_vectors(tx, project, chunks).await
    }

    pub(crate) async fn text_search(
        &self,
        project: &str,
        query: &str,
        k: usize,
        document_ids: Option<&[String]>,
    ) -> Result<Option<Vec<ChunkMatch>>, StoreError> {
        crate::text_search::text_search(&self.pool, project, query, k, document_ids)
            .await
            .map(Some)
    }

    pub(crate) async fn put_entity_vector(
        &self,
        entity: &Entity,
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

    pub(crate) async fn entity_vector_search(
        &self,
        project: &str,
        embedder: &str,
        query: &[f32],
        entity_type: Option<&str>,
        k: usize,
    ) -> Result<Option<Vec<EntityMatch>>, StoreError> {
        if !self.pgvector {
            return Ok(None);
        }
        crate::pgvector::entity_vector_search(&self.pool, project, embedder, query, entity_type, k)
            .await
            .map(Some)
    }

    pub(crate) async fn entities_without_vectors(
        &self,
        embedder: &str,
        limit: usize,
    ) -> Result<Vec<Entity>, StoreError> {
        if !self.pgvector {
            return Ok(Vec::new());
        }
        crate::pgvector::entities_without_vectors(&self.pool, embedder, limit).await
    }

    pub(crate) async fn vector_search(
        &self,
        project: &str,
        embedder: &str,
        query: &[f32],
        k: usize,
        document_ids: Option<&[String]>,
    ) -> Result<Option<Vec<ChunkMatch>>, StoreError> {
        if !self.pgvector {
            return Ok(None);
        }
        crate::pgvector::vector_search(&self.pool, project, embedder, query, k, document_ids)
            .await
            .map(Some)
    }

    /// The HNSW indexes for vectors of width `dims` (see `pgvector::ensure_vector_index`).
    pub(crate) async fn prepare_vector_search(&self, dims: usize) -> Result<(), StoreError> {
        if !self.pgvector {
            return Ok(());
        }
        crate::pgvector::ensure_vector_index(&self.pool, &self.vector_indexes, dims).await
    }

    pub(crate) async fn resolution_candidates(
        &self,
        project: &str,
        entity_type: &str,
        names: &[String],
    ) -> Result<Option<Vec<Entity>>, StoreError> {
        crate::name_search::candidates(&self.pool, self.trigram, project, entity_type, names)
            .await
            .map(Some)
    }

    pub(crate) async fn work_signal(&self, kind: JobKind) -> Result<u64, StoreError> {
        self.work.signal(&self.pool, kind).await
    }

    pub(crate) async fn work_queued(&self, kind: JobKind, seen: u64) {
        self.work.queued(kind, seen).await;
    }
}
