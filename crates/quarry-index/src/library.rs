//! `Library`: the [`Retriever`] the engine's tools search through. Documents live in a
//! [`HybridIndex`] (tantivy BM25 + vectors, fused by reciprocal rank, filtered by project and
//! linked entities, hits in code points); graph entities in a separate [`VectorIndex`], embedded
//! as `"{title} ({entity_type}): {notes}"` and filtered by project and type.
//!
//! Thread-safe behind `RwLock`s: searches share the locks, writes take them briefly. Embedding
//! (the slow part) happens outside any lock. The store is the source of truth: `index_document`
//! returns the chunks with their embeddings for [`Store::put_chunks`], and [`Library::rebuild`]
//! loads them back at start without re-embedding.
//!
//! **Invariant:** no query text can make a search fail (queries are built from tokens); only the
//! embedder or the index itself can.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use quarry_core::model::{Document, Entity, StoredChunk};
use quarry_core::retrieval::{EntityHit, PassageHit, RetrievalError, Retriever};
use quarry_core::store::{DocumentStore, GraphStore, ProjectStore, RetrievalStore, StoreError};

use crate::HybridIndex;
use crate::chunk::{Chunk, ChunkConfig, chunk_text};
use crate::error::IndexError;
use crate::hit::Filter;
use crate::vector::{Embedder, HashingEmbedder, VectorIndex, VectorRecord};

/// The name stored with embeddings made by `HashingEmbedder::default()`.
pub const HASHING_EMBEDDER_NAME: &str = "hashing-384";

/// Texts per embedder call when many are embedded at once (rebuilds, bulk indexing).
const EMBED_BATCH: usize = 64;

/// `recent_entities` limit meaning "all" (kept within `i64` for SQL `LIMIT`).
const ALL_ENTITIES: usize = i64::MAX as usize;

/// Why a rebuild failed.
#[derive(Debug, thiserror::Error)]
pub enum LibraryError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Index(#[from] IndexError),
}

/// What [`Library::rebuild`] did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RebuildReport {
    pub projects: usize,
    pub documents: usize,
    /// Chunks re-added from their stored embeddings.
    pub chunks_reused: usize,
    /// Chunks embedded anew: stored by another embedder, stored chunks that no longer fit the
    /// document's text, or documents without stored chunks.
    pub chunks_embedded: usize,
    pub entities: usize,
    /// The documents whose chunks were embedded anew, for the host to persist
    /// ([`RebuildReport::persist`]) so the next start reuses them.
    pub reembedded: Vec<ReembeddedDocument>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ReembeddedDocument {
    pub project: String,
    pub document_id: String,
    pub chunks: Vec<StoredChunk>,
}

impl RebuildReport {
    /// Stores the re-embedded chunks (`Store::put_chunks` per document); returns how many
    /// documents were written.
    pub async fn persist(&self, store: &dyn RetrievalStore) -> Result<usize, StoreError> {
        for document in &self.reembedded {
            store
                .put_chunks(&document.project, &document.document_id, &document.chunks)
                .await?;
        }
        Ok(self.reembedded.len())
    }
}

/// Documents and graph entities, searchable by words and meaning.
pub struct Library {
    embedder: Arc<dyn Embedder>,
    embedder_name: String,
    chunking: ChunkConfig,
    documents: RwLock<HybridIndex>,
    entities: RwLock<EntityIndex>,
}

impl Library {
    /// An empty library embedding with `embedder`, whose vectors are stored under
    /// `embedder_name` (stored vectors of another name are re-computed on rebuild).
    pub fn new(embedder: Box<dyn Embedder>, embedder_name: String) -> Result<Library, IndexError> {
        let embedder: Arc<dyn Embedder> = Arc::from(embedder);
        Ok(Library {
            documents: RwLock::new(new_document_index(&embedder)?),
            entities: RwLock::new(EntityIndex::new(embedder.dimensions())),
            embedder,
            embedder_name,
            chunking: ChunkConfig::default(),
        })
    }

