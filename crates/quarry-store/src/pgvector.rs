//! Vector search inside PostgreSQL with the pgvector extension, when the server has it.
//!
//! Not a numbered migration: it depends on the server. At open, when `pg_available_extensions`
//! lists `vector`, [`setup`] creates the extension and the `chunk_vectors` table (idempotent,
//! under an advisory lock so several processes may open at once) and copies the vectors of
//! stored chunks that have none yet (a database that ran without the extension before). From
//! then on `put_chunks` writes each chunk's vector beside its row ([`write_chunk_vectors`], in
//! the same transaction; the foreign key to `chunks` cascades, so replaced chunks take their
//! vectors with them) and [`vector_search`] answers by cosine distance (`<=>`).
//!
//! The column is an untyped `vector` (several embedders of different widths may share it), so
//! the search compares `embedding::vector(N)` with `N` the query's width written into the
//! statement: an operator may add a partial expression index that the planner then uses, e.g.
//! `CREATE INDEX ON chunk_vectors USING ivfflat ((embedding::vector(384)) vector_cosine_ops)
//! WITH (lists = 1000) WHERE dims = 384` (after loading: ivfflat trains on the rows present).
//! Quarry creates such an index itself, HNSW, when a process that searches in the database
//! starts (`Store::prepare_vector_search`, off the request path: [`ensure_vector_index`]);
//! searches set `hnsw.ef_search` and iterative scans so a project filter still yields `k` rows. Entities have their own table,
//! `entity_vectors` (one vector per entity and embedder, also HNSW-indexed per width), written by
//! [`put_entity_vector`] and searched by [`entity_vector_search`].

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

use quarry_core::model::{Entity, StoredChunk};
use quarry_core::store::{ChunkMatch, EntityMatch, StoreError};
use sqlx::postgres::{PgConnection, PgPool};

use crate::error::backend;
use crate::rows::EntityRow;

/// Taken (transaction-scoped) while the extension and table are created and backfilled.
const SETUP_LOCK: i64 = 0x7175_6172_7279_7663; // "quarryvc"

/// Held (by the building session) while HNSW indexes are built: apart from [`SETUP_LOCK`], so
/// a process opening the store never waits for another's build.
const INDEX_LOCK: i64 = 0x7175_6172_7279_6878; // "quarryhx"

/// Chunks per backfill statement.
const BACKFILL_BATCH: i64 = 1000;

const AVAILABLE: &str =
    "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')";

/// What setup creates, each with the object whose presence skips it: a `CREATE … IF NOT EXISTS`
/// still locks its table, and would wait behind an HNSW build running there.
const CREATE: [(&str, &str); 5] = [
    ("", "CREATE EXTENSION IF NOT EXISTS vector"),
    (
        "chunk_vectors",
        "CREATE TABLE IF NOT EXISTS chunk_vectors (
        document_id TEXT NOT NULL,
        ordinal BIGINT NOT NULL,
        project_id TEXT NOT NULL,
        start_cp BIGINT NOT NULL,
        end_cp BIGINT NOT NULL,
        embedder TEXT NOT NULL,
        dims INTEGER NOT NULL,
        embedding vector NOT NULL,
        PRIMARY KEY (document_id, ordinal),
        FOREIGN KEY (document_id, ordinal) REFERENCES chunks (document_id, ordinal)
            ON DELETE CASCADE
    )",
    ),
    (
        "chunk_vectors_search",
        "CREATE INDEX IF NOT EXISTS chunk_vectors_search ON chunk_vectors (project_id, embedder, dims)",
    ),
    (
        "entity_vectors",
        "CREATE TABLE IF NOT EXISTS entity_vectors (
        entity_id TEXT NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
        embedder TEXT NOT NULL,
        project_id TEXT NOT NULL,
        entity_type TEXT NOT NULL,
        dims INTEGER NOT NULL,
        text TEXT NOT NULL,
        embedding vector NOT NULL,
        PRIMARY KEY (entity_id, embedder)
    )",
    ),
    (
        "entity_vectors_search",
        "CREATE INDEX IF NOT EXISTS entity_vectors_search \
     ON entity_vectors (project_id, embedder, dims, entity_type)",
    ),
];

