//! Stored records. Ids are opaque strings (UUIDs made by the store); times are RFC 3339 UTC
//! strings so every backend stores and compares them alike.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Entity {
    pub id: String,
    pub project_id: String,
    pub entity_type: String,
    pub title: String,
    pub parent_id: Option<String>,
    /// Approved (promoted) field values.
    pub fields: Map<String, Value>,
    /// `locked_fields` (never extracted) and anything else callers keep.
    pub metadata: Map<String, Value>,
    pub created_at: String,
    pub updated_at: String,
    /// Times the conversation graph saw this entity (0 for entities made otherwise).
    #[serde(default)]
    pub mention_count: i64,
    /// The graph's free-text description; kept when a later extraction gives none.
    #[serde(default)]
    pub notes: Option<String>,
    /// When the graph last saw this entity; `None` if it never did.
    #[serde(default)]
    pub last_seen_at: Option<String>,
}

impl Entity {
    /// Field names listed in `metadata.locked_fields`.
    pub fn locked_fields(&self) -> Vec<String> {
        self.metadata
            .get("locked_fields")
            .and_then(Value::as_array)
            .map(|names| {
                names
                    .iter()
                    .filter_map(|name| name.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct NewEntity {
    pub entity_type: String,
    /// Not blank.
    #[cfg_attr(feature = "json-schema", schemars(pattern(r"\S")))]
    pub title: String,
    #[serde(default)]
    pub parent_id: Option<String>,
    #[serde(default)]
    pub fields: Map<String, Value>,
    #[serde(default)]
    pub metadata: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Relation {
    pub id: String,
    pub project_id: String,
    pub from_id: String,
    pub to_id: String,
    pub label: String,
    pub mention_count: i64,
    pub notes: Option<String>,
    pub first_seen_at: String,
    pub last_seen_at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Document {
    pub id: String,
    pub project_id: String,
    pub title: String,
    pub text: String,
    /// What the text is: an added file or text, a conversation episode, or a web page.
    #[serde(default)]
    pub kind: DocumentKind,
    pub created_at: String,
    /// A web page's address (after redirects), for documents of kind `web`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// When a web page was read (RFC 3339, UTC); its text is the page as it was then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fetched_at: Option<String>,
}

/// A web page as it was read: what [`DocumentStore::store_web_page`] stores.
///
/// [`DocumentStore::store_web_page`]: crate::store::DocumentStore::store_web_page
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebPage {
    /// The address the text came from (after redirects).
    pub url: String,
    pub title: String,
    pub text: String,
    /// RFC 3339, UTC.
    pub fetched_at: String,
}

/// A document as lists show it: without its text, with the text's length in code points.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct DocumentSummary {
    pub id: String,
    pub title: String,
    pub kind: DocumentKind,
    pub created_at: String,
    /// The text's length in code points.
    pub chars: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum DocumentKind {
    #[default]
    File,
    Episode,
    /// A page a field agent read from the web (`sources: [web]`).
    Web,
}

impl DocumentKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DocumentKind::File => "file",
            DocumentKind::Episode => "episode",
            DocumentKind::Web => "web",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "file" => Some(DocumentKind::File),
            "episode" => Some(DocumentKind::Episode),
            "web" => Some(DocumentKind::Web),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum RunScope {
    Full,
    Field,
    Consensus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    /// Parked until a person answers a `human_input` field or approves a gated one.
    WaitingHuman,
    Completed,
    Partial,
    Failed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct ExtractionRun {
    pub id: String,
    pub project_id: String,
    pub entity_id: String,
    pub scope: RunScope,
    pub triggered_by: String,
    /// `None` for a full run.
    pub fields_requested: Option<Vec<String>>,
    pub status: RunStatus,
    pub error: Option<String>,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub duration_ms: Option<i64>,
    /// The trigger's additional instructions, as given (`None`: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<RunInstructions>,
}

/// A project correction: a short rule reviewers write ("revenue is always in USD"), injected
/// into every extraction prompt it matches — the project's (no type), one entity type's (no
/// field), or one field's of a type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Correction {
    pub id: String,
    pub project_id: String,
    /// `None`: every entity type of the project.
    pub entity_type: Option<String>,
    /// `None`: every field of the type (or of the project).
    pub field_name: Option<String>,
    pub text: String,
    pub created_by: String,
    pub created_at: String,
}

/// A correction to add (the store gives it its id and time).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewCorrection {
    pub entity_type: Option<String>,
    pub field_name: Option<String>,
    pub text: String,
    pub created_by: String,
}

impl Correction {
    /// Whether it applies to `field` of `entity_type`.
    pub fn applies_to(&self, entity_type: &str, field: &str) -> bool {
        self.entity_type.as_deref().is_none_or(|t| t == entity_type)
            && self.field_name.as_deref().is_none_or(|f| f == field)
    }
}

/// Additional instructions a trigger gives a run (the reference's "additional instructions …
/// from workflow overrides"): for every field, and per field.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct RunInstructions {
    /// For every field of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all: Option<String>,
    /// Per field name, after `all`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub fields: std::collections::BTreeMap<String, String>,
}

impl RunInstructions {
    pub fn is_empty(&self) -> bool {
        self.all
            .as_deref()
            .is_none_or(|text| text.trim().is_empty())
            && self.fields.values().all(|text| text.trim().is_empty())
    }

    /// What `field`'s prompt gets: `all`, then the field's own, one per line.
    pub fn for_field(&self, field: &str) -> Option<String> {
        let lines: Vec<&str> = [
            self.all.as_deref(),
            self.fields.get(field).map(String::as_str),
        ]
        .into_iter()
        .flatten()
        .map(str::trim)
        .filter(|text| !text.is_empty())
        .collect();
        (!lines.is_empty()).then(|| lines.join("\n"))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    Low,
    Medium,
    High,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ResultStatus {
    Pending,
    Approved,
    Rejected,
    Superseded,
}

/// Where a value came from: a document span (code points), an entity or one of its fields, or a
/// URL given by an external agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SourceRef {
    /// A span of a document, in code points, end exclusive.
    Document {
        document_id: String,
        start: usize,
        end: usize,
        #[serde(default)]
        snippet: Option<String>,
    },
    /// An entity, or one of its fields.
    Entity {
        entity_id: String,
        #[serde(default)]
        field: Option<String>,
    },
    /// A web page.
    Url { url: String },
    /// A person's answer (human_input fields).
    Person { reviewer: String },
}

/// Every column of the reference's `ExtractionResult`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct ExtractionResult {
    pub id: String,
    pub run_id: Option<String>,
    pub project_id: String,
    pub entity_id: String,
    pub field_name: String,
    pub value: Value,
    pub sources: Vec<SourceRef>,
    pub confidence: Confidence,
    pub agent_id: String,
    pub status: ResultStatus,
    pub rejection_reason: Option<String>,
    pub reviewed_by: Option<String>,
    pub reviewed_at: Option<String>,
    pub created_entity_ids: Vec<String>,
    pub duration_ms: i64,
    pub tokens_used: i64,
    /// E.g. consensus `agreement` ratio, the rerun's feedback.
    pub metadata: Map<String, Value>,
    pub created_at: String,
    /// The workflow node (field task) whose attempt recorded it; `None` for a value recorded
    /// outside a workflow (an external submission, a person's answer).
    #[serde(default)]
    pub workflow_node_run_id: Option<String>,
}

/// A result about to be stored; the store assigns id, project, status and time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct NewResult {
    pub run_id: Option<String>,
    pub entity_id: String,
    pub field_name: String,
    pub value: Value,
    pub sources: Vec<SourceRef>,
    pub confidence: Confidence,
    pub agent_id: String,
    /// `Pending` for a candidate, `Superseded` for a consensus loser.
    pub status: ResultStatus,
    pub created_entity_ids: Vec<String>,
    pub duration_ms: i64,
    pub tokens_used: i64,
    pub metadata: Map<String, Value>,
    /// The field task recording it, when a workflow does.
    #[serde(default)]
    pub workflow_node_run_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum ReviewDecision {
    Approve,
    Reject { reason: Option<String> },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct ReviewEvent {
    pub id: String,
    pub result_id: String,
    pub decision: ReviewDecision,
    pub reviewer: String,
    pub at: String,
}

/// Per entity type and field, across entities.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct FeedbackSummary {
    pub entity_type: String,
    pub field_name: String,
    /// Reviewed or pending results counted.
    pub total: i64,
    pub approved: i64,
    pub rejected: i64,
    /// approved / (approved + rejected); `None` before any review.
    pub approval_rate: Option<f64>,
    /// Most frequent rejection reasons, most common first, with counts.
    pub common_rejection_reasons: Vec<(String, i64)>,
    /// Approval rate per confidence level (`high`, `medium`, `low`), for the levels reviewed.
    #[cfg_attr(
        feature = "json-schema",
        schemars(with = "std::collections::BTreeMap<String, f64>")
    )]
    pub approval_rate_by_confidence: Map<String, Value>,
}

/// A stored API key: only a hash of the secret is kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct ApiKey {
    pub id: String,
    pub project_id: String,
    pub name: String,
    /// The public, non-secret start of the key, used to find it (`qk_abcd1234`).
    pub prefix: String,
    /// Hex SHA-256 of the whole key.
    pub secret_hash: String,
    pub scopes: Vec<String>,
    pub created_at: String,
    pub revoked: bool,
}
