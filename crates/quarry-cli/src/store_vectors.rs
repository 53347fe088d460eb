//! Hybrid search whose vector half runs in the database: on PostgreSQL with pgvector
//! (`Store::vector_search` answers `Some`), passages come from the `Library`'s BM25 side and the
//! store's nearest chunks, fused by the same reciprocal rank fusion `quarry_index` uses in
//! process. Entities, indexing and links stay with the `Library`. Elsewhere (SQLite, PostgreSQL
//! without the extension) the `Library` is the retriever, unchanged.
//!
//! `Retriever` is synchronous and the store is async: a search blocks the calling thread on the
//! runtime (inside a multi-threaded runtime's worker, via `block_in_place`), as the provider
//! embedder in `retrieval.rs` does.

use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::sync::Arc;

use quarry_core::model::{Document, Entity, StoredChunk};
use quarry_core::retrieval::{EntityHit, PassageHit, RetrievalError, Retriever};
use quarry_core::store::{Store, StoreError, VectorMatch};
use quarry_index::{Filter, Hit, Library, RRF_K, reciprocal_rank_fusion};

/// `library` as the retriever, or wrapped so its vector half runs in `store` when the store can
/// search vectors itself.
pub fn with_store_vectors(
    runtime: &tokio::runtime::Runtime,
    library: Arc<Library>,
    store: Arc<dyn Store>,
) -> Result<Arc<dyn Retriever>, StoreError> {
    // `k = 0` is the cheap probe: `Some(empty)` when the backend searches vectors.
    let native = runtime
        .block_on(store.vector_search("", library.embedder_name(), &[], 0, None))?
        .is_some();
    if !native {
        return Ok(library);
    }
    Ok(Arc::new(StoreVectorRetriever {
        library,
        store,
        runtime: runtime.handle().clone(),
    }))
}

/// BM25 from the `Library`, vectors from the store, fused by rank.
pub struct StoreVectorRetriever {
    library: Arc<Library>,
    store: Arc<dyn Store>,
    runtime: tokio::runtime::Handle,
}

impl StoreVectorRetriever {
    fn block_on<T>(&self, future: impl Future<Output = T>) -> T {
        let call = || self.runtime.block_on(future);
        match tokio::runtime::Handle::try_current() {
            Ok(_) => tokio::task::block_in_place(call),
            Err(_) => call(),
        }
    }

    /// The documents linked to any of `entity_ids` (the store's filter is by document).
    async fn linked_documents(
        &self,
        project: &str,
        entity_ids: &[String],
    ) -> Result<Vec<String>, StoreError> {
        let mut ids = BTreeSet::new();
        for entity_id in entity_ids {
            for document in self.store.documents(project, Some(entity_id)).await? {
                ids.insert(document.id);
            }
        }
        Ok(ids.into_iter().collect())
    }

    async fn nearest(
        &self,
        project: &str,
        vector: &[f32],
        entity_ids: Option<&[String]>,
        k: usize,
    ) -> Result<Option<Vec<VectorMatch>>, StoreError> {
        let documents = match entity_ids {
            Some(entity_ids) => Some(self.linked_documents(project, entity_ids).await?),
            None => None,
        };
        self.store
            .vector_search(
                project,
                self.library.embedder_name(),
                vector,
                k,
                documents.as_deref(),
            )
            .await
    }
}

/// Both halves' hits under one chunk id per (document, code-point range), so a chunk found by
/// both counts twice in the fusion, as in `HybridIndex`.
#[derive(Default)]
struct ChunkIds(HashMap<(String, usize, usize), u64>);

impl ChunkIds {
    fn id(&mut self, document_id: &str, start: usize, end: usize) -> u64 {
        let next = self.0.len() as u64 + 1;
        *self
            .0
            .entry((document_id.to_owned(), start, end))
            .or_insert(next)
    }
}

fn retrieval(error: impl ToString) -> RetrievalError {
    RetrievalError(error.to_string())
}

impl Retriever for StoreVectorRetriever {
    fn search_documents(
        &self,
        project: &str,
        query: &str,
        entity_ids: Option<&[String]>,
        limit: usize,
    ) -> Result<Vec<PassageHit>, RetrievalError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let vector = self.library.embed_query(query).map_err(retrieval)?;
        // As many candidates from each half as `HybridIndex::search_embedded` takes.
        let candidates = limit.saturating_mul(3).max(30);
        let Some(meaning) = self
            .block_on(self.nearest(project, &vector, entity_ids, candidates))
            .map_err(retrieval)?
        else {
            return self
                .library
                .search_documents(project, query, entity_ids, limit);
        };
        let filter = Filter {
            project: project.to_owned(),
            entity_ids: entity_ids.map(<[String]>::to_vec),
            document_ids: None,
        };
        let words = self
            .library
            .document_index()
            .search_words(query, &filter, candidates)
            .map_err(retrieval)?;

