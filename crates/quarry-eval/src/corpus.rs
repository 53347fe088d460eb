//! Locating and reading the JSONL corpus.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::de::DeserializeOwned;

/// The corpus folder: `QUARRY_EVAL_DIR` if set (e.g. a held-out split in the same format), else
/// the dev split committed in `data/dev/` (its sources and licences are in its README).
pub fn default_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("QUARRY_EVAL_DIR") {
        return PathBuf::from(dir);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/dev")
}

/// Reads one JSONL file into records, naming the file and line of any record that does not parse.
pub fn read_jsonl<T: DeserializeOwned>(dir: &Path, file: &str) -> anyhow::Result<Vec<T>> {
    let path = dir.join(file);
    let content = std::fs::read_to_string(&path)
        .with_context(|| format!("reading eval corpus {}", path.display()))?;
    content
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| {
            serde_json::from_str(line)
                .with_context(|| format!("{}:{}: not a valid record", path.display(), index + 1))
        })
        .collect()
}

/// The Unicode code-point span `start..end` of `text` as a string slice.
pub fn code_point_slice(text: &str, start: usize, end: usize) -> &str {
    let byte = |cp: usize| {
        text.char_indices()
            .nth(cp)
            .map_or(text.len(), |(byte, _)| byte)
    };
    &text[byte(start)..byte(end)]
}
