//! The SQL both backends run. Placeholders are `$N`, which PostgreSQL and sqlx's SQLite driver
//! both read positionally; every statement filters by `project_id` (except key lookup by
//! prefix, which happens before a project is known, the start-up sweeps of interrupted runs, the
//! episode queue take and lease renewal, the index rebuild reads and the follower reads ("changed since"),
//! which serve every project).

use quarry_core::model::JobKind;

use crate::db::Dialect;

macro_rules! entity_columns {
    () => {
        "id, project_id, entity_type, title, parent_id, fields, metadata, created_at, updated_at, \
         mention_count, notes, last_seen_at"
    };
}
macro_rules! run_columns {
    () => {
        "id, project_id, entity_id, scope, triggered_by, fields_requested, status, error, \
         started_at, finished_at, duration_ms, instructions"
    };
}
macro_rules! result_columns {
    () => {
        "id, run_id, project_id, entity_id, field_name, value, sources, confidence, agent_id, \
         status, rejection_reason, reviewed_by, reviewed_at, created_entity_ids, duration_ms, \
         tokens_used, metadata, created_at, workflow_node_run_id"
    };
}
macro_rules! relation_columns {
    () => {
        "id, project_id, from_id, to_id, label, mention_count, notes, first_seen_at, last_seen_at"
    };
}
macro_rules! document_columns {
    () => {
        "id, project_id, title, text, kind, created_at, url, fetched_at"
    };
}
macro_rules! episode_columns {
    () => {
        "id, project_id, user_message, assistant_response, status, attempts, error, ingest, \
         entities_stored, entities_skipped, relationships_stored, relationships_skipped, \
         created_at, updated_at, lease_owner, lease_expires_at, available_at"
    };
}
macro_rules! delivery_columns {
    () => {
        "id, project_id, event, entity_id, field_name, result_id, url, body, state, attempts, \
         max_attempts, last_error, response_status, created_at, updated_at, lease_owner, \
         lease_expires_at, available_at"
    };
}
macro_rules! chunk_columns {
    () => {
        "project_id, document_id, ordinal, start_cp, end_cp, byte_start, byte_end, embedder, \
         embedding"
    };
}
macro_rules! api_key_columns {
    () => {
        "id, project_id, name, prefix, secret_hash, scopes, created_at, revoked"
    };
}

// --- projects and keys -----------------------------------------------------------------------
pub(crate) const INSERT_PROJECT: &str = "INSERT INTO projects (id, name, created_at) VALUES ($1, $2, $3) \
     ON CONFLICT (name) DO NOTHING";
pub(crate) const PROJECT_ID_BY_NAME: &str = "SELECT id FROM projects WHERE name = $1";
/// Every project (index rebuilds at start walk them all).
pub(crate) const PROJECT_NAME: &str = "SELECT name FROM projects WHERE id = $1";
pub(crate) const PROJECT_IDS: &str = "SELECT id FROM projects ORDER BY created_at, id";
pub(crate) const INSERT_API_KEY: &str = concat!(
    "INSERT INTO api_keys (",
    api_key_columns!(),
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
);
pub(crate) const API_KEY_BY_PREFIX: &str = concat!(
    "SELECT ",
    api_key_columns!(),
    " FROM api_keys WHERE prefix = $1"
);
pub(crate) const REVOKE_API_KEY: &str =
    "UPDATE api_keys SET revoked = $3 WHERE project_id = $1 AND prefix = $2";
/// A revoked key's web sessions (migration 0007).
pub(crate) const DELETE_KEY_SESSIONS: &str =
    "DELETE FROM web_sessions WHERE project_id = $1 AND key_prefix = $2";

// --- entity types ----------------------------------------------------------------------------
pub(crate) const UPSERT_ENTITY_TYPE: &str = "INSERT INTO entity_types (project_id, slug, definition, updated_at) \
     VALUES ($1, $2, $3, $4) ON CONFLICT (project_id, slug) \
     DO UPDATE SET definition = excluded.definition, updated_at = excluded.updated_at";
pub(crate) const ENTITY_TYPE_BY_SLUG: &str =
    "SELECT definition FROM entity_types WHERE project_id = $1 AND slug = $2";
pub(crate) const ENTITY_TYPES: &str =
    "SELECT definition FROM entity_types WHERE project_id = $1 ORDER BY slug";

// --- entities and relations ------------------------------------------------------------------
/// The entity columns in row order, for statements built at run time (`name_search.rs`).
pub(crate) const ENTITY_COLUMNS: &str = entity_columns!();
pub(crate) const INSERT_ENTITY: &str = concat!(
    "INSERT INTO entities (",
    entity_columns!(),
    ", name_key) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
);
pub(crate) const ENTITY_BY_ID: &str = concat!(
    "SELECT ",
    entity_columns!(),
    " FROM entities WHERE project_id = $1 AND id = $2"
);
pub(crate) const ENTITIES: &str = concat!(
    "SELECT ",
    entity_columns!(),
    " FROM entities WHERE project_id = $1 AND ($2 IS NULL OR entity_type = $2) \
     ORDER BY created_at DESC, id DESC LIMIT $3"
);
/// An entity a cascade creates, keyed by its lower-cased title (`cascade_key`, unique per project
/// and type): when another process created it first, nothing is inserted.
pub(crate) const INSERT_CASCADE_ENTITY: &str = concat!(
    "INSERT INTO entities (",
    entity_columns!(),
    ", name_key, cascade_key) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, lower($4)) \
     ON CONFLICT (project_id, entity_type, cascade_key) DO NOTHING"
);
pub(crate) const ENTITY_BY_CASCADE_KEY: &str = "SELECT id FROM entities \
     WHERE project_id = $1 AND entity_type = $2 AND cascade_key = lower($3)";
pub(crate) const ENTITY_BY_TITLE: &str = concat!(
    "SELECT ",
    entity_columns!(),
    " FROM entities WHERE project_id = $1 AND entity_type = $2 AND lower(title) = lower($3) \
     ORDER BY created_at, id LIMIT 1"
);
/// The name-key backfill (migration `entity_name_key`): entities without a key, `$1` at most.
pub(crate) const ENTITIES_WITHOUT_NAME_KEY: &str =
    "SELECT id, entity_type, title FROM entities WHERE name_key IS NULL LIMIT $1";
