//! Row shapes shared by both backends and their mapping to `quarry_core` records. Enums are
//! stored as their serde (snake_case) names; JSON columns decode through `sqlx::types::Json`.

use quarry_core::model::{
    ActionEvent, ApiKey, AttemptRecord, Confidence, Correction, Delivery, DeliveryState, Document,
    DocumentKind, DocumentSummary, Entity, EntityType, Episode, EpisodeStatus, ExtractionResult,
    ExtractionRun, FieldTask, GraphExtraction, NodeState, Relation, ResultStatus, RunInstructions,
    RunScope, RunStatus, SourceRef, StoredChunk,
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
    mention_count: i64,
    notes: Option<String>,
    last_seen_at: Option<String>,
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
            mention_count: row.mention_count,
            notes: row.notes,
            last_seen_at: row.last_seen_at,
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
    kind: String,
    created_at: String,
    url: Option<String>,
    fetched_at: Option<String>,
}

impl TryFrom<DocumentRow> for Document {
    type Error = StoreError;

    fn try_from(row: DocumentRow) -> Result<Self, StoreError> {
        Ok(Document {
            kind: parse_enum::<DocumentKind>("documents.kind", &row.kind)?,
            id: row.id,
            project_id: row.project_id,
            title: row.title,
            text: row.text,
            created_at: row.created_at,
            url: row.url,
            fetched_at: row.fetched_at,
        })
    }
}

#[derive(FromRow)]
pub(crate) struct EpisodeRow {
    id: String,
    project_id: String,
    user_message: String,
    assistant_response: String,
    status: String,
    attempts: i64,
    error: Option<String>,
    ingest: Option<Json<GraphExtraction>>,
    entities_stored: i64,
    entities_skipped: i64,
    relationships_stored: i64,
    relationships_skipped: i64,
    created_at: String,
    updated_at: String,
    lease_owner: Option<String>,
    lease_expires_at: Option<String>,
    available_at: Option<String>,
}

impl TryFrom<EpisodeRow> for Episode {
    type Error = StoreError;

    fn try_from(row: EpisodeRow) -> Result<Self, StoreError> {
        Ok(Episode {
            status: parse_enum::<EpisodeStatus>("episodes.status", &row.status)?,
            id: row.id,
            project_id: row.project_id,
            user_message: row.user_message,
            assistant_response: row.assistant_response,
            attempts: row.attempts,
            error: row.error,
            ingest: row.ingest.map(|ingest| ingest.0),
            entities_stored: row.entities_stored,
            relationships_stored: row.relationships_stored,
            relationships_skipped: row.relationships_skipped,
            entities_skipped: row.entities_skipped,
            created_at: row.created_at,
            updated_at: row.updated_at,
            lease_owner: row.lease_owner,
            lease_expires_at: row.lease_expires_at,
            available_at: row.available_at,
        })
    }
}

/// A stored chunk and its project. Offsets are kept as BIGINT/INTEGER; the embedding as
/// little-endian f32 bytes.
#[derive(FromRow)]
pub(crate) struct ChunkRow {
    project_id: String,
    document_id: String,
    ordinal: i64,
    start_cp: i64,
    end_cp: i64,
    byte_start: i64,
    byte_end: i64,
    embedder: String,
    embedding: Vec<u8>,
}

impl TryFrom<ChunkRow> for (String, StoredChunk) {
    type Error = StoreError;

    fn try_from(row: ChunkRow) -> Result<Self, StoreError> {
        let offset = |column: &str, value: i64| {
            usize::try_from(value)
                .map_err(|_| StoreError::Backend(format!("column chunks.{column} holds {value}")))
        };
        if !row.embedding.len().is_multiple_of(4) {
            return Err(StoreError::Backend(format!(
                "column chunks.embedding of '{}' #{} holds {} bytes, not f32s",
                row.document_id,
                row.ordinal,
                row.embedding.len()
            )));
        }
        let chunk = StoredChunk {
            start: offset("start_cp", row.start_cp)?,
            end: offset("end_cp", row.end_cp)?,
            byte_start: offset("byte_start", row.byte_start)?,
            byte_end: offset("byte_end", row.byte_end)?,
            document_id: row.document_id,
            ordinal: row.ordinal,
            embedder: row.embedder,
            embedding: decode_embedding(&row.embedding),
        };
        Ok((row.project_id, chunk))
    }
}

/// An embedding as stored: each f32 as 4 little-endian bytes (bit-exact, NaNs included).
pub(crate) fn encode_embedding(embedding: &[f32]) -> Vec<u8> {
    embedding
        .iter()
        .flat_map(|value| value.to_le_bytes())
        .collect()
}

fn decode_embedding(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
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
    instructions: Option<Json<RunInstructions>>,
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
            instructions: row.instructions.map(|instructions| instructions.0),
        })
    }
}