    /// The model-free default: `HashingEmbedder::default()`, named [`HASHING_EMBEDDER_NAME`].
    pub fn hashing() -> Result<Library, IndexError> {
        Library::new(
            Box::new(HashingEmbedder::default()),
            HASHING_EMBEDDER_NAME.to_owned(),
        )
    }

    /// Cuts documents with `chunking` instead of the default sizes (chunks loaded by `rebuild`
    /// keep the offsets they were stored with).
    pub fn with_chunking(mut self, chunking: ChunkConfig) -> Library {
        self.chunking = chunking;
        self
    }

    pub fn embedder_name(&self) -> &str {
        &self.embedder_name
    }

    /// Chunks indexed (all projects).
    pub fn chunk_count(&self) -> usize {
        read(&self.documents).len()
    }

    /// Entities indexed (all projects).
    pub fn entity_count(&self) -> usize {
        read(&self.entities).texts.len()
    }

    /// Whether `document_id` is indexed.
    pub fn contains_document(&self, document_id: &str) -> bool {
        read(&self.documents).contains_document(document_id)
    }

    /// The entities an indexed document is linked to; `None` for a document not indexed.
    pub fn document_entities(&self, document_id: &str) -> Option<Vec<String>> {
        read(&self.documents)
            .document_entities(document_id)
            .map(<[String]>::to_vec)
    }

    /// Indexes a stored document from its stored chunks when they were made by this library's
    /// embedder and fit the text (as [`Library::rebuild`] does), embedding it anew otherwise;
    /// replaces the document if already indexed (so indexing twice never duplicates hits).
    /// Returns whether the stored chunks were reused. What a follower of another process's
    /// writes calls; embedding runs on the calling thread.
    pub fn index_stored_document(
        &self,
        document: &Document,
        entity_ids: &[String],
        stored: Vec<StoredChunk>,
    ) -> Result<bool, IndexError> {
        let dimensions = self.embedder.dimensions();
        let (chunks, embeddings, reused) =
            match reusable(&document.text, stored, &self.embedder_name, dimensions) {
                Some((chunks, embeddings)) => (chunks, embeddings, true),
                None => {
                    let chunks = chunk_text(&document.text, &self.chunking);
                    let embeddings = self.embed_chunks(&document.text, &chunks)?;
                    (chunks, embeddings, false)
                }
            };
        let mut index = write(&self.documents);
        index.add_chunks(
            &document.project_id,
            &document.id,
            &document.text,
            &chunks,
            &embeddings,
            entity_ids,
        )?;
        index.commit()?;
        Ok(reused)
    }

