//! Lenient parsing of model output.
//!
//! Models wrap JSON in prose and code fences, break its syntax, truncate it, or answer in plain
//! content when asked to call a tool. This crate reads all of that:
//!
//! - [`parse_candidates`] finds every plausible JSON value in a reply, each with the repairs
//!   ([`Flag`]s) it needed and the byte span it came from;
//! - [`repair`] reads a text as one JSON document (what `jsonrepair` / `json_repair` do);
//! - [`coerce`] fits a value to a JSON Schema subset, recording conversions as flags and misfits
//!   as [`CoercionError`]s with JSONPath locations;
//! - [`parse`] combines them: every candidate is coerced and the one needing the fewest, cheapest
//!   repairs wins (BAML-style scoring: lower is better).
//!
//! Bad content is data: nothing here panics on any input or does IO.

mod candidates;
mod coerce;
mod dates;
mod flags;
mod repair;
mod scan;

pub use candidates::{Candidate, balanced_regions, parse_candidates, unwrap_tool_call};
pub use coerce::{CoercionError, Parsed, coerce};
pub use dates::{normalize_date, normalize_date_time};
pub use flags::{Flag, total_cost};
pub use repair::{ParseError, RepairOptions, Repaired, repair};
pub use scan::{Fence, fenced_blocks};

use serde_json::Value;

/// The best reading of `raw` as a value of `schema`: every candidate (and, for tool calls written
/// as content, their arguments) is coerced, and the one with the fewest coercion errors, then the
/// lowest score, wins; earlier candidates win ties. `None` when the text holds no JSON at all.
pub fn parse(raw: &str, schema: &Value) -> Option<Parsed> {
    let mut best: Option<Parsed> = None;
    for candidate in parse_candidates(raw) {
        let mut readings = vec![(candidate.value.clone(), candidate.flags.clone())];
        if let Some(arguments) = unwrap_tool_call(&candidate.value) {
            let mut flags = candidate.flags.clone();
            flags.push(Flag::UnwrappedToolCall);
            readings.push((arguments, flags));
        }
        for (value, mut flags) in readings {
            let coerced = coerce(&value, schema);
            flags.extend(coerced.flags);
            let parsed = Parsed {
                value: coerced.value,
                score: total_cost(&flags),
                flags,
                errors: coerced.errors,
            };
            let better = best
                .as_ref()
                .is_none_or(|b| (parsed.errors.len(), parsed.score) < (b.errors.len(), b.score));
            if better {
                best = Some(parsed);
            }
        }
    }
    best
}
