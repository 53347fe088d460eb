//! What a detector finds ([`Detection`]: a value over a byte range of the text) and how the
//! findings become the skill's [`Match`]es (code-point spans, in text order).

use std::ops::Range;

use quarry_core::offsets::CodePointCursor;
use quarry_core::{Match, MatchKind};

/// A value a detector found, spanning `range` bytes of the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detection {
    pub range: Range<usize>,
    /// The normalised value (see [`Match::value`]).
    pub value: String,
    pub kind: MatchKind,
}

/// Sorts detections by position and converts their byte ranges to code-point matches.
pub fn to_matches(text: &str, mut detections: Vec<Detection>) -> Vec<Match> {
    detections.sort_by_key(|d| (d.range.start, d.range.end));
    let mut cursor = CodePointCursor::new(text);
    detections
        .into_iter()
        .map(|d| {
            let start = cursor.code_point_at(d.range.start);
            let end = cursor.code_point_at(d.range.end);
            Match {
                text: text[d.range].to_owned(),
                start,
                end,
                value: d.value,
                kind: d.kind,
            }
        })
        .collect()
}

/// For detector unit tests: each detection as (text slice, value).
#[cfg(test)]
pub(crate) fn slices_and_values(text: &str, detections: Vec<Detection>) -> Vec<(&str, String)> {
    detections
        .into_iter()
        .map(|d| (&text[d.range], d.value))
        .collect()
}
