-- Web app sessions: only the SHA-256 of the cookie's token is stored. A session acts with the
-- API key its prefix names (checked on every request, so a revoked key ends its sessions).
CREATE TABLE web_sessions (
    token_hash TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects(id),
    key_prefix TEXT NOT NULL,
    csrf_token TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE INDEX web_sessions_expires ON web_sessions (expires_at);

-- Extraction-chat conversations. `version` increases with every write and a write names the
-- version it read, so two turns of one conversation never both land. `schema` and
-- `last_result` are JSON text: key order is the schema's field order, which JSONB would not keep.
CREATE TABLE chat_conversations (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects(id),
    title TEXT NOT NULL,
    schema TEXT NOT NULL,
    document TEXT NOT NULL,
    clarifications TEXT NOT NULL,
    messages TEXT NOT NULL,
    last_result TEXT,
    status TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX chat_conversations_recent ON chat_conversations (project_id, updated_at);
