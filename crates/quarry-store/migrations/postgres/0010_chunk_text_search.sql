-- Full-text search in the database (text_search.rs): each chunk's words, from the document's
-- text at the chunk's code-point offsets, under a GIN index. put_chunks keeps the column in step.
ALTER TABLE chunks ADD COLUMN tsv tsvector;
UPDATE chunks c SET tsv = to_tsvector('english',
    substr(d.text, (c.start_cp + 1)::int, (c.end_cp - c.start_cp)::int))
    FROM documents d WHERE d.id = c.document_id;
CREATE INDEX chunks_text ON chunks USING GIN (tsv);
