//! What a search returns, and what it may be limited to.

use std::ops::Range;

/// One retrieved chunk: enough to cite it as a source ref (document id plus code-point offsets
/// into the original document text, end exclusive).
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub chunk_id: u64,
    pub document_id: String,
    /// BM25 score, cosine similarity or fused RRF score, depending on who produced the hit.
    pub score: f32,
    pub bytes: Range<usize>,
    pub code_points: Range<usize>,
}

impl From<Hit> for quarry_core::retrieval::PassageHit {
    /// The hit as the engine cites it: document and code-point offsets.
    fn from(hit: Hit) -> Self {
        quarry_core::retrieval::PassageHit {
            document_id: hit.document_id,
            start: hit.code_points.start,
            end: hit.code_points.end,
            score: hit.score,
        }
    }
}

/// Restricts a search to one project and, optionally, to chunks of documents linked to any of
/// `entity_ids` and/or to any of `document_ids`. `Some(vec![])` matches nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    pub project: String,
    pub entity_ids: Option<Vec<String>>,
    pub document_ids: Option<Vec<String>>,
}

impl Filter {
    pub fn project(project: impl Into<String>) -> Self {
        Filter {
            project: project.into(),
            entity_ids: None,
            document_ids: None,
        }
    }

    pub fn with_entities<I: IntoIterator<Item = S>, S: Into<String>>(mut self, ids: I) -> Self {
        self.entity_ids = Some(ids.into_iter().map(Into::into).collect());
        self
    }

    pub fn with_documents<I: IntoIterator<Item = S>, S: Into<String>>(mut self, ids: I) -> Self {
        self.document_ids = Some(ids.into_iter().map(Into::into).collect());
        self
    }
}
