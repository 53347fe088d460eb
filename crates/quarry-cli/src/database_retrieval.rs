//! Retrieval in the database, on PostgreSQL with pgvector: passages are searched where they are
//! stored — full text (`Store::text_search`: `tsvector`, GIN, `websearch_to_tsquery`) and
//! vectors (`Store::vector_search`: pgvector, HNSW) — both halves fused by the same reciprocal
//! rank fusion `quarry_index` uses in process; graph entities by their vectors in the database
//! (`Store::entity_vector_search`). The process keeps no copy of the corpus: its memory and
//! start-up time do not grow with it, and a row is searchable by every process once committed.
//! The `Library` here is empty and stays so: it only cuts and embeds.
//!
//! Elsewhere the in-process `Library` is the retriever: SQLite (the embedded default), and
//! PostgreSQL without pgvector (with a warning at start: every process then holds a copy).
//!
//! `Retriever` is synchronous and the store is async: a search blocks the calling thread on the
//! runtime (inside a multi-threaded runtime's worker, via `block_in_place`), as the provider
//! embedder in `retrieval.rs` does.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use quarry_core::model::{Document, Entity, StoredChunk};
use quarry_core::retrieval::{EntityHit, PassageHit, RetrievalError, Retriever};
use quarry_core::store::{ChunkMatch, RetrievalStore, Store, StoreError};
use quarry_index::{Hit, Library, RRF_K, entity_text, reciprocal_rank_fusion};

/// Entities embedded per backfill batch at start.
const BACKFILL_BATCH: usize = 256;

/// Whether `store` runs both halves of retrieval itself (`k = 0`: the cheap probes).
pub async fn searches_in_database(
    store: &dyn RetrievalStore,
    embedder: &str,
) -> Result<bool, StoreError> {
    let words = store.text_search("", "", 0, None).await?.is_some();
    let vectors = store
        .vector_search("", embedder, &[], 0, None)
        .await?
        .is_some();
    Ok(words && vectors)
}

/// Searches in `store`, cutting and embedding with `library` (which stays empty).
pub struct DatabaseRetriever {
    library: Library,
    store: Arc<dyn Store>,
    runtime: tokio::runtime::Handle,
}

impl DatabaseRetriever {
    /// The retriever, at once.
    pub fn open(
        runtime: &tokio::runtime::Runtime,
        library: Library,
        store: Arc<dyn Store>,
    ) -> Arc<DatabaseRetriever> {
        Arc::new(DatabaseRetriever {
            library,
            store,
            runtime: runtime.handle().clone(),
        })
    }

    /// What a long-lived process (`serve`, `worker`) does for the database once, on a thread of
    /// its own: makes sure the vectors of its embedder's width have their indexes
    /// (`Store::prepare_vector_search`: built once, over the rows present) and embeds the
    /// entities that have no vector of this embedder yet (a database written before, or by
    /// another embedder). One-shot commands skip it: an index build they started would be
    /// abandoned when they exit.
    pub fn start_upkeep(self: &Arc<Self>) {
        let upkeep = self.clone();
        std::thread::spawn(move || {
            if let Err(error) = upkeep.prepare() {
                tracing::warn!(%error, "preparing the search indexes failed");
            }
            if let Err(error) = upkeep.backfill_entities() {
                tracing::warn!(%error, "embedding the entities without a vector failed");
            }
        });
    }

    /// Builds the vector indexes for this embedder's width where missing.
    pub fn prepare(&self) -> Result<(), RetrievalError> {
        let dims = self.library.embed_query("width").map_err(retrieval)?.len();
        self.block_on(self.store.prepare_vector_search(dims))
            .map_err(retrieval)
    }

    /// Embeds every entity without a vector of this embedder, in batches; returns how many.
    pub fn backfill_entities(&self) -> Result<usize, RetrievalError> {
        let mut embedded = 0;
        loop {
            let missing = self
                .block_on(
                    self.store
                        .entities_without_vectors(self.library.embedder_name(), BACKFILL_BATCH),
                )
                .map_err(retrieval)?;
            for entity in &missing {
                self.index_entity(entity)?;
            }
            embedded += missing.len();
            if missing.len() < BACKFILL_BATCH {
                return Ok(embedded);
            }
        }
    }

    fn block_on<T>(&self, future: impl Future<Output = T>) -> T {
        let call = || self.runtime.block_on(future);
        match tokio::runtime::Handle::try_current() {
            Ok(_) => tokio::task::block_in_place(call),
            Err(_) => call(),
        }
    }

