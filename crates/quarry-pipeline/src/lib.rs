//! The entity pipeline: entity types with per-field extraction config, one agent loop per field,
//! dependency layers, consensus, review with feedback reruns, human input and cascades.
//!
//! **Architecture Invariant:** IO only through [`quarry_core::store::Store`] and
//! [`quarry_llm::LlmClient`]; no SQL, HTTP or files here.
//!
//! Code map: `entity_types` loads and validates types; `layers` orders fields; `tools` are what a
//! field agent may call (and the BM25 search); `field_agent` is one field's loop;
//! `retrieve_extract` the one-call agent for small models (the engine searches, the model answers
//! once under the submit schema); `consensus`
//! picks among agents; `cascade` creates connected entities; `plan` turns a request into a run's
//! tasks; `task` runs one claimed task; `worker` claims, heartbeats and completes under leases;
//! `run` is the [`Pipeline`] (start, wait, report, review, retry);
//! `documents` is the one path that adds a document (store, links, index, chunks);
//! `document_text` reads a document's bytes (text, Markdown, PDF) into text.

mod cascade;
mod consensus;
pub mod corrections;
pub mod document_text;
pub mod documents;
mod entity_types;
mod error;
mod field_agent;
mod layers;
mod model_agents;
pub mod on_create;
mod plan;
mod reference_shape;
mod retrieve_extract;
mod run;
mod task;
mod tools;
mod web_source;
mod worker;

pub use consensus::{ConsensusDecision, decide, values_agree};
pub use entity_types::{
    check_webhook_targets, entity_type_from_value, load_entity_types, validate_entity_type,
};
pub use error::PipelineError;
pub use field_agent::feedback_sentence;
pub use layers::DependencyLayers;
pub use quarry_queue::{QueueControl, QueueStats, backoff};
pub use run::{
    AgentRegistry, FieldOutcome, FieldReport, Pipeline, PipelineConfig, ResolvedAgent,
    ReviewOutcome, RunReport, WorkerConfig,
};
pub use web_source::WebAccess;
