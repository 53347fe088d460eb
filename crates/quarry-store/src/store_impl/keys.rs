//! Projects and API keys.

use quarry_core::model::ApiKey;
use quarry_core::store::StoreFuture;
use quarry_core::store::prelude::*;
use sqlx::types::Json;

use super::SqlStore;
use crate::clock::{new_id, now};
use crate::db::{query, query_as, query_scalar};
use crate::rows::ApiKeyRow;
use crate::sql;

/// The `Store` methods of projects and API keys.
impl ProjectStore for SqlStore {
    fn ensure_project<'a>(&'a self, name: &'a str) -> StoreFuture<'a, String> {
        Box::pin(async move {
            let _writer = self.write_gate().await;
            query(sql::INSERT_PROJECT)
                .bind(new_id())
                .bind(name)
                .bind(now())
                .execute(&self.pool)
                .await?;
            query_scalar(sql::PROJECT_ID_BY_NAME)
                .bind(name)
                .fetch_one(&self.pool)
                .await
        })
    }

    fn create_api_key<'a>(&'a self, key: &'a ApiKey) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let _writer = self.write_gate().await;
            query(sql::INSERT_API_KEY)
                .bind(&key.id)
                .bind(&key.project_id)
                .bind(&key.name)
                .bind(&key.prefix)
                .bind(&key.secret_hash)
                .bind(Json(&key.scopes))
                .bind(&key.created_at)
                .bind(key.revoked)
                .execute(&self.pool)
                .await?;
            Ok(())
        })
    }

    fn list_project_ids(&self) -> StoreFuture<'_, Vec<String>> {
        Box::pin(async move { query_scalar(sql::PROJECT_IDS).fetch_all(&self.pool).await })
    }

    fn project_name<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<String>> {
        Box::pin(async move {
            query_scalar(sql::PROJECT_NAME)
                .bind(id)
                .fetch_optional(&self.pool)
                .await
        })
    }

    fn revoke_api_key<'a>(&'a self, project: &'a str, prefix: &'a str) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let _writer = self.write_gate().await;
            let revoked = query(sql::REVOKE_API_KEY)
                .bind(project)
                .bind(prefix)
                .bind(true)
                .execute(&self.pool)
                .await?;
            query(sql::DELETE_KEY_SESSIONS)
                .bind(project)
                .bind(prefix)
                .execute(&self.pool)
                .await?;
            Ok(revoked > 0)
        })
    }

    fn find_api_key<'a>(&'a self, prefix: &'a str) -> StoreFuture<'a, Option<ApiKey>> {
        Box::pin(async move {
            let row = query_as::<ApiKeyRow>(sql::API_KEY_BY_PREFIX)
                .bind(prefix)
                .fetch_optional(&self.pool)
                .await?;
            Ok(row.map(ApiKey::from))
        })
    }
}
