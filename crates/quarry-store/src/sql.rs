//! The SQL both backends run. Placeholders are `$N`, which PostgreSQL and sqlx's SQLite driver
//! both read positionally; every statement filters by `project_id` (except key lookup by
//! prefix, which happens before a project is known, and the start-up sweep of interrupted runs).

macro_rules! entity_columns {
    () => {
        "id, project_id, entity_type, title, parent_id, fields, metadata, created_at, updated_at"
    };
}
macro_rules! run_columns {
    () => {
        "id, project_id, entity_id, scope, triggered_by, fields_requested, status, error, \
         started_at, finished_at, duration_ms"
    };
}
macro_rules! result_columns {
    () => {
        "id, run_id, project_id, entity_id, field_name, value, sources, confidence, agent_id, \
         status, rejection_reason, reviewed_by, reviewed_at, created_entity_ids, duration_ms, \
         tokens_used, metadata, created_at"
    };
}
macro_rules! relation_columns {
    () => {
        "id, project_id, from_id, to_id, label, mention_count, notes, first_seen_at, last_seen_at"
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

// --- entity types ----------------------------------------------------------------------------
pub(crate) const UPSERT_ENTITY_TYPE: &str = "INSERT INTO entity_types (project_id, slug, definition, updated_at) \
     VALUES ($1, $2, $3, $4) ON CONFLICT (project_id, slug) \
     DO UPDATE SET definition = excluded.definition, updated_at = excluded.updated_at";
pub(crate) const ENTITY_TYPE_BY_SLUG: &str =
    "SELECT definition FROM entity_types WHERE project_id = $1 AND slug = $2";
pub(crate) const ENTITY_TYPES: &str =
    "SELECT definition FROM entity_types WHERE project_id = $1 ORDER BY slug";

// --- entities and relations ------------------------------------------------------------------
pub(crate) const INSERT_ENTITY: &str = concat!(
    "INSERT INTO entities (",
    entity_columns!(),
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
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
pub(crate) const ENTITY_BY_TITLE: &str = concat!(
    "SELECT ",
    entity_columns!(),
    " FROM entities WHERE project_id = $1 AND entity_type = $2 AND lower(title) = lower($3) \
     ORDER BY created_at, id LIMIT 1"
);
pub(crate) const SET_ENTITY_METADATA: &str =
    "UPDATE entities SET metadata = $3, updated_at = $4 WHERE project_id = $1 AND id = $2";
pub(crate) const SET_ENTITY_FIELDS: &str =
    "UPDATE entities SET fields = $3, updated_at = $4 WHERE project_id = $1 AND id = $2";
pub(crate) const COUNT_ENTITIES_AMONG: &str =
    "SELECT COUNT(*) FROM entities WHERE project_id = $1 AND id IN ($2, $3)";
pub(crate) const UPSERT_RELATION: &str = concat!(
    "INSERT INTO relations (",
    relation_columns!(),
    ") VALUES ($1, $2, $3, $4, $5, 1, NULL, $6, $6) \
     ON CONFLICT (project_id, from_id, to_id, label) DO UPDATE SET \
     mention_count = relations.mention_count + 1, last_seen_at = excluded.last_seen_at \
     RETURNING ",
    relation_columns!()
);
/// Written as a join from the (small, deduplicated) set of neighbour ids so that SQLite looks
/// entities up by id instead of walking every entity of the project.
pub(crate) const CONNECTED_ENTITIES: &str = "SELECT e.id AS id, e.project_id AS project_id, \
     e.entity_type AS entity_type, e.title AS title, e.parent_id AS parent_id, e.fields AS fields, \
     e.metadata AS metadata, e.created_at AS created_at, e.updated_at AS updated_at \
     FROM (SELECT to_id AS id FROM relations WHERE project_id = $1 AND from_id = $2 \
       UNION SELECT from_id FROM relations WHERE project_id = $1 AND to_id = $2) c \
     JOIN entities e ON e.id = c.id \
     WHERE e.project_id = $1 AND e.id <> $2 \
     ORDER BY e.created_at, e.id LIMIT $3";

// --- documents -------------------------------------------------------------------------------
pub(crate) const INSERT_DOCUMENT: &str =
    "INSERT INTO documents (id, project_id, title, text, created_at) VALUES ($1, $2, $3, $4, $5)";
pub(crate) const COUNT_DOCUMENT: &str =
    "SELECT COUNT(*) FROM documents WHERE project_id = $1 AND id = $2";
pub(crate) const INSERT_DOCUMENT_LINK: &str = "INSERT INTO document_links (project_id, document_id, entity_id, created_at) \
     VALUES ($1, $2, $3, $4) ON CONFLICT (project_id, document_id, entity_id) DO NOTHING";
pub(crate) const DOCUMENTS: &str = "SELECT id, project_id, title, text, created_at FROM documents \
     WHERE project_id = $1 ORDER BY created_at, id";
pub(crate) const LINKED_DOCUMENTS: &str = "SELECT id, project_id, title, text, created_at FROM documents \
     WHERE project_id = $1 AND id IN (\
       SELECT document_id FROM document_links WHERE project_id = $1 AND entity_id = $2) \
     ORDER BY created_at, id";

// --- runs ------------------------------------------------------------------------------------
pub(crate) const INSERT_RUN: &str = concat!(
    "INSERT INTO extraction_runs (",
    run_columns!(),
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, NULL, $8, NULL, NULL)"
);
pub(crate) const RUN_BY_ID: &str = concat!(
    "SELECT ",
    run_columns!(),
    " FROM extraction_runs WHERE project_id = $1 AND id = $2"
);
pub(crate) const FINISH_RUN: &str = "UPDATE extraction_runs SET status = $3, error = $4, finished_at = $5, duration_ms = $6 \
     WHERE project_id = $1 AND id = $2";
pub(crate) const RUNS_OF_ENTITY: &str = concat!(
    "SELECT ",
    run_columns!(),
    " FROM extraction_runs WHERE project_id = $1 AND entity_id = $2 \
     ORDER BY started_at DESC, id DESC LIMIT $3"
);
pub(crate) const FAIL_RUNNING_RUNS: &str = "UPDATE extraction_runs SET status = 'failed', error = $1, finished_at = $2 \
     WHERE status = 'running'";

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
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, NULL, NULL, NULL, $11, $12, $13, $14, $15)"
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
