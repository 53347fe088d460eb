//! Web app sessions (`web_sessions`): only the hash of a cookie's token is stored.

use quarry_core::store::WebSession;
use sqlx::FromRow;

pub(crate) const INSERT: &str = "INSERT INTO web_sessions \
     (token_hash, project_id, key_prefix, csrf_token, created_at, expires_at) \
     VALUES ($1, $2, $3, $4, $5, $6)";
pub(crate) const DELETE_EXPIRED: &str = "DELETE FROM web_sessions WHERE expires_at <= $1";
pub(crate) const BY_HASH: &str = "SELECT token_hash, project_id, key_prefix, csrf_token, created_at, \
     expires_at FROM web_sessions WHERE token_hash = $1 AND expires_at > $2";
pub(crate) const DELETE: &str = "DELETE FROM web_sessions WHERE token_hash = $1";

#[derive(FromRow)]
pub(crate) struct SessionRow {
    token_hash: String,
    project_id: String,
    key_prefix: String,
    csrf_token: String,
    created_at: String,
    expires_at: String,
}

impl From<SessionRow> for WebSession {
    fn from(row: SessionRow) -> Self {
        WebSession {
            token_hash: row.token_hash,
            project_id: row.project_id,
            key_prefix: row.key_prefix,
            csrf_token: row.csrf_token,
            created_at: row.created_at,
            expires_at: row.expires_at,
        }
    }
}

/// The `Store` methods of web sessions.
macro_rules! sessions_methods {
    () => {
        fn create_web_session<'a>(
            &'a self,
            project: &'a str,
            token_hash: &'a str,
            key_prefix: &'a str,
            csrf_token: &'a str,
            lifetime: std::time::Duration,
        ) -> StoreFuture<'a, quarry_core::store::WebSession> {
            Box::pin(async move {
                use $crate::store_impl::sessions as session_sql;
                let _writer = self.write_gate().await;
                let created_at = now();
                let expires_at = $crate::clock::after(lifetime);
                sqlx::query(session_sql::DELETE_EXPIRED)
                    .bind(&created_at)
                    .execute(&self.pool)
                    .await
                    .map_err(backend)?;
                sqlx::query(session_sql::INSERT)
                    .bind(token_hash)
                    .bind(project)
                    .bind(key_prefix)
                    .bind(csrf_token)
                    .bind(&created_at)
                    .bind(&expires_at)
                    .execute(&self.pool)
                    .await
                    .map_err(backend)?;
                Ok(quarry_core::store::WebSession {
                    token_hash: token_hash.to_owned(),
                    project_id: project.to_owned(),
                    key_prefix: key_prefix.to_owned(),
                    csrf_token: csrf_token.to_owned(),
                    created_at,
                    expires_at,
                })
            })
        }

        fn web_session<'a>(
            &'a self,
            token_hash: &'a str,
        ) -> StoreFuture<'a, Option<quarry_core::store::WebSession>> {
            Box::pin(async move {
                use $crate::store_impl::sessions::{self as session_sql, SessionRow};
                let row = sqlx::query_as::<_, SessionRow>(session_sql::BY_HASH)
                    .bind(token_hash)
                    .bind(now())
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(backend)?;
                Ok(row.map(quarry_core::store::WebSession::from))
            })
        }

        fn delete_web_session<'a>(&'a self, token_hash: &'a str) -> StoreFuture<'a, bool> {
            Box::pin(async move {
                use $crate::store_impl::sessions as session_sql;
                let _writer = self.write_gate().await;
                let deleted = sqlx::query(session_sql::DELETE)
                    .bind(token_hash)
                    .execute(&self.pool)
                    .await
                    .map_err(backend)?;
                Ok(deleted.rows_affected() > 0)
            })
        }
    };
}
pub(crate) use sessions_methods;
