//! quarry-index's integration tests: one test binary (one link of the crate and its
//! dependencies), a module per area.

mod hybrid;
mod library;
mod minilm;
