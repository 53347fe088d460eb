//! The web app's review views: pages of entities, results, documents and episodes, each in a
//! bounded number of statements (a page and its count; the latest results and tasks of a page's
//! entities in one statement per 512 entities), and field locks.

use quarry_core::model::{
    Document, DocumentKind, DocumentSummary, Entity, Episode, EpisodeStatus, ExtractionResult,
    FieldTask,
};
use quarry_core::store::prelude::*;
use quarry_core::store::{Page, QueuedResult, StoreFuture};
use serde_json::Value;
use sqlx::types::Json;

use super::{SqlStore, contains_pattern, sql_limit, sql_offset};
use crate::clock::now;
use crate::db::{query, query_as, query_scalar};
use crate::error::not_found;
use crate::rows::{
    DocumentRow, DocumentSummaryRow, EntityRow, EpisodeRow, QueuedRow, ResultRow, TaskRow,
};
use crate::sql;

/// A page's search text as a `LIKE` pattern (none for no text).
fn like_pattern(query: Option<&str>) -> Option<String> {
    let query = query.map(str::trim).filter(|q| !q.is_empty())?;
    Some(contains_pattern(query))
}

/// The `Store` methods of the review views.
impl ReviewViewStore for SqlStore {
    fn entity_page<'a>(
        &'a self,
        project: &'a str,
        entity_type: &'a str,
        query: Option<&'a str>,
        limit: usize,
        offset: usize,
    ) -> StoreFuture<'a, Page<Entity>> {
        Box::pin(async move {
            let pattern = like_pattern(query);
            let offset = sql_offset("offset", offset)?;
            let total: i64 = query_scalar(sql::COUNT_ENTITY_PAGE)
                .bind(project)
                .bind(entity_type)
                .bind(pattern.as_deref())
                .fetch_one(&self.pool)
                .await?;
            let rows = query_as::<EntityRow>(sql::ENTITY_PAGE)
                .bind(project)
                .bind(entity_type)
                .bind(pattern.as_deref())
                .bind(sql_limit(limit))
                .bind(offset)
                .fetch_all(&self.pool)
                .await?;
            Ok(Page {
                total,
                items: rows.into_iter().map(Entity::from).collect(),
            })
        })
    }

    fn latest_results_of<'a>(
        &'a self,
        project: &'a str,
        entity_ids: &'a [String],
    ) -> StoreFuture<'a, Vec<ExtractionResult>> {
        Box::pin(async move {
            let rows: Vec<ResultRow> = self
                .rows_among(sql::LATEST_RESULTS_OF, project, entity_ids)
                .await?;
            rows.into_iter().map(ExtractionResult::try_from).collect()
        })
    }

    fn latest_tasks_of<'a>(
        &'a self,
        project: &'a str,
        entity_ids: &'a [String],
    ) -> StoreFuture<'a, Vec<FieldTask>> {
        Box::pin(async move {
            let rows: Vec<TaskRow> = self
                .rows_among(sql::LATEST_TASKS_OF, project, entity_ids)
                .await?;
            rows.into_iter().map(FieldTask::try_from).collect()
        })
    }

    fn review_queue<'a>(
        &'a self,
        project: &'a str,
        entity_type: &'a str,
        limit: usize,
        offset: usize,
    ) -> StoreFuture<'a, Page<QueuedResult>> {
        Box::pin(async move {
            let offset = sql_offset("offset", offset)?;
            let total: i64 = query_scalar(sql::COUNT_PENDING_OF_TYPE)
                .bind(project)
                .bind(entity_type)
                .fetch_one(&self.pool)
                .await?;
            let rows = query_as::<QueuedRow>(sql::REVIEW_QUEUE)
                .bind(project)
                .bind(entity_type)
                .bind(sql_limit(limit))
                .bind(offset)
                .fetch_all(&self.pool)
                .await?;
            let mut items = Vec::with_capacity(rows.len());
            for row in rows {
                items.push(QueuedResult {
                    result: ExtractionResult::try_from(row.result)?,
                    entity_title: row.entity_title,
                });
            }
            Ok(Page { total, items })
        })
    }

    fn set_field_lock<'a>(
        &'a self,
        project: &'a str,
        entity_id: &'a str,
        field: &'a str,
        locked: bool,
    ) -> StoreFuture<'a, Entity> {
        Box::pin(async move {
            let _writer = self.write_gate().await;
            let mut tx = self.pool.begin().await?;
            // Write first (the entity's lock), then read: see the module note in mod.rs.
            let found: Option<String> = query_scalar(sql::LOCK_ENTITY)
                .bind(project)
                .bind(entity_id)
                .fetch_optional(&mut tx)
                .await?;
            if found.is_none() {
                return Err(not_found("entity", entity_id));
            }
            let mut entity = query_as::<EntityRow>(sql::ENTITY_BY_ID)
                .bind(project)
                .bind(entity_id)
                .fetch_one(&mut tx)
                .await
                .map(Entity::from)?;
            let mut names = entity.locked_fields();
            let present = names.iter().any(|name| name == field);
            if present == locked {
                tx.commit().await?;
                return Ok(entity);
            }
            if locked {
                names.push(field.to_owned());
            } else {
                names.retain(|name| name != field);
            }
            entity.metadata.insert(
                "locked_fields".to_owned(),
                Value::Array(names.into_iter().map(Value::String).collect()),
            );
            entity.updated_at = now();
            query(sql::SET_ENTITY_METADATA)
                .bind(project)
                .bind(entity_id)
                .bind(Json(&entity.metadata))
                .bind(&entity.updated_at)
                .execute(&mut tx)
                .await?;
            tx.commit().await?;
            Ok(entity)
        })
    }

    fn get_document<'a>(
        &'a self,
        project: &'a str,
        id: &'a str,
    ) -> StoreFuture<'a, Option<Document>> {
        Box::pin(async move {
            query_as::<DocumentRow>(sql::DOCUMENT_BY_ID)
                .bind(project)
                .bind(id)
                .fetch_optional(&self.pool)
                .await?
                .map(Document::try_from)
                .transpose()
        })
    }

    fn document_page<'a>(
        &'a self,
        project: &'a str,
        query: Option<&'a str>,
        kind: Option<DocumentKind>,
        limit: usize,
        offset: usize,
    ) -> StoreFuture<'a, Page<DocumentSummary>> {
        Box::pin(async move {
            let pattern = like_pattern(query);
            let kind = kind.map(DocumentKind::as_str);
            let offset = sql_offset("offset", offset)?;
            let total: i64 = query_scalar(sql::COUNT_DOCUMENT_PAGE)
                .bind(project)
                .bind(pattern.as_deref())
                .bind(kind)
                .fetch_one(&self.pool)
                .await?;
            let rows = query_as::<DocumentSummaryRow>(sql::DOCUMENT_PAGE)
                .bind(project)
                .bind(pattern.as_deref())
                .bind(kind)
                .bind(sql_limit(limit))
                .bind(offset)
                .fetch_all(&self.pool)
                .await?;
            Ok(Page {
                total,
                items: rows
                    .into_iter()
                    .map(DocumentSummary::try_from)
                    .collect::<Result<_, _>>()?,
            })
        })
    }

    fn episode_page<'a>(
        &'a self,
        project: &'a str,
        status: Option<EpisodeStatus>,
        limit: usize,
        offset: usize,
    ) -> StoreFuture<'a, Page<Episode>> {
        Box::pin(async move {
            let status = status.map(EpisodeStatus::as_str);
            let offset = sql_offset("offset", offset)?;
            let total: i64 = query_scalar(sql::COUNT_EPISODE_PAGE)
                .bind(project)
                .bind(status)
                .fetch_one(&self.pool)
                .await?;
            let rows = query_as::<EpisodeRow>(sql::EPISODE_PAGE)
                .bind(project)
                .bind(status)
                .bind(sql_limit(limit))
                .bind(offset)
                .fetch_all(&self.pool)
                .await?;
            Ok(Page {
                total,
                items: rows
                    .into_iter()
                    .map(Episode::try_from)
                    .collect::<Result<_, _>>()?,
            })
        })
    }
}