    /// Both halves' candidates for `query`, among the documents linked to `entity_ids`.
    async fn candidates(
        &self,
        project: &str,
        query: &str,
        vector: &[f32],
        entity_ids: Option<&[String]>,
        k: usize,
    ) -> Result<(Vec<ChunkMatch>, Vec<ChunkMatch>), StoreError> {
        let documents = match entity_ids {
            Some(entity_ids) => Some(self.store.linked_document_ids(project, entity_ids).await?),
            None => None,
        };
        // The two halves are independent queries: asked at once, a search costs the slower one.
        let (words, meaning) = tokio::try_join!(
            self.store
                .text_search(project, query, k, documents.as_deref()),
            self.store.vector_search(
                project,
                self.library.embedder_name(),
                vector,
                k,
                documents.as_deref(),
            ),
        )?;
        let (words, meaning) = (words.unwrap_or_default(), meaning.unwrap_or_default());
        Ok((words, meaning))
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

    fn hits(&mut self, matches: Vec<ChunkMatch>) -> Vec<Hit> {
        matches
            .into_iter()
            .map(|found| Hit {
                chunk_id: self.id(&found.document_id, found.start, found.end),
                score: found.score,
                bytes: 0..0,
                code_points: found.start..found.end,
                document_id: found.document_id,
            })
            .collect()
    }
}

fn retrieval(error: impl ToString) -> RetrievalError {
    RetrievalError(error.to_string())
}

impl Retriever for DatabaseRetriever {
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
        let (words, meaning) = self
            .block_on(self.candidates(project, query, &vector, entity_ids, candidates))
            .map_err(retrieval)?;
        // Nearest chunks with no positive similarity say nothing about the query.
        let meaning: Vec<ChunkMatch> = meaning.into_iter().filter(|m| m.score > 0.0).collect();
        let mut ids = ChunkIds::default();
        let lists = [ids.hits(words), ids.hits(meaning)];
        Ok(reciprocal_rank_fusion(&lists, RRF_K, limit)
            .into_iter()
            .map(PassageHit::from)
            .collect())
    }

    fn search_entities(
        &self,
        project: &str,
        query: &str,
        entity_type: Option<&str>,
        limit: usize,
    ) -> Result<Vec<EntityHit>, RetrievalError> {
        let vector = self.library.embed_query(query).map_err(retrieval)?;
        let found = self
            .block_on(self.store.entity_vector_search(
                project,
                self.library.embedder_name(),
                &vector,
                entity_type,
                limit,
            ))
            .map_err(retrieval)?
            .unwrap_or_default();
        // As the in-process index: only entities with a positive similarity are found.
        Ok(found
            .into_iter()
            .filter(|found| found.score > 0.0)
            .map(|found| EntityHit {
                entity_id: found.entity_id,
                score: found.score,
            })
            .collect())
    }

    /// Cut and embedded only: the caller's `put_chunks` makes the chunks searchable.
    fn index_document(
        &self,
        document: &Document,
        _entity_ids: &[String],
    ) -> Result<Vec<StoredChunk>, RetrievalError> {
        self.library.embed_document(document).map_err(retrieval)
    }

    /// Searches read links from the store, where the caller wrote this one.
    fn link(&self, _document_id: &str, _entity_id: &str) -> Result<(), RetrievalError> {
        Ok(())
    }