/// `$2` the key (`''` for a title without one: set, so never read again).
pub(crate) const SET_NAME_KEY: &str = "UPDATE entities SET name_key = $2 WHERE id = $1";
pub(crate) const SET_ENTITY_METADATA: &str =
    "UPDATE entities SET metadata = $3, updated_at = $4 WHERE project_id = $1 AND id = $2";
pub(crate) const SET_ENTITY_FIELDS: &str =
    "UPDATE entities SET fields = $3, updated_at = $4 WHERE project_id = $1 AND id = $2";
pub(crate) const COUNT_ENTITIES_AMONG: &str =
    "SELECT COUNT(*) FROM entities WHERE project_id = $1 AND id IN ($2, $3)";
/// `$7` is the notes: they replace the stored ones only when not NULL.
pub(crate) const UPSERT_RELATION: &str = concat!(
    "INSERT INTO relations (",
    relation_columns!(),
    ") VALUES ($1, $2, $3, $4, $5, 1, $7, $6, $6) \
     ON CONFLICT (project_id, from_id, to_id, label) DO UPDATE SET \
     mention_count = relations.mention_count + 1, last_seen_at = excluded.last_seen_at, \
     notes = COALESCE(excluded.notes, relations.notes) \
     RETURNING ",
    relation_columns!()
);
/// Written as a join from the (small, deduplicated) set of neighbour ids so that SQLite looks
/// entities up by id instead of walking every entity of the project.
pub(crate) const CONNECTED_ENTITIES: &str = "SELECT e.id AS id, e.project_id AS project_id, \
     e.entity_type AS entity_type, e.title AS title, e.parent_id AS parent_id, e.fields AS fields, \
     e.metadata AS metadata, e.created_at AS created_at, e.updated_at AS updated_at, \
     e.mention_count AS mention_count, e.notes AS notes, e.last_seen_at AS last_seen_at \
     FROM (SELECT to_id AS id FROM relations WHERE project_id = $1 AND from_id = $2 \
       UNION SELECT from_id FROM relations WHERE project_id = $1 AND to_id = $2) c \
     JOIN entities e ON e.id = c.id \
     WHERE e.project_id = $1 AND e.id <> $2 \
     ORDER BY e.created_at, e.id LIMIT $3";

// --- documents -------------------------------------------------------------------------------
/// `$9` the content hash (NULL for episode documents): a second file document of the same
/// content in the project inserts nothing (migration 0005).
pub(crate) const INSERT_DOCUMENT: &str = concat!(
    "INSERT INTO documents (",
    document_columns!(),
    ", content_hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
     ON CONFLICT (project_id, content_hash) DO NOTHING"
);
pub(crate) const DOCUMENT_BY_HASH: &str = concat!(
    "SELECT ",
    document_columns!(),
    " FROM documents WHERE project_id = $1 AND content_hash = $2"
);
pub(crate) const DOCUMENT_ENTITY_IDS: &str = "SELECT entity_id FROM document_links \
     WHERE project_id = $1 AND document_id = $2 ORDER BY entity_id";
pub(crate) const COUNT_DOCUMENT: &str =
    "SELECT COUNT(*) FROM documents WHERE project_id = $1 AND id = $2";
pub(crate) const INSERT_DOCUMENT_LINK: &str = "INSERT INTO document_links (project_id, document_id, entity_id, created_at) \
     VALUES ($1, $2, $3, $4) ON CONFLICT (project_id, document_id, entity_id) DO NOTHING";
pub(crate) const DOCUMENTS: &str = concat!(
    "SELECT ",
    document_columns!(),
    " FROM documents WHERE project_id = $1 ORDER BY created_at, id"
);
pub(crate) const LINKED_DOCUMENTS: &str = concat!(
    "SELECT ",
    document_columns!(),
    " FROM documents WHERE project_id = $1 AND id IN (\
       SELECT document_id FROM document_links WHERE project_id = $1 AND entity_id = $2) \
     ORDER BY created_at, id"
);

// --- runs ------------------------------------------------------------------------------------
pub(crate) const INSERT_RUN: &str = concat!(
    "INSERT INTO extraction_runs (",
    run_columns!(),
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, NULL, $8, NULL, NULL, $9)"
);
pub(crate) const RUN_BY_ID: &str = concat!(
    "SELECT ",
    run_columns!(),
    " FROM extraction_runs WHERE project_id = $1 AND id = $2"
);
pub(crate) const FINISH_RUN: &str = "UPDATE extraction_runs SET status = $3, error = $4, finished_at = $5, duration_ms = $6 \
     WHERE project_id = $1 AND id = $2";
/// [`RUNS_OF_ENTITY`] after a cursor: runs ordered before the run `$3` (by start, then id).
pub(crate) const RUNS_OF_ENTITY_BEFORE: &str = concat!(
    "SELECT ",
    run_columns!(),
    " FROM extraction_runs WHERE project_id = $1 AND entity_id = $2 \
     AND (started_at, id) < (SELECT started_at, id FROM extraction_runs \
       WHERE project_id = $1 AND id = $3) \
     ORDER BY started_at DESC, id DESC LIMIT $4"
);
pub(crate) const RUNS_OF_ENTITY: &str = concat!(
    "SELECT ",
    run_columns!(),
    " FROM extraction_runs WHERE project_id = $1 AND entity_id = $2 \
     ORDER BY started_at DESC, id DESC LIMIT $3"
);

// --- results and reviews ---------------------------------------------------------------------
pub(crate) const SUPERSEDE_FIELD: &str = "UPDATE extraction_results SET status = 'superseded' \
     WHERE project_id = $1 AND entity_id = $2 AND field_name = $3 \
     AND status IN ('pending', 'approved')";
/// A no-op write that locks the entity (its row on PostgreSQL, the database on SQLite) and
/// returns its type (no row: it does not exist): writes touching one entity's results take it
/// first, so concurrent writers of the same entity queue instead of both superseding nothing.
pub(crate) const LOCK_ENTITY: &str = "UPDATE entities SET updated_at = updated_at \
     WHERE project_id = $1 AND id = $2 RETURNING entity_type";
