//! Adding and linking documents: the one path every host uses (`quarry doc add`,
//! `POST /v1/documents`), so a stored document is also searchable and its chunks (with their
//! embeddings) are persisted for the next start's index rebuild.

use std::sync::Arc;

use quarry_core::model::Document;
use quarry_core::retrieval::{RetrievalError, Retriever};
use quarry_core::store::{Store, StoreError};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocumentsError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Retrieval(#[from] RetrievalError),
}

/// The store and the retriever, written together.
#[derive(Clone)]
pub struct Documents {
    pub store: Arc<dyn Store>,
    pub retriever: Arc<dyn Retriever>,
}

impl Documents {
    pub fn new(store: Arc<dyn Store>, retriever: Arc<dyn Retriever>) -> Documents {
        Documents { store, retriever }
    }

    /// Stores the document, links it to `entity_ids`, indexes it (searchable when this returns)
    /// and stores its chunks. If indexing or storing the chunks fails, the document is stored
    /// all the same and the next index rebuild embeds it.
    ///
    /// Indexing embeds on the calling task: cheap with the hashing embedder; a slow embedder's
    /// host may run this where blocking is fine.
    pub async fn add(
        &self,
        project: &str,
        title: &str,
        text: &str,
        entity_ids: &[String],
    ) -> Result<Document, DocumentsError> {
        let document = self.store.add_document(project, title, text).await?;
        for entity_id in entity_ids {
            self.store
                .link_document(project, &document.id, entity_id)
                .await?;
        }
        let chunks = self.retriever.index_document(&document, entity_ids)?;
        self.store
            .put_chunks(project, &document.id, &chunks)
            .await?;
        Ok(document)
    }

    /// Links a stored document to an entity in the store and the index.
    pub async fn link(
        &self,
        project: &str,
        document_id: &str,
        entity_id: &str,
    ) -> Result<(), DocumentsError> {
        self.store
            .link_document(project, document_id, entity_id)
            .await?;
        self.retriever.link(document_id, entity_id)?;
        Ok(())
    }
}
