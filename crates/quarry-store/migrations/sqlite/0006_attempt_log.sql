-- Every attempt at a field task, as it ended: done, failed, waiting for a person, a transient
-- failure released for a retry, or abandoned (its worker stopped and the lease expired).
ALTER TABLE field_tasks ADD COLUMN attempt_log TEXT NOT NULL DEFAULT '[]';