/// [`LOCK_ENTITY`] for the entity a result belongs to.
pub(crate) const LOCK_ENTITY_OF_RESULT: &str = "UPDATE entities SET updated_at = updated_at \
     WHERE project_id = $1 AND id = (SELECT entity_id FROM extraction_results WHERE project_id = $1 AND id = $2) \
     RETURNING entity_type";
/// What [`SUPERSEDE_FIELD`] is about to supersede, by status and confidence (for the tallies).
pub(crate) const SUPERSEDABLE_COUNTS: &str = "SELECT status, confidence, COUNT(*) AS n \
     FROM extraction_results WHERE project_id = $1 AND entity_id = $2 AND field_name = $3 \
     AND status IN ('pending', 'approved') GROUP BY status, confidence";
pub(crate) const COUNT_ENTITY: &str =
    "SELECT COUNT(*) FROM entities WHERE project_id = $1 AND id = $2";
pub(crate) const INSERT_RESULT: &str = concat!(
    "INSERT INTO extraction_results (",
    result_columns!(),
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, NULL, NULL, NULL, $11, $12, $13, $14, $15, \
     $16)"
);
pub(crate) const RESULT_BY_ID: &str = concat!(
    "SELECT ",
    result_columns!(),
    " FROM extraction_results WHERE project_id = $1 AND id = $2"
);
/// Non-superseded results, newest first within each field; the caller keeps the first per field.
pub(crate) const CURRENT_RESULTS: &str = concat!(
    "SELECT ",
    result_columns!(),
    " FROM extraction_results WHERE project_id = $1 AND entity_id = $2 \
     AND status <> 'superseded' ORDER BY field_name, created_at DESC, id DESC"
);
pub(crate) const FIELD_HISTORY: &str = concat!(
    "SELECT ",
    result_columns!(),
    " FROM extraction_results WHERE project_id = $1 AND entity_id = $2 AND field_name = $3 \
     ORDER BY created_at, id"
);
/// Marks a pending result reviewed; zero rows affected means missing or not pending.
pub(crate) const REVIEW_PENDING_RESULT: &str = "UPDATE extraction_results SET status = $3, rejection_reason = $4, reviewed_by = $5, \
     reviewed_at = $6 WHERE project_id = $1 AND id = $2 AND status = 'pending'";
pub(crate) const INSERT_REVIEW_EVENT: &str = "INSERT INTO review_events (id, project_id, result_id, decision, reason, reviewer, at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7)";
// --- feedback tallies (migration 0002) -----------------------------------------------------
// Non-superseded results by (entity type, field, status, confidence) and rejected results with a
// reason by (entity type, field, reason), kept in the transactions that change them. Callers
// apply their deltas in key order, so two transactions never wait on each other's tallies.
pub(crate) const ADD_FEEDBACK_COUNT: &str = "INSERT INTO feedback_counts \
     (project_id, entity_type, field_name, status, confidence, n) VALUES ($1, $2, $3, $4, $5, $6) \
     ON CONFLICT (project_id, entity_type, field_name, status, confidence) \
     DO UPDATE SET n = feedback_counts.n + excluded.n";
pub(crate) const ADD_FEEDBACK_REASON: &str = "INSERT INTO feedback_reasons \
     (project_id, entity_type, field_name, reason, n) VALUES ($1, $2, $3, $4, $5) \
     ON CONFLICT (project_id, entity_type, field_name, reason) \
     DO UPDATE SET n = feedback_reasons.n + excluded.n";
pub(crate) const FEEDBACK_COUNTS: &str = "SELECT status, confidence, n FROM feedback_counts \
     WHERE project_id = $1 AND entity_type = $2 AND field_name = $3 AND n <> 0";
pub(crate) const FEEDBACK_REASONS: &str = "SELECT reason, n FROM feedback_reasons \
     WHERE project_id = $1 AND entity_type = $2 AND field_name = $3 AND n > 0 \
     ORDER BY n DESC, reason LIMIT $4";

// --- conversation graph (migration 0003) ---------------------------------------------------
pub(crate) const INSERT_EPISODE: &str = concat!(
    "INSERT INTO episodes (",
    episode_columns!(),
    ") VALUES ($1, $2, $3, $4, 'pending', 0, NULL, $5, 0, 0, 0, 0, $6, $6, NULL, NULL, NULL)"
);
pub(crate) const EPISODE_BY_ID: &str = concat!(
    "SELECT ",
    episode_columns!(),
    " FROM episodes WHERE project_id = $1 AND id = $2"
);
pub(crate) const COUNT_EPISODE: &str =
    "SELECT COUNT(*) FROM episodes WHERE project_id = $1 AND id = $2";
/// An episode's end: `$3` status, `$4` error, `$5`..`$8` the counts, `$9` now; the lease is
/// cleared. A claimed episode is fenced first ([`EPISODE_QUEUE`]'s `fence`).
pub(crate) const FINISH_EPISODE: &str = concat!(
    "UPDATE episodes SET status = $3, error = $4, entities_stored = $5, entities_skipped = $6, \
     relationships_stored = $7, relationships_skipped = $8, updated_at = $9, \
     lease_owner = NULL, lease_expires_at = NULL, available_at = NULL \
     WHERE project_id = $1 AND id = $2 RETURNING ",
    episode_columns!()
);
/// A retry of failed episodes: back to `pending` at once, attempts from zero, error cleared.
/// `$1` project, `$2` now, `$3` one id (NULL: every failed episode of the project).
pub(crate) const RETRY_EPISODES: &str = concat!(
    "UPDATE episodes SET status = 'pending', attempts = 0, error = NULL, available_at = NULL, \
       lease_owner = NULL, lease_expires_at = NULL, updated_at = $2 \
     WHERE project_id = $1 AND status = 'failed' \
       AND (CAST($3 AS TEXT) IS NULL OR id = CAST($3 AS TEXT)) RETURNING ",
    episode_columns!()
);
/// An episode's status (why a fenced write or a retry found nothing to change).
pub(crate) const EPISODE_STATUS: &str =
    "SELECT status FROM episodes WHERE project_id = $1 AND id = $2";
