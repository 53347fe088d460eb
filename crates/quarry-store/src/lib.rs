//! Quarry's persistence: `quarry_core::store::Store` on SQLite (embedded default) and PostgreSQL,
//! through sqlx with runtime queries and versioned migrations applied on open.
//!
//! Code map: `sql.rs` holds every statement (one text serves both dialects), `rows.rs` maps rows
//! to records, `store_impl/` is the single `Store` implementation expanded per backend (`mod.rs`
//! puts together one file per area: keys, entities, documents, runs, results, graph), and
//! `sqlite.rs` / `postgres.rs` only open connections and migrate.

use std::sync::Arc;

use quarry_core::store::{Store, StoreError};

mod clock;
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

pub use postgres::PostgresStore;
pub use sqlite::SqliteStore;

/// Opens the store at `url` and applies pending migrations: `postgres://…` (or `postgresql://…`)
/// is PostgreSQL; `sqlite://path`, a plain file path or `:memory:` is SQLite.
pub async fn open(url: &str) -> Result<Arc<dyn Store>, StoreError> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(Arc::new(PostgresStore::connect(url).await?))
    } else {
        Ok(Arc::new(SqliteStore::connect(url).await?))
    }
}
