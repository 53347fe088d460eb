//! Scores Quarry's detectors and grounding aligner on the labelled corpus in `data/dev/`
//! (the dev split of peers' public test suites; see its README for the schemas and scoring rules) and checks the committed quality floor.
//!
//! Each suite module owns one corpus file and returns named [`Metric`]s; `floor.json` beside this
//! crate's manifest lists the metrics CI holds to a minimum.

pub mod corpus;
pub mod dates;
pub mod floor;
pub mod grounding;
pub mod json_repair;
pub mod links;
pub mod ner;
pub mod phones;
pub mod resolution;
pub mod score;

use std::path::Path;

pub use score::{Metric, SpanScore};

/// Runs every suite over the corpus in `dir`.
pub fn evaluate_all(dir: &Path) -> anyhow::Result<Vec<Metric>> {
    let mut metrics = Vec::new();
    metrics.extend(links::evaluate(dir)?);
    metrics.extend(phones::evaluate(dir)?);
    metrics.extend(dates::evaluate(dir)?);
    metrics.extend(ner::evaluate(dir)?);
    metrics.extend(grounding::evaluate(dir)?);
    metrics.extend(json_repair::evaluate(dir)?);
    metrics.extend(resolution::evaluate(dir)?);
    Ok(metrics)
}