pub(crate) const ENTITY_EPISODES: &str = concat!(
    "SELECT ",
    episode_columns!(),
    " FROM episodes WHERE project_id = $1 AND id IN (\
       SELECT document_id FROM document_links WHERE project_id = $1 AND entity_id = $2) \
     ORDER BY created_at DESC, id DESC LIMIT $3"
);
/// A no-op write that takes the project's row lock (the database's write lock on SQLite), so
/// graph writes of one project run one after another and the (type, title) look-up before an
/// insert cannot race another insert. No key column changes, so foreign-key checks of other
/// writes are not blocked. No row: the project does not exist.
pub(crate) const LOCK_PROJECT: &str = "UPDATE projects SET created_at = created_at WHERE id = $1";
/// One more mention of an entity: `$3` now, `$4` notes (replacing the stored ones when not NULL).
pub(crate) const MENTION_ENTITY: &str = concat!(
    "UPDATE entities SET mention_count = mention_count + 1, last_seen_at = $3, updated_at = $3, \
     notes = COALESCE($4, notes) WHERE project_id = $1 AND id = $2 RETURNING ",
    entity_columns!()
);
/// [`MENTION_ENTITY`] for the entity of this type `$2` and exactly this title `$3`, else the
/// oldest of the same name key `$6` (NULL: none); `$4` now, `$5` notes.
pub(crate) const MENTION_ENTITY_BY_TITLE: &str = concat!(
    "UPDATE entities SET mention_count = mention_count + 1, last_seen_at = $4, updated_at = $4, \
     notes = COALESCE($5, notes) WHERE project_id = $1 AND id = (SELECT id FROM entities \
       WHERE project_id = $1 AND entity_type = $2 AND (title = $3 OR name_key = $6) \
       ORDER BY CASE WHEN title = $3 THEN 0 ELSE 1 END, created_at, id LIMIT 1) \
     RETURNING ",
    entity_columns!()
);
/// [`MENTION_ENTITY`] for several distinct entities at once: `{rows}` are `(id, notes, now)`
/// (see [`with_rows`]). SQLite and PostgreSQL both name the columns of `VALUES` `column1`,
/// `column2`, ...; an id missing from the project returns no row.
pub(crate) const MENTION_ENTITIES: &str = concat!(
    "UPDATE entities SET mention_count = entities.mention_count + 1, last_seen_at = v.column3, \
     updated_at = v.column3, notes = COALESCE(v.column2, entities.notes) \
     FROM (VALUES {rows}) AS v WHERE entities.project_id = $1 AND entities.id = v.column1 \
     RETURNING ",
    entity_columns!()
);
pub(crate) const MENTION_ENTITIES_ROW: &str = "(?, ?, ?)";
/// [`INSERT_DOCUMENT_LINK`] for several entities of one document: `$2` the document, `$3` now
/// (the links of one write share their time).
pub(crate) const INSERT_DOCUMENT_LINKS: &str = "INSERT INTO document_links \
     (project_id, document_id, entity_id, created_at) VALUES {rows} \
     ON CONFLICT (project_id, document_id, entity_id) DO NOTHING";
pub(crate) const INSERT_DOCUMENT_LINKS_ROW: &str = "($1, $2, ?, $3)";
/// [`UPSERT_RELATION`] for several relations with distinct (from, to, label) (PostgreSQL
/// refuses to update one row twice in a statement): rows `(id, from, to, label, notes, now,
/// now)`. RETURNING rows come in no particular order; the caller maps them by their key.
pub(crate) const UPSERT_RELATIONS: &str = concat!(
    "INSERT INTO relations (",
    relation_columns!(),
    ") VALUES {rows} \
     ON CONFLICT (project_id, from_id, to_id, label) DO UPDATE SET \
     mention_count = relations.mention_count + 1, last_seen_at = excluded.last_seen_at, \
     notes = COALESCE(excluded.notes, relations.notes) \
     RETURNING ",
    relation_columns!()
);
pub(crate) const UPSERT_RELATIONS_ROW: &str = "(?, $1, ?, ?, ?, 1, ?, ?, ?)";
/// Most rows in one multi-row statement (a bounded set of statement texts per connection).
pub(crate) const MAX_ROWS: usize = 32;

/// `template` with `{rows}` replaced by `count` copies of `row` joined by commas, each `?` of
/// them becoming the next placeholder from `$first` on (`$N` in `row` stay as they are).
pub(crate) fn with_rows(template: &str, row: &str, first: usize, count: usize) -> String {
    let mut rows = String::with_capacity(count * (row.len() + 8));
    let mut next = first;
    for i in 0..count {
        if i > 0 {
            rows.push_str(", ");
        }
        for c in row.chars() {
            if c == '?' {
                rows.push('$');
                rows.push_str(&next.to_string());
                next += 1;
            } else {
                rows.push(c);
            }
        }
    }
    template.replace("{rows}", &rows)
}

/// Titles containing `$3` (a LIKE pattern escaped with `\`), case-insensitively through the
/// database's own `lower` on both sides; titles equal to `$4` first.
pub(crate) const ENTITIES_BY_NAME: &str = concat!(
    "SELECT ",
    entity_columns!(),
    " FROM entities WHERE project_id = $1 AND ($2 IS NULL OR entity_type = $2) \
     AND lower(title) LIKE lower($3) ESCAPE '\\' \
     ORDER BY CASE WHEN lower(title) = lower($4) THEN 0 ELSE 1 END, mention_count DESC, title, id \
     LIMIT $5"
);

