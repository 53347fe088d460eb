//! quarry-store's integration tests: one test binary (one link of the crate and its
//! dependencies), a module per area.

mod conformance;
mod migration;
mod pgvector;
mod pgvector_bench;
