//! Quarry's persistence: `quarry_core::store::Store` on SQLite (embedded default) and PostgreSQL,
//! through sqlx with runtime queries and versioned migrations applied on open.
//!
//! Code map: `db.rs` is the database layer (a pool, transaction and statement builder over
//! either backend, so the store's code is written once), `sql.rs` holds every statement (one
//! text serves both dialects; the few that differ stand beside their twin), `rows.rs` maps rows
//! to records, `store_impl/` is the one store, [`SqlStore`], implementing every store trait once
//! (`mod.rs` holds the store and its shared helpers, one file per area the rest), and
//! `sqlite.rs` / `postgres.rs` open connections and migrate; `postgres.rs` also holds what only
//! PostgreSQL has, with `pgvector.rs`, `name_search.rs`, `text_search.rs` and `work_feed.rs`.

use std::sync::Arc;

use quarry_core::store::{Store, StoreError};

mod clock;
mod db;
mod error;
mod name_search;
mod pgvector;
mod postgres;
mod rows;
mod sql;
mod sqlite;
mod store_impl;
mod text_search;
mod work_feed;

pub use store_impl::SqlStore;

/// Opens a [`SqlStore`] on SQLite (the name is the crate's API of old: there is no value of this
/// type).
pub enum SqliteStore {}

impl SqliteStore {
    /// Opens (creating if missing) `sqlite://path`, a plain path, or `:memory:`, and applies the
    /// migrations.
    pub async fn connect(url: &str) -> Result<SqlStore, StoreError> {
        let pool = sqlite::connect(url).await?;
        SqlStore::open(pool, Some(tokio::sync::Mutex::new(())), None).await
    }
}

/// Opens a [`SqlStore`] on PostgreSQL (the name is the crate's API of old: there is no value of
/// this type).
pub enum PostgresStore {}

impl PostgresStore {
    /// Connects and applies the migrations (several processes may start at once).
    pub async fn connect(url: &str) -> Result<SqlStore, StoreError> {
        let (pool, extras) = postgres::connect(url).await?;
        SqlStore::open(pool, None, Some(extras)).await
    }
}

/// Opens the store at `url` and applies pending migrations: `postgres://…` (or `postgresql://…`)
/// is PostgreSQL; `sqlite://path`, a plain file path or `:memory:` is SQLite.
pub async fn open(url: &str) -> Result<Arc<dyn Store>, StoreError> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(Arc::new(PostgresStore::connect(url).await?))
    } else {
        Ok(Arc::new(SqliteStore::connect(url).await?))
    }
}
