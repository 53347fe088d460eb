//! Scores the URL and email finders on `urls_emails.jsonl`, and the IP finder on the `ip`
//! records of `sequence_misc.jsonl` (data from linkify-it, linkify, URLExtract and
//! Recognizers-Text; MIT / Apache-2.0 / BSD-3, see the corpus README).
//!
//! Every `options` key of the corpus maps onto a [`LinkOptions`] field, so each record runs with
//! the settings its upstream test used and all verified records count in the headline
//! (`url.*`, `email.*`, `links.*`). `links.default_subset.*` covers the records whose options
//! equal Quarry's defaults, `links.option_records.*` the rest, and `links.plain_defaults.*`
//! runs every record with the defaults, which is what `url::find` / `email::find` users get.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::Path;

use quarry_core::{Match, MatchKind};
use quarry_detect::url::{LinkOptions, find_links};
use quarry_detect::{ip, to_matches};
use serde::Deserialize;

use crate::corpus::read_jsonl;
use crate::{Metric, SpanScore};

#[derive(Debug, Deserialize)]
struct Record {
    source: String,
    text: String,
    target: String,
    #[serde(default)]
    expected: Vec<String>,
    #[serde(default)]
    expected_spans: Vec<GoldSpan>,
    #[serde(default)]
    options: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    unverified: bool,
}

#[derive(Debug, Deserialize)]
struct GoldSpan {
    start: usize,
    end: usize,
    #[serde(rename = "type")]
    kind: String,
    value: Option<String>,
}

pub fn evaluate(dir: &Path) -> anyhow::Result<Vec<Metric>> {
    let records: Vec<Record> = read_jsonl(dir, "urls_emails.jsonl")?;
    let mut metrics = links_metrics(&records);
    let misc: Vec<Record> = read_jsonl(dir, "sequence_misc.jsonl")?;
    metrics.extend(ip_metrics(&misc));
    Ok(metrics)
}

/// Running totals for one group of link records.
#[derive(Default)]
struct Tally {
    exact: SpanScore,
    relaxed: SpanScore,
    records: usize,
}

impl Tally {
    fn add(&mut self, record: &Record, predicted: &[Match], kinds: &[&str]) {
        let predicted: Vec<&Match> = predicted
            .iter()
            .filter(|m| kinds.contains(&m.kind.as_str()))
            .collect();
        let gold_spans: Vec<(usize, usize, &str)> = record
            .expected_spans
            .iter()
            .filter(|s| kinds.contains(&s.kind.as_str()))
            .map(|s| (s.start, s.end, s.kind.as_str()))
            .collect();
        let predicted_spans: Vec<(usize, usize, &str)> = predicted
            .iter()
            .map(|m| (m.start, m.end, m.kind.as_str()))
            .collect();
        self.exact.add_record(&predicted_spans, &gold_spans);

        let gold_strings: Vec<(&str, &str)> = record
            .expected
            .iter()
            .zip(&record.expected_spans)
            .filter(|(_, span)| kinds.contains(&span.kind.as_str()))
            .map(|(text, span)| (text.as_str(), span.kind.as_str()))
            .collect();
        let predicted_strings: Vec<(&str, &str)> = predicted
            .iter()
            .map(|m| (m.text.as_str(), m.kind.as_str()))
            .collect();
        self.relaxed.add_record(&predicted_strings, &gold_strings);
        self.records += 1;
    }
}