#[derive(FromRow)]
pub(crate) struct DeliveryRow {
    id: String,
    project_id: String,
    event: String,
    entity_id: String,
    field_name: String,
    result_id: String,
    url: String,
    body: Json<Value>,
    state: String,
    attempts: i64,
    max_attempts: i64,
    last_error: Option<String>,
    response_status: Option<i64>,
    created_at: String,
    updated_at: String,
    lease_owner: Option<String>,
    lease_expires_at: Option<String>,
    available_at: Option<String>,
}

impl TryFrom<DeliveryRow> for Delivery {
    type Error = StoreError;

    fn try_from(row: DeliveryRow) -> Result<Self, StoreError> {
        Ok(Delivery {
            event: parse_enum::<ActionEvent>("deliveries.event", &row.event)?,
            state: parse_enum::<DeliveryState>("deliveries.state", &row.state)?,
            id: row.id,
            project_id: row.project_id,
            entity_id: row.entity_id,
            field_name: row.field_name,
            result_id: row.result_id,
            url: row.url,
            body: row.body.0,
            attempts: row.attempts,
            max_attempts: row.max_attempts,
            last_error: row.last_error,
            response_status: row.response_status,
            created_at: row.created_at,
            updated_at: row.updated_at,
            lease_owner: row.lease_owner,
            lease_expires_at: row.lease_expires_at,
            available_at: row.available_at,
        })
    }
}

#[derive(FromRow)]
pub(crate) struct CorrectionRow {
    id: String,
    project_id: String,
    entity_type: Option<String>,
    field_name: Option<String>,
    text: String,
    created_by: String,
    created_at: String,
}

impl From<CorrectionRow> for Correction {
    fn from(row: CorrectionRow) -> Self {
        Correction {
            id: row.id,
            project_id: row.project_id,
            entity_type: row.entity_type,
            field_name: row.field_name,
            text: row.text,
            created_by: row.created_by,
            created_at: row.created_at,
        }
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
    workflow_node_run_id: Option<String>,
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
            workflow_node_run_id: row.workflow_node_run_id,
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

#[derive(FromRow)]
pub(crate) struct TaskRow {
    id: String,
    project_id: String,
    run_id: String,
    root_run_id: String,
    entity_id: String,
    field_name: String,
    state: String,
    depends_on: Json<Vec<String>>,
    gated: bool,
    attempts: i64,
    max_attempts: i64,
    last_error: Option<String>,
    feedback: Option<String>,
    depth: i64,
    triggered_by: String,
    lease_owner: Option<String>,
    lease_expires_at: Option<String>,
    available_at: String,
    result_id: Option<String>,
    tokens_used: i64,
    duration_ms: i64,
    created_at: String,
    updated_at: String,
    attempt_log: Json<Vec<AttemptRecord>>,
    instructions: Option<String>,
}

impl TryFrom<TaskRow> for FieldTask {
    type Error = StoreError;

    fn try_from(row: TaskRow) -> Result<Self, StoreError> {
        Ok(FieldTask {
            state: NodeState::parse(&row.state).ok_or_else(|| {
                StoreError::Backend(format!(
                    "column field_tasks.state holds an unknown value '{}'",
                    row.state
                ))
            })?,
            id: row.id,
            project_id: row.project_id,
            run_id: row.run_id,
            root_run_id: row.root_run_id,
            entity_id: row.entity_id,
            field_name: row.field_name,
            depends_on: row.depends_on.0,
            gated: row.gated,
            attempts: row.attempts,
            max_attempts: row.max_attempts,
            last_error: row.last_error,
            feedback: row.feedback,
            instructions: row.instructions,
            depth: row.depth,
            triggered_by: row.triggered_by,
            lease_owner: row.lease_owner,
            lease_expires_at: row.lease_expires_at,
            available_at: row.available_at,
            result_id: row.result_id,
            tokens_used: row.tokens_used,
            duration_ms: row.duration_ms,
            created_at: row.created_at,
            updated_at: row.updated_at,
            attempt_log: row.attempt_log.0,
        })
    }
}

/// A review-queue row: a result and its entity's title.
#[derive(FromRow)]
pub(crate) struct QueuedRow {
    #[sqlx(flatten)]
    pub(crate) result: ResultRow,
    pub(crate) entity_title: String,
}

#[derive(FromRow)]
pub(crate) struct DocumentSummaryRow {
    id: String,
    title: String,
    kind: String,
    created_at: String,
    chars: i64,
}

impl TryFrom<DocumentSummaryRow> for DocumentSummary {
    type Error = StoreError;

    fn try_from(row: DocumentSummaryRow) -> Result<Self, StoreError> {
        Ok(DocumentSummary {
            kind: parse_enum::<DocumentKind>("documents.kind", &row.kind)?,
            id: row.id,
            title: row.title,
            created_at: row.created_at,
            chars: row.chars,
        })
    }
}