    /// The document index itself, read-locked (diagnostics and benchmarks: BM25-only or
    /// vector-only searches). Writers wait while the guard lives.
    pub fn document_index(&self) -> impl std::ops::Deref<Target = HybridIndex> + '_ {
        read(&self.documents)
    }

    /// The document cut into chunks and embedded, as [`Store::put_chunks`] keeps them, without
    /// indexing it here: for a host whose search runs in the database.
    pub fn embed_document(&self, document: &Document) -> Result<Vec<StoredChunk>, IndexError> {
        let chunks = chunk_text(&document.text, &self.chunking);
        let embeddings = self.embed_chunks(&document.text, &chunks)?;
        Ok(stored_chunks(
            &document.id,
            &chunks,
            embeddings,
            &self.embedder_name,
        ))
    }

    /// Indexes many documents with one commit (bulk imports); returns each one's chunks, in
    /// order, for the store. Replaces documents already indexed under the same ids.
    pub fn index_documents(
        &self,
        documents: &[(&Document, &[String])],
    ) -> Result<Vec<Vec<StoredChunk>>, IndexError> {
        let mut prepared = Vec::with_capacity(documents.len());
        for (document, _) in documents {
            let chunks = chunk_text(&document.text, &self.chunking);
            let embeddings = self.embed_chunks(&document.text, &chunks)?;
            prepared.push((chunks, embeddings));
        }
        {
            let mut index = write(&self.documents);
            for ((document, entity_ids), (chunks, embeddings)) in documents.iter().zip(&prepared) {
                index.add_chunks(
                    &document.project_id,
                    &document.id,
                    &document.text,
                    chunks,
                    embeddings,
                    entity_ids,
                )?;
            }
            index.commit()?;
        }
        Ok(documents
            .iter()
            .zip(prepared)
            .map(|((document, _), (chunks, embeddings))| {
                stored_chunks(&document.id, &chunks, embeddings, &self.embedder_name)
            })
            .collect())
    }

    /// Replaces the library's contents with what `store` holds: every document of every project
    /// (from its stored chunks and embeddings when they were made by this library's embedder and
    /// still fit the text; embedded anew otherwise), linked as stored, and every entity. The new
    /// indexes are built beside the old ones, committed once, and swapped in: searches meanwhile
    /// see the old contents. Meant for start-up: a document indexed through this library while a
    /// rebuild runs is kept only if the store already had it when read.
    ///
    /// Embedding runs on the calling thread (cheap with the hashing embedder; run a slow
    /// embedder's rebuild where blocking is fine).
    pub async fn rebuild<S>(&self, store: &S) -> Result<RebuildReport, LibraryError>
    where
        S: ProjectStore + DocumentStore + GraphStore + RetrievalStore + ?Sized,
    {
        let dimensions = self.embedder.dimensions();
        let projects = store.list_project_ids().await?;
        let mut stored: HashMap<String, Vec<StoredChunk>> = HashMap::new();
        for (_, chunk) in store.all_chunks().await? {
            stored
                .entry(chunk.document_id.clone())
                .or_default()
                .push(chunk);
        }
        let mut links: HashMap<String, Vec<String>> = HashMap::new();
        for (document_id, _, entity_ids) in store.all_document_links().await? {
            links.insert(document_id, entity_ids);
        }

        let mut report = RebuildReport {
            projects: projects.len(),
            ..RebuildReport::default()
        };
        let mut documents = new_document_index(&self.embedder)?;
        let mut entities = EntityIndex::new(dimensions);
        for project in &projects {
            for document in store.documents(project, None).await? {
                let entity_ids = links.remove(&document.id).unwrap_or_default();
                let saved = stored.remove(&document.id).unwrap_or_default();
                report.documents += 1;
                if let Some((chunks, embeddings)) =
                    reusable(&document.text, saved, &self.embedder_name, dimensions)
                {
                    report.chunks_reused += chunks.len();
                    documents.add_chunks(
                        project,
                        &document.id,
                        &document.text,
                        &chunks,
                        &embeddings,
                        &entity_ids,
                    )?;
                    continue;
                }
                let chunks = chunk_text(&document.text, &self.chunking);
                let embeddings = self.embed_chunks(&document.text, &chunks)?;
                documents.add_chunks(
                    project,
                    &document.id,
                    &document.text,
                    &chunks,
                    &embeddings,
                    &entity_ids,
                )?;
                report.chunks_embedded += chunks.len();
                if chunks.is_empty() {
                    continue;
                }
                report.reembedded.push(ReembeddedDocument {
                    project: project.clone(),
                    document_id: document.id.clone(),
                    chunks: stored_chunks(&document.id, &chunks, embeddings, &self.embedder_name),
                });
            }
            let project_entities = store.recent_entities(project, &[], ALL_ENTITIES).await?;
            for batch in project_entities.chunks(EMBED_BATCH) {
                let texts: Vec<String> = batch.iter().map(entity_text).collect();
                let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                let vectors = embed(self.embedder.as_ref(), &refs)?;
                for ((entity, text), vector) in batch.iter().zip(texts).zip(vectors) {
                    entities.put(entity, text, &vector)?;
                }
            }
            report.entities += project_entities.len();
        }
        documents.commit()?;
        *write(&self.documents) = documents;
        *write(&self.entities) = entities;
        Ok(report)
    }

    fn embed_chunks(&self, text: &str, chunks: &[Chunk]) -> Result<Vec<Vec<f32>>, IndexError> {
        let texts: Vec<&str> = chunks.iter().map(|chunk| chunk.text(text)).collect();
        let mut embeddings = Vec::with_capacity(texts.len());
        for batch in texts.chunks(EMBED_BATCH) {
            embeddings.extend(embed(self.embedder.as_ref(), batch)?);
        }
        Ok(embeddings)
    }

    /// The query's vector, from this library's embedder (for a vector search run elsewhere, e.g.
    /// in the database).
    pub fn embed_query(&self, query: &str) -> Result<Vec<f32>, IndexError> {
        let mut vectors = embed(self.embedder.as_ref(), &[query])?;
        Ok(vectors.pop().unwrap_or_default())
    }
}