// Statements over a list of values: `{list}` becomes placeholders from `$2` on (see [`with_list`]).
pub(crate) const RECENT_ENTITIES_OF_TYPES: &str = concat!(
    "SELECT ",
    entity_columns!(),
    " FROM entities WHERE project_id = $1 AND entity_type IN ({list}) \
     ORDER BY created_at DESC, id DESC LIMIT $2"
);
pub(crate) const ENTITIES_AMONG: &str = concat!(
    "SELECT ",
    entity_columns!(),
    " FROM entities WHERE project_id = $1 AND id IN ({list})"
);
pub(crate) const RELATIONS_TOUCHING: &str = concat!(
    "SELECT ",
    relation_columns!(),
    " FROM relations WHERE project_id = $1 AND (from_id IN ({list}) OR to_id IN ({list})) \
     ORDER BY first_seen_at, id"
);

/// `template` with `{list}` replaced by `count` placeholders numbered from `first`.
pub(crate) fn with_list(template: &str, first: usize, count: usize) -> String {
    let list = (first..first + count)
        .map(|n| format!("${n}"))
        .collect::<Vec<_>>()
        .join(", ");
    template.replace("{list}", &list)
}

// --- retrieval chunks (migration 0003) -----------------------------------------------------
pub(crate) const DELETE_CHUNKS: &str =
    "DELETE FROM chunks WHERE project_id = $1 AND document_id = $2";
pub(crate) const INSERT_CHUNK: &str = concat!(
    "INSERT INTO chunks (",
    chunk_columns!(),
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
);
/// Every project's chunks: the index rebuild at start (no project filter, like the sweeps).
pub(crate) const ALL_CHUNKS: &str = concat!(
    "SELECT ",
    chunk_columns!(),
    " FROM chunks ORDER BY document_id, ordinal"
);
pub(crate) const DOCUMENT_CHUNKS: &str = concat!(
    "SELECT ",
    chunk_columns!(),
    " FROM chunks WHERE project_id = $1 AND document_id = $2 ORDER BY ordinal"
);

// --- following other processes' writes (migration 0005) ----------------------------------
// Across projects, oldest first, `$1` the earliest time, `$2` the limit; each walks its index.
pub(crate) const DOCUMENTS_CREATED_SINCE: &str = concat!(
    "SELECT ",
    document_columns!(),
    " FROM documents WHERE created_at >= $1 ORDER BY created_at, id LIMIT $2"
);
pub(crate) const DOCUMENT_LINKS_SINCE: &str = "SELECT project_id, document_id, entity_id, \
     created_at FROM document_links WHERE created_at >= $1 \
     ORDER BY created_at, document_id, entity_id LIMIT $2";
pub(crate) const ENTITIES_CHANGED_SINCE: &str = concat!(
    "SELECT ",
    entity_columns!(),
    " FROM entities WHERE updated_at >= $1 ORDER BY updated_at, id LIMIT $2"
);
/// One project's entities of one type (`$2`) created at or after `$3`, oldest first, `$4` the
/// limit (the `entities_by_type` index).
pub(crate) const ENTITIES_CREATED_SINCE: &str = concat!(
    "SELECT ",
    entity_columns!(),
    " FROM entities WHERE project_id = $1 AND entity_type = $2 AND created_at >= $3 \
     ORDER BY created_at, id LIMIT $4"
);

/// Every document of every project with its links, one row per link (a NULL entity for a
/// document without any), grouped by document.
pub(crate) const ALL_DOCUMENT_LINKS: &str = "SELECT d.project_id, d.id, l.entity_id \
     FROM documents d LEFT JOIN document_links l \
       ON l.project_id = d.project_id AND l.document_id = d.id \
     ORDER BY d.id, l.entity_id";

// --- field tasks (the workflow queue) ----------------------------------------------------------
macro_rules! task_columns {
    () => {
        "id, project_id, run_id, root_run_id, entity_id, field_name, state, depends_on, gated, \
         attempts, max_attempts, last_error, feedback, depth, triggered_by, lease_owner, \
         lease_expires_at, available_at, result_id, tokens_used, duration_ms, created_at, \
         updated_at, attempt_log, instructions"
    };
}
pub(crate) const SET_RUN_ROOT: &str =
    "UPDATE extraction_runs SET root_run_id = $3 WHERE project_id = $1 AND id = $2";
pub(crate) const RUNS_UNDER_ROOT: &str = concat!(
    "SELECT ",
    run_columns!(),
    " FROM extraction_runs WHERE project_id = $1 AND (id = $2 OR root_run_id = $2) \
     ORDER BY started_at, id"
);
pub(crate) const INSERT_TASK: &str = concat!(
    "INSERT INTO field_tasks (",
    task_columns!(),
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, \
     $19, $20, $21, $22, $23, $24, $25)"
);
pub(crate) const TASKS_OF_RUN: &str = concat!(
    "SELECT ",
    task_columns!(),
    " FROM field_tasks WHERE project_id = $1 AND run_id = $2 ORDER BY created_at, id"
);
pub(crate) const TASK_BY_ID: &str = concat!(
    "SELECT ",
    task_columns!(),
    " FROM field_tasks WHERE project_id = $1 AND id = $2"
);
/// Every task of an entity, newest first (retry picks the latest per field).
pub(crate) const TASKS_OF_ENTITY: &str = concat!(
    "SELECT ",
    task_columns!(),
    " FROM field_tasks WHERE project_id = $1 AND entity_id = $2 ORDER BY created_at DESC, id DESC"
);
/// An attempt's end; returns the task as it is then.
pub(crate) const END_TASK: &str = concat!(
    "UPDATE field_tasks SET state = $2, last_error = $3, \
     result_id = $4, tokens_used = tokens_used + $5, duration_ms = duration_ms + $6, \
     lease_owner = NULL, lease_expires_at = NULL, available_at = $7, updated_at = $8, \
     attempt_log = $9 WHERE id = $1 RETURNING ",
    task_columns!()
);
pub(crate) const SET_TASK_STATE: &str =
    "UPDATE field_tasks SET state = $2, last_error = $3, updated_at = $4 WHERE id = $1";
/// A retry: the task starts over (attempts from zero) at once.
pub(crate) const RESET_TASK: &str = "UPDATE field_tasks SET state = $2, attempts = 0, \
     last_error = NULL, available_at = $3, updated_at = $3, lease_owner = NULL, \
     lease_expires_at = NULL, attempt_log = $4 WHERE id = $1";
