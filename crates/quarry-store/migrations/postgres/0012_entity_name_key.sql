-- Entity resolution reads its candidates from the database (issue 22): every entity carries
-- the normalised-stage key of its title (`quarry_core::resolve::name_key`, computed by the
-- writer; `''` for a title without one, which nothing matches), so a graph write finds `ACME Corp.` for `Acme Corp`
-- by index, under its project lock, whichever process created it. Rows written before this
-- migration get their key from the store's backfill when a process opens the database.
ALTER TABLE entities ADD COLUMN name_key TEXT;
CREATE INDEX entities_by_name_key ON entities (project_id, entity_type, name_key);
