//! Quarry's one data model for teams: entity types (schemas with per-field extraction config),
//! entities, relations, documents, extraction runs and results with provenance, review events
//! and API keys. Every row belongs to a project. Plain data: loading rules live in
//! `entity_type.rs`, persistence behind [`crate::store::Store`].

pub mod entity_type;
pub mod graph;
pub mod queue;
pub mod records;
pub mod work;

pub use entity_type::{
    ActionEvent, Cascade, Connection, Consensus, ConsensusStrategy, DisplayType, EntityType,
    EntityTypeError, ExtractionMode, FieldAction, FieldSpec, FieldType, Source,
};
pub use graph::{
    DEFAULT_GRAPH_TYPES, DEFAULT_STOPLIST, Episode, EpisodeOutcome, EpisodeStatus, ExtractedEntity,
    ExtractedRelationship, GraphApplied, GraphEntityWrite, GraphExtraction, GraphRelationWrite,
    GraphWrite, NewEpisode, StoredChunk,
};
pub use queue::{Delivery, DeliveryState, JobKind, Lease, PlannedDelivery, Release};
pub use records::{
    ApiKey, Confidence, Correction, Document, DocumentKind, DocumentSummary, Entity,
    ExtractionResult, ExtractionRun, FeedbackSummary, NewCorrection, NewEntity, NewResult,
    Relation, ResultStatus, ReviewDecision, ReviewEvent, RunInstructions, RunScope, RunStatus,
    SourceRef, WebPage,
};
pub use work::{
    AttemptRecord, CascadeEntity, CascadeWrite, FieldTask, NewFieldTask, NewWorkflow, NodeState,
    Settled, TaskCompletion, TaskEnd, TaskView, Transition, settle, shown_state, waiting_on,
};
