//! quarry-llm's integration tests: one test binary (one link of the crate and its
//! dependencies), a module per area.

mod embeddings;
// Decode with a real GGUF model (QUARRY_TEST_GGUF): they need the in-process inference.
#[cfg(feature = "local")]
mod local;
#[cfg(feature = "local")]
mod local_serving;
mod providers;
