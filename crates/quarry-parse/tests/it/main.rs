//! quarry-parse's integration tests: one test binary (one link of the crate and its
//! dependencies), a module per area.

mod generated_repairs;
mod lenient;
mod regression;
