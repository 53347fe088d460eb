//! Entity types, entities and the relations between them.

/// The entity look-ups other areas use too (documents, runs).
macro_rules! entities_items {
    ($store:ty) => {
        impl $store {
            /// Gives entities written before the name key existed theirs (once: a keyless
            /// title gets `''`), a batch per transaction. Several processes opening at once
            /// write the same keys; nothing else reads them until they are there.
            pub(crate) async fn backfill_name_keys(&self) -> Result<(), StoreError> {
                const BATCH: i64 = 1000;
                loop {
                    let _writer = self.write_gate().await;
                    let mut tx = self.pool.begin().await.map_err(backend)?;
                    let missing: Vec<(String, String, String)> =
                        sqlx::query_as(sql::ENTITIES_WITHOUT_NAME_KEY)
                            .bind(BATCH)
                            .fetch_all(&mut *tx)
                            .await
                            .map_err(backend)?;
                    for (id, entity_type, title) in &missing {
                        sqlx::query(sql::SET_NAME_KEY)
                            .bind(id)
                            .bind(quarry_core::resolve::name_key(title, entity_type))
                            .execute(&mut *tx)
                            .await
                            .map_err(backend)?;
                    }
                    tx.commit().await.map_err(backend)?;
                    if (missing.len() as i64) < BATCH {
                        return Ok(());
                    }
                }
            }

            async fn entity(&self, project: &str, id: &str) -> Result<Option<Entity>, StoreError> {
                let row = sqlx::query_as::<_, EntityRow>(sql::ENTITY_BY_ID)
                    .bind(project)
                    .bind(id)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(backend)?;
                Ok(row.map(Entity::from))
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
        }
    };
}
pub(crate) use entities_items;

/// The `Store` methods of entity types, entities and relations.
macro_rules! entities_methods {
    () => {
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

        fn list_entity_types<'a>(&'a self, project: &'a str) -> StoreFuture<'a, Vec<EntityType>> {
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
    };
}
pub(crate) use entities_methods;