/// Candidates an HNSW search keeps while it walks the graph (pgvector's default is 40): more
/// is slower and finds the true nearest more often.
pub const HNSW_EF_SEARCH: u32 = 100;

/// Memory an HNSW build may use (`maintenance_work_mem`, for that transaction only).
const HNSW_BUILD_MEMORY: &str = "1GB";

/// The tables whose vectors get an HNSW index per width.
const VECTOR_TABLES: [&str; 2] = ["chunk_vectors", "entity_vectors"];

/// Stored chunks without a vector row, after the keyset (`$1`, `$2`).
const MISSING: &str = "SELECT c.project_id, c.document_id, c.ordinal, c.start_cp, c.end_cp, \
     c.embedder, c.embedding FROM chunks c \
     WHERE (c.document_id, c.ordinal) > ($1, $2) AND NOT EXISTS \
     (SELECT 1 FROM chunk_vectors v WHERE v.document_id = c.document_id AND v.ordinal = c.ordinal) \
     ORDER BY c.document_id, c.ordinal LIMIT $3";

/// Many vector rows in one statement (arrays of equal length); rows whose chunk is gone are
/// skipped, rows already present kept.
const INSERT: &str = "INSERT INTO chunk_vectors \
     (document_id, ordinal, project_id, start_cp, end_cp, embedder, dims, embedding) \
     SELECT u.document_id, u.ordinal, u.project_id, u.start_cp, u.end_cp, u.embedder, u.dims, \
     u.embedding::vector \
     FROM UNNEST($1::text[], $2::bigint[], $3::text[], $4::bigint[], $5::bigint[], $6::text[], \
     $7::int[], $8::text[]) \
     AS u(document_id, ordinal, project_id, start_cp, end_cp, embedder, dims, embedding) \
     JOIN chunks c ON c.document_id = u.document_id AND c.ordinal = u.ordinal \
     ON CONFLICT (document_id, ordinal) DO NOTHING";

/// Whether this server can search vectors; if so, makes sure the extension and tables exist
/// and, when the chunk table is new, gives every stored chunk its vector. `false` (the in-process index is used) when the extension
/// is not available, or cannot be created with this role's privileges.
pub(crate) async fn setup(pool: &PgPool) -> Result<bool, StoreError> {
    let available: bool = sqlx::query_scalar(AVAILABLE)
        .fetch_one(pool)
        .await
        .map_err(backend)?;
    if !available {
        return Ok(false);
    }
    let mut tx = pool.begin().await.map_err(backend)?;
    sqlx::query("SELECT pg_advisory_xact_lock($1)")
        .bind(SETUP_LOCK)
        .execute(&mut *tx)
        .await
        .map_err(backend)?;
    // Chunks written while the table exists get their vectors in the same transaction: only a
    // table made now can miss some (a database used before the extension was there), so only
    // then is every chunk walked, and an opening process stays as fast at any corpus size.
    let existed: bool = sqlx::query_scalar("SELECT to_regclass('chunk_vectors') IS NOT NULL")
        .fetch_one(&mut *tx)
        .await
        .map_err(backend)?;
    for (object, statement) in CREATE {
        if !object.is_empty() {
            let present: bool = sqlx::query_scalar("SELECT to_regclass($1) IS NOT NULL")
                .bind(object)
                .fetch_one(&mut *tx)
                .await
                .map_err(backend)?;
            if present {
                continue;
            }
        }
        if let Err(error) = sqlx::query(statement).execute(&mut *tx).await {
            // Typically: not allowed to create the extension. Stay with the in-process index.
            if is_privilege_error(&error) {
                return Ok(false);
            }
            return Err(backend(error));
        }
    }
    if !existed {
        backfill(&mut tx).await?;
    }
    tx.commit().await.map_err(backend)?;
    Ok(true)
}

/// The server refused for lack of privilege (e.g. to create an extension).
pub(crate) fn is_privilege_error(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(db) if db.code().as_deref() == Some("42501"))
}

type MissingRow = (String, String, i64, i64, i64, String, Vec<u8>);

