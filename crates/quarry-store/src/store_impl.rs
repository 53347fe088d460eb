//! The one implementation of `Store`, expanded for each backend's pool type. Both backends run
//! the same statements (`sql.rs`) and row mapping (`rows.rs`); sqlx's executor and transaction
//! types differ per database, and a macro keeps that difference out of the logic without the
//! wall of trait bounds a generic function would need.
//!
//! SQLite note: a transaction that reads before it writes can fail with `SQLITE_BUSY` when
//! another connection commits in between (the busy timeout cannot help an upgrade). So every
//! transaction here *writes first*, taking the write lock (waiting on the busy timeout), and
//! reads afterwards. The first write locks the entity concerned (`sql::LOCK_ENTITY`), which on
//! PostgreSQL serialises writers of one entity's results under READ COMMITTED. Graph writes
//! (`apply_graph`) lock the project row first (`sql::LOCK_PROJECT`) instead, so their look-up of
//! an entity by (type, title) before inserting it cannot race another graph write.

/// `impl Store for $store` over `self.pool`. `$claim_episodes` is the backend's queue take
/// (`sql::CLAIM_EPISODES_*`), the one statement whose text differs between the dialects.
macro_rules! impl_store {
    ($store:ty, $db:ty, $claim_episodes:expr) => {
        const _: () = {
            use std::collections::{BTreeMap, BTreeSet};

            use quarry_core::model::{
                ApiKey, Confidence, Document, DocumentKind, Entity, EntityType, Episode,
                EpisodeOutcome, EpisodeStatus, ExtractionResult, ExtractionRun, FeedbackSummary,
                GraphApplied, GraphWrite, NewEntity, NewEpisode, NewResult, Relation,
                ResultStatus, ReviewDecision, RunScope, RunStatus, StoredChunk,
            };
            use quarry_core::store::{Reviewed, Store, StoreError, StoreFuture};
            use serde_json::{Map, Value};
            use sqlx::AssertSqlSafe;
            use sqlx::types::Json;

            use $crate::clock::{millis_between, new_id, now};
            use $crate::error::{backend, not_found};
            use $crate::rows::{
                ApiKeyRow, ChunkRow, DocumentRow, EntityRow, EntityTypeRow, EpisodeRow,
                ReasonCountRow, RelationRow, ResultRow, RunRow, StatusCountRow, encode_embedding,
                enum_text, parse_enum,
            };
            use $crate::sql;

            const INTERRUPTED: &str = "interrupted: the process stopped before the run finished";
            const TOP_REJECTION_REASONS: i64 = 5;

            /// Most values bound into one `IN (...)` list (SQLite allows 32766 parameters).
            const LIST_CHUNK: usize = 512;

            type Arguments = <$db as sqlx::Database>::Arguments;

            /// The one INSERT of an entity row (API, cascade and graph inserts alike).
            fn insert_entity(entity: &Entity) -> sqlx::query::Query<'_, $db, Arguments> {
                sqlx::query(sql::INSERT_ENTITY)
                    .bind(&entity.id)
                    .bind(&entity.project_id)
                    .bind(&entity.entity_type)
                    .bind(&entity.title)
                    .bind(&entity.parent_id)
                    .bind(Json(&entity.fields))
                    .bind(Json(&entity.metadata))
                    .bind(&entity.created_at)
                    .bind(&entity.updated_at)
                    .bind(entity.mention_count)
                    .bind(&entity.notes)
                    .bind(&entity.last_seen_at)
            }

            /// The one INSERT of a document row (files and episodes alike).
            fn insert_document(document: &Document) -> sqlx::query::Query<'_, $db, Arguments> {
                sqlx::query(sql::INSERT_DOCUMENT)
                    .bind(&document.id)
                    .bind(&document.project_id)
                    .bind(&document.title)
                    .bind(&document.text)
                    .bind(document.kind.as_str())
                    .bind(&document.created_at)
            }

            fn sql_limit(limit: usize) -> i64 {
                i64::try_from(limit).unwrap_or(i64::MAX)
            }

            fn sql_offset(what: &str, value: usize) -> Result<i64, StoreError> {
                i64::try_from(value)
                    .map_err(|_| StoreError::Conflict(format!("{what} {value} is out of range")))
            }

            /// The distinct `values` in lists of at most [`LIST_CHUNK`], each padded (repeating
            /// its last value, harmless in `IN`) to a power of two: a handful of statement texts
            /// serve every length, so the per-connection statement cache stays small.
            fn padded_lists(values: &[String]) -> Vec<Vec<&str>> {
                let distinct: Vec<&str> = values
                    .iter()
                    .map(String::as_str)
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect();
                distinct
                    .chunks(LIST_CHUNK)
                    .map(|list| {
                        let mut padded = list.to_vec();
                        padded.resize(list.len().next_power_of_two(), list[list.len() - 1]);
                        padded
                    })
                    .collect()
            }

            /// Changes to `feedback_counts`: (entity type, field, status, confidence) → delta.
            type CountDeltas = BTreeMap<(String, String, String, String), i64>;

            impl $store {
                async fn entity(
                    &self,
                    project: &str,
                    id: &str,
                ) -> Result<Option<Entity>, StoreError> {
                    let row = sqlx::query_as::<_, EntityRow>(sql::ENTITY_BY_ID)
                        .bind(project)
                        .bind(id)
                        .fetch_optional(&self.pool)
                        .await
                        .map_err(backend)?;
                    Ok(row.map(Entity::from))
                }

                async fn result(
                    &self,
                    project: &str,
                    id: &str,
                ) -> Result<Option<ExtractionResult>, StoreError> {
                    sqlx::query_as::<_, ResultRow>(sql::RESULT_BY_ID)
                        .bind(project)
                        .bind(id)
                        .fetch_optional(&self.pool)
                        .await
                        .map_err(backend)?
                        .map(ExtractionResult::try_from)
                        .transpose()
                }

                async fn run(
                    &self,
                    project: &str,
                    id: &str,
                ) -> Result<Option<ExtractionRun>, StoreError> {
                    sqlx::query_as::<_, RunRow>(sql::RUN_BY_ID)
                        .bind(project)
                        .bind(id)
                        .fetch_optional(&self.pool)
                        .await
                        .map_err(backend)?
                        .map(ExtractionRun::try_from)
                        .transpose()
                }

                async fn require_entity(&self, project: &str, id: &str) -> Result<(), StoreError> {
                    let found: i64 = sqlx::query_scalar(sql::COUNT_ENTITY)
                        .bind(project)
                        .bind(id)
                        .fetch_one(&self.pool)
                        .await
                        .map_err(backend)?;
                    if found == 0 {
                        Err(not_found("entity", id))
                    } else {
                        Ok(())
                    }
                }

                /// `apply_graph`, and with `finish` also `finish_episode` of `episode_id`, in one
                /// transaction. Statements: the project lock, the episode's end (or its existence
                /// check), one multi-row mention of the entities named by id, per other entity a
                /// mention by (type, title) or an insert, one multi-row link insert, one
                /// multi-row relation upsert. Repeated ids or relation keys in one write (not
                /// what the engine sends) take the one-row-at-a-time statements instead, which
                /// count every repetition.
                async fn write_graph(
                    &self,
                    project: &str,
                    episode_id: Option<&str>,
                    write: &GraphWrite,
                    finish: Option<&EpisodeOutcome>,
                ) -> Result<GraphApplied, StoreError> {
                    let count = write.entities.len();
                    if let Some(bad) = write
                        .relationships
                        .iter()
                        .find(|relation| relation.from >= count || relation.to >= count)
                    {
                        return Err(StoreError::Conflict(format!(
                            "relationship '{}' joins entities #{} and #{} of a write holding {count}",
                            bad.label, bad.from, bad.to
                        )));
                    }
                    let _writer = self.write_gate().await;
                    // Dropping `tx` on an early return rolls everything back.
                    let mut tx = self.pool.begin().await.map_err(backend)?;
                    // The project first: graph writes of one project queue here.
                    let locked = sqlx::query(sql::LOCK_PROJECT)
                        .bind(project)
                        .execute(&mut *tx)
                        .await
                        .map_err(backend)?;
                    if locked.rows_affected() == 0 {
                        return Err(not_found("project", project));
                    }
                    // After the lock: times follow the order in which writes of a project land.
                    let at = now();
                    match (episode_id, finish) {
                        (Some(episode_id), Some(outcome)) => {
                            let status = match outcome.error {
                                None => EpisodeStatus::Done,
                                Some(_) => EpisodeStatus::Failed,
                            };
                            let ended = sqlx::query(sql::END_EPISODE)
                                .bind(project)
                                .bind(episode_id)
                                .bind(status.as_str())
                                .bind(&outcome.error)
                                .bind(outcome.entities_stored)
                                .bind(outcome.entities_skipped)
                                .bind(outcome.relationships_stored)
                                .bind(outcome.relationships_skipped)
                                .bind(&at)
                                .execute(&mut *tx)
                                .await
                                .map_err(backend)?;
                            if ended.rows_affected() == 0 {
                                return Err(not_found("episode", episode_id));
                            }
                        }
                        (Some(episode_id), None) => {
                            let found: i64 = sqlx::query_scalar(sql::COUNT_EPISODE)
                                .bind(project)
                                .bind(episode_id)
                                .fetch_one(&mut *tx)
                                .await
                                .map_err(backend)?;
                            if found == 0 {
                                return Err(not_found("episode", episode_id));
                            }
                        }
                        (None, _) => {}
                    }

                    let mut entities: Vec<Option<Entity>> = vec![None; count];
                    let mut inserted = vec![false; count];
                    // Entities named by id: one statement per chunk when the ids are distinct.
                    let by_id: Vec<(usize, &str)> = write
                        .entities
                        .iter()
                        .enumerate()
                        .filter_map(|(i, node)| node.existing_id.as_deref().map(|id| (i, id)))
                        .collect();
                    let distinct = by_id.iter().map(|(_, id)| *id).collect::<BTreeSet<_>>();
                    if distinct.len() == by_id.len() {
                        for chunk in by_id.chunks(sql::MAX_ROWS) {
                            let text = sql::with_rows(
                                sql::MENTION_ENTITIES,
                                sql::MENTION_ENTITIES_ROW,
                                2,
                                chunk.len(),
                            );
                            let mut query =
                                sqlx::query_as::<_, EntityRow>(AssertSqlSafe(text)).bind(project);
                            for &(i, id) in chunk {
                                query = query.bind(id).bind(&write.entities[i].notes).bind(now());
                            }
                            let mut rows: BTreeMap<String, Entity> = query
                                .fetch_all(&mut *tx)
                                .await
                                .map_err(backend)?
                                .into_iter()
                                .map(|row| {
                                    let entity = Entity::from(row);
                                    (entity.id.clone(), entity)
                                })
                                .collect();
                            for &(i, id) in chunk {
                                entities[i] =
                                    Some(rows.remove(id).ok_or_else(|| not_found("entity", id))?);
                            }
                        }
                    } else {
                        for &(i, id) in &by_id {
                            let row = sqlx::query_as::<_, EntityRow>(sql::MENTION_ENTITY)
                                .bind(project)
                                .bind(id)
                                .bind(now())
                                .bind(&write.entities[i].notes)
                                .fetch_optional(&mut *tx)
                                .await
                                .map_err(backend)?
                                .ok_or_else(|| not_found("entity", id))?;
                            entities[i] = Some(Entity::from(row));
                        }
                    }
                    // The others by exact (type, title), inserted when missing; one after the
                    // other, so a later one finds what an earlier one inserted.
                    for (i, node) in write.entities.iter().enumerate() {
                        if node.existing_id.is_some() {
                            continue;
                        }
                        let at = now();
                        let updated = sqlx::query_as::<_, EntityRow>(sql::MENTION_ENTITY_BY_TITLE)
                            .bind(project)
                            .bind(&node.entity_type)
                            .bind(&node.name)
                            .bind(&at)
                            .bind(&node.notes)
                            .fetch_optional(&mut *tx)
                            .await
                            .map_err(backend)?;
                        entities[i] = Some(match updated {
                            Some(row) => Entity::from(row),
                            None => {
                                let mut metadata = Map::new();
                                metadata.insert("source".into(), Value::from(node.source.clone()));
                                let created = Entity {
                                    id: new_id(),
                                    project_id: project.to_owned(),
                                    entity_type: node.entity_type.clone(),
                                    title: node.name.clone(),
                                    parent_id: None,
                                    fields: Map::new(),
                                    metadata,
                                    created_at: at.clone(),
                                    updated_at: at.clone(),
                                    mention_count: 1,
                                    notes: node.notes.clone(),
                                    last_seen_at: Some(at.clone()),
                                };
                                insert_entity(&created)
                                    .execute(&mut *tx)
                                    .await
                                    .map_err(backend)?;
                                inserted[i] = true;
                                created
                            }
                        });
                    }
                    let entities: Vec<Entity> = entities.into_iter().flatten().collect();

                    if let Some(episode_id) = episode_id {
                        let linked: Vec<&str> = entities
                            .iter()
                            .map(|entity| entity.id.as_str())
                            .collect::<BTreeSet<_>>()
                            .into_iter()
                            .collect();
                        for chunk in linked.chunks(sql::MAX_ROWS) {
                            let text = sql::with_rows(
                                sql::INSERT_DOCUMENT_LINKS,
                                sql::INSERT_DOCUMENT_LINKS_ROW,
                                4,
                                chunk.len(),
                            );
                            let mut query = sqlx::query(AssertSqlSafe(text))
                                .bind(project)
                                .bind(episode_id)
                                .bind(&at);
                            for id in chunk {
                                query = query.bind(*id);
                            }
                            query.execute(&mut *tx).await.map_err(backend)?;
                        }
                    }

                    let keys: Vec<(&str, &str, &str)> = write
                        .relationships
                        .iter()
                        .map(|relation| {
                            (
                                entities[relation.from].id.as_str(),
                                entities[relation.to].id.as_str(),
                                relation.label.as_str(),
                            )
                        })
                        .collect();
                    let mut relations = Vec::with_capacity(keys.len());
                    if keys.iter().collect::<BTreeSet<_>>().len() == keys.len() {
                        let rows: Vec<(usize, &(&str, &str, &str))> =
                            keys.iter().enumerate().collect();
                        for chunk in rows.chunks(sql::MAX_ROWS) {
                            let text = sql::with_rows(
                                sql::UPSERT_RELATIONS,
                                sql::UPSERT_RELATIONS_ROW,
                                2,
                                chunk.len(),
                            );
                            let mut query = sqlx::query_as::<_, RelationRow>(AssertSqlSafe(text))
                                .bind(project);
                            for &(i, &(from, to, label)) in chunk {
                                let at = now();
                                query = query
                                    .bind(new_id())
                                    .bind(from)
                                    .bind(to)
                                    .bind(label)
                                    .bind(&write.relationships[i].notes)
                                    .bind(at.clone())
                                    .bind(at);
                            }
                            let mut upserted: BTreeMap<(String, String, String), Relation> = query
                                .fetch_all(&mut *tx)
                                .await
                                .map_err(backend)?
                                .into_iter()
                                .map(|row| {
                                    let relation = Relation::from(row);
                                    let key = (
                                        relation.from_id.clone(),
                                        relation.to_id.clone(),
                                        relation.label.clone(),
                                    );
                                    (key, relation)
                                })
                                .collect();
                            for &(_, &(from, to, label)) in chunk {
                                let key = (from.to_owned(), to.to_owned(), label.to_owned());
                                let relation = upserted.remove(&key).ok_or_else(|| {
                                    StoreError::Backend(format!(
                                        "the upsert of relation '{label}' returned no row"
                                    ))
                                })?;
                                relations.push(relation);
                            }
                        }
                    } else {
                        for (i, &(from, to, label)) in keys.iter().enumerate() {
                            let row = sqlx::query_as::<_, RelationRow>(sql::UPSERT_RELATION)
                                .bind(new_id())
                                .bind(project)
                                .bind(from)
                                .bind(to)
                                .bind(label)
                                .bind(now())
                                .bind(&write.relationships[i].notes)
                                .fetch_one(&mut *tx)
                                .await
                                .map_err(backend)?;
                            relations.push(Relation::from(row));
                        }
                    }
                    tx.commit().await.map_err(backend)?;
                    Ok(GraphApplied {
                        entities,
                        inserted,
                        relations,
                    })
                }
            }

            impl Store for $store {
                fn ensure_project<'a>(&'a self, name: &'a str) -> StoreFuture<'a, String> {
                    Box::pin(async move {
                        let _writer = self.write_gate().await;
                        sqlx::query(sql::INSERT_PROJECT)
                            .bind(new_id())
                            .bind(name)
                            .bind(now())
                            .execute(&self.pool)
                            .await
                            .map_err(backend)?;
                        sqlx::query_scalar(sql::PROJECT_ID_BY_NAME)
                            .bind(name)
                            .fetch_one(&self.pool)
                            .await
                            .map_err(backend)
                    })
                }

                fn create_api_key<'a>(&'a self, key: &'a ApiKey) -> StoreFuture<'a, ()> {
                    Box::pin(async move {
                        let _writer = self.write_gate().await;
                        sqlx::query(sql::INSERT_API_KEY)
                            .bind(&key.id)
                            .bind(&key.project_id)
                            .bind(&key.name)
                            .bind(&key.prefix)
                            .bind(&key.secret_hash)
                            .bind(Json(&key.scopes))
                            .bind(&key.created_at)
                            .bind(key.revoked)
                            .execute(&self.pool)
                            .await
                            .map_err(backend)?;
                        Ok(())
                    })
                }

                fn list_project_ids(&self) -> StoreFuture<'_, Vec<String>> {
                    Box::pin(async move {
                        sqlx::query_scalar(sql::PROJECT_IDS)
                            .fetch_all(&self.pool)
                            .await
                            .map_err(backend)
                    })
                }

                fn find_api_key<'a>(&'a self, prefix: &'a str) -> StoreFuture<'a, Option<ApiKey>> {
                    Box::pin(async move {
                        let row = sqlx::query_as::<_, ApiKeyRow>(sql::API_KEY_BY_PREFIX)
                            .bind(prefix)
                            .fetch_optional(&self.pool)
                            .await
                            .map_err(backend)?;
                        Ok(row.map(ApiKey::from))
                    })
                }

                fn put_entity_type<'a>(
                    &'a self,
                    project: &'a str,
                    entity_type: &'a EntityType,
                ) -> StoreFuture<'a, ()> {
                    Box::pin(async move {
                        let _writer = self.write_gate().await;
                        sqlx::query(sql::UPSERT_ENTITY_TYPE)
                            .bind(project)
                            .bind(&entity_type.slug)
                            .bind(Json(entity_type))
                            .bind(now())
                            .execute(&self.pool)
                            .await
                            .map_err(backend)?;
                        Ok(())
                    })
                }

                fn get_entity_type<'a>(
                    &'a self,
                    project: &'a str,
                    slug: &'a str,
                ) -> StoreFuture<'a, Option<EntityType>> {
                    Box::pin(async move {
                        let row = sqlx::query_as::<_, EntityTypeRow>(sql::ENTITY_TYPE_BY_SLUG)
                            .bind(project)
                            .bind(slug)
                            .fetch_optional(&self.pool)
                            .await
                            .map_err(backend)?;
                        Ok(row.map(EntityType::from))
                    })
                }

                fn list_entity_types<'a>(
                    &'a self,
                    project: &'a str,
                ) -> StoreFuture<'a, Vec<EntityType>> {
                    Box::pin(async move {
                        let rows = sqlx::query_as::<_, EntityTypeRow>(sql::ENTITY_TYPES)
                            .bind(project)
                            .fetch_all(&self.pool)
                            .await
                            .map_err(backend)?;
                        Ok(rows.into_iter().map(EntityType::from).collect())
                    })
                }

                fn create_entity<'a>(
                    &'a self,
                    project: &'a str,
                    entity: &'a NewEntity,
                ) -> StoreFuture<'a, Entity> {
                    Box::pin(async move {
                        let _writer = self.write_gate().await;
                        if let Some(parent) = &entity.parent_id {
                            self.require_entity(project, parent).await?;
                        }
                        let at = now();
                        let created = Entity {
                            id: new_id(),
                            project_id: project.to_owned(),
                            entity_type: entity.entity_type.clone(),
                            title: entity.title.clone(),
                            parent_id: entity.parent_id.clone(),
                            fields: entity.fields.clone(),
                            metadata: entity.metadata.clone(),
                            created_at: at.clone(),
                            updated_at: at,
                            mention_count: 0,
                            notes: None,
                            last_seen_at: None,
                        };
                        insert_entity(&created)
                            .execute(&self.pool)
                            .await
                            .map_err(backend)?;
                        Ok(created)
                    })
                }

                fn get_entity<'a>(
                    &'a self,
                    project: &'a str,
                    id: &'a str,
                ) -> StoreFuture<'a, Option<Entity>> {
                    Box::pin(self.entity(project, id))
                }

                fn list_entities<'a>(
                    &'a self,
                    project: &'a str,
                    entity_type: Option<&'a str>,
                    limit: usize,
                ) -> StoreFuture<'a, Vec<Entity>> {
                    Box::pin(async move {
                        let rows = sqlx::query_as::<_, EntityRow>(sql::ENTITIES)
                            .bind(project)
                            .bind(entity_type)
                            .bind(sql_limit(limit))
                            .fetch_all(&self.pool)
                            .await
                            .map_err(backend)?;
                        Ok(rows.into_iter().map(Entity::from).collect())
                    })
                }

                fn find_entity_by_title<'a>(
                    &'a self,
                    project: &'a str,
                    entity_type: &'a str,
                    title: &'a str,
                ) -> StoreFuture<'a, Option<Entity>> {
                    Box::pin(async move {
                        let row = sqlx::query_as::<_, EntityRow>(sql::ENTITY_BY_TITLE)
                            .bind(project)
                            .bind(entity_type)
                            .bind(title)
                            .fetch_optional(&self.pool)
                            .await
                            .map_err(backend)?;
                        Ok(row.map(Entity::from))
                    })
                }

                fn set_entity_metadata<'a>(
                    &'a self,
                    project: &'a str,
                    id: &'a str,
                    metadata: &'a Map<String, Value>,
                ) -> StoreFuture<'a, Entity> {
                    Box::pin(async move {
                        let _writer = self.write_gate().await;
                        let updated = sqlx::query(sql::SET_ENTITY_METADATA)
                            .bind(project)
                            .bind(id)
                            .bind(Json(metadata))
                            .bind(now())
                            .execute(&self.pool)
                            .await
                            .map_err(backend)?;
                        if updated.rows_affected() == 0 {
                            return Err(not_found("entity", id));
                        }
                        self.entity(project, id)
                            .await?
                            .ok_or_else(|| not_found("entity", id))
                    })
                }

                fn upsert_relation<'a>(
                    &'a self,
                    project: &'a str,
                    from_id: &'a str,
                    to_id: &'a str,
                    label: &'a str,
                ) -> StoreFuture<'a, Relation> {
                    Box::pin(async move {
                        let _writer = self.write_gate().await;
                        let found: i64 = sqlx::query_scalar(sql::COUNT_ENTITIES_AMONG)
                            .bind(project)
                            .bind(from_id)
                            .bind(to_id)
                            .fetch_one(&self.pool)
                            .await
                            .map_err(backend)?;
                        let expected = if from_id == to_id { 1 } else { 2 };
                        if found < expected {
                            self.require_entity(project, from_id).await?;
                            return Err(not_found("entity", to_id));
                        }
                        let row = sqlx::query_as::<_, RelationRow>(sql::UPSERT_RELATION)
                            .bind(new_id())
                            .bind(project)
                            .bind(from_id)
                            .bind(to_id)
                            .bind(label)
                            .bind(now())
                            .bind(None::<&str>)
                            .fetch_one(&self.pool)
                            .await
                            .map_err(backend)?;
                        Ok(Relation::from(row))
                    })
                }

                fn connected_entities<'a>(
                    &'a self,
                    project: &'a str,
                    id: &'a str,
                    limit: usize,
                ) -> StoreFuture<'a, Vec<Entity>> {
                    Box::pin(async move {
                        let rows = sqlx::query_as::<_, EntityRow>(sql::CONNECTED_ENTITIES)
                            .bind(project)
                            .bind(id)
                            .bind(sql_limit(limit))
                            .fetch_all(&self.pool)
                            .await
                            .map_err(backend)?;
                        Ok(rows.into_iter().map(Entity::from).collect())
                    })
                }

                fn add_document<'a>(
                    &'a self,
                    project: &'a str,
                    title: &'a str,
                    text: &'a str,
                ) -> StoreFuture<'a, Document> {
                    Box::pin(async move {
                        let _writer = self.write_gate().await;
                        let document = Document {
                            id: new_id(),
                            project_id: project.to_owned(),
                            title: title.to_owned(),
                            text: text.to_owned(),
                            kind: DocumentKind::File,
                            created_at: now(),
                        };
                        insert_document(&document)
                            .execute(&self.pool)
                            .await
                            .map_err(backend)?;
                        Ok(document)
                    })
                }

                fn link_document<'a>(
                    &'a self,
                    project: &'a str,
                    document_id: &'a str,
                    entity_id: &'a str,
                ) -> StoreFuture<'a, ()> {
                    Box::pin(async move {
                        let _writer = self.write_gate().await;
                        let documents: i64 = sqlx::query_scalar(sql::COUNT_DOCUMENT)
                            .bind(project)
                            .bind(document_id)
                            .fetch_one(&self.pool)
                            .await
                            .map_err(backend)?;
                        if documents == 0 {
                            return Err(not_found("document", document_id));
                        }
                        self.require_entity(project, entity_id).await?;
                        sqlx::query(sql::INSERT_DOCUMENT_LINK)
                            .bind(project)
                            .bind(document_id)
                            .bind(entity_id)
                            .bind(now())
                            .execute(&self.pool)
                            .await
                            .map_err(backend)?;
                        Ok(())
                    })
                }

                fn documents<'a>(
                    &'a self,
                    project: &'a str,
                    entity_id: Option<&'a str>,
                ) -> StoreFuture<'a, Vec<Document>> {
                    Box::pin(async move {
                        let query = match entity_id {
                            Some(entity_id) => {
                                sqlx::query_as::<_, DocumentRow>(sql::LINKED_DOCUMENTS)
                                    .bind(project)
                                    .bind(entity_id)
                            }
                            None => sqlx::query_as::<_, DocumentRow>(sql::DOCUMENTS).bind(project),
                        };
                        let rows = query.fetch_all(&self.pool).await.map_err(backend)?;
                        rows.into_iter().map(Document::try_from).collect()
                    })
                }

                fn start_run<'a>(
                    &'a self,
                    project: &'a str,
                    entity_id: &'a str,
                    scope: RunScope,
                    triggered_by: &'a str,
                    fields: Option<&'a [String]>,
                ) -> StoreFuture<'a, ExtractionRun> {
                    Box::pin(async move {
                        let _writer = self.write_gate().await;
                        self.require_entity(project, entity_id).await?;
                        let run = ExtractionRun {
                            id: new_id(),
                            project_id: project.to_owned(),
                            entity_id: entity_id.to_owned(),
                            scope,
                            triggered_by: triggered_by.to_owned(),
                            fields_requested: fields.map(<[String]>::to_vec),
                            status: RunStatus::Running,
                            error: None,
                            started_at: now(),
                            finished_at: None,
                            duration_ms: None,
                        };
                        sqlx::query(sql::INSERT_RUN)
                            .bind(&run.id)
                            .bind(&run.project_id)
                            .bind(&run.entity_id)
                            .bind(enum_text(&run.scope))
                            .bind(&run.triggered_by)
                            .bind(run.fields_requested.as_ref().map(Json))
                            .bind(enum_text(&run.status))
                            .bind(&run.started_at)
                            .execute(&self.pool)
                            .await
                            .map_err(backend)?;
                        Ok(run)
                    })
                }

                fn finish_run<'a>(
                    &'a self,
                    project: &'a str,
                    run_id: &'a str,
                    status: RunStatus,
                    error: Option<&'a str>,
                ) -> StoreFuture<'a, ExtractionRun> {
                    Box::pin(async move {
                        let _writer = self.write_gate().await;
                        let mut run = self
                            .run(project, run_id)
                            .await?
                            .ok_or_else(|| not_found("run", run_id))?;
                        let finished_at = now();
                        run.duration_ms = millis_between(&run.started_at, &finished_at);
                        run.status = status;
                        run.error = error.map(str::to_owned);
                        run.finished_at = Some(finished_at);
                        sqlx::query(sql::FINISH_RUN)
                            .bind(project)
                            .bind(run_id)
                            .bind(enum_text(&run.status))
                            .bind(&run.error)
                            .bind(&run.finished_at)
                            .bind(run.duration_ms)
                            .execute(&self.pool)
                            .await
                            .map_err(backend)?;
                        Ok(run)
                    })
                }

                fn get_run<'a>(
                    &'a self,
                    project: &'a str,
                    run_id: &'a str,
                ) -> StoreFuture<'a, Option<ExtractionRun>> {
                    Box::pin(self.run(project, run_id))
                }

                fn list_runs<'a>(
                    &'a self,
                    project: &'a str,
                    entity_id: &'a str,
                    limit: usize,
                ) -> StoreFuture<'a, Vec<ExtractionRun>> {
                    Box::pin(async move {
                        sqlx::query_as::<_, RunRow>(sql::RUNS_OF_ENTITY)
                            .bind(project)
                            .bind(entity_id)
                            .bind(sql_limit(limit))
                            .fetch_all(&self.pool)
                            .await
                            .map_err(backend)?
                            .into_iter()
                            .map(ExtractionRun::try_from)
                            .collect()
                    })
                }

                fn fail_interrupted_runs(&self) -> StoreFuture<'_, u64> {
                    Box::pin(async move {
                        let _writer = self.write_gate().await;
                        let failed = sqlx::query(sql::FAIL_RUNNING_RUNS)
                            .bind(INTERRUPTED)
                            .bind(now())
                            .execute(&self.pool)
                            .await
                            .map_err(backend)?;
                        Ok(failed.rows_affected())
                    })
                }

                fn record_results<'a>(
                    &'a self,
                    project: &'a str,
                    results: &'a [NewResult],
                ) -> StoreFuture<'a, Vec<ExtractionResult>> {
                    Box::pin(async move {
                        let _writer = self.write_gate().await;
                        let mut tx = self.pool.begin().await.map_err(backend)?;
                        // Lock the entities first, in one order (no deadlock between batches).
                        let entities: BTreeSet<&str> = results
                            .iter()
                            .map(|result| result.entity_id.as_str())
                            .collect();
                        let mut types = BTreeMap::new();
                        for entity in entities {
                            let entity_type: Option<String> = sqlx::query_scalar(sql::LOCK_ENTITY)
                                .bind(project)
                                .bind(entity)
                                .fetch_optional(&mut *tx)
                                .await
                                .map_err(backend)?;
                            let Some(entity_type) = entity_type else {
                                return Err(not_found("entity", entity));
                            };
                            types.insert(entity, entity_type);
                        }
                        let mut deltas = CountDeltas::new();
                        let fields: BTreeSet<(&str, &str)> = results
                            .iter()
                            .map(|result| (result.entity_id.as_str(), result.field_name.as_str()))
                            .collect();
                        for (entity, field) in fields {
                            let superseded =
                                sqlx::query_as::<_, StatusCountRow>(sql::SUPERSEDABLE_COUNTS)
                                    .bind(project)
                                    .bind(entity)
                                    .bind(field)
                                    .fetch_all(&mut *tx)
                                    .await
                                    .map_err(backend)?;
                            for group in superseded {
                                *deltas
                                    .entry((
                                        types[entity].clone(),
                                        field.to_owned(),
                                        group.status,
                                        group.confidence,
                                    ))
                                    .or_default() -= group.n;
                            }
                            sqlx::query(sql::SUPERSEDE_FIELD)
                                .bind(project)
                                .bind(entity)
                                .bind(field)
                                .execute(&mut *tx)
                                .await
                                .map_err(backend)?;
                        }
                        let mut stored = Vec::with_capacity(results.len());
                        for result in results {
                            let record = ExtractionResult {
                                id: new_id(),
                                run_id: result.run_id.clone(),
                                project_id: project.to_owned(),
                                entity_id: result.entity_id.clone(),
                                field_name: result.field_name.clone(),
                                value: result.value.clone(),
                                sources: result.sources.clone(),
                                confidence: result.confidence,
                                agent_id: result.agent_id.clone(),
                                status: result.status,
                                rejection_reason: None,
                                reviewed_by: None,
                                reviewed_at: None,
                                created_entity_ids: result.created_entity_ids.clone(),
                                duration_ms: result.duration_ms,
                                tokens_used: result.tokens_used,
                                metadata: result.metadata.clone(),
                                created_at: now(),
                            };
                            sqlx::query(sql::INSERT_RESULT)
                                .bind(&record.id)
                                .bind(&record.run_id)
                                .bind(&record.project_id)
                                .bind(&record.entity_id)
                                .bind(&record.field_name)
                                .bind(Json(&record.value))
                                .bind(Json(&record.sources))
                                .bind(enum_text(&record.confidence))
                                .bind(&record.agent_id)
                                .bind(enum_text(&record.status))
                                .bind(Json(&record.created_entity_ids))
                                .bind(record.duration_ms)
                                .bind(record.tokens_used)
                                .bind(Json(&record.metadata))
                                .bind(&record.created_at)
                                .execute(&mut *tx)
                                .await
                                .map_err(backend)?;
                            if record.status != ResultStatus::Superseded {
                                *deltas
                                    .entry((
                                        types[record.entity_id.as_str()].clone(),
                                        record.field_name.clone(),
                                        enum_text(&record.status),
                                        enum_text(&record.confidence),
                                    ))
                                    .or_default() += 1;
                            }
                            stored.push(record);
                        }
                        // Tallies last, in key order: one lock order across transactions.
                        for ((entity_type, field, status, confidence), n) in deltas {
                            if n == 0 {
                                continue;
                            }
                            sqlx::query(sql::ADD_FEEDBACK_COUNT)
                                .bind(project)
                                .bind(entity_type)
                                .bind(field)
                                .bind(status)
                                .bind(confidence)
                                .bind(n)
                                .execute(&mut *tx)
                                .await
                                .map_err(backend)?;
                        }
                        tx.commit().await.map_err(backend)?;
                        Ok(stored)
                    })
                }

                fn get_result<'a>(
                    &'a self,
                    project: &'a str,
                    id: &'a str,
                ) -> StoreFuture<'a, Option<ExtractionResult>> {
                    Box::pin(self.result(project, id))
                }

                fn latest_results<'a>(
                    &'a self,
                    project: &'a str,
                    entity_id: &'a str,
                ) -> StoreFuture<'a, Vec<ExtractionResult>> {
                    Box::pin(async move {
                        let rows = sqlx::query_as::<_, ResultRow>(sql::CURRENT_RESULTS)
                            .bind(project)
                            .bind(entity_id)
                            .fetch_all(&self.pool)
                            .await
                            .map_err(backend)?;
                        let mut latest: Vec<ExtractionResult> = Vec::new();
                        for row in rows {
                            let result = ExtractionResult::try_from(row)?;
                            // Rows come newest first within each field: keep the first of each.
                            if latest
                                .last()
                                .is_none_or(|kept| kept.field_name != result.field_name)
                            {
                                latest.push(result);
                            }
                        }
                        Ok(latest)
                    })
                }

                fn field_history<'a>(
                    &'a self,
                    project: &'a str,
                    entity_id: &'a str,
                    field: &'a str,
                ) -> StoreFuture<'a, Vec<ExtractionResult>> {
                    Box::pin(async move {
                        sqlx::query_as::<_, ResultRow>(sql::FIELD_HISTORY)
                            .bind(project)
                            .bind(entity_id)
                            .bind(field)
                            .fetch_all(&self.pool)
                            .await
                            .map_err(backend)?
                            .into_iter()
                            .map(ExtractionResult::try_from)
                            .collect()
                    })
                }

                fn review_result<'a>(
                    &'a self,
                    project: &'a str,
                    id: &'a str,
                    decision: &'a ReviewDecision,
                    reviewer: &'a str,
                ) -> StoreFuture<'a, Reviewed> {
                    Box::pin(async move {
                        let _writer = self.write_gate().await;
                        let (status, reason) = match decision {
                            ReviewDecision::Approve => (ResultStatus::Approved, None),
                            ReviewDecision::Reject { reason } => {
                                (ResultStatus::Rejected, reason.as_deref())
                            }
                        };
                        let at = now();
                        let mut tx = self.pool.begin().await.map_err(backend)?;
                        // The entity first, as `record_results` does: one lock order.
                        let entity_type: Option<String> =
                            sqlx::query_scalar(sql::LOCK_ENTITY_OF_RESULT)
                                .bind(project)
                                .bind(id)
                                .fetch_optional(&mut *tx)
                                .await
                                .map_err(backend)?;
                        let Some(entity_type) = entity_type else {
                            return Err(not_found("result", id));
                        };
                        let reviewed = sqlx::query(sql::REVIEW_PENDING_RESULT)
                            .bind(project)
                            .bind(id)
                            .bind(enum_text(&status))
                            .bind(reason)
                            .bind(reviewer)
                            .bind(&at)
                            .execute(&mut *tx)
                            .await
                            .map_err(backend)?;
                        if reviewed.rows_affected() == 0 {
                            tx.rollback().await.map_err(backend)?;
                            return match self.result(project, id).await? {
                                None => Err(not_found("result", id)),
                                Some(result) => Err(StoreError::InvalidState(format!(
                                    "result '{id}' is {}; only pending results can be reviewed",
                                    enum_text(&result.status)
                                ))),
                            };
                        }
                        let decision_name = match decision {
                            ReviewDecision::Approve => "approve",
                            ReviewDecision::Reject { .. } => "reject",
                        };
                        sqlx::query(sql::INSERT_REVIEW_EVENT)
                            .bind(new_id())
                            .bind(project)
                            .bind(id)
                            .bind(decision_name)
                            .bind(reason)
                            .bind(reviewer)
                            .bind(&at)
                            .execute(&mut *tx)
                            .await
                            .map_err(backend)?;
                        let result = sqlx::query_as::<_, ResultRow>(sql::RESULT_BY_ID)
                            .bind(project)
                            .bind(id)
                            .fetch_one(&mut *tx)
                            .await
                            .map_err(backend)?;
                        let result = ExtractionResult::try_from(result)?;
                        // The result went from pending to `status`.
                        let confidence = enum_text(&result.confidence);
                        let key = |status: &ResultStatus| {
                            (
                                entity_type.clone(),
                                result.field_name.clone(),
                                enum_text(status),
                                confidence.clone(),
                            )
                        };
                        let mut deltas = CountDeltas::new();
                        deltas.insert(key(&ResultStatus::Pending), -1);
                        deltas.insert(key(&status), 1);
                        // Tallies last, in key order: one lock order across transactions.
                        for ((entity_type, field, status, confidence), n) in deltas {
                            if n == 0 {
                                continue;
                            }
                            sqlx::query(sql::ADD_FEEDBACK_COUNT)
                                .bind(project)
                                .bind(entity_type)
                                .bind(field)
                                .bind(status)
                                .bind(confidence)
                                .bind(n)
                                .execute(&mut *tx)
                                .await
                                .map_err(backend)?;
                        }
                        if let Some(reason) = reason {
                            sqlx::query(sql::ADD_FEEDBACK_REASON)
                                .bind(project)
                                .bind(&entity_type)
                                .bind(&result.field_name)
                                .bind(reason)
                                .bind(1_i64)
                                .execute(&mut *tx)
                                .await
                                .map_err(backend)?;
                        }
                        let mut entity = None;
                        if status == ResultStatus::Approved {
                            let mut promoted = sqlx::query_as::<_, EntityRow>(sql::ENTITY_BY_ID)
                                .bind(project)
                                .bind(&result.entity_id)
                                .fetch_optional(&mut *tx)
                                .await
                                .map_err(backend)?
                                .map(Entity::from)
                                .ok_or_else(|| not_found("entity", &result.entity_id))?;
                            promoted
                                .fields
                                .insert(result.field_name.clone(), result.value.clone());
                            promoted.updated_at = at.clone();
                            sqlx::query(sql::SET_ENTITY_FIELDS)
                                .bind(project)
                                .bind(&promoted.id)
                                .bind(Json(&promoted.fields))
                                .bind(&promoted.updated_at)
                                .execute(&mut *tx)
                                .await
                                .map_err(backend)?;
                            entity = Some(promoted);
                        }
                        tx.commit().await.map_err(backend)?;
                        Ok(Reviewed { result, entity })
                    })
                }

                fn feedback_summary<'a>(
                    &'a self,
                    project: &'a str,
                    entity_type: &'a str,
                    field: &'a str,
                ) -> StoreFuture<'a, FeedbackSummary> {
                    Box::pin(async move {
                        let groups = sqlx::query_as::<_, StatusCountRow>(sql::FEEDBACK_COUNTS)
                            .bind(project)
                            .bind(entity_type)
                            .bind(field)
                            .fetch_all(&self.pool)
                            .await
                            .map_err(backend)?;
                        let reasons = sqlx::query_as::<_, ReasonCountRow>(sql::FEEDBACK_REASONS)
                            .bind(project)
                            .bind(entity_type)
                            .bind(field)
                            .bind(TOP_REJECTION_REASONS)
                            .fetch_all(&self.pool)
                            .await
                            .map_err(backend)?;
                        // Per confidence level: (approved, rejected).
                        let levels = [Confidence::High, Confidence::Medium, Confidence::Low];
                        let mut by_level = [(0_i64, 0_i64); 3];
                        let (mut total, mut approved, mut rejected) = (0, 0, 0);
                        for group in groups {
                            let status: ResultStatus =
                                parse_enum("extraction_results.status", &group.status)?;
                            let confidence: Confidence =
                                parse_enum("extraction_results.confidence", &group.confidence)?;
                            let level = levels.iter().position(|l| *l == confidence).unwrap_or(0);
                            total += group.n;
                            match status {
                                ResultStatus::Approved => {
                                    approved += group.n;
                                    by_level[level].0 += group.n;
                                }
                                ResultStatus::Rejected => {
                                    rejected += group.n;
                                    by_level[level].1 += group.n;
                                }
                                ResultStatus::Pending | ResultStatus::Superseded => {}
                            }
                        }
                        let rate = |approved: i64, rejected: i64| {
                            (approved + rejected > 0)
                                .then(|| approved as f64 / (approved + rejected) as f64)
                        };
                        let mut approval_rate_by_confidence = Map::new();
                        for (level, (approved, rejected)) in levels.iter().zip(by_level) {
                            if let Some(rate) = rate(approved, rejected) {
                                approval_rate_by_confidence
                                    .insert(enum_text(level), Value::from(rate));
                            }
                        }
                        Ok(FeedbackSummary {
                            entity_type: entity_type.to_owned(),
                            field_name: field.to_owned(),
                            total,
                            approved,
                            rejected,
                            approval_rate: rate(approved, rejected),
                            common_rejection_reasons: reasons
                                .into_iter()
                                .map(|r| (r.reason, r.n))
                                .collect(),
                            approval_rate_by_confidence,
                        })
                    })
                }

                fn add_episode<'a>(
                    &'a self,
                    project: &'a str,
                    episode: &'a NewEpisode,
                ) -> StoreFuture<'a, Episode> {
                    Box::pin(async move {
                        let _writer = self.write_gate().await;
                        let at = now();
                        let stored = Episode {
                            id: new_id(),
                            project_id: project.to_owned(),
                            user_message: episode.user_message.clone(),
                            assistant_response: episode.assistant_response.clone(),
                            status: EpisodeStatus::Pending,
                            attempts: 0,
                            error: None,
                            ingest: episode.ingest.clone(),
                            entities_stored: 0,
                            relationships_stored: 0,
                            relationships_skipped: 0,
                            entities_skipped: 0,
                            created_at: at.clone(),
                            updated_at: at,
                        };
                        let mut tx = self.pool.begin().await.map_err(backend)?;
                        insert_document(&stored.document())
                            .execute(&mut *tx)
                            .await
                            .map_err(backend)?;
                        sqlx::query(sql::INSERT_EPISODE)
                            .bind(&stored.id)
                            .bind(project)
                            .bind(&stored.user_message)
                            .bind(&stored.assistant_response)
                            .bind(stored.ingest.as_ref().map(Json))
                            .bind(&stored.created_at)
                            .execute(&mut *tx)
                            .await
                            .map_err(backend)?;
                        tx.commit().await.map_err(backend)?;
                        Ok(stored)
                    })
                }

                fn get_episode<'a>(
                    &'a self,
                    project: &'a str,
                    id: &'a str,
                ) -> StoreFuture<'a, Option<Episode>> {
                    Box::pin(async move {
                        sqlx::query_as::<_, EpisodeRow>(sql::EPISODE_BY_ID)
                            .bind(project)
                            .bind(id)
                            .fetch_optional(&self.pool)
                            .await
                            .map_err(backend)?
                            .map(Episode::try_from)
                            .transpose()
                    })
                }

                fn claim_episodes(
                    &self,
                    limit: usize,
                    ingest_only: bool,
                ) -> StoreFuture<'_, Vec<Episode>> {
                    Box::pin(async move {
                        let _writer = self.write_gate().await;
                        if limit == 0 {
                            return Ok(Vec::new());
                        }
                        // One statement: the take is atomic without a transaction.
                        let mut claimed = sqlx::query_as::<_, EpisodeRow>($claim_episodes)
                            .bind(now())
                            .bind(ingest_only)
                            .bind(sql_limit(limit))
                            .fetch_all(&self.pool)
                            .await
                            .map_err(backend)?
                            .into_iter()
                            .map(Episode::try_from)
                            .collect::<Result<Vec<_>, _>>()?;
                        // RETURNING promises no order: oldest first, as taken.
                        claimed.sort_by(|a, b| {
                            (&a.created_at, &a.id).cmp(&(&b.created_at, &b.id))
                        });
                        Ok(claimed)
                    })
                }

                fn requeue_interrupted_episodes(&self) -> StoreFuture<'_, u64> {
                    Box::pin(async move {
                        let _writer = self.write_gate().await;
                        let requeued = sqlx::query(sql::REQUEUE_RUNNING_EPISODES)
                            .bind(now())
                            .execute(&self.pool)
                            .await
                            .map_err(backend)?;
                        Ok(requeued.rows_affected())
                    })
                }

                fn finish_episode<'a>(
                    &'a self,
                    project: &'a str,
                    id: &'a str,
                    outcome: &'a EpisodeOutcome,
                ) -> StoreFuture<'a, Episode> {
                    Box::pin(async move {
                        let _writer = self.write_gate().await;
                        let status = match outcome.error {
                            None => EpisodeStatus::Done,
                            Some(_) => EpisodeStatus::Failed,
                        };
                        sqlx::query_as::<_, EpisodeRow>(sql::FINISH_EPISODE)
                            .bind(project)
                            .bind(id)
                            .bind(status.as_str())
                            .bind(&outcome.error)
                            .bind(outcome.entities_stored)
                            .bind(outcome.entities_skipped)
                            .bind(outcome.relationships_stored)
                            .bind(outcome.relationships_skipped)
                            .bind(now())
                            .fetch_optional(&self.pool)
                            .await
                            .map_err(backend)?
                            .map(Episode::try_from)
                            .transpose()?
                            .ok_or_else(|| not_found("episode", id))
                    })
                }

                fn entity_episodes<'a>(
                    &'a self,
                    project: &'a str,
                    entity_id: &'a str,
                    limit: usize,
                ) -> StoreFuture<'a, Vec<Episode>> {
                    Box::pin(async move {
                        sqlx::query_as::<_, EpisodeRow>(sql::ENTITY_EPISODES)
                            .bind(project)
                            .bind(entity_id)
                            .bind(sql_limit(limit))
                            .fetch_all(&self.pool)
                            .await
                            .map_err(backend)?
                            .into_iter()
                            .map(Episode::try_from)
                            .collect()
                    })
                }

                fn apply_graph<'a>(
                    &'a self,
                    project: &'a str,
                    episode_id: Option<&'a str>,
                    write: &'a GraphWrite,
                ) -> StoreFuture<'a, GraphApplied> {
                    Box::pin(self.write_graph(project, episode_id, write, None))
                }

                fn complete_episode<'a>(
                    &'a self,
                    project: &'a str,
                    id: &'a str,
                    write: &'a GraphWrite,
                    outcome: &'a EpisodeOutcome,
                ) -> StoreFuture<'a, GraphApplied> {
                    Box::pin(self.write_graph(project, Some(id), write, Some(outcome)))
                }

                fn recent_entities<'a>(
                    &'a self,
                    project: &'a str,
                    types: &'a [String],
                    limit: usize,
                ) -> StoreFuture<'a, Vec<Entity>> {
                    Box::pin(async move {
                        let types: BTreeSet<&str> = types.iter().map(String::as_str).collect();
                        let rows = if types.is_empty() {
                            sqlx::query_as::<_, EntityRow>(sql::ENTITIES)
                                .bind(project)
                                .bind(None::<&str>)
                                .bind(sql_limit(limit))
                                .fetch_all(&self.pool)
                                .await
                        } else {
                            let text = sql::with_list(sql::RECENT_ENTITIES_OF_TYPES, 3, types.len());
                            let mut query = sqlx::query_as::<_, EntityRow>(AssertSqlSafe(text))
                                .bind(project)
                                .bind(sql_limit(limit));
                            for entity_type in types {
                                query = query.bind(entity_type);
                            }
                            query.fetch_all(&self.pool).await
                        }
                        .map_err(backend)?;
                        Ok(rows.into_iter().map(Entity::from).collect())
                    })
                }

                fn find_entities_by_name<'a>(
                    &'a self,
                    project: &'a str,
                    query: &'a str,
                    entity_type: Option<&'a str>,
                    limit: usize,
                ) -> StoreFuture<'a, Vec<Entity>> {
                    Box::pin(async move {
                        let mut pattern = String::with_capacity(query.len() + 2);
                        pattern.push('%');
                        for c in query.chars() {
                            if matches!(c, '%' | '_' | '\\') {
                                pattern.push('\\');
                            }
                            pattern.push(c);
                        }
                        pattern.push('%');
                        let rows = sqlx::query_as::<_, EntityRow>(sql::ENTITIES_BY_NAME)
                            .bind(project)
                            .bind(entity_type)
                            .bind(pattern)
                            .bind(query)
                            .bind(sql_limit(limit))
                            .fetch_all(&self.pool)
                            .await
                            .map_err(backend)?;
                        Ok(rows.into_iter().map(Entity::from).collect())
                    })
                }

                fn get_entities<'a>(
                    &'a self,
                    project: &'a str,
                    ids: &'a [String],
                ) -> StoreFuture<'a, Vec<Entity>> {
                    Box::pin(async move {
                        let mut found = Vec::new();
                        for list in padded_lists(ids) {
                            let text = sql::with_list(sql::ENTITIES_AMONG, 2, list.len());
                            let mut query =
                                sqlx::query_as::<_, EntityRow>(AssertSqlSafe(text)).bind(project);
                            for id in list {
                                query = query.bind(id);
                            }
                            let rows = query.fetch_all(&self.pool).await.map_err(backend)?;
                            found.extend(rows.into_iter().map(Entity::from));
                        }
                        Ok(found)
                    })
                }

                fn relations_touching<'a>(
                    &'a self,
                    project: &'a str,
                    ids: &'a [String],
                ) -> StoreFuture<'a, Vec<Relation>> {
                    Box::pin(async move {
                        let mut found: Vec<Relation> = Vec::new();
                        for list in padded_lists(ids) {
                            let text = sql::with_list(sql::RELATIONS_TOUCHING, 2, list.len());
                            let mut query = sqlx::query_as::<_, RelationRow>(AssertSqlSafe(text))
                                .bind(project);
                            for id in list {
                                query = query.bind(id);
                            }
                            let rows = query.fetch_all(&self.pool).await.map_err(backend)?;
                            found.extend(rows.into_iter().map(Relation::from));
                        }
                        // A relation between ids of two lists came back twice.
                        found.sort_by(|a, b| {
                            (&a.first_seen_at, &a.id).cmp(&(&b.first_seen_at, &b.id))
                        });
                        found.dedup_by(|a, b| a.id == b.id);
                        Ok(found)
                    })
                }

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

                fn all_document_links(
                    &self,
                ) -> StoreFuture<'_, Vec<(String, String, Vec<String>)>> {
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
                                _ => links.push((
                                    document_id,
                                    project_id,
                                    entity_id.into_iter().collect(),
                                )),
                            }
                        }
                        Ok(links)
                    })
                }
            }
        };
    };
}
pub(crate) use impl_store;
