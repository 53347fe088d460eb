//! Finding every plausible JSON value in a model's reply: fenced code blocks first, then
//! balanced objects and arrays in the prose, then the whole text read as JSON.

use std::ops::Range;

use serde_json::Value;

use crate::flags::Flag;
use crate::repair::read_document;
use crate::scan::fenced_blocks;

/// One reading of part of a reply as JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub value: Value,
    /// The repairs needed, including where the value was found.
    pub flags: Vec<Flag>,
    /// Byte range of the text the value was read from.
    pub span: Range<usize>,
}

/// Byte ranges of top-level `{…}` / `[…]` regions in prose, matched with string awareness; a
/// region still open at the end of the text runs to the end (a truncated reply).
pub fn balanced_regions(raw: &str) -> Vec<Range<usize>> {
    let mut regions = Vec::new();
    let bytes = raw.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'{' && bytes[i] != b'[' {
            i += 1;
            continue;
        }
        let start = i;
        let mut depth = 0usize;
        let mut in_string = false;
        let mut end = raw.len();
        let mut j = i;
        while j < bytes.len() {
            let b = bytes[j];
            if in_string {
                match b {
                    b'\\' => j += 1,
                    b'"' => in_string = false,
                    _ => {}
                }
            } else {
                match b {
                    b'"' => in_string = true,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            end = j + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            j += 1;
        }
        regions.push(start..end);
        i = end.max(start + 1);
    }
    regions
}

/// Every plausible JSON value in `raw`: fenced blocks, then structures in the prose, then the
/// whole text. Duplicate values are kept once (the first, best-placed reading).
pub fn parse_candidates(raw: &str) -> Vec<Candidate> {
    let mut candidates: Vec<Candidate> = Vec::new();
    let mut push = |candidate: Candidate| {
        if !candidates.iter().any(|c| c.value == candidate.value) {
            candidates.push(candidate);
        }
    };
    let fences = fenced_blocks(raw);
    for fence in &fences {
        if let Some(candidate) = read_span(raw, fence.content.clone(), Flag::ExtractedFromFence) {
            push(candidate);
        }
    }
    for region in balanced_regions(raw) {
        let inside_fence = fences
            .iter()
            .any(|f| f.content.start <= region.start && region.end <= f.content.end);
        let whole = raw[..region.start].trim().is_empty() && raw[region.end..].trim().is_empty();
        if inside_fence || whole {
            continue;
        }
        if let Some(candidate) = read_span(raw, region, Flag::ExtractedFromProse) {
            push(candidate);
        }
    }
    if let Some(candidate) = read_span(raw, 0..raw.len(), Flag::SkippedText) {
        push(candidate);
    }
    candidates
}

/// Reads `raw[span]` as a document; `placement` says how the span was found (`SkippedText` for
/// the whole text, which needs no placement flag of its own).
fn read_span(raw: &str, span: Range<usize>, placement: Flag) -> Option<Candidate> {
    let chars: Vec<char> = raw[span.clone()].chars().collect();
    let read = read_document(&chars).ok()?;
    let mut flags = Vec::with_capacity(read.flags.len() + 1);
    if placement != Flag::SkippedText {
        flags.push(placement);
    }
    flags.extend(read.flags);
    Some(Candidate {
        value: read.value,
        flags,
        span,
    })
}

/// The arguments of a tool call a model wrote as plain content, e.g.
/// `{"name": "submit", "arguments": {...}}` or an OpenAI `tool_calls` list; arguments given as a
/// JSON string are read too.
pub fn unwrap_tool_call(value: &Value) -> Option<Value> {
    let object = value.as_object()?;
    if let Some(calls) = object.get("tool_calls").and_then(Value::as_array) {
        return calls.first().and_then(unwrap_tool_call);
    }
    if let Some(function) = object.get("function").filter(|f| f.is_object()) {
        return unwrap_tool_call(function);
    }
    let named = ["name", "tool", "tool_name", "function", "type"]
        .iter()
        .any(|k| object.get(*k).is_some_and(Value::is_string));
    if !named {
        return None;
    }
    let arguments = ["arguments", "parameters", "args", "input", "tool_input"]
        .iter()
        .find_map(|k| object.get(*k))?;
    match arguments {
        Value::Object(_) => Some(arguments.clone()),
        Value::String(text) => {
            let chars: Vec<char> = text.chars().collect();
            read_document(&chars)
                .ok()
                .map(|read| read.value)
                .filter(Value::is_object)
        }
        _ => None,
    }
}
