//! What the server benches share: an API key stored for the bench's project, a retriever with no
//! documents, and percentiles of measured latencies. (A folder module: cargo does not take it
//! for a bench target of its own.)

#![allow(dead_code)]

use std::time::Duration;

use quarry_core::model::{ApiKey, Document, Entity, StoredChunk};
use quarry_core::retrieval::{EntityHit, PassageHit, RetrievalError, Retriever};
use quarry_core::store::Store;
use quarry_server::keys::{self, NewKey};

/// Creates and stores a key of `project` with `scopes`; the returned key carries its secret.
pub async fn store_key(store: &dyn Store, project: &str, scopes: &[&str]) -> NewKey {
    let key = keys::generate().expect("a key");
    store
        .create_api_key(&ApiKey {
            id: key.prefix.clone(),
            project_id: project.to_owned(),
            name: "bench".into(),
            prefix: key.prefix.clone(),
            secret_hash: key.hash.clone(),
            scopes: scopes.iter().map(|scope| (*scope).to_owned()).collect(),
            created_at: "2026-01-01T00:00:00Z".into(),
            revoked: false,
        })
        .await
        .expect("key stored");
    key
}

/// reqwest is built without a TLS crypto provider: installs the one the workspace uses. Call once
/// before making HTTP clients.
pub fn install_tls_provider() {
    quarry_llm::install_crypto_provider();
}

/// The `p` quantile (0.0–1.0) of durations sorted ascending.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
}

/// Milliseconds, for printing.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// No documents and nothing to index: the benches measure the server and the store, not search.
pub struct NoDocuments;

impl Retriever for NoDocuments {
    fn search_documents(
        &self,
        _: &str,
        _: &str,
        _: Option<&[String]>,
        _: usize,
    ) -> Result<Vec<PassageHit>, RetrievalError> {
        Ok(Vec::new())
    }

    fn search_entities(
        &self,
        _: &str,
        _: &str,
        _: Option<&str>,
        _: usize,
    ) -> Result<Vec<EntityHit>, RetrievalError> {
        Ok(Vec::new())
    }

    fn index_document(
        &self,
        _: &Document,
        _: &[String],
    ) -> Result<Vec<StoredChunk>, RetrievalError> {
        Ok(Vec::new())
    }

    fn link(&self, _: &str, _: &str) -> Result<(), RetrievalError> {
        Ok(())
    }

    fn index_entity(&self, _: &Entity) -> Result<(), RetrievalError> {
        Ok(())
    }
}
