//! Documents and their links to entities (`DocumentStore`); their chunks are `retrieval.rs`.

use quarry_core::model::{Document, DocumentKind, WebPage};
use quarry_core::store::prelude::*;
use quarry_core::store::{StoreError, StoreFuture, StoredDocument};

use super::{SqlStore, content_hash, insert_document, web_content_hash};
use crate::clock::{new_id, now};
use crate::db::{query, query_as, query_scalar};
use crate::error::not_found;
use crate::rows::DocumentRow;
use crate::sql;

/// Helpers of the `DocumentStore` methods.
impl SqlStore {
    /// Inserts `document` unless the project holds a document of content `hash` (the
    /// insert waits for a concurrent one to commit), and returns whichever is stored.
    pub(super) async fn insert_unique_document(
        &self,
        document: Document,
        hash: String,
    ) -> Result<StoredDocument, StoreError> {
        let _writer = self.write_gate().await;
        let inserted = insert_document(&document, Some(&hash))
            .execute(&self.pool)
            .await?;
        if inserted == 1 {
            return Ok(StoredDocument {
                document,
                created: true,
            });
        }
        let row = query_as::<DocumentRow>(sql::DOCUMENT_BY_HASH)
            .bind(&document.project_id)
            .bind(&hash)
            .fetch_optional(&self.pool)
            .await?
            .ok_or_else(|| {
                StoreError::Backend(format!(
                    "document of content {hash} neither inserted nor found"
                ))
            })?;
        Ok(StoredDocument {
            document: Document::try_from(row)?,
            created: false,
        })
    }
}

/// The `DocumentStore` methods.
impl DocumentStore for SqlStore {
    fn store_document<'a>(
        &'a self,
        project: &'a str,
        title: &'a str,
        text: &'a str,
    ) -> StoreFuture<'a, StoredDocument> {
        Box::pin(async move {
            let document = Document {
                id: new_id(),
                project_id: project.to_owned(),
                title: title.to_owned(),
                text: text.to_owned(),
                kind: DocumentKind::File,
                created_at: now(),
                url: None,
                fetched_at: None,
            };
            self.insert_unique_document(document, content_hash(title, text))
                .await
        })
    }

    fn store_web_page<'a>(
        &'a self,
        project: &'a str,
        page: &'a WebPage,
    ) -> StoreFuture<'a, StoredDocument> {
        Box::pin(async move {
            let document = Document {
                id: new_id(),
                project_id: project.to_owned(),
                title: page.title.clone(),
                text: page.text.clone(),
                kind: DocumentKind::Web,
                created_at: now(),
                url: Some(page.url.clone()),
                fetched_at: Some(page.fetched_at.clone()),
            };
            let hash = web_content_hash(&page.url, &page.title, &page.text);
            self.insert_unique_document(document, hash).await
        })
    }

    fn document_entity_ids<'a>(
        &'a self,
        project: &'a str,
        document_id: &'a str,
    ) -> StoreFuture<'a, Vec<String>> {
        Box::pin(async move {
            query_scalar(sql::DOCUMENT_ENTITY_IDS)
                .bind(project)
                .bind(document_id)
                .fetch_all(&self.pool)
                .await
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
            let documents: i64 = query_scalar(sql::COUNT_DOCUMENT)
                .bind(project)
                .bind(document_id)
                .fetch_one(&self.pool)
                .await?;
            if documents == 0 {
                return Err(not_found("document", document_id));
            }
            self.require_entity(project, entity_id).await?;
            query(sql::INSERT_DOCUMENT_LINK)
                .bind(project)
                .bind(document_id)
                .bind(entity_id)
                .bind(now())
                .execute(&self.pool)
                .await?;
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
                Some(entity_id) => query_as::<DocumentRow>(sql::LINKED_DOCUMENTS)
                    .bind(project)
                    .bind(entity_id),
                None => query_as::<DocumentRow>(sql::DOCUMENTS).bind(project),
            };
            let rows = query.fetch_all(&self.pool).await?;
            rows.into_iter().map(Document::try_from).collect()
        })
    }
}
