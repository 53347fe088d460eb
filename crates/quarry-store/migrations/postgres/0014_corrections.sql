-- Project corrections (issue 23): short rules reviewers write ("revenue is always in USD"),
-- scoped to the project, an entity type, or one field of a type, injected into every matching
-- extraction prompt.
CREATE TABLE corrections (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects(id),
    entity_type TEXT,
    field_name TEXT,
    text TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX corrections_by_project ON corrections (project_id, created_at, id);