/// An approval or a person's answer ends the field's waiting tasks.
pub(crate) const APPROVE_WAITING_TASKS: &str = "UPDATE field_tasks SET state = 'done', \
     updated_at = $4 WHERE project_id = $1 AND entity_id = $2 AND field_name = $3 \
     AND state = 'waiting_human' RETURNING run_id";
/// A rejected gated value fails the task that waited on its approval.
pub(crate) const REJECT_WAITING_TASKS: &str = "UPDATE field_tasks SET state = 'failed', \
     last_error = $5, updated_at = $6 WHERE project_id = $1 AND entity_id = $2 \
     AND field_name = $3 AND result_id = $4 AND state = 'waiting_human' RETURNING run_id";

// --- project corrections (migration corrections) ---------------------------------------------
pub(crate) const INSERT_CORRECTION: &str = "INSERT INTO corrections \
     (id, project_id, entity_type, field_name, text, created_by, created_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7)";
pub(crate) const CORRECTIONS: &str = "SELECT id, project_id, entity_type, field_name, text, \
     created_by, created_at FROM corrections WHERE project_id = $1 ORDER BY created_at, id";
pub(crate) const DELETE_CORRECTION: &str =
    "DELETE FROM corrections WHERE project_id = $1 AND id = $2";

// --- the leased queue (every job kind) ----------------------------------------------------------
/// One job kind's queue statements. Each kind keeps its jobs in its own table; these are the
/// same statements for all of them, written once by the macros below from the table's name, its
/// state column, the state of a job waiting to be claimed, the column a fresh claim orders by
/// and the claim's scope condition.
pub(crate) struct QueueSql {
    /// The take. `$1` now, `$2` owner, `$3` the lease's expiry, `$4` the scope (text or NULL:
    /// every job), `$5` the limit.
    pub claim: &'static str,
    /// The heartbeat: `$1` the new expiry, while `$2` id is running under `$3` owner and `$4`
    /// attempt.
    pub renew: &'static str,
    /// The fence every fenced transaction writes first: `$1` now, `$2` project, `$3` id, `$4`
    /// owner, `$5` attempt; returns the job's row. No row: the lease was taken over, the job
    /// ended, or no such job.
    pub fence: &'static str,
    /// Back to the queue, fenced like `fence`: `$6` the error, `$7` claimable from.
    pub release: &'static str,
    /// The job's state (`$1` project, `$2` id): why a fence matched nothing.
    pub state_of: &'static str,
}

/// The take, across projects: `running` jobs whose lease expired (their worker died or stalled)
/// first, then waiting ones whose `available_at` is unset or passed, in the kind's order. Only
/// PostgreSQL needs (and has) `SKIP LOCKED` (`$lock`): there a second taker skips the rows the
/// first one locked instead of re-checking them after it commits; on SQLite the single statement
/// holds the write lock from its start, so takers run one after another. The picks are
/// materialised CTEs: as an `IN` subquery PostgreSQL may rescan them while updating, and a
/// rescan skips the rows this very statement already updated and picks further ones, past the
/// limit. The outer condition keeps a row re-checked after a concurrent update from being taken
/// twice.
///
/// Each pick walks one index in order and stops after `$5` rows: expired leases the kind's
/// (state, lease_expires_at) index, waiting jobs its (state, order, id) index; `picked` keeps
/// `$5` of both (PostgreSQL's row locks on the rest end with the statement). The update finds
/// the picked rows by primary key; on SQLite the outer state tests are written `+state`
/// (`$outer_state`) so the planner cannot choose a state index there instead, which would visit
/// every waiting job for each take.
macro_rules! claim_jobs {
    ($table:literal, $state:literal, $outer_state:literal, $waiting:literal, $order:literal,
     $scope:literal, $lock:literal, $($columns:tt)+) => {
        concat!(
            "WITH expired AS MATERIALIZED (SELECT id, lease_expires_at AS ord FROM ", $table,
            " WHERE ", $state, " = 'running' AND lease_expires_at < $1 AND ", $scope,
            " ORDER BY lease_expires_at, id LIMIT $5", $lock,
            "), fresh AS MATERIALIZED (SELECT id, ", $order, " AS ord FROM ", $table,
            " WHERE ", $state, " = '", $waiting,
            "' AND (available_at IS NULL OR available_at <= $1) AND ", $scope,
            " ORDER BY ", $order, ", id LIMIT $5", $lock,
            "), picked AS MATERIALIZED (SELECT id FROM (\
                 SELECT id, 0 AS taken_over, ord FROM expired \
                 UNION ALL SELECT id, 1 AS taken_over, ord FROM fresh) AS candidates \
               ORDER BY taken_over, ord, id LIMIT $5) UPDATE ", $table, " SET ", $state,
            " = 'running', attempts = attempts + 1, lease_owner = $2, lease_expires_at = $3, \
              updated_at = $1 WHERE id IN (SELECT id FROM picked) AND ((",
            $outer_state, " = '", $waiting, "' AND (available_at IS NULL OR available_at <= $1)) \
              OR (", $outer_state, " = 'running' AND lease_expires_at < $1)) RETURNING ",
            $($columns)+
        )
    };
}

/// A kind's [`QueueSql`] for one dialect (`$lock` and `$outer_state` as in [`claim_jobs`]).
macro_rules! queue_sql {
    ($table:literal, $state:literal, $outer_state:literal, $waiting:literal, $error:literal,
     $order:literal, $scope:literal, $lock:literal, $($columns:tt)+) => {
        QueueSql {
            claim: claim_jobs!(
                $table, $state, $outer_state, $waiting, $order, $scope, $lock, $($columns)+
            ),
            renew: concat!(
                "UPDATE ", $table, " SET lease_expires_at = $1 WHERE id = $2 AND ", $state,
                " = 'running' AND lease_owner = $3 AND attempts = $4"
            ),
            fence: concat!(
                "UPDATE ", $table, " SET updated_at = $1 WHERE project_id = $2 AND id = $3 AND ",
                $state, " = 'running' AND lease_owner = $4 AND attempts = $5 RETURNING ",
                $($columns)+
            ),
            release: concat!(
                "UPDATE ", $table, " SET ", $state, " = '", $waiting, "', ", $error,
                " = $6, available_at = $7, updated_at = $1, lease_owner = NULL, \
                 lease_expires_at = NULL WHERE project_id = $2 AND id = $3 AND ", $state,
                " = 'running' AND lease_owner = $4 AND attempts = $5"
            ),
            state_of: concat!("SELECT ", $state, " FROM ", $table, " WHERE project_id = $1 AND id = $2"),
        }
    };
}