fn links_metrics(records: &[Record]) -> Vec<Metric> {
    let mut overall = Tally::default();
    let mut per_kind: BTreeMap<&str, Tally> = BTreeMap::new();
    let mut per_source: BTreeMap<&str, Tally> = BTreeMap::new();
    let mut default_subset = Tally::default();
    let mut option_records = Tally::default();
    let mut plain_defaults = Tally::default();

    for record in records.iter().filter(|r| !r.unverified) {
        let kinds = scored_kinds(record);
        let options = link_options(record);
        let predicted = to_matches(&record.text, find_links(&record.text, &options));
        overall.add(record, &predicted, &kinds);
        for kind in &kinds {
            per_kind
                .entry(kind)
                .or_default()
                .add(record, &predicted, &[kind]);
        }
        per_source
            .entry(short_source(&record.source))
            .or_default()
            .add(record, &predicted, &kinds);
        if options == LinkOptions::default() {
            default_subset.add(record, &predicted, &kinds);
        } else {
            option_records.add(record, &predicted, &kinds);
        }
        let with_defaults = to_matches(
            &record.text,
            find_links(&record.text, &LinkOptions::default()),
        );
        plain_defaults.add(record, &with_defaults, &kinds);
    }

    let mut metrics = Vec::new();
    for (kind, tally) in &per_kind {
        metrics.extend(tally.exact.metrics(kind, tally.records));
    }
    metrics.extend(overall.exact.metrics("links", overall.records));
    metrics.extend(overall.relaxed.metrics("links.relaxed", overall.records));
    for (source, tally) in &per_source {
        metrics.extend(
            tally
                .exact
                .metrics(&format!("links.{source}"), tally.records),
        );
    }
    for (name, tally) in [
        ("links.default_subset", &default_subset),
        ("links.option_records", &option_records),
        ("links.plain_defaults", &plain_defaults),
    ] {
        metrics.extend(tally.exact.metrics(name, tally.records));
    }
    metrics
}

/// The kinds the upstream finder looked for: `options.kinds`, else what that library finds by
/// default (linkify-it links both; URLExtract finds emails only with `extract_email`).
fn scored_kinds(record: &Record) -> Vec<&str> {
    let mut kinds: Vec<&str> = match record.options.get("kinds").and_then(|k| k.as_array()) {
        Some(kinds) => kinds.iter().filter_map(|k| k.as_str()).collect(),
        None if record.source.ends_with("linkify-it") => vec!["url", "email"],
        None => {
            let mut kinds = vec![record.target.as_str()];
            if record.options.get("extract_email") == Some(&serde_json::Value::Bool(true)) {
                kinds.push("email");
            }
            kinds
        }
    };
    for span in &record.expected_spans {
        if !kinds.contains(&span.kind.as_str()) {
            kinds.push(span.kind.as_str());
        }
    }
    kinds
}

/// The record's upstream settings as [`LinkOptions`], starting from Quarry's defaults.
fn link_options(record: &Record) -> LinkOptions {
    let mut options = LinkOptions::default();
    for (key, value) in &record.options {
        let Some(flag) = value.as_bool() else {
            continue; // `kinds` chooses what is scored, not how the finder behaves.
        };
        match key.as_str() {
            "url_must_have_scheme" => options.url_must_have_scheme = flag,
            "with_schema_only" => options.url_must_have_scheme = flag,
            "url_can_be_iri" => options.url_can_be_iri = flag,
            "email_domain_must_have_dot" => options.email_domain_must_have_dot = flag,
            "fuzzy_ip" => options.fuzzy_ip = flag,
            _ => {} // `extract_email` only chooses what is scored.
        }
    }
    options
}

fn short_source(source: &str) -> &str {
    source.rsplit('/').next().unwrap_or(source)
}

fn ip_metrics(records: &[Record]) -> Vec<Metric> {
    let mut score = SpanScore::default();
    let (mut values_right, mut values_checked, mut count) = (0, 0, 0);
    for record in records.iter().filter(|r| r.target == "ip" && !r.unverified) {
        count += 1;
        let predicted = to_matches(&record.text, ip::find(&record.text));
        let predicted_spans: Vec<(usize, usize)> =
            predicted.iter().map(|m| (m.start, m.end)).collect();
        let gold_spans: Vec<(usize, usize)> = record
            .expected_spans
            .iter()
            .map(|s| (s.start, s.end))
            .collect();
        score.add_record(&predicted_spans, &gold_spans);
        for gold in &record.expected_spans {
            let Some(found) = predicted
                .iter()
                .find(|m| (m.start, m.end) == (gold.start, gold.end) && m.kind == MatchKind::Ip)
            else {
                continue;
            };
            if let Some(value) = &gold.value {
                values_checked += 1;
                // Compared as addresses: gold keeps IPv6 as written, Quarry emits RFC 5952.
                let same = match (value.parse::<IpAddr>(), found.value.parse::<IpAddr>()) {
                    (Ok(gold), Ok(ours)) => gold == ours,
                    _ => *value == found.value,
                };
                values_right += usize::from(same);
            }
        }
    }
    let mut metrics = score.metrics("ip", count);
    metrics.push(Metric::new(
        "ip.value_accuracy",
        crate::score::ratio(values_right, values_checked),
        count,
    ));
    metrics
}
