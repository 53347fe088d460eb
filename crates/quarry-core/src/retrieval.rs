//! The retrieval contract the engine's tools use: search documents by words and meaning, and
//! search graph entities by meaning. Implemented in `quarry-index` (tantivy BM25 + vectors,
//! fused); the engine never knows which. Synchronous: searches are CPU-bound and short; async
//! callers run them on a blocking thread when the embedder is slow.

use crate::model::{Document, Entity, StoredChunk};

/// One retrieved passage: the document and code-point offsets into its text, end exclusive.
#[derive(Debug, Clone, PartialEq)]
pub struct PassageHit {
    pub document_id: String,
    pub start: usize,
    pub end: usize,
    pub score: f32,
}

/// One entity found by meaning.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityHit {
    pub entity_id: String,
    pub score: f32,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("retrieval failed: {0}")]
pub struct RetrievalError(pub String);

pub trait Retriever: Send + Sync {
    /// The best `limit` passages of the project's documents for `query`, limited to documents
    /// linked to any of `entity_ids` when given.
    fn search_documents(
        &self,
        project: &str,
        query: &str,
        entity_ids: Option<&[String]>,
        limit: usize,
    ) -> Result<Vec<PassageHit>, RetrievalError>;
    /// Graph entities nearest in meaning to `query` (embedded as `name (type): notes`).
    fn search_entities(
        &self,
        project: &str,
        query: &str,
        entity_type: Option<&str>,
        limit: usize,
    ) -> Result<Vec<EntityHit>, RetrievalError>;
    /// Indexes (or re-indexes) a stored document, linked to `entity_ids`; returns its chunks
    /// with their embeddings for the store to keep ([`crate::store::Store::put_chunks`]).
    fn index_document(
        &self,
        document: &Document,
        entity_ids: &[String],
    ) -> Result<Vec<StoredChunk>, RetrievalError>;
    /// Links an indexed document to an entity (entity filters find it afterwards).
    fn link(&self, document_id: &str, entity_id: &str) -> Result<(), RetrievalError>;
    /// Indexes (or refreshes) an entity for `search_entities`.
    fn index_entity(&self, entity: &Entity) -> Result<(), RetrievalError>;
}
