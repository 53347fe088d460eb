//! Web app sessions (`web_sessions`): only the hash of a cookie's token is stored.

use quarry_core::store::{
    ChatConversation, ChatConversationSummary, NewConversation, SessionStore, StoreFuture,
    WebSession,
};
use sqlx::FromRow;

use super::SqlStore;
use crate::clock::now;
use crate::db::{query, query_as};

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

/// The `SessionStore`: web sessions here, conversations in `conversations.rs`.
impl SessionStore for SqlStore {
    fn create_web_session<'a>(
        &'a self,
        project: &'a str,
        token_hash: &'a str,
        key_prefix: &'a str,
        csrf_token: &'a str,
        lifetime: std::time::Duration,
    ) -> StoreFuture<'a, WebSession> {
        Box::pin(async move {
            let _writer = self.write_gate().await;
            let created_at = now();
            let expires_at = crate::clock::after(lifetime);
            query(DELETE_EXPIRED)
                .bind(&created_at)
                .execute(&self.pool)
                .await?;
            query(INSERT)
                .bind(token_hash)
                .bind(project)
                .bind(key_prefix)
                .bind(csrf_token)
                .bind(&created_at)
                .bind(&expires_at)
                .execute(&self.pool)
                .await?;
            Ok(WebSession {
                token_hash: token_hash.to_owned(),
                project_id: project.to_owned(),
                key_prefix: key_prefix.to_owned(),
                csrf_token: csrf_token.to_owned(),
                created_at,
                expires_at,
            })
        })
    }

    fn web_session<'a>(&'a self, token_hash: &'a str) -> StoreFuture<'a, Option<WebSession>> {
        Box::pin(async move {
            let row = query_as::<SessionRow>(BY_HASH)
                .bind(token_hash)
                .bind(now())
                .fetch_optional(&self.pool)
                .await?;
            Ok(row.map(WebSession::from))
        })
    }

    fn delete_web_session<'a>(&'a self, token_hash: &'a str) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let _writer = self.write_gate().await;
            let deleted = query(DELETE).bind(token_hash).execute(&self.pool).await?;
            Ok(deleted > 0)
        })
    }

    fn create_conversation<'a>(
        &'a self,
        project: &'a str,
        conversation: &'a NewConversation,
    ) -> StoreFuture<'a, ChatConversation> {
        Box::pin(self.insert_conversation(project, conversation))
    }

    fn get_conversation<'a>(
        &'a self,
        project: &'a str,
        id: &'a str,
    ) -> StoreFuture<'a, Option<ChatConversation>> {
        Box::pin(self.conversation(project, id))
    }

    fn list_conversations<'a>(
        &'a self,
        project: &'a str,
        limit: usize,
    ) -> StoreFuture<'a, Vec<ChatConversationSummary>> {
        Box::pin(self.conversation_summaries(project, limit))
    }

    fn update_conversation<'a>(
        &'a self,
        project: &'a str,
        conversation: &'a ChatConversation,
    ) -> StoreFuture<'a, ChatConversation> {
        Box::pin(self.write_conversation(project, conversation))
    }
}
