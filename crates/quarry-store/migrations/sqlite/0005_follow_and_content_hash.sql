-- Many processes on one database: each long-lived process follows what the others write
-- (documents, their links, entities) by time, re-reading a few seconds of overlap because
-- timestamps come from each writer's clock. These indexes make "changed since X" a range walk.
CREATE INDEX documents_by_created ON documents (created_at, id);
CREATE INDEX document_links_by_created ON document_links (created_at);
CREATE INDEX entities_by_updated ON entities (updated_at, id);

-- Adding a document is idempotent: a file document carries the SHA-256 of its title and text
-- (hex), unique per project, so a retried add returns the stored document. Episode documents
-- and documents stored before this migration have none (NULLs never collide).
ALTER TABLE documents ADD COLUMN content_hash TEXT;
CREATE UNIQUE INDEX documents_by_content ON documents (project_id, content_hash);
