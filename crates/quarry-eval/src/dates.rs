//! `dates.jsonl`: date/time finding and normalisation, scored per the corpus README.
//!
//! * Spans: exact code-point `(start, end)` match, ignoring the type (the three sources use
//!   different type vocabularies); `lenient` counts any overlap (one-to-one, greedy).
//! * `value_accuracy`: among exactly matched spans whose gold value can be checked, the share
//!   whose value is right. A value is right when it equals `value` or one of `values`, or, for
//!   periods, when its start equals `range.start` and (if both sides have one) its end equals
//!   `range.end` — inclusive or exclusive, since the sources differ. Points compare at
//!   Duckling's `grain`, naive local time unless both sides carry an offset, `T00:00:00` equal
//!   to a bare date. Durations compare in seconds (months as 30 days, years as 365).
//! * `value.f1`: end-to-end, a hit needs an overlapping span and a right (or uncheckable) value.
//!
//! Subsets: `explicit_year` (English records flagged `all_absolute`/`has_explicit_year`, the
//! headline), `relative` (other English records with a reference time), one per source, and
//! `all`. Latent, unverified and settings-dependent records are left out of every subset;
//! dateparser's search records (`span_style: "dateparser"`) count only in lenient figures.
//! Set `QUARRY_EVAL_VERBOSE=dates` to print each record the detector gets wrong.

use std::path::Path;

use chrono::{DateTime, Duration, FixedOffset, NaiveDate, NaiveDateTime, NaiveTime, Timelike};
use quarry_core::Match;
use quarry_detect::{date, to_matches};
use serde::Deserialize;
use serde_json::Value;

use crate::corpus::read_jsonl;
use crate::score::ratio;
use crate::{Metric, SpanScore};

