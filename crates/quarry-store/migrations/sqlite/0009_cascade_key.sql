-- Entities a cascade creates carry their lower-cased title as `cascade_key`, unique per project
-- and type, so two processes cascading the same item create one entity. Other entities (and
-- cascade entities created before this migration) have none: NULLs never conflict.
ALTER TABLE entities ADD COLUMN cascade_key TEXT;
CREATE UNIQUE INDEX entities_by_cascade_key ON entities (project_id, entity_type, cascade_key);
