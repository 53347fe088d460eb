//! The one error type of the retrieval layer.

/// What can go wrong while indexing or searching. User query text is never a cause: queries are
/// built from tokens, so no query syntax can fail.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("full-text index failed: {0}")]
    Tantivy(#[from] tantivy::TantivyError),
    #[error("cannot open the full-text index directory: {0}")]
    Directory(#[from] tantivy::directory::error::OpenDirectoryError),
    #[error("cannot create index directory {path}: {source}")]
    Io {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("embedder returned {got} vectors for {expected} texts")]
    EmbeddingCount { expected: usize, got: usize },
    #[error("embedding has {got} dimensions, the index expects {expected}")]
    Dimensions { expected: usize, got: usize },
    #[error("embedding provider failed: {0}")]
    Embedder(String),
    /// An embedding model's files are missing or unreadable (e.g. all-MiniLM-L6-v2, feature
    /// `minilm`).
    #[error("cannot load the embedding model from {path}: {reason}")]
    Model {
        path: std::path::PathBuf,
        reason: String,
    },
    #[error("stored chunk {chunk_id} lacks field '{field}'; rebuild the index")]
    CorruptChunk { chunk_id: u64, field: &'static str },
}
