//! Entity resolution's candidates, read from PostgreSQL (issue 22): for the names an extraction
//! mentions, the entities of the same project and type that share a name or a name key
//! (`entities.name_key`, `quarry_core::resolve::name_key`), plus each name's nearest titles by
//! trigram distance (`pg_trgm`, a GiST index on `lower(title)`) for near-duplicates. The
//! resolver then decides among them exactly as it does over a full list: a process keeps no
//! copy of the project's entities and sees every committed one.
//!
//! `pg_trgm` is optional (set up at open like pgvector, under an advisory lock): without it the
//! candidates are the exact and normalised matches only, and near-duplicates created by other
//! processes are not found.

use quarry_core::model::Entity;
use quarry_core::store::StoreError;
use sqlx::postgres::PgPool;

use crate::error::backend;
use crate::rows::EntityRow;

/// The trigram index's advisory lock (any value unique among Quarry's locks).
const SETUP_LOCK: i64 = 0x5155_4152_5259_5447; // "QUARRYTG"

/// How many nearest titles each name brings.
pub(crate) const NEAREST_PER_NAME: i64 = 16;

const AVAILABLE: &str =
    "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm')";

/// Exact and normalised matches: `$1` project, `$2` type, `$3` names, `$4` their keys (NULL for
/// a name without one).
const MATCHES: &str = "SELECT e.id FROM entities e \
     JOIN unnest($3::text[], $4::text[]) AS asked(name, key) \
       ON e.title = asked.name OR e.name_key = asked.key \
     WHERE e.project_id = $1 AND e.entity_type = $2";

/// [`MATCHES`] and each name's `$5` nearest titles.
const MATCHES_AND_NEAREST: &str = "SELECT e.id FROM entities e \
     JOIN unnest($3::text[], $4::text[]) AS asked(name, key) \
       ON e.title = asked.name OR e.name_key = asked.key \
     WHERE e.project_id = $1 AND e.entity_type = $2 \
     UNION SELECT near.id FROM unnest($3::text[]) AS asked(name) \
     CROSS JOIN LATERAL (SELECT id FROM entities \
       WHERE project_id = $1 AND entity_type = $2 \
       ORDER BY lower(title) <-> lower(asked.name) LIMIT $5) AS near";

/// Makes sure of `pg_trgm` and the trigram index; `false` when the extension is not installed
/// on the server or this role may not create it.
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
    let present: bool = sqlx::query_scalar("SELECT to_regclass('entities_title_trgm') IS NOT NULL")
        .fetch_one(&mut *tx)
        .await
        .map_err(backend)?;
    if present {
        return Ok(true);
    }
    for statement in [
        "CREATE EXTENSION IF NOT EXISTS pg_trgm",
        "CREATE INDEX entities_title_trgm ON entities USING gist (lower(title) gist_trgm_ops)",
    ] {
        if let Err(error) = sqlx::query(statement).execute(&mut *tx).await {
            if crate::pgvector::is_privilege_error(&error) {
                return Ok(false);
            }
            return Err(backend(error));
        }
    }
    tx.commit().await.map_err(backend)?;
    Ok(true)
}

/// The candidates for `names` of `entity_type`, oldest first (on equal names the first created
/// wins, as in a full list).
pub(crate) async fn candidates(
    pool: &PgPool,
    trigram: bool,
    project: &str,
    entity_type: &str,
    names: &[String],
) -> Result<Vec<Entity>, StoreError> {
    let keys: Vec<Option<String>> = names
        .iter()
        .map(|name| {
            Some(quarry_core::resolve::name_key(name, entity_type)).filter(|key| !key.is_empty())
        })
        .collect();
    let ids = if trigram {
        MATCHES_AND_NEAREST
    } else {
        MATCHES
    };
    let text = format!(
        "SELECT {} FROM entities WHERE id IN ({ids}) ORDER BY created_at, id",
        crate::sql::ENTITY_COLUMNS
    );
    let mut query = sqlx::query_as::<_, EntityRow>(sqlx::AssertSqlSafe(text))
        .bind(project)
        .bind(entity_type)
        .bind(names)
        .bind(&keys);
    if trigram {
        query = query.bind(NEAREST_PER_NAME);
    }
    let rows = query.fetch_all(pool).await.map_err(backend)?;
    Ok(rows.into_iter().map(Entity::from).collect())
}
