//! The regexes the hand-written scanner replaced, kept as the oracle its generated tests
//! compare with (tests only: compiling them is what the scanner saves at start-up).

use std::sync::LazyLock;

use chrono::NaiveDate;
use regex::{Captures, Regex};

/// Numbers and dates with the byte spans of every reading, in order.
pub(super) type Readings = (Vec<(f64, (usize, usize))>, Vec<(String, (usize, usize))>);

/// Numbers and dates as the regexes found them, in the scanner's order.
pub(super) fn scan(text: &str) -> Readings {
    let mut numbers = Vec::new();
    for caps in NUMBER.captures_iter(text) {
        let whole = caps.get(0).expect("group 0 always matches");
        let Some(readings) = number_readings(&caps, text, whole.start()) else {
            continue;
        };
        for reading in readings {
            numbers.push((reading, (whole.start(), whole.end())));
        }
    }
    let mut dates = Vec::new();
    for (regex, order) in DATE_PATTERNS.iter() {
        for caps in regex.captures_iter(text) {
            let whole = caps.get(0).expect("group 0 always matches");
            for iso in order.readings(&caps) {
                dates.push((iso, (whole.start(), whole.end())));
            }
        }
    }
    (numbers, dates)
}

static NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?xi)
        (?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)
        (?:\s?(?P<scale>thousand|million|billion|trillion|mln|mn|bn|k|m|b)\b)?
        (?P<pct>\s?%)?",
    )
    .expect("valid regex")
});

fn number_readings(caps: &Captures<'_>, text: &str, start: usize) -> Option<Vec<f64>> {
    let digits = caps.name("num")?.as_str().replace(',', "");
    let base: f64 = digits.parse().ok()?;
    let mut readings = vec![base];
    if let Some(scale) = caps.name("scale") {
        let factor = match scale.as_str().to_ascii_lowercase().as_str() {
            "k" | "thousand" => 1e3,
            "m" | "mn" | "mln" | "million" => 1e6,
            "b" | "bn" | "billion" => 1e9,
            _ => 1e12,
        };
        readings.push(base * factor);
    }
    if caps.name("pct").is_some() {
        readings.push(base / 100.0);
    }
    // "-5", "−5" and "(5)" (accounting) may stand for a negative number.
    let before = text[..start].trim_end_matches(['$', '€', '£', '¥', '₹', ' ']);
    if before.ends_with(['-', '−', '(']) {
        let negatives: Vec<f64> = readings.iter().map(|r| -r).collect();
        readings.extend(negatives);
    }
    Some(readings)
}

const MONTHS: &str = "january|february|march|april|may|june|july|august|september|october|\
    november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec";

/// How a date pattern's groups map to year, month and day.
#[derive(Debug, Clone, Copy)]
enum DateOrder {
    /// Groups: year, month number, day.
    YearMonthDay,
    /// Groups: a, b, year — read both as day/month and month/day.
    Ambiguous,
    /// Groups: day, month name, year.
    DayMonthName,
    /// Groups: month name, day, year.
    MonthNameDay,
    /// Groups: month name, year.
    MonthNameYear,
}

static DATE_PATTERNS: LazyLock<Vec<(Regex, DateOrder)>> = LazyLock::new(|| {
    let patterns = [
        (
            r"\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\b".to_owned(),
            DateOrder::YearMonthDay,
        ),
        (
            r"\b(\d{1,2})[-/.](\d{1,2})[-/.](\d{4}|\d{2})\b".to_owned(),
            DateOrder::Ambiguous,
        ),
        (
            format!(r"(?i)\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({MONTHS})\.?,?\s+(\d{{4}})\b"),
            DateOrder::DayMonthName,
        ),
        (
            format!(r"(?i)\b({MONTHS})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b"),
            DateOrder::MonthNameDay,
        ),
        (
            format!(r"(?i)\b({MONTHS})\.?,?\s+(\d{{4}})\b"),
            DateOrder::MonthNameYear,
        ),
    ];
    patterns
        .into_iter()
        .map(|(source, order)| (Regex::new(&source).expect("valid regex"), order))
        .collect()
});

impl DateOrder {
    fn readings(self, caps: &Captures<'_>) -> Vec<String> {
        let group = |i: usize| caps.get(i).map_or("", |m| m.as_str());
        let number = |i: usize| group(i).parse::<u32>().ok();
        let month_name = |i: usize| month_number(group(i));
        let candidates: Vec<(Option<i32>, Option<u32>, Option<u32>)> = match self {
            DateOrder::YearMonthDay => vec![(year(group(1)), number(2), number(3))],
            DateOrder::Ambiguous => vec![
                (year(group(3)), number(2), number(1)),
                (year(group(3)), number(1), number(2)),
            ],
            DateOrder::DayMonthName => vec![(year(group(3)), month_name(2), number(1))],
            DateOrder::MonthNameDay => vec![(year(group(3)), month_name(1), number(2))],
            DateOrder::MonthNameYear => {
                return match (year(group(2)), month_name(1)) {
                    (Some(y), Some(m)) => vec![format!("{y:04}-{m:02}")],
                    _ => Vec::new(),
                };
            }
        };
        let mut out: Vec<String> = candidates
            .into_iter()
            .filter_map(|(y, m, d)| NaiveDate::from_ymd_opt(y?, m?, d?))
            .map(|date| date.format("%Y-%m-%d").to_string())
            .collect();
        out.dedup();
        out
    }
}

fn year(text: &str) -> Option<i32> {
    let value: i32 = text.parse().ok()?;
    Some(match text.len() {
        2 if value < 70 => 2000 + value,
        2 => 1900 + value,
        _ => value,
    })
}

fn month_number(name: &str) -> Option<u32> {
    let lower = name.to_ascii_lowercase();
    let index = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ]
    .iter()
    .position(|prefix| lower.starts_with(prefix))?;
    Some(index as u32 + 1)
}
