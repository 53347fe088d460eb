//! The embedded SQLite backend: one file (WAL journal, foreign keys on, a busy timeout so
//! concurrent writers wait instead of failing), or `:memory:` for throwaway use. This file only
//! opens the pool and migrates; the store is [`SqlStore`] (`store_impl/`), which on SQLite also
//! queues this process's writers (`SqlStore::write_gate`) and answers the searches PostgreSQL
//! runs in the database with "none of its own" (the in-process indexes serve them).

use std::str::FromStr;
use std::time::Duration;

use quarry_core::store::StoreError;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use crate::db::Pool;
use crate::error::{backend, migration};

/// How long a writer waits for another connection's write lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);
const MAX_CONNECTIONS: u32 = 8;

/// This backend's migrations, embedded in the binary.
pub(crate) fn migrator() -> &'static sqlx::migrate::Migrator {
    static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");
    &MIGRATOR
}

/// Opens (creating if missing) `sqlite://path`, a plain path, or `:memory:`, and applies the
/// migrations.
pub(crate) async fn connect(url: &str) -> Result<Pool, StoreError> {
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
    migrator().run(&pool).await.map_err(migration)?;
    Ok(Pool::Sqlite(pool))
}
