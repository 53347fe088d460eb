//! quarry-agent's integration tests: one test binary (one link of the crate and its
//! dependencies), a module per area.

mod agent;
mod agent_unions;
mod chunking;
mod json_schema_suite;
mod openai_e2e;
mod schema_validation;
mod structured_output;
mod support;