impl Retriever for Library {
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
        let vector = self.embed_query(query).map_err(retrieval)?;
        let filter = Filter {
            project: project.to_owned(),
            entity_ids: entity_ids.map(<[String]>::to_vec),
            document_ids: None,
        };
        let hits = read(&self.documents)
            .search_embedded(query, &vector, &filter, limit)
            .map_err(retrieval)?;
        Ok(hits.into_iter().map(PassageHit::from).collect())
    }

    /// Only entities with a positive cosine similarity are returned.
    fn search_entities(
        &self,
        project: &str,
        query: &str,
        entity_type: Option<&str>,
        limit: usize,
    ) -> Result<Vec<EntityHit>, RetrievalError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let vector = self.embed_query(query).map_err(retrieval)?;
        let mut filter = Filter::project(project);
        if let Some(entity_type) = entity_type {
            filter = filter.with_entities([entity_type]);
        }
        let hits = read(&self.entities)
            .vectors
            .search(&vector, &filter, limit)
            .map_err(retrieval)?;
        Ok(hits
            .into_iter()
            .filter(|hit| hit.score > 0.0)
            .map(|hit| EntityHit {
                entity_id: hit.document_id,
                score: hit.score,
            })
            .collect())
    }

    /// Searchable as soon as this returns (committed).
    fn index_document(
        &self,
        document: &Document,
        entity_ids: &[String],
    ) -> Result<Vec<StoredChunk>, RetrievalError> {
        let mut chunks = self
            .index_documents(&[(document, entity_ids)])
            .map_err(retrieval)?;
        Ok(chunks.pop().unwrap_or_default())
    }

    /// Searchable with the new link as soon as this returns. Fails for a document this library
    /// has not indexed.
    fn link(&self, document_id: &str, entity_id: &str) -> Result<(), RetrievalError> {
        let mut index = write(&self.documents);
        if !index.link(document_id, entity_id).map_err(retrieval)? {
            return Err(RetrievalError(format!(
                "document '{document_id}' is not indexed"
            )));
        }
        if index.has_uncommitted() {
            index.commit().map_err(retrieval)?;
        }
        Ok(())
    }

    /// Re-embeds only when the entity's text, type or project changed.
    fn index_entity(&self, entity: &Entity) -> Result<(), RetrievalError> {
        let text = entity_text(entity);
        if read(&self.entities).unchanged(entity, &text) {
            return Ok(());
        }
        let vector = self.embed_query(&text).map_err(retrieval)?;
        write(&self.entities)
            .put(entity, text, &vector)
            .map_err(retrieval)
    }
}

/// What an entity is embedded as: `"{title} ({entity_type}): {notes}"`.
pub fn entity_text(entity: &Entity) -> String {
    format!(
        "{} ({}): {}",
        entity.title,
        entity.entity_type,
        entity.notes.as_deref().unwrap_or_default()
    )
}

/// One vector per entity; the entity's type stands in the "entity ids" of its record so the
/// index's entity filter is the type filter.
struct EntityIndex {
    vectors: VectorIndex,
    /// Per entity id: (project, type, embedded text), to skip re-embedding unchanged entities.
    texts: HashMap<String, (String, String, String)>,
    next_id: u64,
}