/// Copies the vectors of stored chunks that have none (chunks written before the extension was
/// there, or by a process of an older version).
async fn backfill(tx: &mut PgConnection) -> Result<(), StoreError> {
    let mut after = (String::new(), i64::MIN);
    loop {
        let rows: Vec<MissingRow> = sqlx::query_as(MISSING)
            .bind(&after.0)
            .bind(after.1)
            .bind(BACKFILL_BATCH)
            .fetch_all(&mut *tx)
            .await
            .map_err(backend)?;
        let Some(last) = rows.last() else {
            return Ok(());
        };
        after = (last.1.clone(), last.2);
        let mut batch = Batch::default();
        for (project, document_id, ordinal, start, end, embedder, bytes) in rows {
            batch.push(
                &project,
                &document_id,
                ordinal,
                start,
                end,
                &embedder,
                &decode(&bytes),
            );
        }
        batch.insert(tx).await?;
    }
}

/// `put_chunks`'s hook: the chunks' vectors, in its transaction (after the chunk rows).
pub(crate) async fn write_chunk_vectors(
    tx: &mut PgConnection,
    project: &str,
    chunks: &[StoredChunk],
) -> Result<(), StoreError> {
    let mut batch = Batch::default();
    for chunk in chunks {
        batch.push(
            project,
            &chunk.document_id,
            chunk.ordinal,
            to_i64(chunk.start)?,
            to_i64(chunk.end)?,
            &chunk.embedder,
            &chunk.embedding,
        );
    }
    batch.insert(tx).await
}

/// Makes sure both vector tables have an HNSW index for vectors of width `dims` (once per
/// process and width: `indexed` remembers). Built under an advisory lock, so processes starting
/// together build it once; building over many existing rows takes a while, once. An index made
/// while the tables are empty (a new database) is then kept up by every write.
pub(crate) async fn ensure_vector_index(
    pool: &PgPool,
    indexed: &Mutex<HashSet<usize>>,
    dims: usize,
) -> Result<(), StoreError> {
    if dims == 0
        || indexed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(&dims)
    {
        return Ok(());
    }
    // A connection of its own, closed afterwards: the build is concurrent (writes go on while
    // it runs), which cannot happen inside a transaction, so its settings and the advisory lock
    // are the session's.
    let mut connection = pool.acquire().await.map_err(backend)?.detach();
    let built = build_vector_indexes(&mut connection, dims).await;
    let _ = sqlx::Connection::close(connection).await;
    built?;
    indexed
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(dims);
    Ok(())
}

/// Builds the missing HNSW indexes for width `dims` (and rebuilds one a crashed build left
/// invalid) with `CREATE INDEX CONCURRENTLY`, under a session advisory lock, so processes
/// starting together build each once while writes go on.
async fn build_vector_indexes(
    connection: &mut PgConnection,
    dims: usize,
) -> Result<(), StoreError> {
    sqlx::query("SELECT pg_advisory_lock($1)")
        .bind(INDEX_LOCK)
        .execute(&mut *connection)
        .await
        .map_err(backend)?;
    // HNSW builds in memory while the graph fits (pgvector's advice); with the default 64 MB,
    // 200,000 vectors of 384 dimensions spill to disk and take many times as long.
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "SET maintenance_work_mem = '{HNSW_BUILD_MEMORY}'"
    )))
    .execute(&mut *connection)
    .await
    .map_err(backend)?;
    for table in VECTOR_TABLES {
        let name = format!("{table}_hnsw_{dims}");
        let valid: Option<bool> = sqlx::query_scalar(
            "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid \
             WHERE c.relname = $1",
        )
        .bind(&name)
        .fetch_optional(&mut *connection)
        .await
        .map_err(backend)?;
        if valid == Some(true) {
            continue;
        }
        // `dims` is a number and `table` a constant: no user text reaches the statements.
        if valid == Some(false) {
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "DROP INDEX CONCURRENTLY IF EXISTS {name}"
            )))
            .execute(&mut *connection)
            .await
            .map_err(backend)?;
        }
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON {table} USING hnsw \
             ((embedding::vector({dims})) vector_cosine_ops) WHERE dims = {dims}"
        )))
        .execute(&mut *connection)
        .await
        .map_err(backend)?;
    }
    Ok(())
}

