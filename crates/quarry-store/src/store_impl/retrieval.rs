//! Chunks and their searches: the rows the in-process index is built from, and on PostgreSQL
//! the text and vector searches themselves (`RetrievalStore`).

macro_rules! retrieval_methods {
    () => {
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
                let mut tx = self.pool.begin().await.map_err(backend)?;
                sqlx::query(sql::DELETE_CHUNKS)
                    .bind(project)
                    .bind(document_id)
                    .execute(&mut *tx)
                    .await
                    .map_err(backend)?;
                let documents: i64 = sqlx::query_scalar(sql::COUNT_DOCUMENT)
                    .bind(project)
                    .bind(document_id)
                    .fetch_one(&mut *tx)
                    .await
                    .map_err(backend)?;
                if documents == 0 {
                    return Err(not_found("document", document_id));
                }
                for chunk in chunks {
                    sqlx::query(sql::INSERT_CHUNK)
                        .bind(project)
                        .bind(document_id)
                        .bind(chunk.ordinal)
                        .bind(sql_offset("chunk start", chunk.start)?)
                        .bind(sql_offset("chunk end", chunk.end)?)
                        .bind(sql_offset("chunk byte start", chunk.byte_start)?)
                        .bind(sql_offset("chunk byte end", chunk.byte_end)?)
                        .bind(&chunk.embedder)
                        .bind(encode_embedding(&chunk.embedding))
                        .execute(&mut *tx)
                        .await
                        .map_err(backend)?;
                }
                // pgvector's copy of the vectors (a no-op elsewhere).
                // The database's own search indexes of the chunks (a no-op on SQLite).
                self.index_written_chunks(&mut tx, project, document_id, chunks)
                    .await?;
                tx.commit().await.map_err(backend)?;
                Ok(())
            })
        }

        fn all_chunks(&self) -> StoreFuture<'_, Vec<(String, StoredChunk)>> {
            Box::pin(async move {
                sqlx::query_as::<_, ChunkRow>(sql::ALL_CHUNKS)
                    .fetch_all(&self.pool)
                    .await
                    .map_err(backend)?
                    .into_iter()
                    .map(<(String, StoredChunk)>::try_from)
                    .collect()
            })
        }

        fn all_document_links(&self) -> StoreFuture<'_, Vec<(String, String, Vec<String>)>> {
            Box::pin(async move {
                let rows: Vec<(String, String, Option<String>)> =
                    sqlx::query_as(sql::ALL_DOCUMENT_LINKS)
                        .fetch_all(&self.pool)
                        .await
                        .map_err(backend)?;
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
                sqlx::query_as::<_, ChunkRow>(sql::DOCUMENT_CHUNKS)
                    .bind(project)
                    .bind(document_id)
                    .fetch_all(&self.pool)
                    .await
                    .map_err(backend)?
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
            Box::pin(self.native_vector_search(project, embedder, query, k, document_ids))
        }

        fn text_search<'a>(
            &'a self,
            project: &'a str,
            query: &'a str,
            k: usize,
            document_ids: Option<&'a [String]>,
        ) -> StoreFuture<'a, Option<Vec<quarry_core::store::ChunkMatch>>> {
            Box::pin(self.native_text_search(project, query, k, document_ids))
        }

        fn linked_document_ids<'a>(
            &'a self,
            project: &'a str,
            entity_ids: &'a [String],
        ) -> StoreFuture<'a, Vec<String>> {
            Box::pin(async move {
                let mut ids = BTreeSet::new();
                for entity_id in entity_ids {
                    let linked: Vec<String> = sqlx::query_scalar(sql::LINKED_DOCUMENT_IDS)
                        .bind(project)
                        .bind(entity_id)
                        .fetch_all(&self.pool)
                        .await
                        .map_err(backend)?;
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
            Box::pin(self.native_put_entity_vector(entity, embedder, text, vector))
        }

        fn entity_vector_search<'a>(
            &'a self,
            project: &'a str,
            embedder: &'a str,
            query: &'a [f32],
            entity_type: Option<&'a str>,
            k: usize,
        ) -> StoreFuture<'a, Option<Vec<quarry_core::store::EntityMatch>>> {
            Box::pin(self.native_entity_vector_search(project, embedder, query, entity_type, k))
        }

        fn prepare_vector_search(&self, dims: usize) -> StoreFuture<'_, ()> {
            Box::pin(self.native_prepare_vector_search(dims))
        }

        fn entities_without_vectors<'a>(
            &'a self,
            embedder: &'a str,
            limit: usize,
        ) -> StoreFuture<'a, Vec<Entity>> {
            Box::pin(self.native_entities_without_vectors(embedder, limit))
        }
    };
}
pub(crate) use retrieval_methods;