    fn index_entity(&self, entity: &Entity) -> Result<(), RetrievalError> {
        let text = entity_text(entity);
        let vector = self.library.embed_query(&text).map_err(retrieval)?;
        self.block_on(self.store.put_entity_vector(
            entity,
            self.library.embedder_name(),
            &text,
            &vector,
        ))
        .map_err(retrieval)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use quarry_core::model::NewEntity;

    use super::*;

    const TEXTS: [&str; 3] = [
        "Invoices are paid within thirty days of receipt.",
        "The warehouse in Rotterdam ships pallets every Tuesday.",
        "Quarterly revenue grew by twelve percent in Europe.",
    ];

    /// Documents indexed through `retriever` and their chunks stored, as `Documents::add` does.
    fn add_documents(
        runtime: &tokio::runtime::Runtime,
        store: &Arc<dyn Store>,
        retriever: &dyn Retriever,
        project: &str,
    ) -> Vec<String> {
        let mut ids = Vec::new();
        for (index, text) in TEXTS.iter().enumerate() {
            let document = runtime
                .block_on(store.add_document(project, &format!("doc {index}"), text))
                .unwrap();
            let chunks = retriever.index_document(&document, &[]).unwrap();
            runtime
                .block_on(store.put_chunks(project, &document.id, &chunks))
                .unwrap();
            ids.push(document.id);
        }
        ids
    }

    fn documents(hits: &[PassageHit]) -> Vec<String> {
        hits.iter().map(|hit| hit.document_id.clone()).collect()
    }

    #[test]
    fn sqlite_searches_in_process() {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let store = runtime.block_on(quarry_store::open(":memory:")).unwrap();
        let in_database = runtime
            .block_on(searches_in_database(store.as_ref(), "hashing-384"))
            .unwrap();
        assert!(!in_database);
    }

    /// On PostgreSQL with pgvector: what one process writes another finds at once, ranked as the
    /// in-process index ranks the same chunks; entity filters and entity search run there too.
    #[test]
    fn pgvector_searches_in_the_database() {
        let Ok(url) = std::env::var("QUARRY_TEST_PGVECTOR_URL") else {
            let _ = writeln!(
                std::io::stderr(),
                "NOTICE: database retriever test SKIPPED: QUARRY_TEST_PGVECTOR_URL is unset"
            );
            return;
        };
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let store = runtime.block_on(quarry_store::open(&url)).unwrap();
        assert!(
            runtime
                .block_on(searches_in_database(store.as_ref(), "hashing-384"))
                .unwrap()
        );
        let project = runtime
            .block_on(store.ensure_project(&format!("database-{}", std::process::id())))
            .unwrap();
        let writer = DatabaseRetriever::open(&runtime, Library::hashing().unwrap(), store.clone());
        let ids = add_documents(&runtime, &store, writer.as_ref(), &project);
        // Another process's retriever: it has read nothing, and finds what was committed.
        let reader = DatabaseRetriever::open(&runtime, Library::hashing().unwrap(), store.clone());
        let hits = reader
            .search_documents(&project, "warehouse pallets Rotterdam", None, 3)
            .unwrap();
        assert_eq!(hits[0].document_id, ids[1]);
        assert_eq!((hits[0].start, hits[0].end), (0, TEXTS[1].chars().count()));

        let library = Library::hashing().unwrap();
        for (id, text) in ids.iter().zip(TEXTS) {
            let document = Document {
                id: id.clone(),
                project_id: project.clone(),
                title: String::new(),
                text: text.to_owned(),
                kind: Default::default(),
                created_at: String::new(),
                url: None,
                fetched_at: None,
            };
            library.index_document(&document, &[]).unwrap();
        }
        for query in [
            "warehouse pallets Rotterdam",
            "invoices paid",
            "revenue Europe",
        ] {
            let in_process = library.search_documents(&project, query, None, 1).unwrap();
            let in_database = reader.search_documents(&project, query, None, 1).unwrap();
            assert_eq!(documents(&in_database), documents(&in_process), "{query}");
        }

        // Entity filters read the links the store holds.
        let entity = runtime
            .block_on(store.create_entity(
                &project,
                &NewEntity {
                    entity_type: "company".to_owned(),
                    title: "Acme Logistics".to_owned(),
                    ..Default::default()
                },
            ))
            .unwrap();
        runtime
            .block_on(store.link_document(&project, &ids[2], &entity.id))
            .unwrap();
        let filtered = reader
            .search_documents(
                &project,
                "warehouse pallets",
                Some(std::slice::from_ref(&entity.id)),
                3,
            )
            .unwrap();
        assert!(filtered.iter().all(|hit| hit.document_id == ids[2]));

        // An entity indexed through one is found by meaning through the other.
        writer.index_entity(&entity).unwrap();
        let found = reader
            .search_entities(&project, "Acme Logistics", Some("company"), 3)
            .unwrap();
        assert_eq!(
            found.first().map(|hit| hit.entity_id.as_str()),
            Some(entity.id.as_str())
        );
        let other_type = reader
            .search_entities(&project, "Acme Logistics", Some("person"), 3)
            .unwrap();
        assert!(other_type.is_empty());

        // An entity written without its vector (by a process that searched in memory, say) gets
        // one from the backfill.
        let unindexed = runtime
            .block_on(store.create_entity(
                &project,
                &NewEntity {
                    entity_type: "person".to_owned(),
                    title: "Wilhelmina Vandersloot".to_owned(),
                    ..Default::default()
                },
            ))
            .unwrap();
        reader.backfill_entities().unwrap();
        let found = reader
            .search_entities(&project, "Wilhelmina Vandersloot", Some("person"), 1)
            .unwrap();
        assert_eq!(found.first().map(|hit| &hit.entity_id), Some(&unindexed.id));
    }
}
