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
        Ok(PostgresStore { pool, pgvector })
    }

    /// Whether vector search runs in the database (the `vector` extension is there).
    pub fn has_pgvector(&self) -> bool {
        self.pgvector
    }

    /// `put_chunks`'s hook, in its transaction: the chunks' vectors when pgvector is on.
    async fn write_chunk_vectors(
        &self,
        tx: &mut sqlx::PgConnection,
        project: &str,
        chunks: &[quarry_core::model::StoredChunk],
    ) -> Result<(), StoreError> {
        if !self.pgvector {
            return Ok(());
        }
        crate::pgvector::write_chunk_vectors(tx, project, chunks).await
    }

    async fn native_vector_search(
        &self,
        project: &str,
        embedder: &str,
        query: &[f32],
        k: usize,
        document_ids: Option<&[String]>,
    ) -> Result<Option<Vec<quarry_core::store::VectorMatch>>, StoreError> {
        if !self.pgvector {
            return Ok(None);
        }
        crate::pgvector::vector_search(&self.pool, project, embedder, query, k, document_ids)
            .await
            .map(Some)
    }

    /// PostgreSQL takes concurrent writers itself (row locks): no in-process queue.
    async fn write_gate(&self) -> Option<tokio::sync::MutexGuard<'_, ()>> {
        None
    }
}

impl_store!(
    PostgresStore,
    sqlx::Postgres,
    crate::sql::CLAIM_EPISODES_POSTGRES,
    crate::sql::CLAIM_TASKS_POSTGRES
);