#[derive(Debug, Deserialize)]
struct Record {
    id: String,
    source: String,
    text: String,
    #[serde(default)]
    reference_time: Option<String>,
    #[serde(default)]
    expected: Vec<Gold>,
    #[serde(default)]
    lang: Option<String>,
    #[serde(default)]
    settings: Option<Value>,
    #[serde(default)]
    all_absolute: bool,
    #[serde(default)]
    has_explicit_year: bool,
    #[serde(default)]
    latent: bool,
    #[serde(default)]
    unverified: bool,
    #[serde(default)]
    negative: bool,
    #[serde(default)]
    span_style: Option<String>,
    #[serde(default)]
    section: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Gold {
    start: usize,
    end: usize,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    value: Value,
    #[serde(default)]
    values: Vec<Value>,
    #[serde(default)]
    range: Option<GoldRange>,
    #[serde(default)]
    ranges: Vec<GoldRange>,
    #[serde(default)]
    grain: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct GoldRange {
    #[serde(default)]
    start: Option<String>,
    #[serde(default)]
    end: Option<String>,
}

/// Counts for one subset.
#[derive(Debug, Default)]
struct Tally {
    records: usize,
    exact: SpanScore,
    lenient: SpanScore,
    value_checked: usize,
    value_right: usize,
    end_to_end: SpanScore,
}

impl Tally {
    fn add(&mut self, record: &Record, predicted: &[Match]) {
        self.records += 1;
        let lenient_only = record.span_style.as_deref() == Some("dateparser");
        if !lenient_only {
            let p: Vec<(usize, usize)> = predicted.iter().map(|m| (m.start, m.end)).collect();
            let g: Vec<(usize, usize)> = record.expected.iter().map(|g| (g.start, g.end)).collect();
            self.exact.add_record(&p, &g);
            let mut used = vec![false; record.expected.len()];
            for m in predicted {
                if let Some(k) = (0..record.expected.len()).find(|&k| {
                    !used[k]
                        && (record.expected[k].start, record.expected[k].end) == (m.start, m.end)
                }) {
                    used[k] = true;
                    if let Some(right) = value_right(&m.value, &record.expected[k]) {
                        self.value_checked += 1;
                        self.value_right += usize::from(right);
                    }
                }
            }
        }
        self.lenient
            .merge(overlap_score(predicted, &record.expected, |_, _| true));
        self.end_to_end
            .merge(overlap_score(predicted, &record.expected, |m, g| {
                value_right(&m.value, g).unwrap_or(true)
            }));
    }

    fn metrics(&self, name: &str, out: &mut Vec<Metric>) {
        let n = self.records;
        out.extend(self.exact.metrics(&format!("{name}.span"), n));
        out.push(Metric::new(
            format!("{name}.lenient.f1"),
            self.lenient.f1(),
            n,
        ));
        out.push(Metric::new(
            format!("{name}.value_accuracy"),
            ratio(self.value_right, self.value_checked),
            n,
        ));
        out.push(Metric::new(
            format!("{name}.value.f1"),
            self.end_to_end.f1(),
            n,
        ));
    }
}

/// One-to-one greedy matching where a prediction may claim any overlapping gold span that
/// `accept` allows.
fn overlap_score(
    predicted: &[Match],
    gold: &[Gold],
    accept: impl Fn(&Match, &Gold) -> bool,
) -> SpanScore {
    let mut used = vec![false; gold.len()];
    let mut tp = 0;
    for m in predicted {
        let hit = (0..gold.len()).find(|&k| {
            !used[k] && m.start < gold[k].end && gold[k].start < m.end && accept(m, &gold[k])
        });
        if let Some(k) = hit {
            used[k] = true;
            tp += 1;
        }
    }
    SpanScore {
        tp,
        fp: predicted.len() - tp,
        fn_: gold.len() - tp,
    }
}

pub fn evaluate(dir: &Path) -> anyhow::Result<Vec<Metric>> {
    let records: Vec<Record> = read_jsonl(dir, "dates.jsonl")?;
    let verbose = std::env::var("QUARRY_EVAL_VERBOSE").is_ok_and(|v| v.contains("dates"));
    let mut explicit = Tally::default();
    let mut relative = Tally::default();
    let mut all = Tally::default();
    let mut other_lang = Tally::default();
    let sources = ["recognizers-text", "duckling", "dateparser"];
    let mut per_source: Vec<Tally> = sources.iter().map(|_| Tally::default()).collect();
    let (mut negatives, mut clean) = (0, 0);
    let mut excluded = 0;
    for record in &records {
        if record.latent
            || record.unverified
            || record.section.as_deref() == Some("latentCorpus")
            || record.settings.as_ref().is_some_and(|s| !s.is_null())
        {
            excluded += 1;
            continue;
        }
        let now = reference_time(record.reference_time.as_deref());
        let predicted = to_matches(&record.text, date::find(&record.text, now));
        if verbose {
            show_mistakes(record, &predicted);
        }
        let english = record.lang.as_deref().is_none_or(|l| l.starts_with("en"));
        let source = sources
            .iter()
            .position(|s| {
                record
                    .source
                    .to_ascii_lowercase()
                    .contains(&s.replace('-', ""))
                    || record.source.to_ascii_lowercase().contains(s)
            })
            .unwrap_or(0);
        all.add(record, &predicted);
        per_source[source].add(record, &predicted);
        if record.negative {
            if record.source.contains("dateparser") {
                continue; // "not parsed as a whole" cases: informational only (README)
            }
            negatives += 1;
            clean += usize::from(predicted.is_empty());
        } else if !english {
            other_lang.add(record, &predicted);
        } else if record.all_absolute || record.has_explicit_year {
            explicit.add(record, &predicted);
        } else if record.reference_time.is_some() {
            relative.add(record, &predicted);
        }
    }
    let mut out = Vec::new();
    explicit.metrics("date.explicit_year", &mut out);
    relative.metrics("date.relative", &mut out);
    for (name, tally) in sources.iter().zip(&per_source) {
        tally.metrics(&format!("date.{name}"), &mut out);
    }
    other_lang.metrics("date.other_lang", &mut out);
    all.metrics("date.all", &mut out);
    out.push(Metric::new(
        "date.negative.clean_rate",
        ratio(clean, negatives),
        negatives,
    ));
    out.push(Metric::new(
        "date.excluded_records",
        excluded as f64,
        excluded,
    ));
    Ok(out)
}

/// The record's reference time; naive times are read as UTC, and a missing one (dateparser's
/// search cases, whose expectations are absolute) as 2020-01-01.
fn reference_time(text: Option<&str>) -> DateTime<FixedOffset> {
    let utc = FixedOffset::east_opt(0).expect("zero offset is valid");
    let fallback = NaiveDate::from_ymd_opt(2020, 1, 1)
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .expect("valid date")
        .and_local_timezone(utc)
        .single()
        .expect("fixed offsets are unambiguous");
    let Some(text) = text else {
        return fallback;
    };
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return t;
    }
    NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S")
        .ok()
        .and_then(|t| t.and_local_timezone(utc).single())
        .unwrap_or(fallback)
}

fn show_mistakes(record: &Record, predicted: &[Match]) {
    let gold: Vec<(usize, usize)> = record.expected.iter().map(|g| (g.start, g.end)).collect();
    let spans_ok =
        predicted.len() == gold.len() && predicted.iter().all(|m| gold.contains(&(m.start, m.end)));
    let values_ok = predicted.iter().all(|m| {
        record
            .expected
            .iter()
            .find(|g| (g.start, g.end) == (m.start, m.end))
            .is_none_or(|g| value_right(&m.value, g).unwrap_or(true))
    });
    if spans_ok && values_ok {
        return;
    }
    let flag = if record.all_absolute || record.has_explicit_year {
        "explicit"
    } else {
        "other"
    };
    eprintln!(
        "-- {flag} {} [{}] now={:?}",
        record.id,
        record.text.replace('\n', "⏎"),
        record.reference_time
    );
    for g in &record.expected {
        let span: String = record
            .text
            .chars()
            .skip(g.start)
            .take(g.end - g.start)
            .collect();
        eprintln!(
            "   gold {:?} {} value={} values={:?} range={:?} grain={:?}",
            span, g.kind, g.value, g.values, g.range, g.grain
        );
    }
    for m in predicted {
        eprintln!("   got  {:?} {} {}", m.text, m.kind.as_str(), m.value);
    }
}

/// Whether `value` is a right normalisation of `gold`; `None` when gold has nothing to check.
fn value_right(value: &str, gold: &Gold) -> Option<bool> {
    if gold.kind == "duration" {
        let want: f64 = value_text(&gold.value)?.parse().ok()?;
        return Some(duration_seconds(value).is_some_and(|got| (got - want).abs() < 1.0));
    }
    let grain = gold.grain.as_deref();
    let (start, end) = split_interval(value);
    let mut checkable = false;
    let points = std::iter::once(&gold.value)
        .chain(&gold.values)
        .filter_map(value_text);
    for want in points {
        let Some(want) = Point::parse(&want) else {
            continue;
        };
        checkable = true;
        if start.is_some_and(|s| s.same(&want, grain)) {
            return Some(true);
        }
    }
    for range in gold.range.iter().chain(&gold.ranges) {
        let want_start = range.start.as_deref().and_then(Point::parse);
        let want_end = range.end.as_deref().and_then(Point::parse);
        if want_start.is_none() && want_end.is_none() {
            continue;
        }
        checkable = true;
        let start_ok = match (want_start, start) {
            (Some(w), Some(s)) => s.same(&w, grain),
            (Some(_), None) => false,
            (None, _) => true,
        };
        let end_ok = match (want_end, end) {
            (Some(w), Some(e)) => {
                e.same(&w, grain) || e.next(grain).is_some_and(|n| n.same(&w, grain))
            }
            (Some(_), None) => want_start.is_some() && !value.contains('/'),
            (None, _) => true,
        };
        if start_ok && end_ok {
            return Some(true);
        }
    }
    checkable.then_some(false)
}

fn value_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if s != "not resolved" => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// `a/b` into its two ends (`..` is open); a single value is its own start and end.
fn split_interval(value: &str) -> (Option<Point>, Option<Point>) {
    match value.split_once('/') {
        Some((a, b)) => (Point::parse(a), Point::parse(b)),
        None => (Point::parse(value), Point::parse(value)),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Precision {
    Year,
    Month,
    Day,
    Time,
}

/// A normalised ISO value: a date and/or a time, with an offset in seconds if written.
#[derive(Debug, Clone, Copy)]
struct Point {
    date: Option<NaiveDate>,
    time: Option<NaiveTime>,
    offset: Option<i32>,
    precision: Precision,
}

impl Point {
    fn parse(s: &str) -> Option<Point> {
        let s = s.trim();
        if let Ok(t) = DateTime::parse_from_rfc3339(s) {
            let naive = t.naive_local();
            return Some(Point {
                date: Some(naive.date()),
                time: Some(naive.time()),
                offset: Some(t.offset().local_minus_utc()),
                precision: Precision::Time,
            });
        }
        for format in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"] {
            if let Ok(t) = NaiveDateTime::parse_from_str(s, format) {
                return Some(Point {
                    date: Some(t.date()),
                    time: Some(t.time()),
                    offset: None,
                    precision: Precision::Time,
                });
            }
        }
        if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
            return Some(Point::date(d, Precision::Day));
        }
        if let Some((y, m)) = s.split_once('-')
            && y.len() == 4
            && m.len() == 2
            && let (Ok(y), Ok(m)) = (y.parse(), m.parse())
        {
            return NaiveDate::from_ymd_opt(y, m, 1).map(|d| Point::date(d, Precision::Month));
        }
        if s.len() == 4
            && let Ok(y) = s.parse()
        {
            return NaiveDate::from_ymd_opt(y, 1, 1).map(|d| Point::date(d, Precision::Year));
        }
        for format in ["%H:%M:%S", "%H:%M"] {
            if let Ok(t) = NaiveTime::parse_from_str(s, format) {
                return Some(Point {
                    date: None,
                    time: Some(t),
                    offset: None,
                    precision: Precision::Time,
                });
            }
        }
        None
    }

    fn date(d: NaiveDate, precision: Precision) -> Point {
        Point {
            date: Some(d),
            time: None,
            offset: None,
            precision,
        }
    }

    /// Both sides as comparable (date, time) pairs: shifted to UTC when both carry offsets.
    fn same(&self, want: &Point, grain: Option<&str>) -> bool {
        let (mut a, mut b) = (*self, *want);
        if let (Some(oa), Some(ob)) = (a.offset, b.offset) {
            a = a.shifted(-oa);
            b = b.shifted(-ob);
        }
        // A time-only gold value compares with the time of day.
        if b.date.is_none() {
            return a.time.is_some() && a.time == b.time;
        }
        if a.date.is_none() {
            return false;
        }
        let midnight = |p: &Point| p.time.unwrap_or(NaiveTime::MIN);
        let (da, db) = (a.date.unwrap_or_default(), b.date.unwrap_or_default());
        match grain {
            Some("year") => da.format("%Y").to_string() == db.format("%Y").to_string(),
            Some("month") => da.format("%Y-%m").to_string() == db.format("%Y-%m").to_string(),
            Some("day" | "week" | "quarter") => da == db,
            Some("hour") => da == db && midnight(&a).hour() == midnight(&b).hour(),
            Some("minute") => {
                da == db
                    && midnight(&a).hour() == midnight(&b).hour()
                    && midnight(&a).minute() == midnight(&b).minute()
            }
            _ => {
                // A coarse gold value (`2014`, `2013-02`) compares at its own precision.
                match b.precision {
                    Precision::Year => da.format("%Y").to_string() == db.format("%Y").to_string(),
                    Precision::Month => {
                        da.format("%Y-%m").to_string() == db.format("%Y-%m").to_string()
                    }
                    _ => da == db && midnight(&a) == midnight(&b),
                }
            }
        }
    }

    fn shifted(self, seconds: i32) -> Point {
        match (self.date, self.time) {
            (Some(d), Some(t)) => {
                let moved = d.and_time(t) + Duration::seconds(i64::from(seconds));
                Point {
                    date: Some(moved.date()),
                    time: Some(moved.time()),
                    offset: None,
                    ..self
                }
            }
            _ => Point {
                offset: None,
                ..self
            },
        }
    }

    /// The start of the next unit after this inclusive end (a day, or a minute for times), so
    /// an inclusive end can match an exclusive one.
    fn next(&self, _grain: Option<&str>) -> Option<Point> {
        match (self.date, self.time) {
            (Some(d), None) => Some(Point::date(d.succ_opt()?, self.precision)),
            (Some(d), Some(t)) => {
                let moved = d.and_time(t) + Duration::minutes(1);
                let moved = moved.with_second(0)?;
                Some(Point {
                    date: Some(moved.date()),
                    time: Some(moved.time()),
                    ..*self
                })
            }
            (None, Some(t)) => Some(Point {
                time: Some(t + Duration::minutes(1)),
                ..*self
            }),
            (None, None) => None,
        }
    }
}

/// Seconds in an ISO 8601 duration (`P1Y2M3W4DT5H6M7S`), months as 30 days, years as 365.
fn duration_seconds(iso: &str) -> Option<f64> {
    let body = iso.strip_prefix('P')?;
    let mut total = 0.0;
    let mut in_time = false;
    let mut number = String::new();
    for ch in body.chars() {
        match ch {
            'T' => in_time = true,
            '0'..='9' | '.' => number.push(ch),
            unit => {
                let n: f64 = number.parse().ok()?;
                number.clear();
                total += n * match (unit, in_time) {
                    ('Y', false) => 365.0 * 86_400.0,
                    ('M', false) => 30.0 * 86_400.0,
                    ('W', false) => 7.0 * 86_400.0,
                    ('D', false) => 86_400.0,
                    ('H', true) => 3_600.0,
                    ('M', true) => 60.0,
                    ('S', true) => 1.0,
                    _ => return None,
                };
            }
        }
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gold(value: &str, range: Option<(&str, &str)>, grain: Option<&str>) -> Gold {
        Gold {
            start: 0,
            end: 1,
            kind: "date".into(),
            value: if value.is_empty() {
                Value::Null
            } else {
                Value::String(value.into())
            },
            values: Vec::new(),
            range: range.map(|(s, e)| GoldRange {
                start: Some(s.into()),
                end: Some(e.into()),
            }),
            ranges: Vec::new(),
            grain: grain.map(Into::into),
        }
    }

    #[test]
    fn compares_values_as_the_readme_says() {
        assert_eq!(
            value_right("2016-11-07", &gold("2016-11-07T00:00:00", None, None)),
            Some(true)
        );
        assert_eq!(
            value_right("2014-01-01/2014-12-31", &gold("2014", None, Some("year"))),
            Some(true)
        );
        assert_eq!(
            value_right(
                "2013-02-12T04:30:00",
                &gold("2013-02-12T04:00:00-02:00", None, Some("hour"))
            ),
            Some(true)
        );
        // Inclusive and exclusive ends both match.
        let month = gold("", Some(("2022-05-01", "2022-06-01")), None);
        assert_eq!(value_right("2022-05-01/2022-05-31", &month), Some(true));
        assert_eq!(value_right("2022-05-01/2022-06-01", &month), Some(true));
        assert_eq!(value_right("2022-05-02/2022-05-31", &month), Some(false));
        assert_eq!(duration_seconds("PT1H30M"), Some(5400.0));
    }
}
