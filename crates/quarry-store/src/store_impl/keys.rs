//! Projects and API keys.

/// The `Store` methods of projects and API keys.
macro_rules! keys_methods {
    () => {
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

        fn project_name<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<String>> {
            Box::pin(async move {
                sqlx::query_scalar(sql::PROJECT_NAME)
                    .bind(id)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(backend)
            })
        }

        fn revoke_api_key<'a>(
            &'a self,
            project: &'a str,
            prefix: &'a str,
        ) -> StoreFuture<'a, bool> {
            Box::pin(async move {
                let _writer = self.write_gate().await;
                let revoked = sqlx::query(sql::REVOKE_API_KEY)
                    .bind(project)
                    .bind(prefix)
                    .bind(true)
                    .execute(&self.pool)
                    .await
                    .map_err(backend)?;
                sqlx::query(sql::DELETE_KEY_SESSIONS)
                    .bind(project)
                    .bind(prefix)
                    .execute(&self.pool)
                    .await
                    .map_err(backend)?;
                Ok(revoked.rows_affected() > 0)
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
    };
}
pub(crate) use keys_methods;
