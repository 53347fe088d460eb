//! Long documents: cut into overlapping chunks on paragraph or sentence boundaries, extract each
//! (concurrently, bounded, by the caller), then merge the per-chunk results into one.
//!
//! Merge rule per field: a scalar takes the first passing non-null value in document order; a
//! list concatenates every chunk's passing items, dropping duplicates (the overlap repeats text);
//! a field no chunk resolved keeps the first chunk's problems. A chunk the model never read (its
//! first call did not fit the context window) cannot show a value is absent: a field with no
//! value elsewhere (`null`, or an empty list) stays unresolved, naming the unread stretch, where
//! it would otherwise be a found `null`. Spans are shifted from chunk to document offsets.
//! `required` is checked after merging, not per chunk.

use quarry_core::offsets::CodePointCursor;
use serde_json::Value;

use crate::agent::{FieldState, RunOutcome};
use crate::schema::{Kind, Schema};
use crate::span::Span;

/// One piece of the document; `offset` is where it starts (`end` fields unused).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk<'t> {
    pub text: &'t str,
    pub offset: Span,
}

/// Cuts `text` into chunks of at most about `max_bytes`, each repeating about `overlap` bytes of
/// the previous one. Cuts prefer a paragraph break, then a sentence end, then whitespace, in the
/// second half of the window; a text without any is cut at a character boundary.
pub fn chunk(text: &str, max_bytes: usize, overlap: usize) -> Vec<Chunk<'_>> {
    let max_bytes = max_bytes.max(64);
    let overlap = overlap.min(max_bytes / 2);
    let mut ranges = Vec::new();
    let mut start = 0;
    while start < text.len() {
        if text.len() - start <= max_bytes {
            ranges.push((start, text.len()));
            break;
        }
        let end = cut_point(text, start, start + max_bytes);
        ranges.push((start, end));
        let next = next_start(text, end.saturating_sub(overlap).max(start + 1), end);
        start = if next > start { next } else { end };
    }
    let mut cursor = CodePointCursor::new(text);
    ranges
        .into_iter()
        .map(|(start, end)| {
            let code_point = cursor.code_point_at(start);
            Chunk {
                text: &text[start..end],
                offset: Span {
                    start: code_point,
                    end: code_point,
                    byte_start: start,
                    byte_end: start,
                },
            }
        })
        .collect()
}

