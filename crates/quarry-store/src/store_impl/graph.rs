//! Episodes (the graph worker's leased queue: claims with an owner and an expiry, heartbeats,
//! fenced ends, releases with backoff, retries of failed episodes) and the graph they write:
//! entities resolved by id or by (type, title), links to the episode's document, relations
//! upserted.

use std::collections::{BTreeMap, BTreeSet};

use quarry_core::model::{
    Entity, Episode, EpisodeOutcome, EpisodeStatus, GraphApplied, GraphEntityWrite, GraphWrite,
    JobKind, Lease, NewEpisode, Relation,
};
use quarry_core::store::prelude::*;
use quarry_core::store::{StoreError, StoreFuture};
use serde_json::{Map, Value};
use sqlx::AssertSqlSafe;
use sqlx::types::Json;

use super::{SqlStore, contains_pattern, insert_document, insert_entity, sql_limit};
use crate::clock::{new_id, now};
use crate::db::{Tx, query, query_as, query_scalar};
use crate::error::not_found;
use crate::rows::{EntityRow, EpisodeRow, RelationRow};
use crate::sql;

/// `write_graph` and its steps, behind `apply_graph` and `complete_episode`.
impl SqlStore {
    /// `apply_graph`, and with `finish` also the fenced `finish_episode` of
    /// `episode_id`, in one transaction. Statements: with `finish` first the fence (the
    /// episode's end, only while it is `running` under the lease; else `LeaseLost` and
    /// nothing written), the project lock, without `finish` the episode's existence
    /// check, one multi-row mention of the entities named by id, per other entity a
    /// mention by (type, title) or an insert, one multi-row link insert, one
    /// multi-row relation upsert. Repeated ids or relation keys in one write (not
    /// what the engine sends) take the one-row-at-a-time statements instead, which
    /// count every repetition.
    pub(super) async fn write_graph(
        &self,
        project: &str,
        episode_id: Option<&str>,
        write: &GraphWrite,
        finish: Option<(&Lease, &EpisodeOutcome)>,
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
        let mut tx = self.pool.begin().await?;
        if let (Some(episode_id), Some((held, outcome))) = (episode_id, finish) {
            Self::fence(&mut tx, project, held).await?;
            Self::end_episode(&mut tx, project, episode_id, outcome).await?;
        }
        Self::lock_project(&mut tx, project).await?;
        // After the lock: times follow the order in which writes of a project land.
        let at = now();
        if let (Some(episode_id), None) = (episode_id, finish) {
            Self::check_episode(&mut tx, project, episode_id).await?;
        }
        let mut entities: Vec<Option<Entity>> = vec![None; count];
        let mut inserted = vec![false; count];
        Self::mention_entities_by_id(&mut tx, project, write, &mut entities).await?;
        Self::resolve_entities_by_title(&mut tx, project, write, &mut entities, &mut inserted)
            .await?;
        let entities: Vec<Entity> = entities.into_iter().flatten().collect();
        if let Some(episode_id) = episode_id {
            Self::link_episode_entities(&mut tx, project, episode_id, &entities, &at).await?;
        }
        let relations = Self::upsert_relationships(&mut tx, project, write, &entities).await?;
        tx.commit().await?;
        Ok(GraphApplied {
            entities,
            inserted,
            relations,
        })
    }

    /// The project first: graph writes of one project queue here.
    pub(super) async fn lock_project(tx: &mut Tx, project: &str) -> Result<(), StoreError> {
        let locked = query(sql::LOCK_PROJECT)
            .bind(project)
            .execute(&mut *tx)
            .await?;
        if locked == 0 {
            return Err(not_found("project", project));
        }
        Ok(())
    }

    /// An episode's end (`done` or `failed` by the outcome's error), the lease cleared.
    /// A claimed episode's caller has written the fence first.
    pub(super) async fn end_episode(
        tx: &mut Tx,
        project: &str,
        episode_id: &str,
        outcome: &EpisodeOutcome,
    ) -> Result<Option<Episode>, StoreError> {
        let status = match outcome.error {
            None => EpisodeStatus::Done,
            Some(_) => EpisodeStatus::Failed,
        };
        query_as::<EpisodeRow>(sql::FINISH_EPISODE)
            .bind(project)
            .bind(episode_id)
            .bind(status.as_str())
            .bind(&outcome.error)
            .bind(outcome.entities_stored)
            .bind(outcome.entities_skipped)
            .bind(outcome.relationships_stored)
            .bind(outcome.relationships_skipped)
            .bind(now())
            .fetch_optional(&mut *tx)
            .await?
            .map(Episode::try_from)
            .transpose()
    }

