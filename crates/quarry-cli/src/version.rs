//! The version `quarry --version` prints: the package version and, when built from a Git
//! checkout, the commit (see `build.rs`).

/// E.g. `0.1.0 (24ab3cb)`, or `0.1.0` built from a tarball.
pub const VERSION: &str = env!("QUARRY_VERSION");
