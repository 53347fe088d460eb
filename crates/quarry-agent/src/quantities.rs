//! Numbers, amounts and dates as written in a text, each with its normalised readings, so an
//! extracted `1200000` is grounded by "$1.2 million" and `2024-01-15` by "15 January 2024".
//!
//! The scan runs once per document with patterns compiled once per process. An expression may have
//! several readings — "5m" is 5 and 5000000, "25%" is 25 and 0.25, "03/04/2024" is 3 April and
//! 4 March — because grounding asks "could the text have said this?", not "what did it mean?".
//! Not covered (a known gap): numbers in words ("twelve"), European decimal commas ("1.200,50"),
//! relative dates ("next Friday").

use std::sync::LazyLock;

use chrono::NaiveDate;
use quarry_core::offsets::CodePointCursor;
use regex::{Captures, Regex};

use crate::span::Span;

/// The normalised quantities of one text.
#[derive(Debug, Clone, Default)]
pub struct Quantities {
    numbers: Vec<(f64, Span)>,
    /// `YYYY-MM-DD`, or `YYYY-MM` for a month and year.
    dates: Vec<(String, Span)>,
}

impl Quantities {
    pub fn scan(text: &str) -> Quantities {
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
        let mut offsets: Vec<usize> = numbers
            .iter()
            .map(|(_, span)| *span)
            .chain(dates.iter().map(|(_, span)| *span))
            .flat_map(|(start, end)| [start, end])
            .collect();
        offsets.sort_unstable();
        offsets.dedup();
        let mut cursor = CodePointCursor::new(text);
        let code_points: Vec<(usize, usize)> = offsets
            .iter()
            .map(|&byte| (byte, cursor.code_point_at(byte)))
            .collect();
        let to_span = |(byte_start, byte_end): (usize, usize)| {
            let at = |byte: usize| {
                let index = code_points
                    .binary_search_by_key(&byte, |(b, _)| *b)
                    .expect("every offset was converted");
                code_points[index].1
            };
            Span {
                start: at(byte_start),
                end: at(byte_end),
                byte_start,
                byte_end,
            }
        };
        Quantities {
            numbers: numbers
                .into_iter()
                .map(|(value, span)| (value, to_span(span)))
                .collect(),
            dates: dates
                .into_iter()
                .map(|(iso, span)| (iso, to_span(span)))
                .collect(),
        }
    }

    /// The first expression that reads as `value`.
    pub fn find_number(&self, value: f64) -> Option<Span> {
        let tolerance = 1e-9 * value.abs().max(1.0);
        self.numbers
            .iter()
            .find(|(reading, _)| (reading - value).abs() <= tolerance)
            .map(|(_, span)| *span)
    }

    /// The first expression that reads as the ISO date (`YYYY-MM-DD` or `YYYY-MM`).
    pub fn find_date(&self, iso: &str) -> Option<Span> {
        self.dates
            .iter()
            .find(|(reading, _)| reading == iso)
            .map(|(_, span)| *span)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(text: &str, span: Span) -> &str {
        &text[span.byte_start..span.byte_end]
    }

    #[test]
    fn amounts_with_scale_words_and_separators() {
        let text = "Revenue was $1.2 million, up from 1,200 units; fee 3.5k and 25% off.";
        let q = Quantities::scan(text);
        assert_eq!(
            slice(text, q.find_number(1_200_000.0).unwrap()),
            "1.2 million"
        );
        assert_eq!(slice(text, q.find_number(1200.0).unwrap()), "1,200");
        assert_eq!(slice(text, q.find_number(3500.0).unwrap()), "3.5k");
        assert_eq!(slice(text, q.find_number(0.25).unwrap()), "25%");
        assert_eq!(q.find_number(1500.0), None);
    }

    #[test]
    fn dates_in_common_spellings_normalise_to_iso() {
        let text = "Signed 15 January 2024, due March 3rd, 2024; paid 2024-04-01; \
                    review 05/06/2024; period Feb 2024.";
        let q = Quantities::scan(text);
        assert_eq!(
            slice(text, q.find_date("2024-01-15").unwrap()),
            "15 January 2024"
        );
        assert_eq!(
            slice(text, q.find_date("2024-03-03").unwrap()),
            "March 3rd, 2024"
        );
        assert_eq!(
            slice(text, q.find_date("2024-04-01").unwrap()),
            "2024-04-01"
        );
        assert!(q.find_date("2024-06-05").is_some());
        assert!(q.find_date("2024-05-06").is_some());
        assert_eq!(slice(text, q.find_date("2024-02").unwrap()), "Feb 2024");
        assert_eq!(q.find_date("2024-01-16"), None);
    }

    #[test]
    fn spans_are_code_points() {
        let text = "Café ☕ total €1,200";
        let span = Quantities::scan(text).find_number(1200.0).unwrap();
        assert_eq!((span.start, span.end), (14, 19));
    }

    #[test]
    fn accounting_negatives() {
        let q = Quantities::scan("Loss of (500) and -20.");
        assert!(q.find_number(-500.0).is_some());
        assert!(q.find_number(-20.0).is_some());
    }
}
