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
pub mod library;
#[cfg(feature = "minilm")]
pub mod minilm;
pub mod vector;

use std::collections::HashMap;

pub use bm25::{Bm25Index, ChunkRecord};
pub use chunk::{Chunk, ChunkConfig, chunk_text};
pub use error::IndexError;
pub use fusion::{RRF_K, reciprocal_rank_fusion};
pub use hit::{Filter, Hit};
pub use library::{
    HASHING_EMBEDDER_NAME, Library, LibraryError, RebuildReport, ReembeddedDocument, entity_text,
};
#[cfg(feature = "minilm")]
pub use minilm::MiniLmEmbedder;
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

    /// The chunk sizes `add_document` cuts with.
    pub fn chunking(&self) -> ChunkConfig {
        self.chunking
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
        self.add_chunks(project, document_id, text, &chunks, &embeddings, entity_ids)?;
        Ok(chunks)
    }

    /// Indexes `document_id` from chunks cut and embedded beforehand (e.g. loaded from storage,
    /// or embedded outside a lock): `embeddings[i]` is the vector of `chunks[i]`, whose byte range
    /// must lie on character boundaries of `text`. A document already indexed under that id is
    /// replaced. Nothing is changed when an argument is invalid.
    pub fn add_chunks(
        &mut self,
        project: &str,
        document_id: &str,
        text: &str,
        chunks: &[Chunk],
        embeddings: &[Vec<f32>],
        entity_ids: &[String],
    ) -> Result<(), IndexError> {
        if embeddings.len() != chunks.len() {
            return Err(IndexError::EmbeddingCount {
                expected: chunks.len(),
                got: embeddings.len(),
            });
        }
        let dimensions = self.vectors.dimensions();
        if let Some(bad) = embeddings.iter().find(|e| e.len() != dimensions) {
            return Err(IndexError::Dimensions {
                expected: dimensions,
                got: bad.len(),
            });
        }
        let mut texts = Vec::with_capacity(chunks.len());
        for (ordinal, chunk) in chunks.iter().enumerate() {
            let Some(chunk_text) = text.get(chunk.bytes.clone()) else {
                return Err(IndexError::CorruptChunk {
                    chunk_id: ordinal as u64,
                    field: "bytes",
                });
            };
            texts.push(chunk_text);
        }
        if self.documents.contains_key(document_id) {
            self.remove_document(document_id);
        }
        for ((chunk, chunk_text), embedding) in chunks.iter().zip(&texts).zip(embeddings) {
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
        Ok(())
    }

    /// Whether `document_id` is indexed (committed or not).
    pub fn contains_document(&self, document_id: &str) -> bool {
        self.documents.contains_key(document_id)
    }

    /// The entities `document_id` is linked to; `None` for an unknown document.
    pub fn document_entities(&self, document_id: &str) -> Option<&[String]> {
        self.documents
            .get(document_id)
            .map(|entry| entry.entity_ids.as_slice())
    }

    /// Whether additions, removals or links are waiting for `commit`.
    pub fn has_uncommitted(&self) -> bool {
        self.uncommitted
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
        let query_vector = self.embed_query(query)?;
        self.search_embedded(query, &query_vector, filter, limit)
    }

    /// `search` with the query already embedded (by the same embedder), e.g. outside a lock.
    /// Vector candidates with no positive similarity are left out: they say nothing about the
    /// query (an empty or symbol-only query embeds to the zero vector).
    pub fn search_embedded(
        &self,
        query: &str,
        query_vector: &[f32],
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
            let meaning = self.vectors.search(query_vector, filter, candidates);
            (words.join().expect("BM25 search thread panicked"), meaning)
        });
        let mut meaning = meaning?;
        meaning.retain(|hit| hit.score > 0.0);
        Ok(reciprocal_rank_fusion(&[words?, meaning], RRF_K, limit))
    }

    /// The query's vector, from this index's embedder.
    pub fn embed_query(&self, query: &str) -> Result<Vec<f32>, IndexError> {
        let embedded = self.embedder.embed(&[query])?;
        let got = embedded.len();
        match <[Vec<f32>; 1]>::try_from(embedded) {
            Ok([vector]) => Ok(vector),
            Err(_) => Err(IndexError::EmbeddingCount { expected: 1, got }),
        }
    }

    /// Vector-only search: embeds `query` and scans the vector index.
    pub fn search_vectors(
        &self,
        query: &str,
        filter: &Filter,
        limit: usize,
    ) -> Result<Vec<Hit>, IndexError> {
        let query_vector = self.embed_query(query)?;
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
