-- Running tallies behind feedback_summary, so it reads a handful of rows instead of scanning
-- every result of the field. Maintained in the transactions that insert results and change
-- their status (record_results, review_result); they count exactly what the summary counted
-- before: non-superseded results by (entity type, field, status, confidence), and rejected
-- results with a reason by (entity type, field, reason). An entity's type never changes.
CREATE TABLE feedback_counts (
    project_id TEXT NOT NULL REFERENCES projects(id),
    entity_type TEXT NOT NULL,
    field_name TEXT NOT NULL,
    status TEXT NOT NULL,
    confidence TEXT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (project_id, entity_type, field_name, status, confidence)
);

CREATE TABLE feedback_reasons (
    project_id TEXT NOT NULL REFERENCES projects(id),
    entity_type TEXT NOT NULL,
    field_name TEXT NOT NULL,
    reason TEXT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (project_id, entity_type, field_name, reason)
);

INSERT INTO feedback_counts (project_id, entity_type, field_name, status, confidence, n)
SELECT r.project_id, e.entity_type, r.field_name, r.status, r.confidence, COUNT(*)
FROM extraction_results r JOIN entities e ON e.project_id = r.project_id AND e.id = r.entity_id
WHERE r.status <> 'superseded'
GROUP BY r.project_id, e.entity_type, r.field_name, r.status, r.confidence;

INSERT INTO feedback_reasons (project_id, entity_type, field_name, reason, n)
SELECT r.project_id, e.entity_type, r.field_name, r.rejection_reason, COUNT(*)
FROM extraction_results r JOIN entities e ON e.project_id = r.project_id AND e.id = r.entity_id
WHERE r.status = 'rejected' AND r.rejection_reason IS NOT NULL
GROUP BY r.project_id, e.entity_type, r.field_name, r.rejection_reason;

-- Covering indexes for the pipeline's per-entity look-ups (connected entities, linked
-- documents): without them SQLite walks every relation / link of the project. They extend the
-- indexes they replace.
CREATE INDEX relations_to_from ON relations (project_id, to_id, from_id);
DROP INDEX relations_to;
CREATE INDEX document_links_by_entity_document ON document_links (project_id, entity_id, document_id);
DROP INDEX document_links_by_entity;
