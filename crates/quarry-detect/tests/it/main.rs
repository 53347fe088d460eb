//! quarry-detect's integration tests: one test binary (one link of the crate and its
//! dependencies), a module per area.

mod generated_links;