fn floor_boundary(text: &str, mut index: usize) -> usize {
    index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

const SENTENCE_ENDS: &[&str] = &[
    ". ", "! ", "? ", ".\n", "!\n", "?\n", "。", "！", "？", "\n",
];

/// The end of the chunk starting at `start`, at most `limit`.
fn cut_point(text: &str, start: usize, limit: usize) -> usize {
    let limit = floor_boundary(text, limit);
    let floor = floor_boundary(text, start + (limit - start) / 2);
    let window = &text[floor..limit];
    if let Some(at) = window.rfind("\n\n") {
        return floor + at + 2;
    }
    let sentence = SENTENCE_ENDS
        .iter()
        .filter_map(|end| window.rfind(end).map(|at| at + end.len()))
        .max();
    if let Some(at) = sentence {
        return floor + at;
    }
    if let Some(at) = window.rfind(char::is_whitespace) {
        let at = floor + at;
        return at + text[at..].chars().next().map_or(1, char::len_utf8);
    }
    if limit > start { limit } else { text.len() }
}

/// Where the next chunk starts: the first sentence or word start in `from..end`.
fn next_start(text: &str, from: usize, end: usize) -> usize {
    let from = floor_boundary(text, from);
    let window = &text[from..end];
    let sentence = SENTENCE_ENDS
        .iter()
        .filter_map(|e| window.find(e).map(|at| at + e.len()))
        .filter(|&at| at < window.len())
        .min();
    if let Some(at) = sentence {
        return from + at;
    }
    match window.find(char::is_whitespace) {
        Some(at) => {
            let at = from + at;
            at + text[at..].chars().next().map_or(1, char::len_utf8)
        }
        None => from,
    }
}

/// Merges per-chunk outcomes (in document order, with each chunk's offset).
pub(crate) fn merge(
    schema: &Schema,
    runs: Vec<(RunOutcome, Span)>,
) -> (Vec<FieldState>, quarry_llm::Usage, u32) {
    let mut usage = quarry_llm::Usage::default();
    let mut calls = 0;
    let mut per_field: Vec<Vec<FieldState>> = vec![Vec::new(); schema.fields.len()];
    for (run, offset) in runs {
        usage.add(run.usage);
        calls += run.calls;
        for (index, mut state) in run.fields.into_iter().enumerate() {
            for span in &mut state.grounding.spans {
                *span = span.shifted(offset);
            }
            per_field[index].push(state);
        }
    }
    let merged = schema
        .fields
        .iter()
        .zip(per_field)
        .map(|(spec, states)| match spec.spec.kind {
            Kind::Array(_) => merge_list(states),
            _ => merge_scalar(states),
        })
        .collect();
    (merged, usage, calls)
}

fn merge_scalar(states: Vec<FieldState>) -> FieldState {
    let mut fallback = None;
    let mut failed = None;
    let mut unread = None;
    for state in states {
        if state.passed && !state.value.is_null() {
            return state;
        }
        if state.passed {
            fallback.get_or_insert(state);
        } else if state.is_unread() {
            unread.get_or_insert(state);
        } else {
            failed.get_or_insert(state);
        }
    }
    unread
        .or(fallback)
        .or(failed)
        .expect("a schema field has a state in every chunk")
}

fn merge_list(states: Vec<FieldState>) -> FieldState {
    let mut merged: Option<FieldState> = None;
    let mut failed = None;
    let mut unread = None;
    for state in states {
        if state.is_unread() {
            unread.get_or_insert(state);
            continue;
        }
        if !state.passed {
            failed.get_or_insert(state);
            continue;
        }
        let Some(into) = merged.as_mut() else {
            merged = Some(state);
            continue;
        };
        if let Value::Array(items) = state.value {
            let target = match &mut into.value {
                Value::Array(target) => target,
                other => {
                    *other = Value::Array(Vec::new());
                    match other {
                        Value::Array(target) => target,
                        _ => unreachable!("just made an array"),
                    }
                }
            };
            for item in items {
                if !target.contains(&item) {
                    target.push(item);
                }
            }
        }
        for span in state.grounding.spans {
            if !into.grounding.spans.contains(&span) {
                into.grounding.spans.push(span);
            }
        }
        into.grounding.status = into.grounding.status.max(state.grounding.status);
        into.grounding.strength = into.grounding.strength.min(state.grounding.strength);
        into.attempt = into.attempt.max(state.attempt);
        for repair in state.repairs {
            if !into.repairs.contains(&repair) {
                into.repairs.push(repair);
            }
        }
    }
    // Items found are kept even when a chunk was not read; with none, the unread stretch may
    // hold them.
    let found_items = merged.as_ref().is_some_and(|state| match &state.value {
        Value::Array(items) => !items.is_empty(),
        other => !other.is_null(),
    });
    if let Some(unread) = unread.filter(|_| !found_items) {
        return unread;
    }
    merged
        .or(failed)
        .expect("a schema field has a state in every chunk")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::check::ProblemKind;
    use crate::ground::{FieldGrounding, GroundingStatus};

    fn passed(value: Value) -> FieldState {
        FieldState {
            value,
            grounding: FieldGrounding {
                status: GroundingStatus::Exact,
                spans: Vec::new(),
                strength: 1.0,
                problems: Vec::new(),
            },
            attempt: 1,
            repairs: Vec::new(),
            passed: true,
            problems: Vec::new(),
            decoding: crate::candidates::Decoding::Free,
        }
    }

    fn unread() -> FieldState {
        let span = Span {
            start: 100,
            end: 200,
            byte_start: 100,
            byte_end: 200,
        };
        FieldState::unread("field", span)
    }

    #[test]
    fn an_unread_chunk_leaves_a_field_without_a_value_unresolved() {
        let scalar = merge_scalar(vec![passed(Value::Null), unread(), passed(Value::Null)]);
        assert!(!scalar.passed);
        assert_eq!(scalar.problems[0].kind, ProblemKind::Unread);
        assert!(scalar.problems[0].message.contains("100..200"));
        let list = merge_list(vec![passed(json!([])), unread()]);
        assert!(!list.passed);
        assert_eq!(list.problems[0].kind, ProblemKind::Unread);
    }

    #[test]
    fn values_found_beside_an_unread_chunk_are_kept() {
        let scalar = merge_scalar(vec![unread(), passed(json!("Acme"))]);
        assert_eq!((scalar.passed, scalar.value), (true, json!("Acme")));
        let list = merge_list(vec![
            passed(json!(["a"])),
            unread(),
            passed(json!(["a", "b"])),
        ]);
        assert_eq!((list.passed, list.value), (true, json!(["a", "b"])));
    }

    #[test]
    fn chunks_cover_the_text_with_overlap_on_sentence_boundaries() {
        let sentence = "The quick brown fox jumps over the lazy dog. ";
        let text = sentence.repeat(40);
        let chunks = chunk(&text, 300, 60);
        assert!(chunks.len() > 5);
        for pair in chunks.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            let a_end = a.offset.byte_start + a.text.len();
            assert!(b.offset.byte_start < a_end, "chunks overlap");
            assert!(b.offset.byte_start > a.offset.byte_start, "chunks advance");
            assert!(
                b.text.starts_with("The quick"),
                "starts on a sentence: {:?}",
                b.text
            );
        }
        let last = chunks.last().unwrap();
        assert_eq!(last.offset.byte_start + last.text.len(), text.len());
        for c in &chunks {
            assert_eq!(
                &text[c.offset.byte_start..c.offset.byte_start + c.text.len()],
                c.text
            );
            assert!(c.text.len() <= 300);
        }
    }

    #[test]
    fn paragraphs_are_preferred_and_offsets_are_code_points() {
        let text = format!("{}\n\n{}", "é".repeat(100), "word ".repeat(100));
        let chunks = chunk(&text, 300, 0);
        assert_eq!(chunks[0].text, format!("{}\n\n", "é".repeat(100)));
        assert_eq!(chunks[1].offset.start, 102);
        assert_eq!(chunks[1].offset.byte_start, 202);
    }

    #[test]
    fn text_without_breaks_is_cut_at_char_boundaries() {
        let text = "北".repeat(200);
        let chunks = chunk(&text, 100, 10);
        assert!(chunks.iter().all(|c| !c.text.is_empty()));
        let last = chunks.last().unwrap();
        assert_eq!(last.offset.byte_start + last.text.len(), text.len());
    }
}
