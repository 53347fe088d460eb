//! Quarry's retrieval layer: documents are cut into chunks (`chunk`), indexed for words (`bm25`,
//! tantivy) and for meaning (`vector`, any `Embedder`), and searched through both at once with
//! reciprocal rank fusion (`fusion`). Every hit carries its document id and code-point offsets,
//! which is what a source ref needs.
//!
//! **Architecture Invariant:** user query text is never parsed as a query language; no query can
//! fail. This crate reads no environment variables and speaks no HTTP.

pub mod bm25;
pub mod chunk;
pub mod error;
pub mod fusion;
pub mod hit;
pub mod vector;

use std::collections::HashMap;

pub use bm25::{Bm25Index, ChunkRecord};
pub use chunk::{Chunk, ChunkConfig, chunk_text};
pub use error::IndexError;
pub use fusion::{RRF_K, reciprocal_rank_fusion};
pub use hit::{Filter, Hit};
pub use vector::{Embedder, HashingEmbedder, VectorIndex, VectorRecord};

struct DocumentEntry {
    entity_ids: Vec<String>,
}

/// BM25 and vectors over the same chunks, searched together. Chunk ids are assigned here, in
/// insertion order. Additions, replacements and links reach the BM25 side at `commit`; the vector
/// side sees them at once.
pub struct HybridIndex {
    bm25: Bm25Index,
    vectors: VectorIndex,
    embedder: Box<dyn Embedder>,
    chunking: ChunkConfig,
    documents: HashMap<String, DocumentEntry>,
    next_chunk_id: u64,
    uncommitted: bool,
}

impl HybridIndex {
    /// An index held in memory, with the default chunk sizes.
    pub fn in_memory(embedder: Box<dyn Embedder>) -> Result<Self, IndexError> {
        Ok(HybridIndex {
            bm25: Bm25Index::in_ram()?,
            vectors: VectorIndex::new(embedder.dimensions()),
            embedder,
            chunking: ChunkConfig::default(),
            documents: HashMap::new(),
            next_chunk_id: 1,
            uncommitted: false,
        })
    }

    pub fn with_chunking(mut self, chunking: ChunkConfig) -> Self {
        self.chunking = chunking;
        self
    }

    /// Chunks, embeds and indexes `text` as `document_id` of `project`, linked to `entity_ids`.
    /// A document already indexed under that id is replaced. Returns its chunks.
    pub fn add_document(
        &mut self,
        project: &str,
        document_id: &str,
        text: &str,
        entity_ids: &[String],
    ) -> Result<Vec<Chunk>, IndexError> {
        let chunks = chunk_text(text, &self.chunking);
        let texts: Vec<&str> = chunks.iter().map(|chunk| chunk.text(text)).collect();
        let embeddings = self.embedder.embed(&texts)?;
        if embeddings.len() != texts.len() {
            return Err(IndexError::EmbeddingCount {
                expected: texts.len(),
                got: embeddings.len(),
            });
        }
        if self.documents.contains_key(document_id) {
            self.remove_document(document_id);
        }
        for ((chunk, chunk_text), embedding) in chunks.iter().zip(&texts).zip(&embeddings) {
            let chunk_id = self.next_chunk_id;
            self.next_chunk_id += 1;
            self.vectors.add(
                &VectorRecord {
                    chunk_id,
                    document_id,
                    project,
                    entity_ids,
                    bytes: chunk.bytes.clone(),
                    code_points: chunk.code_points.clone(),
                },
                embedding,
            )?;
            self.bm25.add(&ChunkRecord {
                chunk_id,
                document_id,
                project,
                entity_ids,
                text: chunk_text,
                bytes: chunk.bytes.clone(),
                code_points: chunk.code_points.clone(),
            })?;
        }
        self.documents.insert(
            document_id.to_owned(),
            DocumentEntry {
                entity_ids: entity_ids.to_vec(),
            },
        );
        self.uncommitted = true;
        Ok(chunks)
    }

    /// Drops every chunk of `document_id`; returns whether the document was indexed.
    pub fn remove_document(&mut self, document_id: &str) -> bool {
        if self.documents.remove(document_id).is_none() {
            return false;
        }
        self.vectors.delete_document(document_id);
        self.bm25.delete_document(document_id);
        self.uncommitted = true;
        true
    }

    /// Links `document_id` to `entity_id`, so entity filters find its chunks. Tantivy documents
    /// are immutable: the document's chunks are re-indexed from the stored text (pending changes
    /// are committed first). Returns false for an unknown document; linking twice is a no-op.
    pub fn link(&mut self, document_id: &str, entity_id: &str) -> Result<bool, IndexError> {
        let Some(entry) = self.documents.get_mut(document_id) else {
            return Ok(false);
        };
        if entry.entity_ids.iter().any(|id| id == entity_id) {
            return Ok(true);
        }
        entry.entity_ids.push(entity_id.to_owned());
        let entity_ids = entry.entity_ids.clone();
        if self.uncommitted {
            self.commit()?;
        }
        self.vectors.set_entity_ids(document_id, &entity_ids);
        self.bm25.set_entity_ids(document_id, &entity_ids)?;
        self.uncommitted = true;
        Ok(true)
    }

    /// Makes everything added, removed or linked so far searchable on the BM25 side.
    pub fn commit(&mut self) -> Result<(), IndexError> {
        self.bm25.commit()?;
        self.uncommitted = false;
        Ok(())
    }

    /// The best `limit` chunks for `query` within `filter`: BM25 and vector candidates (three
    /// times `limit`, at least 30, from each, searched concurrently) fused by reciprocal rank.
    pub fn search(
        &self,
        query: &str,
        filter: &Filter,
        limit: usize,
    ) -> Result<Vec<Hit>, IndexError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let candidates = limit.saturating_mul(3).max(30);
        // The two sides are independent: BM25 runs beside the (itself parallel) vector scan.
        let (words, meaning) = std::thread::scope(|scope| {
            let words = scope.spawn(|| self.bm25.search(query, filter, candidates));
            let meaning = self.search_vectors(query, filter, candidates);
            (words.join().expect("BM25 search thread panicked"), meaning)
        });
        Ok(reciprocal_rank_fusion(&[words?, meaning?], RRF_K, limit))
    }

    /// Vector-only search: embeds `query` and scans the vector index.
    pub fn search_vectors(
        &self,
        query: &str,
        filter: &Filter,
        limit: usize,
    ) -> Result<Vec<Hit>, IndexError> {
        let mut embedded = self.embedder.embed(&[query])?;
        let Some(query_vector) = embedded.pop() else {
            return Err(IndexError::EmbeddingCount {
                expected: 1,
                got: 0,
            });
        };
        self.vectors.search(&query_vector, filter, limit)
    }

    /// BM25-only search.
    pub fn search_words(
        &self,
        query: &str,
        filter: &Filter,
        limit: usize,
    ) -> Result<Vec<Hit>, IndexError> {
        self.bm25.search(query, filter, limit)
    }

    /// Number of chunks indexed (vector side, which includes uncommitted ones).
    pub fn len(&self) -> usize {
        self.vectors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.vectors.is_empty()
    }
}