        let mut ids = ChunkIds::default();
        let words: Vec<Hit> = words
            .into_iter()
            .map(|hit| Hit {
                chunk_id: ids.id(&hit.document_id, hit.code_points.start, hit.code_points.end),
                ..hit
            })
            .collect();
        // Nearest chunks with no positive similarity say nothing about the query.
        let meaning: Vec<Hit> = meaning
            .into_iter()
            .filter(|found| found.score > 0.0)
            .map(|found| Hit {
                chunk_id: ids.id(&found.document_id, found.start, found.end),
                score: found.score,
                bytes: 0..0,
                code_points: found.start..found.end,
                document_id: found.document_id,
            })
            .collect();
        Ok(reciprocal_rank_fusion(&[words, meaning], RRF_K, limit)
            .into_iter()
            .map(|hit| PassageHit {
                document_id: hit.document_id,
                start: hit.code_points.start,
                end: hit.code_points.end,
                score: hit.score,
            })
            .collect())
    }

    fn search_entities(
        &self,
        project: &str,
        query: &str,
        entity_type: Option<&str>,
        limit: usize,
    ) -> Result<Vec<EntityHit>, RetrievalError> {
        self.library
            .search_entities(project, query, entity_type, limit)
    }

    fn index_document(
        &self,
        document: &Document,
        entity_ids: &[String],
    ) -> Result<Vec<StoredChunk>, RetrievalError> {
        self.library.index_document(document, entity_ids)
    }

    fn link(&self, document_id: &str, entity_id: &str) -> Result<(), RetrievalError> {
        self.library.link(document_id, entity_id)
    }

    fn index_entity(&self, entity: &Entity) -> Result<(), RetrievalError> {
        self.library.index_entity(entity)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    const TEXTS: [&str; 3] = [
        "Invoices are paid within thirty days of receipt.",
        "The warehouse in Rotterdam ships pallets every Tuesday.",
        "Quarterly revenue grew by twelve percent in Europe.",
    ];

    /// Documents indexed through the library and their chunks stored, as `Documents::add` does.
    fn add_documents(
        runtime: &tokio::runtime::Runtime,
        store: &Arc<dyn Store>,
        library: &Library,
        project: &str,
    ) -> Vec<String> {
        let mut ids = Vec::new();
        for (index, text) in TEXTS.iter().enumerate() {
            let document = runtime
                .block_on(store.add_document(project, &format!("doc {index}"), text))
                .unwrap();
            let chunks = library.index_document(&document, &[]).unwrap();
            runtime
                .block_on(store.put_chunks(project, &document.id, &chunks))
                .unwrap();
            ids.push(document.id);
        }
        ids
    }

    #[test]
    fn sqlite_keeps_the_library() {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let store = runtime.block_on(quarry_store::open(":memory:")).unwrap();
        let library = Arc::new(Library::hashing().unwrap());
        let retriever = with_store_vectors(&runtime, library.clone(), store).unwrap();
        let library: Arc<dyn Retriever> = library;
        assert!(Arc::ptr_eq(&retriever, &library));
    }

    #[test]
    fn pgvector_answers_the_vector_half() {
        let Ok(url) = std::env::var("QUARRY_TEST_PGVECTOR_URL") else {
            let _ = writeln!(
                std::io::stderr(),
                "NOTICE: pgvector retriever test SKIPPED: QUARRY_TEST_PGVECTOR_URL is unset"
            );
            return;
        };
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let store = runtime.block_on(quarry_store::open(&url)).unwrap();
        let project = runtime
            .block_on(store.ensure_project(&format!("vectors-{}", std::process::id())))
            .unwrap();
        let library = Arc::new(Library::hashing().unwrap());
        let ids = add_documents(&runtime, &store, &library, &project);
        let retriever = with_store_vectors(&runtime, library.clone(), store.clone()).unwrap();
        let library_dyn: Arc<dyn Retriever> = library.clone();
        assert!(!Arc::ptr_eq(&retriever, &library_dyn), "pgvector is used");

        let hits = retriever
            .search_documents(&project, "warehouse pallets Rotterdam", None, 3)
            .unwrap();
        assert_eq!(hits[0].document_id, ids[1]);
        assert_eq!((hits[0].start, hits[0].end), (0, TEXTS[1].chars().count()));
        // Same ranking as the in-process hybrid search over the same chunks.
        let in_process = library
            .search_documents(&project, "warehouse pallets Rotterdam", None, 3)
            .unwrap();
        let documents = |hits: &[PassageHit]| -> Vec<String> {
            hits.iter().map(|hit| hit.document_id.clone()).collect()
        };
        assert_eq!(documents(&hits), documents(&in_process));

        // Entity filters reach the store's half through the linked documents.
        let entity = runtime
            .block_on(store.create_entity(
                &project,
                &quarry_core::model::NewEntity {
                    entity_type: "company".to_owned(),
                    title: "Acme".to_owned(),
                    ..Default::default()
                },
            ))
            .unwrap();
        runtime
            .block_on(store.link_document(&project, &ids[2], &entity.id))
            .unwrap();
        retriever.link(&ids[2], &entity.id).unwrap();
        let filtered = retriever
            .search_documents(
                &project,
                "warehouse pallets",
                Some(std::slice::from_ref(&entity.id)),
                3,
            )
            .unwrap();
        assert!(filtered.iter().all(|hit| hit.document_id == ids[2]));
    }
}
