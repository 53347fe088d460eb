//! Row shapes shared by both backends and their mapping to `quarry_core` records. Enums are
//! stored as their serde (snake_case) names; JSON columns decode through `sqlx::types::Json`.

use quarry_core::model::{
    ApiKey, Confidence, Document, Entity, EntityType, ExtractionResult, ExtractionRun, Relation,
    ResultStatus, RunScope, RunStatus, SourceRef,
};
use quarry_core::store::StoreError;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use sqlx::FromRow;
use sqlx::types::Json;

/// The stored name of an enum value (`"pending"`, `"waiting_human"`, ...).
pub(crate) fn enum_text<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(text)) => text,
        other => unreachable!("enum stored as text serialised to {other:?}"),
    }
}

pub(crate) fn parse_enum<T: DeserializeOwned>(column: &str, text: &str) -> Result<T, StoreError> {
    serde_json::from_value(Value::String(text.to_owned())).map_err(|_| {
        StoreError::Backend(format!("column {column} holds an unknown value '{text}'"))
    })
}

#[derive(FromRow)]
pub(crate) struct EntityRow {
    id: String,
    project_id: String,
    entity_type: String,
    title: String,
    parent_id: Option<String>,
    fields: Json<Map<String, Value>>,
    metadata: Json<Map<String, Value>>,
    created_at: String,
    updated_at: String,
}

impl From<EntityRow> for Entity {
    fn from(row: EntityRow) -> Self {
        Entity {
            id: row.id,
            project_id: row.project_id,
            entity_type: row.entity_type,
            title: row.title,
            parent_id: row.parent_id,
            fields: row.fields.0,
            metadata: row.metadata.0,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

#[derive(FromRow)]
pub(crate) struct EntityTypeRow {
    definition: Json<EntityType>,
}

impl From<EntityTypeRow> for EntityType {
    fn from(row: EntityTypeRow) -> Self {
        row.definition.0
    }
}

#[derive(FromRow)]
pub(crate) struct RelationRow {
    id: String,
    project_id: String,
    from_id: String,
    to_id: String,
    label: String,
    mention_count: i64,
    notes: Option<String>,
    first_seen_at: String,
    last_seen_at: String,
}

impl From<RelationRow> for Relation {
    fn from(row: RelationRow) -> Self {
        Relation {
            id: row.id,
            project_id: row.project_id,
            from_id: row.from_id,
            to_id: row.to_id,
            label: row.label,
            mention_count: row.mention_count,
            notes: row.notes,
            first_seen_at: row.first_seen_at,
            last_seen_at: row.last_seen_at,
        }
    }
}

#[derive(FromRow)]
pub(crate) struct DocumentRow {
    id: String,
    project_id: String,
    title: String,
    text: String,
    created_at: String,
}

impl From<DocumentRow> for Document {
    fn from(row: DocumentRow) -> Self {
        Document {
            id: row.id,
            project_id: row.project_id,
            title: row.title,
            text: row.text,
            created_at: row.created_at,
        }
    }
}

#[derive(FromRow)]
pub(crate) struct RunRow {
    id: String,
    project_id: String,
    entity_id: String,
    scope: String,
    triggered_by: String,
    fields_requested: Option<Json<Vec<String>>>,
    status: String,
    error: Option<String>,
    started_at: String,
    finished_at: Option<String>,
    duration_ms: Option<i64>,
}

impl TryFrom<RunRow> for ExtractionRun {
    type Error = StoreError;

    fn try_from(row: RunRow) -> Result<Self, StoreError> {
        Ok(ExtractionRun {
            scope: parse_enum::<RunScope>("extraction_runs.scope", &row.scope)?,
            status: parse_enum::<RunStatus>("extraction_runs.status", &row.status)?,
            id: row.id,
            project_id: row.project_id,
            entity_id: row.entity_id,
            triggered_by: row.triggered_by,
            fields_requested: row.fields_requested.map(|fields| fields.0),
            error: row.error,
            started_at: row.started_at,
            finished_at: row.finished_at,
            duration_ms: row.duration_ms,
        })
    }
}

#[derive(FromRow)]
pub(crate) struct ResultRow {
    id: String,
    run_id: Option<String>,
    project_id: String,
    entity_id: String,
    field_name: String,
    value: Json<Value>,
    sources: Json<Vec<SourceRef>>,
    confidence: String,
    agent_id: String,
    status: String,
    rejection_reason: Option<String>,
    reviewed_by: Option<String>,
    reviewed_at: Option<String>,
    created_entity_ids: Json<Vec<String>>,
    duration_ms: i64,
    tokens_used: i64,
    metadata: Json<Map<String, Value>>,
    created_at: String,
}

impl TryFrom<ResultRow> for ExtractionResult {
    type Error = StoreError;

    fn try_from(row: ResultRow) -> Result<Self, StoreError> {
        Ok(ExtractionResult {
            confidence: parse_enum::<Confidence>("extraction_results.confidence", &row.confidence)?,
            status: parse_enum::<ResultStatus>("extraction_results.status", &row.status)?,
            id: row.id,
            run_id: row.run_id,
            project_id: row.project_id,
            entity_id: row.entity_id,
            field_name: row.field_name,
            value: row.value.0,
            sources: row.sources.0,
            agent_id: row.agent_id,
            rejection_reason: row.rejection_reason,
            reviewed_by: row.reviewed_by,
            reviewed_at: row.reviewed_at,
            created_entity_ids: row.created_entity_ids.0,
            duration_ms: row.duration_ms,
            tokens_used: row.tokens_used,
            metadata: row.metadata.0,
            created_at: row.created_at,
        })
    }
}

#[derive(FromRow)]
pub(crate) struct ApiKeyRow {
    id: String,
    project_id: String,
    name: String,
    prefix: String,
    secret_hash: String,
    scopes: Json<Vec<String>>,
    created_at: String,
    revoked: bool,
}

impl From<ApiKeyRow> for ApiKey {
    fn from(row: ApiKeyRow) -> Self {
        ApiKey {
            id: row.id,
            project_id: row.project_id,
            name: row.name,
            prefix: row.prefix,
            secret_hash: row.secret_hash,
            scopes: row.scopes.0,
            created_at: row.created_at,
            revoked: row.revoked,
        }
    }
}

/// One `(status, confidence, count)` group of a field's results.
#[derive(FromRow)]
pub(crate) struct StatusCountRow {
    pub(crate) status: String,
    pub(crate) confidence: String,
    pub(crate) n: i64,
}

#[derive(FromRow)]
pub(crate) struct ReasonCountRow {
    pub(crate) reason: String,
    pub(crate) n: i64,
}