    /// An unfenced graph write linked to an episode: the episode must exist.
    pub(super) async fn check_episode(
        tx: &mut Tx,
        project: &str,
        episode_id: &str,
    ) -> Result<(), StoreError> {
        let found: i64 = query_scalar(sql::COUNT_EPISODE)
            .bind(project)
            .bind(episode_id)
            .fetch_one(&mut *tx)
            .await?;
        if found == 0 {
            return Err(not_found("episode", episode_id));
        }
        Ok(())
    }

    /// Entities named by id: one statement per chunk when the ids are distinct.
    pub(super) async fn mention_entities_by_id(
        tx: &mut Tx,
        project: &str,
        write: &GraphWrite,
        entities: &mut [Option<Entity>],
    ) -> Result<(), StoreError> {
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
                let mut query = query_as::<EntityRow>(AssertSqlSafe(text)).bind(project);
                for &(i, id) in chunk {
                    query = query.bind(id).bind(&write.entities[i].notes).bind(now());
                }
                let mut rows: BTreeMap<String, Entity> = query
                    .fetch_all(&mut *tx)
                    .await?
                    .into_iter()
                    .map(|row| {
                        let entity = Entity::from(row);
                        (entity.id.clone(), entity)
                    })
                    .collect();
                for &(i, id) in chunk {
                    entities[i] = Some(rows.remove(id).ok_or_else(|| not_found("entity", id))?);
                }
            }
        } else {
            for &(i, id) in &by_id {
                let row = query_as::<EntityRow>(sql::MENTION_ENTITY)
                    .bind(project)
                    .bind(id)
                    .bind(now())
                    .bind(&write.entities[i].notes)
                    .fetch_optional(&mut *tx)
                    .await?
                    .ok_or_else(|| not_found("entity", id))?;
                entities[i] = Some(Entity::from(row));
            }
        }
        Ok(())
    }

    /// The entities not named by id, by exact (type, title), inserted when missing; one
    /// after the other, so a later one finds what an earlier one inserted.
    pub(super) async fn resolve_entities_by_title(
        tx: &mut Tx,
        project: &str,
        write: &GraphWrite,
        entities: &mut [Option<Entity>],
        inserted: &mut [bool],
    ) -> Result<(), StoreError> {
        for (i, node) in write.entities.iter().enumerate() {
            if node.existing_id.is_some() {
                continue;
            }
            let at = now();
            entities[i] = Some(
                match Self::resolve_existing_entity(&mut *tx, project, node, &at).await? {
                    Some(entity) => entity,
                    None => {
                        let created = Self::insert_new_entity(&mut *tx, project, node, &at).await?;
                        inserted[i] = true;
                        created
                    }
                },
            );
        }
        Ok(())
    }

    /// Mentions the entity of `node`'s exact (type, title), else the oldest of its type
    /// with the same name key (`ACME Corp.` for `Acme Corp`), if there is one: under the
    /// project lock, so no process inserts a normalised duplicate of another's entity.
    pub(super) async fn resolve_existing_entity(
        tx: &mut Tx,
        project: &str,
        node: &GraphEntityWrite,
        at: &str,
    ) -> Result<Option<Entity>, StoreError> {
        let updated = query_as::<EntityRow>(sql::MENTION_ENTITY_BY_TITLE)
            .bind(project)
            .bind(&node.entity_type)
            .bind(&node.name)
            .bind(at)
            .bind(&node.notes)
            .bind(
                Some(quarry_core::resolve::name_key(
                    &node.name,
                    &node.entity_type,
                ))
                .filter(|key| !key.is_empty()),
            )
            .fetch_optional(&mut *tx)
            .await?;
        Ok(updated.map(Entity::from))
    }

    /// Inserts `node` as a new entity, mentioned once.
    pub(super) async fn insert_new_entity(
        tx: &mut Tx,
        project: &str,
        node: &GraphEntityWrite,
        at: &str,
    ) -> Result<Entity, StoreError> {
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
            created_at: at.to_owned(),
            updated_at: at.to_owned(),
            mention_count: 1,
            notes: node.notes.clone(),
            last_seen_at: Some(at.to_owned()),
        };
        insert_entity(&created).execute(&mut *tx).await?;
        Ok(created)
    }

    /// Links the episode's document to each distinct entity of the write.
    pub(super) async fn link_episode_entities(
        tx: &mut Tx,
        project: &str,
        episode_id: &str,
        entities: &[Entity],
        at: &str,
    ) -> Result<(), StoreError> {
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
            let mut query = query(AssertSqlSafe(text))
                .bind(project)
                .bind(episode_id)
                .bind(at);
            for id in chunk {
                query = query.bind(*id);
            }
            query.execute(&mut *tx).await?;
        }
        Ok(())
    }

    /// The write's relationships between the resolved `entities`, in order: one
    /// statement per chunk when their (from, to, label) keys are distinct.
    pub(super) async fn upsert_relationships(
        tx: &mut Tx,
        project: &str,
        write: &GraphWrite,
        entities: &[Entity],
    ) -> Result<Vec<Relation>, StoreError> {
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
        if keys.iter().collect::<BTreeSet<_>>().len() == keys.len() {
            Self::upsert_distinct_relations(tx, project, write, &keys).await
        } else {
            let mut relations = Vec::with_capacity(keys.len());
            for (i, &(from, to, label)) in keys.iter().enumerate() {
                let row = query_as::<RelationRow>(sql::UPSERT_RELATION)
                    .bind(new_id())
                    .bind(project)
                    .bind(from)
                    .bind(to)
                    .bind(label)
                    .bind(now())
                    .bind(&write.relationships[i].notes)
                    .fetch_one(&mut *tx)
                    .await?;
                relations.push(Relation::from(row));
            }
            Ok(relations)
        }
    }

    /// `upsert_relationships` of distinct keys: multi-row upserts, matched back to the
    /// keys' order.
    pub(super) async fn upsert_distinct_relations(
        tx: &mut Tx,
        project: &str,
        write: &GraphWrite,
        keys: &[(&str, &str, &str)],
    ) -> Result<Vec<Relation>, StoreError> {
        let mut relations = Vec::with_capacity(keys.len());
        let rows: Vec<(usize, &(&str, &str, &str))> = keys.iter().enumerate().collect();
        for chunk in rows.chunks(sql::MAX_ROWS) {
            let text = sql::with_rows(
                sql::UPSERT_RELATIONS,
                sql::UPSERT_RELATIONS_ROW,
                2,
                chunk.len(),
            );
            let mut query = query_as::<RelationRow>(AssertSqlSafe(text)).bind(project);
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
                .await?
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
                    StoreError::Backend(format!("the upsert of relation '{label}' returned no row"))
                })?;
                relations.push(relation);
            }
        }
        Ok(relations)
    }
}