/// Field tasks: `queued` ones by availability; the scope is a root run to stay within.
macro_rules! field_task_queue {
    ($outer_state:literal, $lock:literal) => {
        queue_sql!(
            "field_tasks",
            "state",
            $outer_state,
            "queued",
            "last_error",
            "available_at",
            "(CAST($4 AS TEXT) IS NULL OR root_run_id = CAST($4 AS TEXT))",
            $lock,
            task_columns!()
        )
    };
}
/// Episodes: `pending` ones oldest first; any scope keeps to episodes carrying a
/// pre-structured `ingest` (what a worker without a model can do).
macro_rules! episode_queue {
    ($outer_state:literal, $lock:literal) => {
        queue_sql!(
            "episodes",
            "status",
            $outer_state,
            "pending",
            "error",
            "created_at",
            "(CAST($4 AS TEXT) IS NULL OR ingest IS NOT NULL)",
            $lock,
            episode_columns!()
        )
    };
}
/// Webhook deliveries: `queued` ones by availability; the scope is the projects to pass over
/// (`,a,b,`: each holds its share of the taker's slots), NULL for none.
macro_rules! delivery_queue {
    ($outer_state:literal, $lock:literal) => {
        queue_sql!(
            "deliveries",
            "state",
            $outer_state,
            "queued",
            "last_error",
            "available_at",
            "(CAST($4 AS TEXT) IS NULL OR CAST($4 AS TEXT) NOT LIKE '%,' || project_id || ',%')",
            $lock,
            delivery_columns!()
        )
    };
}
pub(crate) const DELIVERY_QUEUE_SQLITE: QueueSql = delivery_queue!("+state", "");
pub(crate) const DELIVERY_QUEUE_POSTGRES: QueueSql =
    delivery_queue!("state", " FOR UPDATE SKIP LOCKED");
pub(crate) const INSERT_DELIVERY: &str = concat!(
    "INSERT INTO deliveries (",
    delivery_columns!(),
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'queued', 0, $9, NULL, NULL, $10, $10, NULL, \
     NULL, $10)"
);
/// A delivery's end (fenced first): `$3` state, `$4` error, `$5` response status, `$6` now.
pub(crate) const END_DELIVERY: &str = concat!(
    "UPDATE deliveries SET state = $3, last_error = $4, response_status = $5, updated_at = $6, \
     lease_owner = NULL, lease_expires_at = NULL WHERE project_id = $1 AND id = $2 RETURNING ",
    delivery_columns!()
);
/// An ended delivery queued again: `$1` project, `$2` id, `$3` attempts added, `$4` now.
pub(crate) const REDELIVER: &str = concat!(
    "UPDATE deliveries SET state = 'queued', max_attempts = attempts + $3, available_at = $4, \
     updated_at = $4, lease_owner = NULL, lease_expires_at = NULL WHERE project_id = $1 AND \
     id = $2 AND state IN ('dead', 'failed', 'done') RETURNING ",
    delivery_columns!()
);
pub(crate) const DELIVERIES: &str = concat!(
    "SELECT ",
    delivery_columns!(),
    " FROM deliveries WHERE project_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2"
);
pub(crate) const FIELD_TASK_QUEUE_SQLITE: QueueSql = field_task_queue!("+state", "");
pub(crate) const FIELD_TASK_QUEUE_POSTGRES: QueueSql =
    field_task_queue!("state", " FOR UPDATE SKIP LOCKED");
pub(crate) const EPISODE_QUEUE_SQLITE: QueueSql = episode_queue!("+status", "");
pub(crate) const EPISODE_QUEUE_POSTGRES: QueueSql =
    episode_queue!("status", " FOR UPDATE SKIP LOCKED");

/// The queue statements of job `kind` in `dialect` (the take differs: see `claim_jobs!`).
pub(crate) fn queue_sql(kind: JobKind, dialect: Dialect) -> &'static QueueSql {
    match kind {
        JobKind::FieldTask => dialect.pick(&FIELD_TASK_QUEUE_SQLITE, &FIELD_TASK_QUEUE_POSTGRES),
        JobKind::Episode => dialect.pick(&EPISODE_QUEUE_SQLITE, &EPISODE_QUEUE_POSTGRES),
        JobKind::Delivery => dialect.pick(&DELIVERY_QUEUE_SQLITE, &DELIVERY_QUEUE_POSTGRES),
    }
}
/// What a released field task adds to its totals and log: `$1` id, `$2` tokens, `$3`
/// milliseconds, `$4` the attempt log.
pub(crate) const ADD_TASK_ATTEMPT_COST: &str = "UPDATE field_tasks SET \
     tokens_used = tokens_used + $2, duration_ms = duration_ms + $3, attempt_log = $4 WHERE id = $1";

// --- review views (migration 0008) -------------------------------------------------------------
/// `$2` type, `$3` an escaped LIKE pattern or NULL, `$4` limit, `$5` offset; walks
/// `entities_by_exact_title` (project, type, title).
pub(crate) const ENTITY_PAGE: &str = concat!(
    "SELECT ",
    entity_columns!(),
    " FROM entities WHERE project_id = $1 AND entity_type = $2 \
     AND (CAST($3 AS TEXT) IS NULL OR lower(title) LIKE lower(CAST($3 AS TEXT)) ESCAPE '\\') \
     ORDER BY title, id LIMIT $4 OFFSET $5"
);
pub(crate) const COUNT_ENTITY_PAGE: &str = "SELECT COUNT(*) FROM entities \
     WHERE project_id = $1 AND entity_type = $2 \
     AND (CAST($3 AS TEXT) IS NULL OR lower(title) LIKE lower(CAST($3 AS TEXT)) ESCAPE '\\')";
