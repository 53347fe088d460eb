//! A PostgreSQL database of a test's own, dropped when the test ends.
//!
//! [`TestDatabase::create`] makes a fresh database on the server of a base URL (the one
//! `scripts/postgres.sh` prints) and drops it `WITH (FORCE)` when the guard is dropped, which
//! happens on a panic too, so a failed test leaves nothing behind either. A run that was killed
//! cannot drop its databases: every name carries the id of the process that made it
//! (`quarry_t_<pid>_<kind>_<n>`), and each `create` first drops the test databases whose process
//! is gone, so stale ones go at the next start while those of runs still going are kept.
//!
//! It speaks to the server through the `psql` program, so it works the same from sync and async
//! tests and needs no driver of its own.

use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Every test database's name starts with this.
const PREFIX: &str = "quarry_t_";
/// Names earlier versions of the tests gave their databases (`quarry_chaos_<pid>_<ms>`, …): swept
/// like ours, as they can only be left over from a killed run.
const LEGACY_PREFIXES: &[&str] = &["quarry_chaos_", "quarry_follow_", "quarry_v_"];

/// A database that exists while this value lives.
#[derive(Debug)]
pub struct TestDatabase {
    base: String,
    name: String,
    url: String,
}

impl TestDatabase {
    /// A new empty database on the server of `base` (a `postgres://` URL naming any database
    /// there); `kind` (lowercase letters) says which suite made it. Panics when the server
    /// refuses, as a test cannot go on without it.
    pub fn create(base: &str, kind: &str) -> TestDatabase {
        assert!(
            kind.bytes().all(|b| b.is_ascii_lowercase()),
            "a test database kind is lowercase letters, got {kind:?}"
        );
        drop_stale_databases(base);
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.subsec_nanos());
        let name = format!(
            "{PREFIX}{}_{kind}_{}_{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let output = psql(base, &format!("CREATE DATABASE {name}"));
        assert!(
            output.status.success(),
            "CREATE DATABASE {name} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        TestDatabase {
            url: with_database(base, &name),
            base: base.to_owned(),
            name,
        }
    }

    /// The database's URL, with the base URL's query string kept.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The database's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        // FORCE ends the connections pools of the test still hold.
        let output = psql(
            &self.base,
            &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
        );
        if !output.status.success() {
            eprintln!(
                "warning: the test database {} was not dropped: {}",
                self.name,
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
    }
}

/// Drops every test database whose creating process no longer runs.
fn drop_stale_databases(base: &str) {
    let output = psql(
        base,
        "SELECT datname FROM pg_database WHERE datname LIKE 'quarry\\_%'",
    );
    if !output.status.success() {
        return;
    }
    let listing = String::from_utf8_lossy(&output.stdout);
    for name in listing.lines().map(str::trim).filter(|name| is_stale(name)) {
        // Another run may sweep the same name at once: IF EXISTS makes that harmless.
        psql(
            base,
            &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
        );
    }
}

/// Whether `name` is a test database left by a process that is gone.
fn is_stale(name: &str) -> bool {
    let Some(rest) = std::iter::once(PREFIX)
        .chain(LEGACY_PREFIXES.iter().copied())
        .find_map(|prefix| name.strip_prefix(prefix))
    else {
        return false;
    };
    // Only names made of plain identifier characters are ever created or dropped here.
    if !rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return false;
    }
    match rest
        .split('_')
        .next()
        .and_then(|pid| pid.parse::<u32>().ok())
    {
        Some(pid) => !process_runs(pid),
        // `quarry_t_<uuid>`, an older naming with no process id: a leftover.
        None => true,
    }
}

fn process_runs(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// `base` with its database replaced by `name`.
fn with_database(base: &str, name: &str) -> String {
    let (server, query) = match base.split_once('?') {
        Some((server, query)) => (server, format!("?{query}")),
        None => (base, String::new()),
    };
    let server = server.rsplit_once('/').map_or(server, |(server, _)| server);
    format!("{server}/{name}{query}")
}

fn psql(base: &str, sql: &str) -> Output {
    Command::new("psql")
        .args([base, "-XqAt", "-v", "ON_ERROR_STOP=1", "-c", sql])
        .output()
        .unwrap_or_else(|error| panic!("psql (PostgreSQL's client) must be on PATH: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_gone_processes_and_older_namings_are_stale() {
        let alive = std::process::id();
        assert!(!is_stale(&format!("quarry_t_{alive}_store_0_12")));
        assert!(is_stale("quarry_t_4294967295_store_0_12"));
        assert!(is_stale("quarry_t_0f3a9c2b5d6e4f708192a3b4c5d6e7f8"));
        assert!(is_stale("quarry_chaos_4294967295_1700000000000"));
        assert!(!is_stale(&format!("quarry_follow_{alive}_1700000000000")));
        assert!(!is_stale("quarry_test"));
        assert!(!is_stale("quarry_pgvector"));
        assert!(!is_stale("quarry_bench"));
    }

    #[test]
    fn the_database_replaces_the_one_in_the_url_and_the_query_stays() {
        assert_eq!(
            with_database(
                "postgres://u@127.0.0.1:5432/quarry_test?sslmode=disable",
                "x"
            ),
            "postgres://u@127.0.0.1:5432/x?sslmode=disable"
        );
        assert_eq!(
            with_database("postgres://u@127.0.0.1:5432/quarry_test", "x"),
            "postgres://u@127.0.0.1:5432/x"
        );
    }

    /// Against the server the test command starts (skipped without it): the database exists
    /// while the guard lives and is gone after, and a leftover of a gone process is swept.
    #[test]
    fn a_database_lives_as_long_as_its_guard_and_leftovers_are_swept() {
        let Ok(base) = std::env::var("QUARRY_TEST_POSTGRES_URL") else {
            eprintln!("NOTICE: SKIPPED: QUARRY_TEST_POSTGRES_URL is unset");
            return;
        };
        let exists = |name: &str| {
            let output = psql(
                &base,
                &format!("SELECT count(*) FROM pg_database WHERE datname = '{name}'"),
            );
            String::from_utf8_lossy(&output.stdout).trim() == "1"
        };
        let leftover = "quarry_t_4294967295_sweep_0_0";
        psql(&base, &format!("DROP DATABASE IF EXISTS {leftover}"));
        assert!(
            psql(&base, &format!("CREATE DATABASE {leftover}"))
                .status
                .success()
        );
        let database = TestDatabase::create(&base, "sweep");
        assert!(exists(database.name()), "created");
        assert!(
            !exists(leftover),
            "a gone process's database is dropped at the next start"
        );
        let name = database.name().to_owned();
        drop(database);
        assert!(!exists(&name), "dropped with its guard");
    }
}
