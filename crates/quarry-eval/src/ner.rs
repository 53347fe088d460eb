//! `ner.jsonl` (WikiGold): the entity detector's people, organizations and locations against the
//! gold mentions. Exact (start, end, type) per type and micro-averaged, plus a partial-overlap and
//! a type-agnostic variant. Predictions overlapping a `misc` gold span are dropped unscored, as
//! the corpus README says.

use std::path::Path;

use quarry_core::{Match, MatchKind};
use quarry_detect::entity;
use serde::Deserialize;

use crate::corpus::read_jsonl;
use crate::{Metric, SpanScore};

const KINDS: [MatchKind; 3] = [
    MatchKind::Person,
    MatchKind::Organization,
    MatchKind::Location,
];

#[derive(Deserialize)]
struct Record {
    text: String,
    entities: Vec<GoldEntity>,
}

#[derive(Deserialize)]
struct GoldEntity {
    #[serde(rename = "type")]
    kind: String,
    start: usize,
    end: usize,
}

/// A span in code points with its kind.
type Span = (usize, usize, MatchKind);

pub fn evaluate(dir: &Path) -> anyhow::Result<Vec<Metric>> {
    let records: Vec<Record> = read_jsonl(dir, "ner.jsonl")?;
    let mut per_kind = [SpanScore::default(); 3];
    let mut partial = SpanScore::default();
    let mut type_agnostic = SpanScore::default();
    for record in &records {
        let (gold, misc) = gold_spans(record);
        let matches = quarry_detect::to_matches(&record.text, entity::find(&record.text));
        let predicted = scored_predictions(&matches, &misc);
        for (score, kind) in per_kind.iter_mut().zip(KINDS) {
            let of_kind = |spans: &[Span]| -> Vec<Span> {
                spans.iter().copied().filter(|s| s.2 == kind).collect()
            };
            score.add_record(&of_kind(&predicted), &of_kind(&gold));
        }
        partial.merge(overlap_score(&predicted, &gold));
        let untyped = |spans: &[Span]| -> Vec<(usize, usize)> {
            spans.iter().map(|&(start, end, _)| (start, end)).collect()
        };
        type_agnostic.add_record(&untyped(&predicted), &untyped(&gold));
    }

    let n = records.len();
    let mut micro = SpanScore::default();
    let mut metrics = Vec::new();
    for (score, kind) in per_kind.iter().zip(KINDS) {
        micro.merge(*score);
        metrics.extend(score.metrics(&format!("ner.{}", kind.as_str()), n));
    }
    metrics.extend(micro.metrics("ner.micro", n));
    metrics.extend(partial.metrics("ner.micro.partial", n));
    metrics.extend(type_agnostic.metrics("ner.type_agnostic", n));
    Ok(metrics)
}

/// Scored gold spans, and the `misc` spans whose overlapping predictions are ignored.
fn gold_spans(record: &Record) -> (Vec<Span>, Vec<(usize, usize)>) {
    let mut gold = Vec::new();
    let mut misc = Vec::new();
    for entity in &record.entities {
        let kind = match entity.kind.as_str() {
            "person" => MatchKind::Person,
            "organization" => MatchKind::Organization,
            "location" => MatchKind::Location,
            _ => {
                misc.push((entity.start, entity.end));
                continue;
            }
        };
        gold.push((entity.start, entity.end, kind));
    }
    (gold, misc)
}

fn scored_predictions(matches: &[Match], misc: &[(usize, usize)]) -> Vec<Span> {
    matches
        .iter()
        .filter(|m| KINDS.contains(&m.kind))
        .filter(|m| {
            !misc
                .iter()
                .any(|&(start, end)| overlaps((m.start, m.end), (start, end)))
        })
        .map(|m| (m.start, m.end, m.kind))
        .collect()
}

/// One-to-one matching where a prediction counts if it overlaps an unmatched gold span of the
/// same kind.
fn overlap_score(predicted: &[Span], gold: &[Span]) -> SpanScore {
    let mut used = vec![false; gold.len()];
    let mut tp = 0;
    for &(start, end, kind) in predicted {
        let hit = gold
            .iter()
            .enumerate()
            .find(|(i, g)| !used[*i] && g.2 == kind && overlaps((start, end), (g.0, g.1)));
        if let Some((i, _)) = hit {
            used[i] = true;
            tp += 1;
        }
    }
    SpanScore {
        tp,
        fp: predicted.len() - tp,
        fn_: gold.len() - tp,
    }
}

fn overlaps(a: (usize, usize), b: (usize, usize)) -> bool {
    a.0 < b.1 && b.0 < a.1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_overlap_matches_one_to_one_within_a_kind() {
        let gold = [(0, 10, MatchKind::Person), (20, 25, MatchKind::Location)];
        let predicted = [
            (0, 4, MatchKind::Person),
            (5, 10, MatchKind::Person),
            (20, 25, MatchKind::Organization),
        ];
        assert_eq!(
            overlap_score(&predicted, &gold),
            SpanScore {
                tp: 1,
                fp: 2,
                fn_: 1
            }
        );
    }

    #[test]
    fn predictions_overlapping_misc_gold_are_not_scored() {
        let matches = [Match {
            text: "Japanese".into(),
            start: 3,
            end: 11,
            value: "Japanese".into(),
            kind: MatchKind::Location,
        }];
        assert!(scored_predictions(&matches, &[(3, 11)]).is_empty());
        assert_eq!(scored_predictions(&matches, &[(12, 20)]).len(), 1);
    }
}
