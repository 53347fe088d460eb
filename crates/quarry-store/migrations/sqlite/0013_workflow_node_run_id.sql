-- The reference's `workflow_node_run_id` (issue 23): the field task whose attempt recorded a
-- result; NULL for values recorded outside a workflow.
ALTER TABLE extraction_results ADD COLUMN workflow_node_run_id TEXT;
