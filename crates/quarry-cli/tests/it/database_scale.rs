//! Retrieval in PostgreSQL with pgvector at scale, through the real binary: `QUARRY_BENCH_CHUNKS`
//! chunks (default 200,000; 1,000 per document) of generated words with 384-dimensional random
//! unit vectors, loaded inside the server; then
//! - a new process's start-up: wall time and peak memory of `quarry graph entities` (it opens
//!   the store and the retriever, searches once and exits), which must not grow with the corpus,
//!   also while a server builds the HNSW index;
//! - the HNSW index build a `quarry serve` starts in the background for its embedder's width;
//! - hybrid search (`GET /v1/documents/search`, words and vectors fused) p50 / p99 over 100
//!   queries of two words each.
//!
//! `QUARRY_BENCH_SKIP_SEARCH=1` stops after the start-up figures (at a million chunks the index
//! build outgrows 1 GB of `maintenance_work_mem` and takes long). Ignored by default (a
//! benchmark, not a test):
//!
//! ```text
//! export QUARRY_TEST_PGVECTOR_URL=$(scripts/pgvector.sh)
//! QUARRY_BENCH_CHUNKS=1000000 cargo test --release -p quarry-cli --test it database_scale \
//!     -- --ignored --nocapture
//! ```

use crate::common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::{Server, quarry, quarry_on};
use quarry_testkit::postgres::TestDatabase;

const DIMS: usize = 384;
const CHUNKS_PER_DOCUMENT: i64 = 1000;

/// A chunk's text (30 characters: four six-character words), as SQL over the chunk number `i`.
const CHUNK_TEXT: &str = "('w' || lpad(((i::bigint * 7919) % 50000)::text, 5, '0') || ' w' || \
     lpad(((i::bigint * 104729) % 50000)::text, 5, '0') || ' w' || lpad((i % 50000)::text, 5, '0') || \
     ' w' || lpad(((i::bigint * 31) % 50000)::text, 5, '0') || '. ')";
const CHUNK_LENGTH: i64 = 30;

fn psql(url: &str, statement: &str) {
    let status = Command::new("psql")
        .args([url, "-v", "ON_ERROR_STOP=1", "-q", "-c", statement])
        .status()
        .expect("psql runs");
    assert!(status.success(), "psql failed: {statement}");
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index].as_secs_f64() * 1e3
}

/// Loads `chunks` chunks into the project `default` of `url` (which `quarry` has opened once).
fn load(url: &str, chunks: i64) {
    let documents = (chunks + CHUNKS_PER_DOCUMENT - 1) / CHUNKS_PER_DOCUMENT;
    psql(
        url,
        &format!(
            "INSERT INTO documents (id, project_id, title, text, kind, created_at) \
             SELECT 'd' || d, p.id, 'document ' || d, \
             (SELECT string_agg({CHUNK_TEXT}, '' ORDER BY i) FROM generate_series(d * \
             {CHUNKS_PER_DOCUMENT}, least((d + 1) * {CHUNKS_PER_DOCUMENT}, {chunks}) - 1) AS i), \
             'file', '2026-01-01T00:00:00Z' \
             FROM generate_series(0, {documents} - 1) AS d, projects p WHERE p.name = 'default'"
        ),
    );
    let batch = 100_000;
    let mut from = 0;
    while from < chunks {
        let to = (from + batch).min(chunks);
        psql(
            url,
            &format!(
                "BEGIN; \
                 INSERT INTO chunks (project_id, document_id, ordinal, start_cp, end_cp, \
                 byte_start, byte_end, embedder, embedding, tsv) \
                 SELECT p.id, 'd' || (i / {CHUNKS_PER_DOCUMENT}), i % {CHUNKS_PER_DOCUMENT}, \
                 (i % {CHUNKS_PER_DOCUMENT}) * {CHUNK_LENGTH}, \
                 (i % {CHUNKS_PER_DOCUMENT} + 1) * {CHUNK_LENGTH}, \
                 (i % {CHUNKS_PER_DOCUMENT}) * {CHUNK_LENGTH}, \
                 (i % {CHUNKS_PER_DOCUMENT} + 1) * {CHUNK_LENGTH}, 'hashing-384', ''::bytea, \
                 to_tsvector('english', {CHUNK_TEXT}) \
                 FROM generate_series({from}, {to} - 1) AS i, projects p WHERE p.name = 'default'; \
                 INSERT INTO chunk_vectors (document_id, ordinal, project_id, start_cp, end_cp, \
                 embedder, dims, embedding) \
                 SELECT 'd' || (i / {CHUNKS_PER_DOCUMENT}), i % {CHUNKS_PER_DOCUMENT}, p.id, \
                 (i % {CHUNKS_PER_DOCUMENT}) * {CHUNK_LENGTH}, \
                 (i % {CHUNKS_PER_DOCUMENT} + 1) * {CHUNK_LENGTH}, 'hashing-384', {DIMS}, \
                 l2_normalize((SELECT array_agg(random() - 0.5) FROM generate_series(1, {DIMS}) \
                 WHERE i >= 0)::vector) \
                 FROM generate_series({from}, {to} - 1) AS i, projects p WHERE p.name = 'default'; \
                 COMMIT;"
            ),
        );
        from = to;
        println!("loaded {from} chunks");
    }
    psql(url, "VACUUM ANALYZE chunks");
    psql(url, "VACUUM ANALYZE chunk_vectors");
}

