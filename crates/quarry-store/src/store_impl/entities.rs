//! Entity types, entities and the relations between them.

use quarry_core::model::{Entity, EntityType, NewEntity, Relation};
use quarry_core::store::prelude::*;
use quarry_core::store::{StoreError, StoreFuture};
use serde_json::{Map, Value};
use sqlx::types::Json;

use super::{SqlStore, insert_entity, sql_limit};
use crate::clock::{new_id, now};
use crate::db::{query, query_as, query_scalar};
use crate::error::not_found;
use crate::rows::{EntityRow, EntityTypeRow, RelationRow};
use crate::sql;

/// The entity look-ups other areas use too (documents, runs).
impl SqlStore {
    /// Gives entities written before the name key existed theirs (once: a keyless
    /// title gets `''`), a batch per transaction. Several processes opening at once
    /// write the same keys; nothing else reads them until they are there.
    pub(crate) async fn backfill_name_keys(&self) -> Result<(), StoreError> {
        const BATCH: i64 = 1000;
        loop {
            let _writer = self.write_gate().await;
            let mut tx = self.pool.begin().await?;
            let missing: Vec<(String, String, String)> = query_as(sql::ENTITIES_WITHOUT_NAME_KEY)
                .bind(BATCH)
                .fetch_all(&mut tx)
                .await?;
            for (id, entity_type, title) in &missing {
                query(sql::SET_NAME_KEY)
                    .bind(id)
                    .bind(quarry_core::resolve::name_key(title, entity_type))
                    .execute(&mut tx)
                    .await?;
            }
            tx.commit().await?;
            if (missing.len() as i64) < BATCH {
                return Ok(());
            }
        }
    }

    pub(super) async fn entity(
        &self,
        project: &str,
        id: &str,
    ) -> Result<Option<Entity>, StoreError> {
        let row = query_as::<EntityRow>(sql::ENTITY_BY_ID)
            .bind(project)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.map(Entity::from))
    }

    pub(super) async fn require_entity(&self, project: &str, id: &str) -> Result<(), StoreError> {
        let found: i64 = query_scalar(sql::COUNT_ENTITY)
            .bind(project)
            .bind(id)
            .fetch_one(&self.pool)
            .await?;
        if found == 0 {
            Err(not_found("entity", id))
        } else {
            Ok(())
        }
    }
}

/// The `Store` methods of entity types, entities and relations.
impl EntityStore for SqlStore {
    fn put_entity_type<'a>(
        &'a self,
        project: &'a str,
        entity_type: &'a EntityType,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let _writer = self.write_gate().await;
            query(sql::UPSERT_ENTITY_TYPE)
                .bind(project)
                .bind(&entity_type.slug)
                .bind(Json(entity_type))
                .bind(now())
                .execute(&self.pool)
                .await?;
            Ok(())
        })
    }

    fn get_entity_type<'a>(
        &'a self,
        project: &'a str,
        slug: &'a str,
    ) -> StoreFuture<'a, Option<EntityType>> {
        Box::pin(async move {
            let row = query_as::<EntityTypeRow>(sql::ENTITY_TYPE_BY_SLUG)
                .bind(project)
                .bind(slug)
                .fetch_optional(&self.pool)
                .await?;
            Ok(row.map(EntityType::from))
        })
    }

    fn list_entity_types<'a>(&'a self, project: &'a str) -> StoreFuture<'a, Vec<EntityType>> {
        Box::pin(async move {
            let rows = query_as::<EntityTypeRow>(sql::ENTITY_TYPES)
                .bind(project)
                .fetch_all(&self.pool)
                .await?;
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
            insert_entity(&created).execute(&self.pool).await?;
            Ok(created)
        })
    }

    fn get_entity<'a>(&'a self, project: &'a str, id: &'a str) -> StoreFuture<'a, Option<Entity>> {
        Box::pin(self.entity(project, id))
    }

    fn list_entities<'a>(
        &'a self,
        project: &'a str,
        entity_type: Option<&'a str>,
        limit: usize,
    ) -> StoreFuture<'a, Vec<Entity>> {
        Box::pin(async move {
            let rows = query_as::<EntityRow>(sql::ENTITIES)
                .bind(project)
                .bind(entity_type)
                .bind(sql_limit(limit))
                .fetch_all(&self.pool)
                .await?;
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
            let row = query_as::<EntityRow>(sql::ENTITY_BY_TITLE)
                .bind(project)
                .bind(entity_type)
                .bind(title)
                .fetch_optional(&self.pool)
                .await?;
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
            let updated = query(sql::SET_ENTITY_METADATA)
                .bind(project)
                .bind(id)
                .bind(Json(metadata))
                .bind(now())
                .execute(&self.pool)
                .await?;
            if updated == 0 {
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
            let found: i64 = query_scalar(sql::COUNT_ENTITIES_AMONG)
                .bind(project)
                .bind(from_id)
                .bind(to_id)
                .fetch_one(&self.pool)
                .await?;
            let expected = if from_id == to_id { 1 } else { 2 };
            if found < expected {
                self.require_entity(project, from_id).await?;
                return Err(not_found("entity", to_id));
            }
            let row = query_as::<RelationRow>(sql::UPSERT_RELATION)
                .bind(new_id())
                .bind(project)
                .bind(from_id)
                .bind(to_id)
                .bind(label)
                .bind(now())
                .bind(None::<&str>)
                .fetch_one(&self.pool)
                .await?;
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
            let rows = query_as::<EntityRow>(sql::CONNECTED_ENTITIES)
                .bind(project)
                .bind(id)
                .bind(sql_limit(limit))
                .fetch_all(&self.pool)
                .await?;
            Ok(rows.into_iter().map(Entity::from).collect())
        })
    }
}
