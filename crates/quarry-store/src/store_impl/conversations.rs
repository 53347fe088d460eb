//! Extraction-chat conversations (`chat_conversations`), written with an optimistic version
//! check: an update names the version it read and changes nothing when another write came first.

use quarry_core::store::{
    ChatConversation, ChatConversationSummary, ChatMessage, NewConversation, StoreError,
};
use serde_json::Value;
use sqlx::FromRow;
use sqlx::types::Json;

use super::{SqlStore, sql_limit};
use crate::clock::new_id;
use crate::clock::now;
use crate::db::{query, query_as, query_scalar};
use crate::error::not_found;

pub(crate) const INSERT: &str = "INSERT INTO chat_conversations (id, project_id, title, schema, \
     document, clarifications, messages, last_result, status, version, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 0, $10, $10)";
pub(crate) const BY_ID: &str = "SELECT id, project_id, title, schema, document, clarifications, \
     messages, last_result, status, version, created_at, updated_at \
     FROM chat_conversations WHERE project_id = $1 AND id = $2";
pub(crate) const LIST: &str = "SELECT id, title, status, updated_at FROM chat_conversations \
     WHERE project_id = $1 ORDER BY updated_at DESC, id DESC LIMIT $2";
/// The version check is the `WHERE`: zero rows changed means another write came first (or the
/// conversation does not exist).
pub(crate) const UPDATE: &str = "UPDATE chat_conversations SET title = $3, clarifications = $4, \
     messages = $5, last_result = $6, status = $7, version = version + 1, updated_at = $8 \
     WHERE project_id = $1 AND id = $2 AND version = $9 RETURNING id, project_id, title, schema, \
     document, clarifications, messages, last_result, status, version, created_at, updated_at";
pub(crate) const EXISTS: &str =
    "SELECT COUNT(*) FROM chat_conversations WHERE project_id = $1 AND id = $2";

#[derive(FromRow)]
pub(crate) struct ConversationRow {
    id: String,
    project_id: String,
    title: String,
    schema: String,
    document: String,
    clarifications: Json<Vec<String>>,
    messages: Json<Vec<ChatMessage>>,
    last_result: Option<String>,
    status: String,
    version: i64,
    created_at: String,
    updated_at: String,
}

impl TryFrom<ConversationRow> for ChatConversation {
    type Error = StoreError;

    fn try_from(row: ConversationRow) -> Result<Self, StoreError> {
        let json = |column: &str, text: &str| {
            serde_json::from_str::<Value>(text).map_err(|error| {
                StoreError::Backend(format!("column {column} holds invalid JSON: {error}"))
            })
        };
        Ok(ChatConversation {
            schema: json("schema", &row.schema)?,
            result: row
                .last_result
                .as_deref()
                .map(|text| json("last_result", text))
                .transpose()?,
            id: row.id,
            project_id: row.project_id,
            title: row.title,
            document: row.document,
            clarifications: row.clarifications.0,
            messages: row.messages.0,
            status: row.status,
            version: row.version,
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
    }
}

#[derive(FromRow)]
pub(crate) struct SummaryRow {
    id: String,
    title: String,
    status: String,
    updated_at: String,
}

impl From<SummaryRow> for ChatConversationSummary {
    fn from(row: SummaryRow) -> Self {
        ChatConversationSummary {
            id: row.id,
            title: row.title,
            status: row.status,
            updated_at: row.updated_at,
        }
    }
}

/// The conversation steps of the `SessionStore` (`sessions.rs`).
impl SqlStore {
    pub(super) async fn insert_conversation(
        &self,
        project: &str,
        conversation: &NewConversation,
    ) -> Result<ChatConversation, StoreError> {
        let _writer = self.write_gate().await;
        let id = new_id();
        let row = query(INSERT)
            .bind(&id)
            .bind(project)
            .bind(&conversation.title)
            .bind(conversation.schema.to_string())
            .bind(&conversation.document)
            .bind(Json(Vec::<String>::new()))
            .bind(Json(&conversation.messages))
            .bind(None::<String>)
            .bind(&conversation.status)
            .bind(now())
            .execute(&self.pool)
            .await?;
        debug_assert_eq!(row, 1);
        query_as::<ConversationRow>(BY_ID)
            .bind(project)
            .bind(&id)
            .fetch_one(&self.pool)
            .await?
            .try_into()
    }

    pub(super) async fn conversation(
        &self,
        project: &str,
        id: &str,
    ) -> Result<Option<ChatConversation>, StoreError> {
        query_as::<ConversationRow>(BY_ID)
            .bind(project)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
            .map(TryInto::try_into)
            .transpose()
    }

    pub(super) async fn conversation_summaries(
        &self,
        project: &str,
        limit: usize,
    ) -> Result<Vec<ChatConversationSummary>, StoreError> {
        let rows = query_as::<SummaryRow>(LIST)
            .bind(project)
            .bind(sql_limit(limit))
            .fetch_all(&self.pool)
            .await?;
        Ok(rows.into_iter().map(Into::into).collect())
    }

    pub(super) async fn write_conversation(
        &self,
        project: &str,
        conversation: &ChatConversation,
    ) -> Result<ChatConversation, StoreError> {
        let _writer = self.write_gate().await;
        let updated = query_as::<ConversationRow>(UPDATE)
            .bind(project)
            .bind(&conversation.id)
            .bind(&conversation.title)
            .bind(Json(&conversation.clarifications))
            .bind(Json(&conversation.messages))
            .bind(conversation.result.as_ref().map(Value::to_string))
            .bind(&conversation.status)
            .bind(now())
            .bind(conversation.version)
            .fetch_optional(&self.pool)
            .await?;
        if let Some(row) = updated {
            return row.try_into();
        }
        let exists: i64 = query_scalar(EXISTS)
            .bind(project)
            .bind(&conversation.id)
            .fetch_one(&self.pool)
            .await?;
        if exists == 0 {
            Err(not_found("conversation", &conversation.id))
        } else {
            Err(StoreError::Conflict(format!(
                "conversation '{}' changed meanwhile (another answer was written first)",
                conversation.id
            )))
        }
    }
}
