-- Instructions per trigger (issue 23): a run records the trigger's additional instructions as
-- given (for every field, and per field), and each of its field tasks the share its field's
-- prompt gets.
ALTER TABLE extraction_runs ADD COLUMN instructions JSONB;
ALTER TABLE field_tasks ADD COLUMN instructions TEXT;
