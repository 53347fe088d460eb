-- Web pages as documents (issue 23, `sources: [web]`): a page a field agent read is stored as a
-- document of kind 'web' with its address (after redirects) and the time it was read.
ALTER TABLE documents ADD COLUMN url TEXT;
ALTER TABLE documents ADD COLUMN fetched_at TEXT;