/// Wall time and peak resident memory of one `quarry graph entities` run.
fn start_up(url: &str) -> (f64, f64) {
    let binary = quarry().get_program().to_owned();
    let started = Instant::now();
    let output = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(binary)
        .args(["graph", "entities", "w01234", "--db", url, "--json"])
        .env("QUARRY_EMBEDDER", "hashing")
        .output()
        .expect("quarry runs");
    let wall = started.elapsed().as_secs_f64();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    let kib: f64 = stderr
        .lines()
        .last()
        .and_then(|line| line.trim().parse().ok())
        .expect("/usr/bin/time's peak memory");
    (wall, kib / 1024.0)
}

#[test]
#[ignore = "loads a large corpus into PostgreSQL; run with --ignored"]
fn retrieval_in_the_database_at_scale() {
    let base = std::env::var("QUARRY_TEST_PGVECTOR_URL").expect("QUARRY_TEST_PGVECTOR_URL");
    let chunks: i64 = std::env::var("QUARRY_BENCH_CHUNKS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(200_000);
    let database = TestDatabase::create(&base, "scale");
    let url = database.url();
    // Creates the schema and the project.
    quarry_on(url, &["entity", "list"]);

    let loading = Instant::now();
    load(url, chunks);
    println!(
        "{chunks} chunks loaded in {:.0} s",
        loading.elapsed().as_secs_f64()
    );

    let (wall, mib) = start_up(url);
    println!("start-up with {chunks} chunks: {wall:.2} s, {mib:.0} MiB");
    let building = Instant::now();
    let server = Server::start(&["--db", url, "--no-worker"]);
    let (wall, mib) = start_up(url);
    println!(
        "start-up with {chunks} chunks while the server builds the HNSW index: {wall:.2} s, \
         {mib:.0} MiB"
    );
    if std::env::var_os("QUARRY_BENCH_SKIP_SEARCH").is_some() {
        return;
    }
    // The server builds the HNSW index for the width in the background after it starts.
    loop {
        let output = Command::new("psql")
            .args([url, "-t", "-A", "-c"])
            .arg("SELECT count(*) FROM pg_indexes WHERE indexname = 'chunk_vectors_hnsw_384'")
            .output()
            .expect("psql runs");
        if String::from_utf8_lossy(&output.stdout).trim() == "1" {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    println!(
        "HNSW index over {chunks} vectors built in {:.0} s (in the background, after start)",
        building.elapsed().as_secs_f64()
    );
    let key = quarry_on(url, &["key", "create", "--scopes", "entities:read"])
        .trim()
        .to_owned();
    let search = |query: &str| {
        let path = format!("/v1/documents/search?q={query}&limit=10");
        let started = Instant::now();
        let (status, _, body) = server.request_as(Some(&key), "GET", &path, None, b"");
        assert_eq!(status, 200, "{body}");
        started.elapsed()
    };
    search("w00001%20w00002");
    let mut times: Vec<Duration> = (0..100)
        .map(|n| {
            search(&format!(
                "w{:05}%20w{:05}",
                (n * 37) % 50000,
                (n * 91) % 50000
            ))
        })
        .collect();
    times.sort();
    println!(
        "hybrid search over {chunks} chunks: p50 {:.1} ms, p99 {:.1} ms (100 queries, 10 passages)",
        percentile(&times, 0.5),
        percentile(&times, 0.99)
    );
}
