//! The grounding aligner: where each value occurs in the source.

use pyo3::prelude::*;
use pyo3::types::PyString;
use quarry_core::ErrorCode;
use quarry_core::grounding::{AlignOptions, AlignOrder, align_all};
use serde_json::{Value, json};

use crate::errors::raised;
use crate::text::utf8;

/// One entry per value, in order: `{value, start, end, status, score}` when it was found
/// (code-point offsets), else `{value, start: null, …, reason}`. `mode` is `quarry` (prefer
/// forward order, fuzzy on, partial matches refused) or `langextract` (langextract's resolver:
/// token blocks first, partial matches accepted as `match_lesser`).
#[pyfunction]
#[pyo3(signature = (text, values, mode="quarry", fuzzy=true, fuzzy_threshold=None, accept_partial=None))]
pub fn ground(
    py: Python<'_>,
    text: &Bound<'_, PyString>,
    values: Vec<String>,
    mode: &str,
    fuzzy: bool,
    fuzzy_threshold: Option<f32>,
    accept_partial: Option<bool>,
) -> PyResult<String> {
    let defaults = AlignOptions::default();
    let (order, partial) = match mode {
        "quarry" => (AlignOrder::PreferForward, false),
        "langextract" => (AlignOrder::Langextract, true),
        other => {
            return Err(raised(
                ErrorCode::InvalidArguments,
                format!("unknown grounding mode {other:?}: use \"quarry\" or \"langextract\""),
            ));
        }
    };
    let threshold = fuzzy_threshold.unwrap_or(defaults.fuzzy_threshold);
    if !(0.0..=1.0).contains(&threshold) {
        return Err(raised(
            ErrorCode::InvalidArguments,
            format!("fuzzy_threshold must be between 0 and 1, got {threshold}"),
        ));
    }
    let options = AlignOptions {
        enable_fuzzy_alignment: fuzzy,
        fuzzy_threshold: threshold,
        accept_match_lesser: accept_partial.unwrap_or(partial),
        order,
        ..defaults
    };
    let text = utf8(text)?;
    let answer = py.detach(|| {
        let extractions: Vec<&str> = values.iter().map(String::as_str).collect();
        let results = align_all(text, &extractions, &options);
        let entries: Vec<Value> = values
            .iter()
            .zip(results)
            .map(|(value, result)| match result {
                Ok(found) => json!({
                    "value": value,
                    "start": found.start,
                    "end": found.end,
                    "status": found.status.as_str(),
                    "score": found.score,
                }),
                Err(error) => json!({
                    "value": value,
                    "start": null,
                    "end": null,
                    "status": null,
                    "score": 0.0,
                    "reason": error.to_string(),
                }),
            })
            .collect();
        Value::Array(entries).to_string()
    });
    Ok(answer)
}
