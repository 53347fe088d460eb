//! The change feed (`ChangeFeed`): what any process wrote since a time, across projects, for the
//! followers of the in-process indexes.

macro_rules! changes_methods {
    () => {
        fn documents_created_since<'a>(
            &'a self,
            since: &'a str,
            limit: usize,
        ) -> StoreFuture<'a, Vec<Document>> {
            Box::pin(async move {
                sqlx::query_as::<_, DocumentRow>(sql::DOCUMENTS_CREATED_SINCE)
                    .bind(since)
                    .bind(sql_limit(limit))
                    .fetch_all(&self.pool)
                    .await
                    .map_err(backend)?
                    .into_iter()
                    .map(Document::try_from)
                    .collect()
            })
        }

        fn document_links_since<'a>(
            &'a self,
            since: &'a str,
            limit: usize,
        ) -> StoreFuture<'a, Vec<DocumentLink>> {
            Box::pin(async move {
                let rows: Vec<(String, String, String, String)> =
                    sqlx::query_as(sql::DOCUMENT_LINKS_SINCE)
                        .bind(since)
                        .bind(sql_limit(limit))
                        .fetch_all(&self.pool)
                        .await
                        .map_err(backend)?;
                Ok(rows
                    .into_iter()
                    .map(
                        |(project_id, document_id, entity_id, created_at)| DocumentLink {
                            project_id,
                            document_id,
                            entity_id,
                            created_at,
                        },
                    )
                    .collect())
            })
        }

        fn entities_changed_since<'a>(
            &'a self,
            since: &'a str,
            limit: usize,
        ) -> StoreFuture<'a, Vec<Entity>> {
            Box::pin(async move {
                let rows = sqlx::query_as::<_, EntityRow>(sql::ENTITIES_CHANGED_SINCE)
                    .bind(since)
                    .bind(sql_limit(limit))
                    .fetch_all(&self.pool)
                    .await
                    .map_err(backend)?;
                Ok(rows.into_iter().map(Entity::from).collect())
            })
        }

        fn entities_created_since<'a>(
            &'a self,
            project: &'a str,
            entity_type: &'a str,
            since: &'a str,
            limit: usize,
        ) -> StoreFuture<'a, Vec<Entity>> {
            Box::pin(async move {
                let rows = sqlx::query_as::<_, EntityRow>(sql::ENTITIES_CREATED_SINCE)
                    .bind(project)
                    .bind(entity_type)
                    .bind(since)
                    .bind(sql_limit(limit))
                    .fetch_all(&self.pool)
                    .await
                    .map_err(backend)?;
                Ok(rows.into_iter().map(Entity::from).collect())
            })
        }
    };
}
pub(crate) use changes_methods;
