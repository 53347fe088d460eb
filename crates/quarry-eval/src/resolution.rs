//! `data/duplicate_names.jsonl`: entity resolution ([`quarry_core::resolve`]) on a hand-written
//! set of new names against existing entities of the same type.
//!
//! Each record is `{"type", "existing": [names], "name", "expected": index | null}`; `null`
//! means the name is a different entity (a hard negative) and must resolve to `New`.
//!
//! * `resolution.precision`: of the merges made, the share into the right entity.
//! * `resolution.recall`: of the true duplicates, the share merged into the right entity.
//! * A merge into the wrong entity of a positive record counts against both.
//!
//! Figures are reported overall, per type (`resolution.<type>.*`) and, for precision, per stage
//! (`resolution.stage.<exact|normalized|similar>.precision`, over the merges that stage made).
//!
//! The set lives in this crate's `data/` folder rather than the shared corpus, so `dir` is unused.

use std::collections::BTreeMap;
use std::path::Path;

use quarry_core::resolve::{Resolution, ResolverIndex};
use serde::Deserialize;

use crate::corpus::read_jsonl;
use crate::{Metric, SpanScore};

#[derive(Debug, Deserialize)]
struct Record {
    #[serde(rename = "type")]
    entity_type: String,
    existing: Vec<String>,
    name: String,
    expected: Option<usize>,
}

pub fn evaluate(_dir: &Path) -> anyhow::Result<Vec<Metric>> {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let records: Vec<Record> = read_jsonl(&data, "duplicate_names.jsonl")?;
    let mut overall = SpanScore::default();
    let mut by_type: BTreeMap<&str, (usize, SpanScore)> = BTreeMap::new();
    let mut by_stage: BTreeMap<&str, (usize, SpanScore)> = BTreeMap::new();
    for record in &records {
        if let Some(expected) = record.expected {
            anyhow::ensure!(
                expected < record.existing.len(),
                "duplicate_names.jsonl: `{}` expects existing[{expected}] of {}",
                record.name,
                record.existing.len()
            );
        }
        let mut index = ResolverIndex::new(&record.entity_type);
        for (position, name) in record.existing.iter().enumerate() {
            index.insert(position.to_string(), name);
        }
        let resolution = index.resolve(&record.name);
        let predicted: Vec<usize> = resolution
            .id()
            .map(|id| id.parse().expect("ids are positions"))
            .into_iter()
            .collect();
        let gold: Vec<usize> = record.expected.into_iter().collect();
        let mut score = SpanScore::default();
        score.add_record(&predicted, &gold);
        overall.merge(score);
        let (count, type_score) = by_type.entry(record.entity_type.as_str()).or_default();
        *count += 1;
        type_score.merge(score);
        if let Some(stage) = stage_name(&resolution) {
            let (count, stage_score) = by_stage.entry(stage).or_default();
            *count += 1;
            stage_score.merge(score);
        }
    }
    let mut metrics = overall.metrics("resolution", records.len());
    for (entity_type, (count, score)) in &by_type {
        metrics.extend(score.metrics(&format!("resolution.{entity_type}"), *count));
    }
    for (stage, (merges, score)) in &by_stage {
        metrics.push(Metric::new(
            format!("resolution.stage.{stage}.precision"),
            score.precision(),
            *merges,
        ));
    }
    Ok(metrics)
}

fn stage_name(resolution: &Resolution) -> Option<&'static str> {
    match resolution {
        Resolution::Exact(_) => Some("exact"),
        Resolution::Normalized(_) => Some("normalized"),
        Resolution::Similar { .. } => Some("similar"),
        Resolution::New => None,
    }
}
