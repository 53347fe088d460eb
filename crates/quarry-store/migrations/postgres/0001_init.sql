-- Quarry's initial schema (PostgreSQL). Ids are UUID v4 text; times are RFC 3339 UTC text with
-- microsecond precision, so text order is time order. JSON columns are JSONB.
CREATE TABLE projects (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
);

CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects(id),
    name TEXT NOT NULL,
    prefix TEXT NOT NULL UNIQUE,
    secret_hash TEXT NOT NULL,
    scopes JSONB NOT NULL,
    created_at TEXT NOT NULL,
    revoked BOOLEAN NOT NULL DEFAULT FALSE
);

CREATE TABLE entity_types (
    project_id TEXT NOT NULL REFERENCES projects(id),
    slug TEXT NOT NULL,
    definition JSONB NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (project_id, slug)
);

CREATE TABLE entities (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects(id),
    entity_type TEXT NOT NULL,
    title TEXT NOT NULL,
    parent_id TEXT REFERENCES entities(id),
    fields JSONB NOT NULL,
    metadata JSONB NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX entities_by_type ON entities (project_id, entity_type, created_at);
CREATE INDEX entities_by_title ON entities (project_id, entity_type, lower(title));

CREATE TABLE relations (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects(id),
    from_id TEXT NOT NULL REFERENCES entities(id),
    to_id TEXT NOT NULL REFERENCES entities(id),
    label TEXT NOT NULL,
    mention_count BIGINT NOT NULL DEFAULT 1,
    notes TEXT,
    first_seen_at TEXT NOT NULL,
    last_seen_at TEXT NOT NULL,
    UNIQUE (project_id, from_id, to_id, label)
);
CREATE INDEX relations_to ON relations (project_id, to_id);

CREATE TABLE documents (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects(id),
    title TEXT NOT NULL,
    text TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE document_links (
    project_id TEXT NOT NULL REFERENCES projects(id),
    document_id TEXT NOT NULL REFERENCES documents(id),
    entity_id TEXT NOT NULL REFERENCES entities(id),
    created_at TEXT NOT NULL,
    PRIMARY KEY (project_id, document_id, entity_id)
);
CREATE INDEX document_links_by_entity ON document_links (project_id, entity_id);

CREATE TABLE extraction_runs (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects(id),
    entity_id TEXT NOT NULL REFERENCES entities(id),
    scope TEXT NOT NULL,
    triggered_by TEXT NOT NULL,
    fields_requested JSONB,
    status TEXT NOT NULL,
    error TEXT,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    duration_ms BIGINT
);
CREATE INDEX extraction_runs_by_entity ON extraction_runs (project_id, entity_id, started_at);
CREATE INDEX extraction_runs_by_status ON extraction_runs (status);

CREATE TABLE extraction_results (
    id TEXT PRIMARY KEY,
    run_id TEXT REFERENCES extraction_runs(id),
    project_id TEXT NOT NULL REFERENCES projects(id),
    entity_id TEXT NOT NULL REFERENCES entities(id),
    field_name TEXT NOT NULL,
    value JSONB NOT NULL,
    sources JSONB NOT NULL,
    confidence TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    status TEXT NOT NULL,
    rejection_reason TEXT,
    reviewed_by TEXT,
    reviewed_at TEXT,
    created_entity_ids JSONB NOT NULL,
    duration_ms BIGINT NOT NULL,
    tokens_used BIGINT NOT NULL,
    metadata JSONB NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX extraction_results_by_field ON extraction_results (project_id, entity_id, field_name, created_at);

CREATE TABLE review_events (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects(id),
    result_id TEXT NOT NULL REFERENCES extraction_results(id),
    decision TEXT NOT NULL,
    reason TEXT,
    reviewer TEXT NOT NULL,
    at TEXT NOT NULL
);
CREATE INDEX review_events_by_result ON review_events (project_id, result_id);
