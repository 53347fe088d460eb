//! `phones.jsonl`: phone-number finding, scored per the corpus README.
//!
//! * Exact spans: a prediction counts when its code-point `(start, end)` equals a gold span.
//! * Digit-normalised (`.digits`): a prediction counts when its digits (fullwidth folded to ASCII)
//!   equal those of an overlapping, not yet matched gold span.
//!
//! Figures are reported overall, per source, for English/Latin-script records (`latin`) and for
//! other languages (`other_lang`), and for libphonenumber by the leniency its cases need.
//! `unverified` records are left out of all of these and scored on their own.
//!
//! Region: a record's `region`; when it is null (Recognizers-Text) the record's language implies
//! one (English → US, Chinese → CN, Portuguese → BR, …); `ZZ` (libphonenumber's "unknown region")
//! falls back to US, which only matters for numbers without a `+`.

use std::collections::BTreeMap;
use std::path::Path;

use quarry_core::Match;
use quarry_detect::phone::{self, Region as Id};
use quarry_detect::to_matches;
use serde::Deserialize;

use crate::corpus::read_jsonl;
use crate::{Metric, SpanScore};

#[derive(Debug, Deserialize)]
struct Record {
    source: String,
    text: String,
    #[serde(default)]
    expected_spans: Vec<GoldSpan>,
    #[serde(default)]
    region: Option<String>,
    #[serde(default)]
    lang: Option<String>,
    #[serde(default)]
    min_leniency: Option<String>,
    #[serde(default)]
    unverified: bool,
}

#[derive(Debug, Deserialize)]
struct GoldSpan {
    start: usize,
    end: usize,
}

/// Exact and digit-normalised counts for one group of records.
#[derive(Default)]
struct GroupScore {
    records: usize,
    exact: SpanScore,
    digits: SpanScore,
}

impl GroupScore {
    fn add(&mut self, record: &Record, predicted: &[Match]) {
        self.records += 1;
        let predicted_spans: Vec<(usize, usize)> =
            predicted.iter().map(|m| (m.start, m.end)).collect();
        let gold_spans: Vec<(usize, usize)> = record
            .expected_spans
            .iter()
            .map(|g| (g.start, g.end))
            .collect();
        self.exact.add_record(&predicted_spans, &gold_spans);
        self.digits.merge(digit_normalised(
            &record.text,
            predicted,
            &record.expected_spans,
        ));
    }

    fn metrics(&self, name: &str) -> Vec<Metric> {
        let mut metrics = self.exact.metrics(name, self.records);
        metrics.extend(self.digits.metrics(&format!("{name}.digits"), self.records));
        metrics
    }
}

/// Scores phone finding on `phones.jsonl` in `dir`.
pub fn evaluate(dir: &Path) -> anyhow::Result<Vec<Metric>> {
    let records: Vec<Record> = read_jsonl(dir, "phones.jsonl")?;
    let mut groups: BTreeMap<String, GroupScore> = BTreeMap::new();
    for record in &records {
        let predicted = to_matches(&record.text, phone::find(&record.text, region_of(record)));
        for group in groups_of(record) {
            groups.entry(group).or_default().add(record, &predicted);
        }
    }
    Ok(groups
        .iter()
        .flat_map(|(name, score)| score.metrics(name))
        .collect())
}

/// The metric groups a record counts in, e.g. `phone`, `phone.latin`, `phone.libphonenumber`.
fn groups_of(record: &Record) -> Vec<String> {
    if record.unverified {
        return vec!["phone.unverified".to_owned()];
    }
    let source = record
        .source
        .rsplit('/')
        .next()
        .unwrap_or(&record.source)
        .to_lowercase();
    let script = if is_latin_script(record.lang.as_deref()) {
        "latin"
    } else {
        "other_lang"
    };
    let mut groups = vec![
        "phone".to_owned(),
        format!("phone.{script}"),
        format!("phone.{source}"),
    ];
    if let Some(leniency) = &record.min_leniency {
        groups.push(format!("phone.{source}.{leniency}"));
    }
    groups
}