/// A transaction whose searches walk the HNSW index with [`HNSW_EF_SEARCH`] candidates, and
/// keep walking (relaxed order) until `k` rows pass the project filter.
async fn search_transaction(
    pool: &PgPool,
) -> Result<sqlx::Transaction<'static, sqlx::Postgres>, StoreError> {
    let mut tx = pool.begin().await.map_err(backend)?;
    for setting in [
        format!("SET LOCAL hnsw.ef_search = {HNSW_EF_SEARCH}"),
        "SET LOCAL hnsw.iterative_scan = relaxed_order".to_owned(),
    ] {
        sqlx::query(sqlx::AssertSqlSafe(setting))
            .execute(&mut *tx)
            .await
            .map_err(backend)?;
    }
    Ok(tx)
}

/// [`quarry_core::store::Store::vector_search`] on a server with pgvector.
pub(crate) async fn vector_search(
    pool: &PgPool,
    project: &str,
    embedder: &str,
    query: &[f32],
    k: usize,
    document_ids: Option<&[String]>,
) -> Result<Vec<ChunkMatch>, StoreError> {
    if k == 0 || !searchable(query) || document_ids.is_some_and(<[String]>::is_empty) {
        return Ok(Vec::new());
    }
    let dims = query.len();
    // `dims` is a number, never user text; as a literal it lets a partial index match. The
    // distance is computed once per row (the sort key), not again for the score.
    let statement = format!(
        "SELECT document_id, ordinal, start_cp, end_cp, (1 - distance)::real AS score FROM \
         (SELECT document_id, ordinal, start_cp, end_cp, \
         embedding::vector({dims}) <=> $3::vector({dims}) AS distance \
         FROM chunk_vectors \
         WHERE project_id = $1 AND embedder = $2 AND dims = {dims} \
         AND ($5::text[] IS NULL OR document_id = ANY($5)) \
         ORDER BY distance LIMIT $4) AS nearest ORDER BY distance"
    );
    let mut tx = search_transaction(pool).await?;
    let rows: Vec<(String, i64, i64, i64, Option<f32>)> =
        sqlx::query_as(sqlx::AssertSqlSafe(statement))
            .bind(project)
            .bind(embedder)
            .bind(vector_text(query))
            .bind(i64::try_from(k).unwrap_or(i64::MAX))
            .bind(document_ids)
            .fetch_all(&mut *tx)
            .await
            .map_err(backend)?;
    tx.commit().await.map_err(backend)?;
    Ok(rows
        .into_iter()
        .map(|(document_id, ordinal, start, end, score)| ChunkMatch {
            document_id,
            ordinal,
            start: usize::try_from(start).unwrap_or(0),
            end: usize::try_from(end).unwrap_or(0),
            score: similarity(score),
        })
        .collect())
}

/// [`quarry_core::store::Store::put_entity_vector`] on a server with pgvector.
pub(crate) async fn put_entity_vector(
    pool: &PgPool,
    entity: &Entity,
    embedder: &str,
    text: &str,
    vector: &[f32],
) -> Result<(), StoreError> {
    let Ok(dims) = i32::try_from(vector.len()) else {
        return Ok(());
    };
    if !searchable(vector) {
        return Ok(());
    }
    sqlx::query(
        "INSERT INTO entity_vectors \
         (entity_id, embedder, project_id, entity_type, dims, text, embedding) \
         VALUES ($1, $2, $3, $4, $5, $6, $7::vector) \
         ON CONFLICT (entity_id, embedder) DO UPDATE SET project_id = excluded.project_id, \
         entity_type = excluded.entity_type, dims = excluded.dims, text = excluded.text, \
         embedding = excluded.embedding",
    )
    .bind(&entity.id)
    .bind(embedder)
    .bind(&entity.project_id)
    .bind(&entity.entity_type)
    .bind(dims)
    .bind(text)
    .bind(vector_text(vector))
    .execute(pool)
    .await
    .map_err(backend)?;
    Ok(())
}