impl EntityIndex {
    fn new(dimensions: usize) -> EntityIndex {
        EntityIndex {
            vectors: VectorIndex::new(dimensions),
            texts: HashMap::new(),
            next_id: 1,
        }
    }

    fn unchanged(&self, entity: &Entity, text: &str) -> bool {
        self.texts
            .get(&entity.id)
            .is_some_and(|(project, kind, known)| {
                *project == entity.project_id && *kind == entity.entity_type && known == text
            })
    }

    fn put(&mut self, entity: &Entity, text: String, vector: &[f32]) -> Result<(), IndexError> {
        if self.unchanged(entity, &text) {
            return Ok(());
        }
        if self.texts.contains_key(&entity.id) {
            self.vectors.delete_document(&entity.id);
        }
        self.vectors.add(
            &VectorRecord {
                chunk_id: self.next_id,
                document_id: &entity.id,
                project: &entity.project_id,
                entity_ids: std::slice::from_ref(&entity.entity_type),
                bytes: 0..0,
                code_points: 0..0,
            },
            vector,
        )?;
        self.next_id += 1;
        self.texts.insert(
            entity.id.clone(),
            (entity.project_id.clone(), entity.entity_type.clone(), text),
        );
        Ok(())
    }
}

/// Lets the document index and the entity index share one embedder.
struct SharedEmbedder(Arc<dyn Embedder>);

impl Embedder for SharedEmbedder {
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, IndexError> {
        self.0.embed(texts)
    }

    fn dimensions(&self) -> usize {
        self.0.dimensions()
    }
}

fn new_document_index(embedder: &Arc<dyn Embedder>) -> Result<HybridIndex, IndexError> {
    HybridIndex::in_memory(Box::new(SharedEmbedder(embedder.clone())))
}

/// `embedder.embed`, checked to give one vector per text.
fn embed(embedder: &dyn Embedder, texts: &[&str]) -> Result<Vec<Vec<f32>>, IndexError> {
    let vectors = embedder.embed(texts)?;
    if vectors.len() != texts.len() {
        return Err(IndexError::EmbeddingCount {
            expected: texts.len(),
            got: vectors.len(),
        });
    }
    Ok(vectors)
}

fn stored_chunks(
    document_id: &str,
    chunks: &[Chunk],
    embeddings: Vec<Vec<f32>>,
    embedder: &str,
) -> Vec<StoredChunk> {
    chunks
        .iter()
        .zip(embeddings)
        .enumerate()
        .map(|(ordinal, (chunk, embedding))| StoredChunk {
            document_id: document_id.to_owned(),
            ordinal: ordinal as i64,
            start: chunk.code_points.start,
            end: chunk.code_points.end,
            byte_start: chunk.bytes.start,
            byte_end: chunk.bytes.end,
            embedder: embedder.to_owned(),
            embedding,
        })
        .collect()
}

/// The stored chunks as index input, when every one was embedded by `embedder` with the right
/// width and its byte and code-point ranges agree with `text`; `None` otherwise (and for a
/// document without stored chunks).
fn reusable(
    text: &str,
    mut saved: Vec<StoredChunk>,
    embedder: &str,
    dimensions: usize,
) -> Option<(Vec<Chunk>, Vec<Vec<f32>>)> {
    if saved.is_empty() {
        return None;
    }
    saved.sort_by_key(|chunk| chunk.ordinal);
    let (mut byte, mut code_point) = (0, 0);
    let mut chunks = Vec::with_capacity(saved.len());
    let mut embeddings = Vec::with_capacity(saved.len());
    for chunk in saved {
        if chunk.embedder != embedder || chunk.embedding.len() != dimensions {
            return None;
        }
        // Chunks start in order; count code points forward to check both ranges.
        code_point += text.get(byte..chunk.byte_start)?.chars().count();
        byte = chunk.byte_start;
        let length = text.get(chunk.byte_start..chunk.byte_end)?.chars().count();
        if chunk.start != code_point || chunk.end != code_point + length {
            return None;
        }
        chunks.push(Chunk {
            bytes: chunk.byte_start..chunk.byte_end,
            code_points: chunk.start..chunk.end,
        });
        embeddings.push(chunk.embedding);
    }
    Some((chunks, embeddings))
}

