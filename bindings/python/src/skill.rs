//! The extract skill, the output guardrail and the multi-target scan.

use pyo3::prelude::*;
use pyo3::types::PyString;
use quarry_core::json::to_spaced_string;
use quarry_core::{ErrorCode, Match, Target};
use quarry_detect::DetectOptions;
use quarry_detect::skill::{self, DEFAULT_MAX_INPUT_BYTES};
use serde::Serialize;

use crate::errors::{raised, skill_error};
use crate::text::utf8;

/// Detection settings from the call's `now` (RFC 3339, required: the Python side fills in the
/// current time) and `region`.
fn options(now: &str, region: Option<&str>) -> PyResult<DetectOptions> {
    let mut options = DetectOptions::new(skill::parse_now(now).map_err(skill_error)?);
    if let Some(region) = region {
        options.region = skill::parse_region(region).map_err(skill_error)?;
    }
    Ok(options)
}

/// The skill's answer for one target as JSON text: `{"email": …}` (and `matches` with
/// `detail`).
#[pyfunction]
#[pyo3(signature = (text, target, now, region=None, detail=false))]
pub fn extract(
    py: Python<'_>,
    text: &Bound<'_, PyString>,
    target: &str,
    now: &str,
    region: Option<&str>,
    detail: bool,
) -> PyResult<String> {
    let target: Target = target.parse().map_err(skill_error)?;
    let options = options(now, region)?;
    let text = utf8(text)?;
    py.detach(|| {
        skill::extract(text, target, &options, DEFAULT_MAX_INPUT_BYTES)
            .map(|extraction| to_spaced_string(&extraction.output(detail)))
    })
    .map_err(skill_error)
}

/// The guardrail's verdict on `output` (what an extractor answered for `target`) as JSON text.
#[pyfunction]
pub fn check(
    py: Python<'_>,
    text: &Bound<'_, PyString>,
    target: &str,
    output: &Bound<'_, PyString>,
) -> PyResult<String> {
    let target: Target = target.parse().map_err(skill_error)?;
    let (text, output) = (utf8(text)?, utf8(output)?);
    py.detach(|| skill::check(text, target, output, DEFAULT_MAX_INPUT_BYTES))
        .map(|verdict| to_spaced_string(&verdict))
        .map_err(skill_error)
}

#[derive(Serialize)]
struct Found<'a> {
    target: &'static str,
    #[serde(flatten)]
    found: &'a Match,
}

/// Every match of every target in `targets`, in text order (ties: the order of `targets`), as a
/// JSON list of `{target, text, start, end, value, type}` with code-point offsets.
#[pyfunction]
#[pyo3(signature = (text, targets, now, region=None))]
pub fn scan(
    py: Python<'_>,
    text: &Bound<'_, PyString>,
    targets: Vec<String>,
    now: &str,
    region: Option<&str>,
) -> PyResult<String> {
    let targets = targets
        .iter()
        .map(|target| target.parse::<Target>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(skill_error)?;
    if targets.is_empty() {
        return Err(raised(
            ErrorCode::MissingTarget,
            "scan needs at least one target, e.g. [\"email\", \"url\"]",
        ));
    }
    let options = options(now, region)?;
    let text = utf8(text)?;
    py.detach(|| {
        let mut found: Vec<(usize, Match)> = Vec::new();
        for (order, &target) in targets.iter().enumerate() {
            let extraction = skill::extract(text, target, &options, DEFAULT_MAX_INPUT_BYTES)?;
            found.extend(extraction.matches.into_iter().map(|m| (order, m)));
        }
        found.sort_by_key(|(order, m)| (m.start, *order, m.end));
        let listed: Vec<Found<'_>> = found
            .iter()
            .map(|(order, m)| Found {
                target: targets[*order].as_str(),
                found: m,
            })
            .collect();
        Ok(serde_json::to_string(&listed).expect("matches are strings and numbers"))
    })
    .map_err(skill_error)
}