/// Records without a language are libphonenumber's English test sentences.
fn is_latin_script(lang: Option<&str>) -> bool {
    const OTHER_SCRIPTS: &[&str] = &[
        "chinese",
        "japanese",
        "korean",
        "hindi",
        "arabic",
        "hebrew",
        "russian",
        "bulgarian",
        "ukrainian",
        "greek",
        "thai",
        "persian",
    ];
    lang.is_none_or(|lang| !OTHER_SCRIPTS.contains(&lang.to_lowercase().as_str()))
}

fn region_of(record: &Record) -> Id {
    record
        .region
        .as_deref()
        .and_then(|region| region.parse().ok())
        .unwrap_or_else(|| region_for_language(record.lang.as_deref()))
}

/// The region a record's language most likely writes numbers for.
fn region_for_language(lang: Option<&str>) -> Id {
    match lang.map(str::to_lowercase).as_deref() {
        Some("chinese") => Id::CN,
        Some("portuguese") => Id::BR,
        Some("spanish") => Id::ES,
        Some("french") => Id::FR,
        Some("german") => Id::DE,
        Some("italian") => Id::IT,
        Some("dutch") => Id::NL,
        Some("japanese") => Id::JP,
        Some("korean") => Id::KR,
        Some("hindi") => Id::IN,
        Some("turkish") => Id::TR,
        Some("swedish") => Id::SE,
        Some("arabic") => Id::AE,
        _ => Id::US,
    }
}

/// Counts predictions whose digits equal those of an overlapping gold span (each gold span is
/// matched at most once).
fn digit_normalised(text: &str, predicted: &[Match], gold: &[GoldSpan]) -> SpanScore {
    let gold_digits: Vec<String> = gold
        .iter()
        .map(|g| digits(&code_point_slice(text, g.start, g.end)))
        .collect();
    let mut used = vec![false; gold.len()];
    let mut score = SpanScore::default();
    for prediction in predicted {
        let wanted = digits(&prediction.text);
        let hit = gold.iter().enumerate().position(|(index, g)| {
            !used[index]
                && g.start < prediction.end
                && prediction.start < g.end
                && gold_digits[index] == wanted
        });
        match hit {
            Some(index) => {
                used[index] = true;
                score.tp += 1;
            }
            None => score.fp += 1,
        }
    }
    score.fn_ += used.iter().filter(|&&u| !u).count();
    score
}

fn code_point_slice(text: &str, start: usize, end: usize) -> String {
    text.chars().skip(start).take(end - start).collect()
}

/// ASCII digits of `text`, with fullwidth digits folded.
fn digits(text: &str) -> String {
    text.chars()
        .filter_map(|c| match c {
            '0'..='9' => Some(c),
            '\u{FF10}'..='\u{FF19}' => char::from_u32(c as u32 - 0xFF10 + '0' as u32),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use quarry_core::MatchKind;

    fn prediction(text: &str, start: usize, end: usize) -> Match {
        Match {
            text: code_point_slice(text, start, end),
            start,
            end,
            value: String::new(),
            kind: MatchKind::Phone,
        }
    }

    #[test]
    fn digit_normalised_match_ignores_punctuation_and_fullwidth() {
        let text = "call ＋１ (650) 333-6000 now";
        let gold = [GoldSpan { start: 5, end: 22 }];
        // Dropping the bracket text still matches on digits, not on the exact span.
        let score = digit_normalised(text, &[prediction(text, 5, 22)], &gold);
        assert_eq!(
            score,
            SpanScore {
                tp: 1,
                fp: 0,
                fn_: 0
            }
        );
        let score = digit_normalised(text, &[prediction(text, 9, 22)], &gold);
        assert_eq!(
            score,
            SpanScore {
                tp: 0,
                fp: 1,
                fn_: 1
            }
        );
    }

    #[test]
    fn null_region_follows_language() {
        assert_eq!(region_for_language(Some("Chinese")), Id::CN);
        assert_eq!(region_for_language(None), Id::US);
        assert!(is_latin_script(Some("Portuguese")));
        assert!(!is_latin_script(Some("Hindi")));
    }
}