fn retrieval(error: IndexError) -> RetrievalError {
    RetrievalError(error.to_string())
}

fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(PoisonError::into_inner)
}

fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document(id: &str, project: &str, text: &str) -> Document {
        Document {
            id: id.to_owned(),
            project_id: project.to_owned(),
            title: id.to_owned(),
            text: text.to_owned(),
            kind: Default::default(),
            created_at: String::new(),
            url: None,
            fetched_at: None,
        }
    }

    #[test]
    fn stored_chunks_are_reused_only_when_they_fit() {
        let text = "Grüße aus München.\n\nZweiter Absatz über Zürich.";
        let library = Library::hashing().unwrap().with_chunking(ChunkConfig {
            target_chars: 20,
            max_chars: 30,
        });
        let chunks = library
            .index_document(&document("d", "p", text), &[])
            .unwrap();
        assert_eq!(chunks.len(), 2);
        let dims = HashingEmbedder::default().dimensions();
        assert!(reusable(text, chunks.clone(), HASHING_EMBEDDER_NAME, dims).is_some());
        assert!(reusable(text, chunks.clone(), "other", dims).is_none());
        assert!(reusable("Grüße", chunks.clone(), HASHING_EMBEDDER_NAME, dims).is_none());
        let mut shifted = chunks;
        shifted[1].start += 1;
        assert!(reusable(text, shifted, HASHING_EMBEDDER_NAME, dims).is_none());
    }

    #[test]
    fn indexing_twice_never_duplicates_hits() {
        let library = Library::hashing().unwrap();
        let doc = document("d", "p", "Payment terms are net thirty days.");
        library.index_document(&doc, &[]).unwrap();
        let stored = library.index_document(&doc, &["e".to_owned()]).unwrap();
        assert!(library.index_stored_document(&doc, &[], stored).unwrap());
        assert!(
            library
                .index_stored_document(&doc, &["e".to_owned()], Vec::new())
                .is_ok_and(|reused| !reused)
        );
        let hits = library
            .search_documents("p", "payment terms", None, 10)
            .unwrap();
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert_eq!(library.chunk_count(), 1);
        assert_eq!(library.document_entities("d"), Some(vec!["e".to_owned()]));

        let entity = Entity {
            id: "x".to_owned(),
            project_id: "p".to_owned(),
            entity_type: "company".to_owned(),
            title: "Acme Corp".to_owned(),
            parent_id: None,
            fields: Default::default(),
            metadata: Default::default(),
            created_at: String::new(),
            updated_at: String::new(),
            mention_count: 1,
            notes: None,
            last_seen_at: None,
        };
        library.index_entity(&entity).unwrap();
        library.index_entity(&entity).unwrap();
        let renamed = Entity {
            notes: Some("a customer".to_owned()),
            ..entity
        };
        library.index_entity(&renamed).unwrap();
        let hits = library.search_entities("p", "Acme", None, 10).unwrap();
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert_eq!(library.entity_count(), 1);
    }

    #[test]
    fn linking_an_unknown_document_fails_and_empty_queries_do_not() {
        let library = Library::hashing().unwrap();
        assert!(library.link("missing", "e").is_err());
        library
            .index_document(&document("d", "p", "Payment terms."), &[])
            .unwrap();
        for query in ["", "(((", "payment:[* TO *]", "🌞"] {
            assert!(library.search_documents("p", query, None, 5).is_ok());
            assert!(library.search_entities("p", query, None, 5).is_ok());
        }
        assert!(
            library
                .search_documents("p", "", None, 5)
                .unwrap()
                .is_empty()
        );
    }
}
