//! Chunks and their searches: the rows the in-process index is built from, and on PostgreSQL
//! the text and vector searches themselves (`RetrievalStore`).

use std::collections::BTreeSet;

use quarry_core::model::{Entity, StoredChunk};
use quarry_core::store::prelude::*;
use quarry_core::store::{StoreError, StoreFuture};

use super::{SqlStore, sql_offset};
use crate::db::{Tx, query, query_as, query_scalar};
use crate::error::not_found;
use crate::rows::{ChunkRow, encode_embedding};
use crate::sql;

impl RetrievalStore for SqlStore {
    fn put_chunks<'a>(
        &'a self,
        project: &'a str,
        document_id: &'a str,
        chunks: &'a [StoredChunk],
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let _writer = self.write_gate().await;
            if let Some(stray) = chunks.iter().find(|c| c.document_id != document_id) {
                return Err(StoreError::Conflict(format!(
                    "chunk #{} of document '{}' given for document '{document_id}'",
                    stray.ordinal, stray.document_id
                )));
            }
            let mut tx = self.pool.begin().await?;
            query(sql::DELETE_CHUNKS)
                .bind(project)
                .bind(document_id)
                .execute(&mut tx)
                .await?;
            let documents: i64 = query_scalar(sql::COUNT_DOCUMENT)
                .bind(project)
                .bind(document_id)
                .fetch_one(&mut tx)
                .await?;
            if documents == 0 {
                return Err(not_found("document", document_id));
            }
            for chunk in chunks {
                query(sql::INSERT_CHUNK)
                    .bind(project)
                    .bind(document_id)
                    .bind(chunk.ordinal)
                    .bind(sql_offset("chunk start", chunk.start)?)
                    .bind(sql_offset("chunk end", chunk.end)?)
                    .bind(sql_offset("chunk byte start", chunk.byte_start)?)
                    .bind(sql_offset("chunk byte end", chunk.byte_end)?)
                    .bind(&chunk.embedder)
                    .bind(encode_embedding(&chunk.embedding))
                    .execute(&mut tx)
                    .await?;
            }
            // The database's own search indexes of the chunks, and pgvector's copy of the
            // vectors: PostgreSQL only (SQLite's chunk rows feed the in-process index).
            if let (Some(pg), Tx::Postgres(pg_tx)) = (&self.postgres, &mut tx) {
                pg.index_written_chunks(pg_tx, project, document_id, chunks)
                    .await?;
            }
            tx.commit().await?;
            Ok(())
        })
    }

    fn all_chunks(&self) -> StoreFuture<'_, Vec<(String, StoredChunk)>> {
        Box::pin(async move {
            query_as::<ChunkRow>(sql::ALL_CHUNKS)
                .fetch_all(&self.pool)
                .await?
                .into_iter()
                .map(<(String, StoredChunk)>::try_from)
                .collect()
        })
    }

    fn all_document_links(&self) -> StoreFuture<'_, Vec<(String, String, Vec<String>)>> {
        Box::pin(async move {
            let rows: Vec<(String, String, Option<String>)> = query_as(sql::ALL_DOCUMENT_LINKS)
                .fetch_all(&self.pool)
                .await?;
            // (document id, project id, entity ids); rows come grouped by document.
            let mut links: Vec<(String, String, Vec<String>)> = Vec::new();
            for (project_id, document_id, entity_id) in rows {
                match links.last_mut() {
                    Some((id, _, entities)) if *id == document_id => {
                        entities.extend(entity_id);
                    }
                    _ => links.push((document_id, project_id, entity_id.into_iter().collect())),
                }
            }
            Ok(links)
        })
    }

    fn document_chunks<'a>(
        &'a self,
        project: &'a str,
        document_id: &'a str,
    ) -> StoreFuture<'a, Vec<StoredChunk>> {
        Box::pin(async move {
            query_as::<ChunkRow>(sql::DOCUMENT_CHUNKS)
                .bind(project)
                .bind(document_id)
                .fetch_all(&self.pool)
                .await?
                .into_iter()
                .map(|row| <(String, StoredChunk)>::try_from(row).map(|(_, chunk)| chunk))
                .collect()
        })
    }

    fn vector_search<'a>(
        &'a self,
        project: &'a str,
        embedder: &'a str,
        query: &'a [f32],
        k: usize,
        document_ids: Option<&'a [String]>,
    ) -> StoreFuture<'a, Option<Vec<quarry_core::store::ChunkMatch>>> {
        Box::pin(async move {
            match &self.postgres {
                Some(pg) => {
                    pg.vector_search(project, embedder, query, k, document_ids)
                        .await
                }
                // No vector search of its own: the in-process index answers.
                None => Ok(None),
            }
        })
    }

    fn text_search<'a>(
        &'a self,
        project: &'a str,
        query: &'a str,
        k: usize,
        document_ids: Option<&'a [String]>,
    ) -> StoreFuture<'a, Option<Vec<quarry_core::store::ChunkMatch>>> {
        Box::pin(async move {
            match &self.postgres {
                Some(pg) => pg.text_search(project, query, k, document_ids).await,
                // No text search of its own.
                None => Ok(None),
            }
        })
    }

    fn linked_document_ids<'a>(
        &'a self,
        project: &'a str,
        entity_ids: &'a [String],
    ) -> StoreFuture<'a, Vec<String>> {
        Box::pin(async move {
            let mut ids = BTreeSet::new();
            for entity_id in entity_ids {
                let linked: Vec<String> = query_scalar(sql::LINKED_DOCUMENT_IDS)
                    .bind(project)
                    .bind(entity_id)
                    .fetch_all(&self.pool)
                    .await?;
                ids.extend(linked);
            }
            Ok(ids.into_iter().collect())
        })
    }

    fn put_entity_vector<'a>(
        &'a self,
        entity: &'a Entity,
        embedder: &'a str,
        text: &'a str,
        vector: &'a [f32],
    ) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            match &self.postgres {
                Some(pg) => pg.put_entity_vector(entity, embedder, text, vector).await,
                // No entity vectors: the in-process index keeps them.
                None => Ok(false),
            }
        })
    }

    fn entity_vector_search<'a>(
        &'a self,
        project: &'a str,
        embedder: &'a str,
        query: &'a [f32],
        entity_type: Option<&'a str>,
        k: usize,
    ) -> StoreFuture<'a, Option<Vec<quarry_core::store::EntityMatch>>> {
        Box::pin(async move {
            match &self.postgres {
                Some(pg) => {
                    pg.entity_vector_search(project, embedder, query, entity_type, k)
                        .await
                }
                None => Ok(None),
            }
        })
    }

    fn prepare_vector_search(&self, dims: usize) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            match &self.postgres {
                Some(pg) => pg.prepare_vector_search(dims).await,
                // No vector indexes to prepare.
                None => Ok(()),
            }
        })
    }

    fn entities_without_vectors<'a>(
        &'a self,
        embedder: &'a str,
        limit: usize,
    ) -> StoreFuture<'a, Vec<Entity>> {
        Box::pin(async move {
            match &self.postgres {
                Some(pg) => pg.entities_without_vectors(embedder, limit).await,
                None => Ok(Vec::new()),
            }
        })
    }
}
