-- Durable work (issue 9): a workflow run's fields become tasks on a leased queue, and episodes
-- carry a lease too. A claim records its owner (process id, host, start time) and an expiry the
-- owner's heartbeat renews; only expired leases are taken over. The owner plus the attempt
-- number fence a completion, so a worker whose lease was taken over cannot write again.

ALTER TABLE extraction_runs ADD COLUMN root_run_id TEXT;

CREATE TABLE field_tasks (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects(id),
    run_id TEXT NOT NULL REFERENCES extraction_runs(id),
    root_run_id TEXT NOT NULL,
    entity_id TEXT NOT NULL REFERENCES entities(id),
    field_name TEXT NOT NULL,
    state TEXT NOT NULL,
    depends_on JSONB NOT NULL,
    gated BOOLEAN NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    max_attempts BIGINT NOT NULL,
    last_error TEXT,
    feedback TEXT,
    depth BIGINT NOT NULL,
    triggered_by TEXT NOT NULL,
    lease_owner TEXT,
    lease_expires_at TEXT,
    available_at TEXT NOT NULL,
    result_id TEXT,
    tokens_used BIGINT NOT NULL DEFAULT 0,
    duration_ms BIGINT NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (run_id, field_name)
);
-- The queue take: queued tasks by availability, and running ones by lease expiry.
CREATE INDEX field_tasks_queue ON field_tasks (state, available_at, id);
CREATE INDEX field_tasks_leases ON field_tasks (state, lease_expires_at);
CREATE INDEX field_tasks_by_entity ON field_tasks (project_id, entity_id, field_name, created_at);
CREATE INDEX field_tasks_by_root ON field_tasks (root_run_id);

ALTER TABLE episodes ADD COLUMN lease_owner TEXT;
ALTER TABLE episodes ADD COLUMN lease_expires_at TEXT;
ALTER TABLE episodes ADD COLUMN available_at TEXT;
CREATE INDEX episodes_leases ON episodes (status, lease_expires_at);
