//! The change feed (`ChangeFeed`): what any process wrote since a time, across projects, for the
//! followers of the in-process indexes.

use quarry_core::model::{Document, Entity};
use quarry_core::store::prelude::*;
use quarry_core::store::{DocumentLink, StoreFuture};

use super::{SqlStore, sql_limit};
use crate::db::query_as;
use crate::rows::{DocumentRow, EntityRow};
use crate::sql;

impl ChangeFeed for SqlStore {
    fn documents_created_since<'a>(
        &'a self,
        since: &'a str,
        limit: usize,
    ) -> StoreFuture<'a, Vec<Document>> {
        Box::pin(async move {
            query_as::<DocumentRow>(sql::DOCUMENTS_CREATED_SINCE)
                .bind(since)
                .bind(sql_limit(limit))
                .fetch_all(&self.pool)
                .await?
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
            let rows: Vec<(String, String, String, String)> = query_as(sql::DOCUMENT_LINKS_SINCE)
                .bind(since)
                .bind(sql_limit(limit))
                .fetch_all(&self.pool)
                .await?;
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
            let rows = query_as::<EntityRow>(sql::ENTITIES_CHANGED_SINCE)
                .bind(since)
                .bind(sql_limit(limit))
                .fetch_all(&self.pool)
                .await?;
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
            let rows = query_as::<EntityRow>(sql::ENTITIES_CREATED_SINCE)
                .bind(project)
                .bind(entity_type)
                .bind(since)
                .bind(sql_limit(limit))
                .fetch_all(&self.pool)
                .await?;
            Ok(rows.into_iter().map(Entity::from).collect())
        })
    }
}
