//! Quarry's value model, shared by every crate above it.
//!
//! **Architecture Invariant:** this crate does no IO and depends on nothing but serde and
//! thiserror, so it builds for `wasm32-unknown-unknown`.

pub mod error;
pub mod error_code;
pub mod grounding;
pub mod guardrail;
pub mod json;
pub mod matches;
pub mod model;
pub mod offsets;
pub mod resolve;
pub mod retrieval;
pub mod store;
pub mod target;

pub use error::SkillError;
pub use error_code::ErrorCode;
pub use matches::{Match, MatchKind};
pub use target::Target;
