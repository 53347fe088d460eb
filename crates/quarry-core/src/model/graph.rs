//! The conversation knowledge graph: episodes (a conversation turn stored as a document, with
//! the state of its background extraction, which doubles as the durable queue), the JSON shape a
//! model or a caller gives for one episode's entities and relationships, and the resolved write
//! the store applies in one transaction. Graph nodes are ordinary [`Entity`] rows
//! (`mention_count`, `notes`, `last_seen_at`); edges are [`Relation`] rows.

use serde::{Deserialize, Serialize};

use super::queue::{JobKind, Lease};
use super::records::{Document, DocumentKind, Entity, Relation};

/// The reference's entity types; a deployment may configure others.
pub const DEFAULT_GRAPH_TYPES: &[&str] = &[
    "person",
    "place",
    "project",
    "technology",
    "concept",
    "organization",
];

/// Names never stored as entities (greetings the model tends to pick up); configurable.
pub const DEFAULT_STOPLIST: &[&str] = &[
    "good morning",
    "good night",
    "hello",
    "goodbye",
    "thanks",
    "thank you",
];

/// Where an episode's background extraction stands. `Pending` and `Running` episodes are the
/// queue: a `Running` episode is held under a lease ([`Lease`](super::Lease)) that its worker's
/// heartbeat renews; once the lease expires (the worker died or stalled) another worker may take
/// it over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum EpisodeStatus {
    Pending,
    Running,
    Done,
    Failed,
}

impl EpisodeStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            EpisodeStatus::Pending => "pending",
            EpisodeStatus::Running => "running",
            EpisodeStatus::Done => "done",
            EpisodeStatus::Failed => "failed",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "pending" => Some(EpisodeStatus::Pending),
            "running" => Some(EpisodeStatus::Running),
            "done" => Some(EpisodeStatus::Done),
            "failed" => Some(EpisodeStatus::Failed),
            _ => None,
        }
    }
}

/// One conversation turn. Its id is the id of the document holding
/// `"User: …\nAssistant: …"`, so document search and source refs reach episodes too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Episode {
    pub id: String,
    pub project_id: String,
    pub user_message: String,
    pub assistant_response: String,
    pub status: EpisodeStatus,
    /// How many times a worker took it from the queue (since it was last retried).
    pub attempts: i64,
    /// Why the last extraction failed (the episode itself is kept); for a `pending` episode
    /// released after a transient failure, why the last attempt did not finish.
    pub error: Option<String>,
    /// Pre-structured entities/relationships given by the caller: applied without a model.
    pub ingest: Option<GraphExtraction>,
    /// Counts of the last finished extraction.
    pub entities_stored: i64,
    pub relationships_stored: i64,
    pub relationships_skipped: i64,
    pub entities_skipped: i64,
    pub created_at: String,
    pub updated_at: String,
    /// The worker holding a `running` episode (`pid@host:start_ms`); `None` otherwise.
    #[serde(default)]
    pub lease_owner: Option<String>,
    /// When that worker's lease ends unless its heartbeat renews it (RFC 3339).
    #[serde(default)]
    pub lease_expires_at: Option<String>,
    /// A `pending` episode released after a transient failure is not claimed before this time
    /// (retry backoff); `None`: at once.
    #[serde(default)]
    pub available_at: Option<String>,
}

/// An episode document's title: the user message on one line, cut at this many characters.
const EPISODE_TITLE_CHARS: usize = 80;

impl Episode {
    /// The fencing token of the current claim (`None` when no worker holds the episode).
    pub fn lease(&self) -> Option<Lease> {
        self.lease_owner.as_ref().map(|owner| Lease {
            kind: JobKind::Episode,
            job_id: self.id.clone(),
            owner: owner.clone(),
            attempt: self.attempts,
        })
    }

    /// The document title: the user message with whitespace collapsed, cut at 80 characters
    /// with an ellipsis.
    pub fn document_title(user_message: &str) -> String {
        let line = user_message
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        match line.char_indices().nth(EPISODE_TITLE_CHARS) {
            Some((cut, _)) => format!("{}…", line[..cut].trim_end()),
            None => line,
        }
    }

    /// The document this episode is stored as (what search and source refs see).
    pub fn document(&self) -> Document {
        Document {
            id: self.id.clone(),
            project_id: self.project_id.clone(),
            title: Episode::document_title(&self.user_message),
            text: Episode::document_text(&self.user_message, &self.assistant_response),
            kind: DocumentKind::Episode,
            created_at: self.created_at.clone(),
            url: None,
            fetched_at: None,
        }
    }

    /// The document text: what search and grounding see.
    pub fn document_text(user_message: &str, assistant_response: &str) -> String {
        format!("User: {user_message}\nAssistant: {assistant_response}")
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct NewEpisode {
    pub user_message: String,
    pub assistant_response: String,
    #[serde(default)]
    pub ingest: Option<GraphExtraction>,
}

/// How an extraction ended, written with the status.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct EpisodeOutcome {
    /// `None` for success.
    pub error: Option<String>,
    pub entities_stored: i64,
    pub entities_skipped: i64,
    pub relationships_stored: i64,
    pub relationships_skipped: i64,
}

/// The reference's JSON shape: what a model answers and what the no-model path accepts.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct GraphExtraction {
    #[serde(default)]
    pub entities: Vec<ExtractedEntity>,
    #[serde(default)]
    pub relationships: Vec<ExtractedRelationship>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct ExtractedEntity {
    pub name: String,
    #[serde(rename = "type")]
    pub entity_type: String,
    #[serde(default)]
    pub notes: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct ExtractedRelationship {
    pub from: String,
    #[serde(rename = "fromType", alias = "from_type")]
    pub from_type: String,
    pub to: String,
    #[serde(rename = "toType", alias = "to_type")]
    pub to_type: String,
    pub label: String,
    #[serde(default)]
    pub notes: Option<String>,
}

/// One episode's graph after validation and resolution, applied by the store in one transaction.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GraphWrite {
    /// Distinct nodes (the engine merges duplicates before writing).
    pub entities: Vec<GraphEntityWrite>,
    pub relationships: Vec<GraphRelationWrite>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct GraphEntityWrite {
    /// The entity the resolver matched; `None` inserts (or, if an entity of this exact
    /// (type, title) exists by then, updates that one).
    pub existing_id: Option<String>,
    pub name: String,
    pub entity_type: String,
    /// Replaces the stored notes when `Some`; stored notes are kept when `None`.
    pub notes: Option<String>,
    /// `metadata.source` of a new entity: `extraction` or `ingest`.
    pub source: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct GraphRelationWrite {
    /// Indexes into `GraphWrite::entities`.
    pub from: usize,
    pub to: usize,
    pub label: String,
    pub notes: Option<String>,
}

/// What the store wrote: per `GraphWrite::entities` entry its entity (after the upsert), and the
/// relations after theirs.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphApplied {
    pub entities: Vec<Entity>,
    /// Whether each entity was inserted (true) or an existing one updated.
    pub inserted: Vec<bool>,
    pub relations: Vec<Relation>,
}

/// A chunk of a document as persisted with its embedding, so the index is rebuilt at start
/// without re-embedding. Offsets are code points into the document text, end exclusive.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredChunk {
    pub document_id: String,
    pub ordinal: i64,
    pub start: usize,
    pub end: usize,
    pub byte_start: usize,
    pub byte_end: usize,
    /// Which embedder made `embedding` (e.g. `hashing-384`, `minilm-l6-v2`,
    /// `openai:text-embedding-3-small`); vectors of another embedder are re-computed.
    pub embedder: String,
    pub embedding: Vec<f32>,
}