/// [`quarry_core::store::Store::entity_vector_search`] on a server with pgvector.
pub(crate) async fn entity_vector_search(
    pool: &PgPool,
    project: &str,
    embedder: &str,
    query: &[f32],
    entity_type: Option<&str>,
    k: usize,
) -> Result<Vec<EntityMatch>, StoreError> {
    if k == 0 || !searchable(query) {
        return Ok(Vec::new());
    }
    let dims = query.len();
    // As in `vector_search`: `dims` is a number, written in so the partial index matches.
    let statement = format!(
        "SELECT entity_id, (1 - distance)::real AS score FROM \
         (SELECT entity_id, embedding::vector({dims}) <=> $3::vector({dims}) AS distance \
         FROM entity_vectors \
         WHERE project_id = $1 AND embedder = $2 AND dims = {dims} \
         AND ($5::text IS NULL OR entity_type = $5) \
         ORDER BY distance LIMIT $4) AS nearest ORDER BY distance, entity_id"
    );
    let mut tx = search_transaction(pool).await?;
    let rows: Vec<(String, Option<f32>)> = sqlx::query_as(sqlx::AssertSqlSafe(statement))
        .bind(project)
        .bind(embedder)
        .bind(vector_text(query))
        .bind(i64::try_from(k).unwrap_or(i64::MAX))
        .bind(entity_type)
        .fetch_all(&mut *tx)
        .await
        .map_err(backend)?;
    tx.commit().await.map_err(backend)?;
    Ok(rows
        .into_iter()
        .map(|(entity_id, score)| EntityMatch {
            entity_id,
            score: similarity(score),
        })
        .collect())
}

/// [`quarry_core::store::Store::entities_without_vectors`] on a server with pgvector.
pub(crate) async fn entities_without_vectors(
    pool: &PgPool,
    embedder: &str,
    limit: usize,
) -> Result<Vec<Entity>, StoreError> {
    let rows = sqlx::query_as::<_, EntityRow>(crate::sql::ENTITIES_WITHOUT_VECTORS)
        .bind(embedder)
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .fetch_all(pool)
        .await
        .map_err(backend)?;
    Ok(rows.into_iter().map(Entity::from).collect())
}

/// A row's `1 - distance`: 0 for a zero vector, which has no direction (its distance is NaN).
fn similarity(score: Option<f32>) -> f32 {
    score.filter(|score| score.is_finite()).unwrap_or(0.0)
}

/// pgvector's text form, `[1,0.5,-2]`; Rust prints the shortest text that reads back exactly.
pub(crate) fn vector_text(vector: &[f32]) -> String {
    let mut text = String::with_capacity(vector.len() * 10 + 2);
    text.push('[');
    for (index, value) in vector.iter().enumerate() {
        if index > 0 {
            text.push(',');
        }
        text.push_str(&value.to_string());
    }
    text.push(']');
    text
}

/// pgvector stores finite vectors of at least one dimension; anything else stays out (the
/// in-process rebuild would reject it too).
fn searchable(vector: &[f32]) -> bool {
    !vector.is_empty() && vector.iter().all(|value| value.is_finite())
}

fn decode(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

fn to_i64(value: usize) -> Result<i64, StoreError> {
    i64::try_from(value)
        .map_err(|_| StoreError::Conflict(format!("chunk offset {value} is out of range")))
}

/// Column arrays for [`INSERT`].
#[derive(Default)]
struct Batch {
    document_ids: Vec<String>,
    ordinals: Vec<i64>,
    projects: Vec<String>,
    starts: Vec<i64>,
    ends: Vec<i64>,
    embedders: Vec<String>,
    dims: Vec<i32>,
    embeddings: Vec<String>,
}

impl Batch {
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        project: &str,
        document_id: &str,
        ordinal: i64,
        start: i64,
        end: i64,
        embedder: &str,
        embedding: &[f32],
    ) {
        let Ok(dims) = i32::try_from(embedding.len()) else {
            return;
        };
        if !searchable(embedding) {
            return;
        }
        self.document_ids.push(document_id.to_owned());
        self.ordinals.push(ordinal);
        self.projects.push(project.to_owned());
        self.starts.push(start);
        self.ends.push(end);
        self.embedders.push(embedder.to_owned());
        self.dims.push(dims);
        self.embeddings.push(vector_text(embedding));
    }

    async fn insert(self, tx: &mut PgConnection) -> Result<(), StoreError> {
        if self.document_ids.is_empty() {
            return Ok(());
        }
        sqlx::query(INSERT)
            .bind(self.document_ids)
            .bind(self.ordinals)
            .bind(self.projects)
            .bind(self.starts)
            .bind(self.ends)
            .bind(self.embedders)
            .bind(self.dims)
            .bind(self.embeddings)
            .execute(tx)
            .await
            .map_err(backend)?;
        Ok(())
    }
}
