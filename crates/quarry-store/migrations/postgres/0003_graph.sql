-- The conversation graph and persisted retrieval chunks. Graph nodes are ordinary entities with
-- a mention count, free-text notes and when the graph last saw them (0 / NULL for entities made
-- otherwise); an episode is a document of kind 'episode' plus its extraction queue row.
ALTER TABLE entities ADD COLUMN mention_count BIGINT NOT NULL DEFAULT 0;
ALTER TABLE entities ADD COLUMN notes TEXT;
ALTER TABLE entities ADD COLUMN last_seen_at TEXT;
-- apply_graph looks an entity up by its exact (type, title).
CREATE INDEX entities_by_exact_title ON entities (project_id, entity_type, title);

ALTER TABLE documents ADD COLUMN kind TEXT NOT NULL DEFAULT 'file';

-- Also the durable queue of background extractions: status pending → running → done | failed.
CREATE TABLE episodes (
    id TEXT PRIMARY KEY REFERENCES documents(id),
    project_id TEXT NOT NULL REFERENCES projects(id),
    user_message TEXT NOT NULL,
    assistant_response TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    error TEXT,
    ingest JSONB,
    entities_stored BIGINT NOT NULL DEFAULT 0,
    entities_skipped BIGINT NOT NULL DEFAULT 0,
    relationships_stored BIGINT NOT NULL DEFAULT 0,
    relationships_skipped BIGINT NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
-- The queue take walks pending episodes oldest first straight off this index (no sort).
CREATE INDEX episodes_queue ON episodes (status, created_at, id);
CREATE INDEX episodes_by_project ON episodes (project_id, created_at);

-- A document's chunks with their embeddings (little-endian f32s), so indexes are rebuilt at
-- start without re-embedding. Offsets: code points (start_cp, end_cp) and bytes, end exclusive.
CREATE TABLE chunks (
    project_id TEXT NOT NULL REFERENCES projects(id),
    document_id TEXT NOT NULL REFERENCES documents(id),
    ordinal BIGINT NOT NULL,
    start_cp BIGINT NOT NULL,
    end_cp BIGINT NOT NULL,
    byte_start BIGINT NOT NULL,
    byte_end BIGINT NOT NULL,
    embedder TEXT NOT NULL,
    embedding BYTEA NOT NULL,
    PRIMARY KEY (document_id, ordinal)
);
