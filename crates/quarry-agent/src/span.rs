//! A stretch of source text, in code points (what JSON outputs count) and bytes (what Rust slices).

use serde::{Deserialize, Serialize};

/// `start..end` in Unicode code points, end exclusive; `byte_start..byte_end` the same in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Span {
    pub start: usize,
    pub end: usize,
    pub byte_start: usize,
    pub byte_end: usize,
}

impl Span {
    /// The same stretch seen from a text in which this one begins at `offset`.
    pub fn shifted(self, offset: Span) -> Span {
        Span {
            start: self.start + offset.start,
            end: self.end + offset.start,
            byte_start: self.byte_start + offset.byte_start,
            byte_end: self.byte_end + offset.byte_start,
        }
    }
}
