-- The web app's review views (issue 10) page through results, documents and episodes of one
-- project; these indexes keep each page a short index walk at 10,000 entities and 100,000
-- results. The entity list walks `entities_by_exact_title` (project, type, title), the latest
-- results and tasks of a page's entities `extraction_results_by_field` and
-- `field_tasks_by_entity`.

-- The review queue: pending results of a project, oldest first, straight off the index (only
-- pending rows are in it, so it stays as small as the queue).
CREATE INDEX extraction_results_pending ON extraction_results (project_id, created_at, id)
    WHERE status = 'pending';
-- The document list, newest first.
CREATE INDEX documents_by_project ON documents (project_id, created_at, id);
-- The episode list, newest first, optionally of one status.
CREATE INDEX episodes_by_project_status ON episodes (project_id, status, created_at, id);
