//! The PostgreSQL backend (`postgres://...`), for deployments that outgrow one file.

use quarry_core::store::StoreError;
use sqlx::postgres::{PgPool, PgPoolOptions};

use crate::error::{backend, migration};
use crate::store_impl::impl_store;

const MAX_CONNECTIONS: u32 = 16;

pub struct PostgresStore {
    pool: PgPool,
}

impl PostgresStore {
    /// Connects and applies the migrations (sqlx holds an advisory lock while it migrates, so
    /// several processes may start at once).
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let pool = PgPoolOptions::new()
            .max_connections(MAX_CONNECTIONS)
            .connect(url)
            .await
            .map_err(backend)?;
        sqlx::migrate!("./migrations/postgres")
            .run(&pool)
            .await
            .map_err(migration)?;
        Ok(PostgresStore { pool })
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
