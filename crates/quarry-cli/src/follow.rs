//! Following what other processes write to the shared store, so this process's search index
//! (the [`Library`]) finds documents and entities another server, worker or CLI command added
//! within about a second, without a restart.
//!
//! Every [`POLL`] the follower asks the store what changed since the newest time it has seen,
//! minus [`OVERLAP`]: times are written by each process's own clock and a row commits a little
//! after its time is taken, so a row may appear with a time slightly before rows already read.
//! Re-reading the overlap and skipping what the library already holds makes that harmless:
//! - documents created (files and episodes): indexed from their stored chunks when the writer
//!   stored them, else embedded here once they have waited [`CHUNK_GRACE`] for them (the
//!   writer indexes and stores chunks right after storing the document; an episode's chunks
//!   come only after its extraction), linked as the store has them at that moment;
//! - links created since: added to documents already indexed here;
//! - entities created or changed (`updated_at`): `Retriever::index_entity`, which re-embeds only
//!   when the embedded text (name, type, notes) changed.
//!
//! Nothing is written to the store. The graph's resolver cache follows the store on its own
//! (`quarry-graph`'s `process.rs`).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quarry_core::model::Document;
use quarry_core::retrieval::Retriever;
use quarry_core::store::{Store, StoreError};
use quarry_index::Library;

/// How often the store is asked.
pub const POLL: Duration = Duration::from_millis(500);
/// How far before the newest time seen each poll re-reads.
pub const OVERLAP: Duration = Duration::from_secs(5);
/// How long a new document without stored chunks waits for its writer to store them before
/// this process embeds it itself.
pub const CHUNK_GRACE: Duration = Duration::from_secs(2);
/// Rows per query (more are paged).
const BATCH: usize = 500;

/// What one poll did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Followed {
    pub documents: usize,
    pub links: usize,
    pub entities: usize,
}

/// The follower's cursors and the documents waiting for their chunks.
pub struct Follower {
    store: Arc<dyn Store>,
    library: Arc<Library>,
    documents_seen: String,
    links_seen: String,
    entities_seen: String,
    /// New documents not indexed yet, with when they were first seen.
    waiting: HashMap<String, (Instant, Document)>,
}

impl Follower {
    /// A follower of changes at or after `from` (a store time: take it before the library is
    /// rebuilt from the store, so nothing committed meanwhile is missed).
    pub fn new(store: Arc<dyn Store>, library: Arc<Library>, from: String) -> Follower {
        Follower {
            store,
            library,
            documents_seen: from.clone(),
            links_seen: from.clone(),
            entities_seen: from,
            waiting: HashMap::new(),
        }
    }

    /// Brings the library up to what the store holds now.
    pub async fn poll(&mut self) -> Result<Followed, StoreError> {
        let mut followed = Followed {
            entities: self.follow_entities().await?,
            ..Followed::default()
        };
        followed.documents = self.follow_documents().await?;
        followed.links = self.follow_links().await?;
        Ok(followed)
    }

    async fn follow_entities(&mut self) -> Result<usize, StoreError> {
        let mut since = earlier(&self.entities_seen, OVERLAP);
        let mut entities = Vec::new();
        loop {
            let batch = self.store.entities_changed_since(&since, BATCH).await?;
            let full = batch.len() == BATCH;
            let last = batch.last().map(|entity| entity.updated_at.clone());
            entities.extend(batch);
            match last {
                Some(last) if full && last > since => since = last,
                _ => break,
            }
        }
        if let Some(newest) = entities.iter().map(|e| &e.updated_at).max()
            && *newest > self.entities_seen
        {
            self.entities_seen.clone_from(newest);
        }
        if entities.is_empty() {
            return Ok(0);
        }
        let library = self.library.clone();
        let count = entities.len();
        blocking(move || {
            for entity in &entities {
                if let Err(error) = library.index_entity(entity) {
                    tracing::warn!(entity = %entity.id, %error, "following an entity failed");
                }
            }
        })
        .await;
        Ok(count)
    }

