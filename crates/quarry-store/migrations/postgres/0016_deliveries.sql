-- Field actions (issue 23): a webhook per lifecycle event, written in the transaction of the
-- event (a result extracted, approved or rejected) and delivered by the leased queue's workers
-- (job kind `delivery`): signed, retried with backoff, every attempt's outcome kept here.
CREATE TABLE deliveries (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects(id),
    event TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    field_name TEXT NOT NULL,
    result_id TEXT NOT NULL,
    url TEXT NOT NULL,
    body JSONB NOT NULL,
    state TEXT NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    max_attempts BIGINT NOT NULL,
    last_error TEXT,
    response_status BIGINT,
    lease_owner TEXT,
    lease_expires_at TEXT,
    available_at TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX deliveries_queue ON deliveries (state, available_at, id);
CREATE INDEX deliveries_leases ON deliveries (state, lease_expires_at);
CREATE INDEX deliveries_by_project ON deliveries (project_id, created_at, id);

CREATE TRIGGER deliveries_notify_work
    AFTER INSERT OR UPDATE OF state ON deliveries
    FOR EACH ROW WHEN (NEW.state = 'queued')
    EXECUTE FUNCTION quarry_notify_work('delivery');
