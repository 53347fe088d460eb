//! The schema extraction agent.
//!
//! [`Extractor::extract`] runs the loop of `../shared/reference/schema-agent-spec.md`: the model
//! gets the schema in the system prompt, the document as delimited untrusted data in a user
//! message, and `validate`/`submit` tools; every submission (tool arguments, or plain content
//! when a model answers in prose) is leniently parsed, coerced, validated and grounded, and the
//! model is told precisely which field failed and why. After `max_attempts` turns the unresolved
//! fields are escalated with a question for a person; their answers come back as
//! `clarifications`. Long documents are chunked, extracted concurrently and merged.
//!
//! **Architecture Invariant:** IO only through [`quarry_llm::LlmClient`]; no HTTP, no files, no
//! environment variables.
//!
//! Code map: `schema/` loads and compiles schemas; `validate` checks conformance; `quantities`
//! and `ground` find values in the source; `repair` reads model output; `check` runs one
//! submission through all of them; `prompt` is everything the model reads; `agent` is the loop;
//! `budget` the token budget; `chunk` long documents; `report` the result and the question.

mod agent;
mod budget;
pub mod candidates;
mod check;
pub mod chunk;
mod config;
mod error;
mod extractor;
pub mod ground;
mod prompt;
pub mod quantities;
pub mod repair;
mod report;
pub mod schema;
mod span;
pub mod validate;

pub use candidates::{Decoding, Detector};
pub use check::{Problem, ProblemKind};
pub use config::ExtractorConfig;
pub use error::{EngineError, llm_error_code};
pub use extractor::Extractor;
pub use ground::GroundingStatus;
pub use report::{Confidence, Extraction, FieldIssue, FieldReport, Outcome, UnreadChunk};
pub use schema::{Schema, SchemaCache, SchemaError};
pub use span::Span;
