//! `grounding.jsonl`: aligning extracted strings back to source offsets (langextract's resolver
//! tests, plus cases derived from Recognizers-Text and WikiGold).
//!
//! Every gold entry is one item. An item is correct when the predicted (start, end) equals the
//! gold span, or, for a gold `null`, when nothing is predicted. For `order_sensitive` records a
//! null gold is relaxed as the README allows: a prediction whose text is exactly the extraction
//! (its true occurrence) also counts, because Quarry by default still grounds a value that
//! occurs only before the previous one. `grounding.langextract_compat.*` instead runs
//! langextract's records in strict monotonic order with strict null scoring.

use std::collections::BTreeMap;
use std::path::Path;

use quarry_core::grounding::{AlignOptions, AlignOrder, Alignment, AlignmentStatus, align_all};
use serde::Deserialize;

use crate::corpus::{code_point_slice, read_jsonl};
use crate::score::{Metric, ratio};

#[derive(Debug, Deserialize)]
struct Record {
    source: String,
    source_text: String,
    extractions: Vec<String>,
    expected: Option<Vec<Gold>>,
    #[serde(default)]
    expected_error: bool,
    #[serde(default)]
    options: Option<UpstreamOptions>,
    #[serde(default)]
    order_sensitive: bool,
}

#[derive(Debug, Deserialize)]
struct Gold {
    extraction_text: String,
    start: Option<usize>,
    end: Option<usize>,
    alignment_status: Option<String>,
    #[serde(default)]
    acceptable_spans: Vec<(usize, usize)>,
}

/// The langextract resolver settings a record was produced with.
#[derive(Debug, Deserialize)]
struct UpstreamOptions {
    enable_fuzzy_alignment: Option<bool>,
    accept_match_lesser: Option<bool>,
    /// Set by langextract's fuzzy-alignment case tests, which call the fuzzy aligner directly:
    /// there is no exact or lesser pass before it.
    algorithm: Option<String>,
}

/// Counts for one group of items.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    items: usize,
    correct: usize,
    /// Items the engine grounded, and how many of those were right.
    predicted: usize,
    predicted_correct: usize,
    /// Items with a gold span, and how many the engine grounded at exactly that span.
    gold: usize,
    gold_found: usize,
    /// Correct when any listed acceptable span (or the gold span) counts.
    acceptable_correct: usize,
    /// Gold-grounded items whose predicted status matches the gold status.
    status_known: usize,
    status_correct: usize,
    /// Character IoU over gold `match_fuzzy` items.
    fuzzy_items: usize,
    fuzzy_iou: f64,
}

impl Tally {
    fn merge(&mut self, other: &Tally) {
        self.items += other.items;
        self.correct += other.correct;
        self.predicted += other.predicted;
        self.predicted_correct += other.predicted_correct;
        self.gold += other.gold;
        self.gold_found += other.gold_found;
        self.acceptable_correct += other.acceptable_correct;
        self.status_known += other.status_known;
        self.status_correct += other.status_correct;
        self.fuzzy_items += other.fuzzy_items;
        self.fuzzy_iou += other.fuzzy_iou;
    }
}

/// Short suite name for a record's `source`.
fn source_group(source: &str) -> &'static str {
    let lower = source.to_ascii_lowercase();
    if lower.contains("langextract") {
        "langextract"
    } else if lower.contains("recognizers") {
        "recognizers_text"
    } else if lower.contains("wikigold") {
        "wikigold"
    } else {
        "other"
    }
}

/// Maps the upstream resolver settings onto Quarry's options. langextract's own default for
/// `accept_match_lesser` is true, so a record that records settings but not that one gets true,
/// except a fuzzy-aligner test (`algorithm` set), where no lesser pass runs.
fn options_for(record: &Record, order: AlignOrder) -> AlignOptions {
    let mut options = AlignOptions {
        order,
        ..AlignOptions::default()
    };
    if let Some(upstream) = &record.options {
        if let Some(fuzzy) = upstream.enable_fuzzy_alignment {
            options.enable_fuzzy_alignment = fuzzy;
        }
        options.accept_match_lesser = upstream
            .accept_match_lesser
            .unwrap_or(upstream.algorithm.is_none());
    }
    options
}

fn gold_status(name: &str) -> Option<AlignmentStatus> {
    match name {
        "match_exact" => Some(AlignmentStatus::Exact),
        // Recognizers-Text's lower-cased extractions: Quarry calls a case-folded match normalized.
        "match_exact_casefold" => Some(AlignmentStatus::Normalized),
        "match_fuzzy" => Some(AlignmentStatus::Fuzzy),
        "match_lesser" => Some(AlignmentStatus::Lesser),
        _ => None,
    }
}

fn char_iou(predicted: (usize, usize), gold: (usize, usize)) -> f64 {
    let overlap = predicted
        .1
        .min(gold.1)
        .saturating_sub(predicted.0.max(gold.0));
    let union = predicted.1.max(gold.1) - predicted.0.min(gold.0);
    if union == 0 {
        0.0
    } else {
        overlap as f64 / union as f64
    }
}