/// The `Store` methods of episodes and the graph.
impl GraphStore for SqlStore {
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
                lease_owner: None,
                lease_expires_at: None,
                available_at: None,
            };
            let mut tx = self.pool.begin().await?;
            insert_document(&stored.document(), None)
                .execute(&mut tx)
                .await?;
            query(sql::INSERT_EPISODE)
                .bind(&stored.id)
                .bind(project)
                .bind(&stored.user_message)
                .bind(&stored.assistant_response)
                .bind(stored.ingest.as_ref().map(Json))
                .bind(&stored.created_at)
                .execute(&mut tx)
                .await?;
            tx.commit().await?;
            Ok(stored)
        })
    }

    fn get_episode<'a>(
        &'a self,
        project: &'a str,
        id: &'a str,
    ) -> StoreFuture<'a, Option<Episode>> {
        Box::pin(async move {
            query_as::<EpisodeRow>(sql::EPISODE_BY_ID)
                .bind(project)
                .bind(id)
                .fetch_optional(&self.pool)
                .await?
                .map(Episode::try_from)
                .transpose()
        })
    }

    fn claim_episodes<'a>(
        &'a self,
        owner: &'a str,
        lease: std::time::Duration,
        limit: usize,
        ingest_only: bool,
    ) -> StoreFuture<'a, Vec<Episode>> {
        Box::pin(async move {
            let scope = ingest_only.then_some("ingest");
            let rows: Vec<EpisodeRow> = self
                .claim_jobs(JobKind::Episode, (owner, lease), limit, scope)
                .await?;
            let mut claimed = rows
                .into_iter()
                .map(Episode::try_from)
                .collect::<Result<Vec<_>, _>>()?;
            // RETURNING promises no order: oldest first.
            claimed.sort_by(|a, b| (&a.created_at, &a.id).cmp(&(&b.created_at, &b.id)));
            Ok(claimed)
        })
    }

    fn finish_episode<'a>(
        &'a self,
        project: &'a str,
        id: &'a str,
        held: Option<&'a Lease>,
        outcome: &'a EpisodeOutcome,
    ) -> StoreFuture<'a, Episode> {
        Box::pin(async move {
            let _writer = self.write_gate().await;
            let mut tx = self.pool.begin().await?;
            if let Some(held) = held {
                // The episode named is the one fenced, whatever the lease names.
                let held = Lease {
                    job_id: id.to_owned(),
                    ..held.clone()
                };
                Self::fence(&mut tx, project, &held).await?;
            }
            let ended = Self::end_episode(&mut tx, project, id, outcome)
                .await?
                .ok_or_else(|| not_found("episode", id))?;
            tx.commit().await?;
            Ok(ended)
        })
    }

    fn retry_episodes<'a>(
        &'a self,
        project: &'a str,
        ids: Option<&'a [String]>,
    ) -> StoreFuture<'a, Vec<Episode>> {
        Box::pin(async move {
            let _writer = self.write_gate().await;
            let at = now();
            let mut tx = self.pool.begin().await?;
            let mut retried: Vec<Episode> = Vec::new();
            match ids {
                None => {
                    let rows = query_as::<EpisodeRow>(sql::RETRY_EPISODES)
                        .bind(project)
                        .bind(&at)
                        .bind(None::<&str>)
                        .fetch_all(&mut tx)
                        .await?;
                    for row in rows {
                        retried.push(Episode::try_from(row)?);
                    }
                }
                Some(ids) => {
                    let mut seen = BTreeSet::new();
                    for id in ids.iter().filter(|id| seen.insert(id.as_str())) {
                        let row = query_as::<EpisodeRow>(sql::RETRY_EPISODES)
                            .bind(project)
                            .bind(&at)
                            .bind(id)
                            .fetch_optional(&mut tx)
                            .await?;
                        if let Some(row) = row {
                            retried.push(Episode::try_from(row)?);
                            continue;
                        }
                        // Dropping `tx` undoes the episodes already requeued.
                        let status: Option<String> = query_scalar(sql::EPISODE_STATUS)
                            .bind(project)
                            .bind(id)
                            .fetch_optional(&mut tx)
                            .await?;
                        return Err(match status {
                            None => not_found("episode", id),
                            Some(status) => StoreError::InvalidState(format!(
                                "episode '{id}' is {status}, not failed: only failed \
                                 episodes can be retried"
                            )),
                        });
                    }
                }
            }
            tx.commit().await?;
            retried.sort_by(|a, b| (&a.created_at, &a.id).cmp(&(&b.created_at, &b.id)));
            Ok(retried)
        })
    }

    fn entity_episodes<'a>(
        &'a self,
        project: &'a str,
        entity_id: &'a str,
        limit: usize,
    ) -> StoreFuture<'a, Vec<Episode>> {
        Box::pin(async move {
            query_as::<EpisodeRow>(sql::ENTITY_EPISODES)
                .bind(project)
                .bind(entity_id)
                .bind(sql_limit(limit))
                .fetch_all(&self.pool)
                .await?
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
        held: &'a Lease,
        write: &'a GraphWrite,
        outcome: &'a EpisodeOutcome,
    ) -> StoreFuture<'a, GraphApplied> {
        Box::pin(self.write_graph(project, Some(&held.job_id), write, Some((held, outcome))))
    }

    fn resolution_candidates<'a>(
        &'a self,
        project: &'a str,
        entity_type: &'a str,
        names: &'a [String],
    ) -> StoreFuture<'a, Option<Vec<Entity>>> {
        Box::pin(async move {
            match &self.postgres {
                Some(pg) => pg.resolution_candidates(project, entity_type, names).await,
                // The embedded store keeps no name index: resolution uses the process's cache.
                None => Ok(None),
            }
        })
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
                query_as::<EntityRow>(sql::ENTITIES)
                    .bind(project)
                    .bind(None::<&str>)
                    .bind(sql_limit(limit))
                    .fetch_all(&self.pool)
                    .await
            } else {
                let text = sql::with_list(sql::RECENT_ENTITIES_OF_TYPES, 3, types.len());
                let mut query = query_as::<EntityRow>(AssertSqlSafe(text))
                    .bind(project)
                    .bind(sql_limit(limit));
                for entity_type in types {
                    query = query.bind(entity_type);
                }
                query.fetch_all(&self.pool).await
            }?;
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
            let rows = query_as::<EntityRow>(sql::ENTITIES_BY_NAME)
                .bind(project)
                .bind(entity_type)
                .bind(contains_pattern(query))
                .bind(query)
                .bind(sql_limit(limit))
                .fetch_all(&self.pool)
                .await?;
            Ok(rows.into_iter().map(Entity::from).collect())
        })
    }

    fn get_entities<'a>(
        &'a self,
        project: &'a str,
        ids: &'a [String],
    ) -> StoreFuture<'a, Vec<Entity>> {
        Box::pin(async move {
            let rows: Vec<EntityRow> = self.rows_among(sql::ENTITIES_AMONG, project, ids).await?;
            Ok(rows.into_iter().map(Entity::from).collect())
        })
    }

    fn relations_touching<'a>(
        &'a self,
        project: &'a str,
        ids: &'a [String],
    ) -> StoreFuture<'a, Vec<Relation>> {
        Box::pin(async move {
            let rows: Vec<RelationRow> = self
                .rows_among(sql::RELATIONS_TOUCHING, project, ids)
                .await?;
            let mut found: Vec<Relation> = rows.into_iter().map(Relation::from).collect();
            // A relation between ids of two lists came back twice.
            found.sort_by(|a, b| (&a.first_seen_at, &a.id).cmp(&(&b.first_seen_at, &b.id)));
            found.dedup_by(|a, b| a.id == b.id);
            Ok(found)
        })
    }
}
