//! Adding and linking documents: the one path every host uses (`quarry doc add`,
//! `POST /v1/documents`), so a stored document is also searchable and its chunks (with their
//! embeddings) are persisted for the next start's index rebuild.

use std::sync::Arc;

use quarry_core::model::{Document, WebPage};
use quarry_core::retrieval::{RetrievalError, Retriever};
use quarry_core::store::{Store, StoreError, StoredDocument};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocumentsError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Retrieval(#[from] RetrievalError),
}

/// What [`Documents::add`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct Added {
    /// The stored document (the one stored earlier when `created` is false).
    pub document: Document,
    /// Whether this call stored it: `false` when the project already held a document of the
    /// same title and text.
    pub created: bool,
    /// What failed after the document was stored (links, indexing, storing chunks).
    pub warnings: Vec<String>,
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
    /// and stores its chunks.
    ///
    /// Idempotent: a document of the same title and text already in the project is returned
    /// (`created: false`) instead of a second one, and the links are still applied (a client
    /// retrying after a timeout gets the document its first attempt stored).
    ///
    /// Only a failure to store the document itself is an error. Once it is stored, a failing
    /// link, indexing or chunk write is reported in [`Added::warnings`] beside the stored
    /// document (never as if nothing had been stored): adding it again retries those steps, and
    /// the processes following the store (and the next start's rebuild) index it from the store.
    ///
    /// Indexing embeds on the calling task: cheap with the hashing embedder; a slow embedder's
    /// host may run this where blocking is fine.
    pub async fn add(
        &self,
        project: &str,
        title: &str,
        text: &str,
        entity_ids: &[String],
    ) -> Result<Added, DocumentsError> {
        let stored = self.store.store_document(project, title, text).await?;
        Ok(self.link_and_index(project, stored, entity_ids).await)
    }

    /// Stores a web page read by a field agent (idempotently: the same page read again is the
    /// same document) and indexes it like any document, linked to no entity.
    pub async fn add_web_page(
        &self,
        project: &str,
        page: &WebPage,
    ) -> Result<Added, DocumentsError> {
        let stored = self.store.store_web_page(project, page).await?;
        Ok(self.link_and_index(project, stored, &[]).await)
    }

    /// Links a stored document, indexes it and stores its chunks; what fails is a warning.
    async fn link_and_index(
        &self,
        project: &str,
        stored: StoredDocument,
        entity_ids: &[String],
    ) -> Added {
        let document = stored.document;
        let mut warnings = Vec::new();
        for entity_id in entity_ids {
            if let Err(error) = self
                .store
                .link_document(project, &document.id, entity_id)
                .await
            {
                warnings.push(format!(
                    "document '{}' is stored, but linking it to entity '{entity_id}' failed: \
                     {error}",
                    document.id
                ));
            }
        }
        // An existing document is indexed with every link it has, not only this call's.
        let linked = if stored.created {
            entity_ids.to_vec()
        } else {
            match self.store.document_entity_ids(project, &document.id).await {
                Ok(linked) => linked,
                Err(error) => {
                    warnings.push(format!(
                        "document '{}' is stored, but reading its links failed: {error}",
                        document.id
                    ));
                    entity_ids.to_vec()
                }
            }
        };
        match self.retriever.index_document(&document, &linked) {
            Ok(chunks) => {
                if let Err(error) = self.store.put_chunks(project, &document.id, &chunks).await {
                    warnings.push(format!(
                        "document '{}' is stored and searchable here, but storing its chunks \
                         failed (they are embedded again at the next start): {error}",
                        document.id
                    ));
                }
            }
            Err(error) => warnings.push(format!(
                "document '{}' is stored, but indexing it failed (it becomes searchable when \
                 a process indexes it from the store, at the latest at the next start): {error}",
                document.id
            )),
        }
        Added {
            document,
            created: stored.created,
            warnings,
        }
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