/// The latest non-superseded result per (entity, field) of the entities `{list}`.
pub(crate) const LATEST_RESULTS_OF: &str = concat!(
    "SELECT ",
    result_columns!(),
    " FROM (SELECT ",
    result_columns!(),
    ", ROW_NUMBER() OVER (PARTITION BY entity_id, field_name ORDER BY created_at DESC, id DESC) \
       AS latest FROM extraction_results WHERE project_id = $1 AND entity_id IN ({list}) \
       AND status <> 'superseded') ranked WHERE latest = 1"
);
/// The latest task per (entity, field) of the entities `{list}`.
pub(crate) const LATEST_TASKS_OF: &str = concat!(
    "SELECT ",
    task_columns!(),
    " FROM (SELECT ",
    task_columns!(),
    ", ROW_NUMBER() OVER (PARTITION BY entity_id, field_name ORDER BY created_at DESC, id DESC) \
       AS latest FROM field_tasks WHERE project_id = $1 AND entity_id IN ({list})) ranked \
     WHERE latest = 1"
);
/// Pending results of entities of type `$2`, oldest first, `$3` limit, `$4` offset: walks the
/// partial index `extraction_results_pending` in order and looks each entity up by id (the
/// CROSS JOIN keeps SQLite's planner to that order; PostgreSQL plans it as an inner join).
pub(crate) const REVIEW_QUEUE: &str = "SELECT r.id AS id, r.run_id AS run_id, \
     r.project_id AS project_id, r.entity_id AS entity_id, r.field_name AS field_name, \
     r.value AS value, r.sources AS sources, r.confidence AS confidence, r.agent_id AS agent_id, \
     r.status AS status, r.rejection_reason AS rejection_reason, r.reviewed_by AS reviewed_by, \
     r.reviewed_at AS reviewed_at, r.created_entity_ids AS created_entity_ids, \
     r.duration_ms AS duration_ms, r.tokens_used AS tokens_used, r.metadata AS metadata, \
     r.created_at AS created_at, r.workflow_node_run_id AS workflow_node_run_id, \
     e.title AS entity_title \
     FROM extraction_results r CROSS JOIN entities e \
     WHERE r.project_id = $1 AND r.status = 'pending' \
       AND e.id = r.entity_id AND e.project_id = $1 AND e.entity_type = $2 \
     ORDER BY r.created_at, r.id LIMIT $3 OFFSET $4";
/// How many results of type `$2` are pending, from the feedback tallies (migration 0002).
pub(crate) const COUNT_PENDING_OF_TYPE: &str = "SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) \
     FROM feedback_counts WHERE project_id = $1 AND entity_type = $2 AND status = 'pending'";
pub(crate) const DOCUMENT_BY_ID: &str = concat!(
    "SELECT ",
    document_columns!(),
    " FROM documents WHERE project_id = $1 AND id = $2"
);
/// `$2` an escaped LIKE pattern or NULL, `$3` a kind or NULL, `$4` limit, `$5` offset; newest
/// first off `documents_by_project`. `chars`: the text's length in code points.
pub(crate) const DOCUMENT_PAGE: &str = "SELECT id, title, kind, created_at, \
     CAST(length(text) AS BIGINT) AS chars FROM documents WHERE project_id = $1 \
     AND (CAST($2 AS TEXT) IS NULL OR lower(title) LIKE lower(CAST($2 AS TEXT)) ESCAPE '\\') \
     AND (CAST($3 AS TEXT) IS NULL OR kind = CAST($3 AS TEXT)) \
     ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5";
pub(crate) const COUNT_DOCUMENT_PAGE: &str = "SELECT COUNT(*) FROM documents WHERE project_id = $1 \
     AND (CAST($2 AS TEXT) IS NULL OR lower(title) LIKE lower(CAST($2 AS TEXT)) ESCAPE '\\') \
     AND (CAST($3 AS TEXT) IS NULL OR kind = CAST($3 AS TEXT))";
/// `$2` a status or NULL, `$3` limit, `$4` offset; newest first.
pub(crate) const EPISODE_PAGE: &str = concat!(
    "SELECT ",
    episode_columns!(),
    " FROM episodes WHERE project_id = $1 \
     AND (CAST($2 AS TEXT) IS NULL OR status = CAST($2 AS TEXT)) \
     ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4"
);
pub(crate) const COUNT_EPISODE_PAGE: &str = "SELECT COUNT(*) FROM episodes WHERE project_id = $1 \
     AND (CAST($2 AS TEXT) IS NULL OR status = CAST($2 AS TEXT))";

// --- operations: metrics and readiness ---------------------------------------------------------
/// Field tasks per state, across projects, off the `field_tasks_queue` index (`done` and
/// `skipped` are not counted: they only grow).
pub(crate) const TASK_QUEUE_DEPTHS: &str = "SELECT state, COUNT(*) FROM field_tasks \
     WHERE state IN ('pending', 'queued', 'running', 'waiting_human', 'blocked', 'failed') \
     GROUP BY state";
/// Episodes per status, across projects, off the `episodes_queue` index (`done` not counted).
pub(crate) const EPISODE_QUEUE_DEPTHS: &str = "SELECT status, COUNT(*) FROM episodes \
     WHERE status IN ('pending', 'running', 'failed') GROUP BY status";
/// The newest migration applied (sqlx's own table).
pub(crate) const SCHEMA_VERSION: &str = "SELECT MAX(version) FROM _sqlx_migrations WHERE success";

/// The documents linked to one entity (`$2`).
pub(crate) const LINKED_DOCUMENT_IDS: &str =
    "SELECT document_id FROM document_links WHERE project_id = $1 AND entity_id = $2";

/// Entities with no vector of embedder `$1` (pgvector's `entity_vectors`), for a backfill.
pub(crate) const ENTITIES_WITHOUT_VECTORS: &str = concat!(
    "SELECT ",
    entity_columns!(),
    " FROM entities e WHERE NOT EXISTS (SELECT 1 FROM entity_vectors v \
     WHERE v.entity_id = e.id AND v.embedder = $1) ORDER BY e.id LIMIT $2"
);