/// Scores one record; `relax_nulls` applies the order-sensitive relaxation.
fn score_record(record: &Record, options: &AlignOptions, relax_nulls: bool) -> Tally {
    let mut tally = Tally::default();
    let extractions: Vec<&str> = record.extractions.iter().map(String::as_str).collect();
    let results = align_all(&record.source_text, &extractions, options);

    if record.expected_error {
        // One item: every extraction must be refused with an error, not a rejection.
        let refused = results
            .iter()
            .all(|r| r.as_ref().is_err_and(|e| e.rejection().is_none()));
        tally.items = 1;
        tally.correct = usize::from(refused);
        tally.acceptable_correct = tally.correct;
        return tally;
    }
    let Some(expected) = &record.expected else {
        return tally;
    };
    for (gold, result) in expected.iter().zip(&results) {
        let predicted: Option<&Alignment> = result.as_ref().ok();
        let span = predicted.map(|a| (a.start, a.end));
        let gold_span = gold.start.zip(gold.end);
        let correct = match (gold_span, span) {
            (Some(g), Some(p)) => g == p,
            (None, None) => true,
            (None, Some((s, e))) => {
                relax_nulls
                    && record.order_sensitive
                    && code_point_slice(&record.source_text, s, e) == gold.extraction_text.trim()
            }
            (Some(_), None) => false,
        };
        let acceptable = correct
            || span.is_some_and(|p| gold_span.is_some() && gold.acceptable_spans.contains(&p));
        tally.items += 1;
        tally.correct += usize::from(correct);
        tally.acceptable_correct += usize::from(acceptable);
        if span.is_some() {
            tally.predicted += 1;
            tally.predicted_correct += usize::from(correct);
        }
        if let Some(g) = gold_span {
            tally.gold += 1;
            tally.gold_found += usize::from(correct);
            if let Some(status) = gold.alignment_status.as_deref().and_then(gold_status) {
                tally.status_known += 1;
                tally.status_correct += usize::from(predicted.is_some_and(|a| a.status == status));
            }
            if gold.alignment_status.as_deref() == Some("match_fuzzy") {
                tally.fuzzy_items += 1;
                tally.fuzzy_iou += span.map_or(0.0, |p| char_iou(p, g));
            }
        }
    }
    // Extractions with no gold entry (should not happen) count as misses.
    tally.items += results.len().saturating_sub(expected.len());
    tally
}

fn push_metrics(metrics: &mut Vec<Metric>, prefix: &str, tally: &Tally, records: usize) {
    metrics.push(Metric::new(
        format!("{prefix}.exact_span_accuracy"),
        ratio(tally.correct, tally.items),
        records,
    ));
    metrics.push(Metric::new(
        format!("{prefix}.precision"),
        ratio(tally.predicted_correct, tally.predicted),
        records,
    ));
    metrics.push(Metric::new(
        format!("{prefix}.recall"),
        ratio(tally.gold_found, tally.gold),
        records,
    ));
}

pub fn evaluate(dir: &Path) -> anyhow::Result<Vec<Metric>> {
    let records: Vec<Record> = read_jsonl(dir, "grounding.jsonl")?;
    let mut total = Tally::default();
    let mut by_source: BTreeMap<&'static str, (Tally, usize)> = BTreeMap::new();
    let mut compat = Tally::default();
    let mut compat_records = 0;

    for record in &records {
        let tally = score_record(
            record,
            &options_for(record, AlignOrder::PreferForward),
            true,
        );
        total.merge(&tally);
        let entry = by_source.entry(source_group(&record.source)).or_default();
        entry.0.merge(&tally);
        entry.1 += 1;
        if source_group(&record.source) == "langextract" {
            let strict = options_for(record, AlignOrder::Langextract);
            compat.merge(&score_record(record, &strict, false));
            compat_records += 1;
        }
    }

    let mut metrics = Vec::new();
    push_metrics(&mut metrics, "grounding", &total, records.len());
    metrics.push(Metric::new(
        "grounding.acceptable_spans.exact_span_accuracy",
        ratio(total.acceptable_correct, total.items),
        records.len(),
    ));
    metrics.push(Metric::new(
        "grounding.status_accuracy",
        ratio(total.status_correct, total.status_known),
        records.len(),
    ));
    metrics.push(Metric::new(
        "grounding.fuzzy.iou",
        if total.fuzzy_items == 0 {
            1.0
        } else {
            total.fuzzy_iou / total.fuzzy_items as f64
        },
        total.fuzzy_items,
    ));
    for (group, (tally, count)) in &by_source {
        push_metrics(&mut metrics, &format!("grounding.{group}"), tally, *count);
    }
    if compat_records > 0 {
        push_metrics(
            &mut metrics,
            "grounding.langextract_compat",
            &compat,
            compat_records,
        );
    }
    Ok(metrics)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iou_of_partial_overlap() {
        assert!((char_iou((0, 10), (5, 15)) - 5.0 / 15.0).abs() < 1e-9);
        assert_eq!(char_iou((0, 4), (4, 8)), 0.0);
        assert_eq!(char_iou((3, 9), (3, 9)), 1.0);
    }
}