    async fn follow_documents(&mut self) -> Result<usize, StoreError> {
        let mut since = earlier(&self.documents_seen, OVERLAP);
        loop {
            let batch = self.store.documents_created_since(&since, BATCH).await?;
            let full = batch.len() == BATCH;
            let last = batch.last().map(|document| document.created_at.clone());
            for document in batch {
                if document.created_at > self.documents_seen {
                    self.documents_seen.clone_from(&document.created_at);
                }
                if !self.waiting.contains_key(&document.id)
                    && !self.library.contains_document(&document.id)
                {
                    self.waiting
                        .insert(document.id.clone(), (Instant::now(), document));
                }
            }
            match last {
                Some(last) if full && last > since => since = last,
                _ => break,
            }
        }
        let mut indexed = 0;
        let ids: Vec<String> = self.waiting.keys().cloned().collect();
        for id in ids {
            if self.library.contains_document(&id) {
                // Indexed meanwhile by this process (it wrote the document).
                self.waiting.remove(&id);
                continue;
            }
            let Some((seen, document)) = self.waiting.get(&id) else {
                continue;
            };
            let chunks = self
                .store
                .document_chunks(&document.project_id, &document.id)
                .await?;
            if chunks.is_empty() && seen.elapsed() < CHUNK_GRACE {
                continue;
            }
            let links = self
                .store
                .document_entity_ids(&document.project_id, &document.id)
                .await?;
            let Some((_, document)) = self.waiting.remove(&id) else {
                continue;
            };
            let library = self.library.clone();
            blocking(move || {
                if let Err(error) = library.index_stored_document(&document, &links, chunks) {
                    tracing::warn!(document = %document.id, %error, "following a document failed");
                }
            })
            .await;
            indexed += 1;
        }
        Ok(indexed)
    }

    async fn follow_links(&mut self) -> Result<usize, StoreError> {
        let mut since = earlier(&self.links_seen, OVERLAP);
        let mut linked = 0;
        loop {
            let batch = self.store.document_links_since(&since, BATCH).await?;
            let full = batch.len() == BATCH;
            let last = batch.last().map(|link| link.created_at.clone());
            for link in &batch {
                if link.created_at > self.links_seen {
                    self.links_seen.clone_from(&link.created_at);
                }
                let missing = self
                    .library
                    .document_entities(&link.document_id)
                    .is_some_and(|linked| !linked.contains(&link.entity_id));
                if !missing {
                    // Linked already, or not indexed here yet (indexing reads its links).
                    continue;
                }
                match self.library.link(&link.document_id, &link.entity_id) {
                    Ok(()) => linked += 1,
                    Err(error) => {
                        tracing::warn!(document = %link.document_id, %error, "following a link failed")
                    }
                }
            }
            match last {
                Some(last) if full && last > since => since = last,
                _ => break,
            }
        }
        Ok(linked)
    }
}

/// Runs `work` where blocking is fine (embedding may be slow).
async fn blocking(work: impl FnOnce() + Send + 'static) {
    if let Err(error) = tokio::task::spawn_blocking(work).await {
        tracing::warn!(%error, "following the store: indexing panicked");
    }
}

/// Polls every [`POLL`] on the current runtime until the runtime shuts down; failures are
/// logged and retried at the next poll.
pub fn spawn(mut follower: Follower) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(POLL);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            match follower.poll().await {
                Ok(followed) if followed != Followed::default() => {
                    tracing::debug!(?followed, "followed the store");
                }
                Ok(_) => {}
                Err(error) => tracing::warn!(%error, "following the store failed"),
            }
        }
    })
}

/// Now, in the store's time format (RFC 3339 UTC, microseconds).
pub fn store_now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// `at` (a store time) minus `by`; "" (the beginning) when `at` is unreadable.
fn earlier(at: &str, by: Duration) -> String {
    let Ok(at) = chrono::DateTime::parse_from_rfc3339(at) else {
        return String::new();
    };
    let by = chrono::Duration::from_std(by).unwrap_or(chrono::Duration::zero());
    (at.with_timezone(&chrono::Utc) - by).to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earlier_keeps_the_store_format() {
        assert_eq!(
            earlier("2026-01-01T00:00:03.000001Z", Duration::from_secs(5)),
            "2025-12-31T23:59:58.000001Z"
        );
        assert_eq!(earlier("", OVERLAP), "");
        assert_eq!(store_now().len(), "2026-01-01T00:00:00.000000Z".len());
    }
}
