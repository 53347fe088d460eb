-- Workers on other processes wake when work is queued (issue 22): whenever a job becomes
-- claimable — a field task `queued`, an episode `pending`, inserted or set back — the
-- transaction notifies `quarry_work` with the job kind. PostgreSQL delivers it at commit and
-- folds repeats of one payload within a transaction into one.
CREATE FUNCTION quarry_notify_work() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('quarry_work', TG_ARGV[0]);
    RETURN NULL;
END
$$;

CREATE TRIGGER field_tasks_notify_work
    AFTER INSERT OR UPDATE OF state ON field_tasks
    FOR EACH ROW WHEN (NEW.state = 'queued')
    EXECUTE FUNCTION quarry_notify_work('field_task');

CREATE TRIGGER episodes_notify_work
    AFTER INSERT OR UPDATE OF status ON episodes
    FOR EACH ROW WHEN (NEW.status = 'pending')
    EXECUTE FUNCTION quarry_notify_work('episode');
