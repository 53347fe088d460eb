//! Numbers, amounts and dates as written in a text, each with its normalised readings, so an
//! extracted `1200000` is grounded by "$1.2 million" and `2024-01-15` by "15 January 2024".
//!
//! The scan runs once per document. An expression may have several readings — "5m" is 5 and
//! 5000000, "25%" is 25 and 0.25, "03/04/2024" is 3 April and 4 March — because grounding asks
//! "could the text have said this?", not "what did it mean?".
//!
//! The scanner is written by hand: the regexes it replaces cost about 4 ms of a CLI call's CPU to
//! compile (Unicode classes), more than the rest of a call's start-up. It finds what these
//! patterns find, each kind scanned on its own, leftmost first, matches not overlapping:
//!
//! | kind | pattern (`(?i)`: ASCII letters in any case) |
//! |---|---|
//! | number | `(\d{1,3}(,\d{3})+(\.\d+)? \| \d+(\.\d+)? \| \.\d+)(\s?SCALE\b)?(\s?%)?` |
//! | year-month-day | `\b\d{4}[-/.]\d{1,2}[-/.]\d{1,2}\b` |
//! | d/m/y or m/d/y | `\b\d{1,2}[-/.]\d{1,2}[-/.](\d{4}\|\d{2})\b` |
//! | day month year | `(?i)\b\d{1,2}(st\|nd\|rd\|th)?\s+(of\s+)?MONTH\.?,?\s+\d{4}\b` |
//! | month day year | `(?i)\bMONTH\.?\s+\d{1,2}(st\|nd\|rd\|th)?,?\s+\d{4}\b` |
//! | month year | `(?i)\bMONTH\.?,?\s+\d{4}\b` |
//!
//! where `SCALE` is thousand, million, billion, trillion, mln, mn, bn, k, m or b, and `MONTH` a
//! month's name or its abbreviation (jan … dec, sept). As in Rust's regex with Unicode on, `\d`
//! is any decimal digit (Nd: `١٢٠٠` reads 1200, `２０２４` is a year), `\s` any White_Space
//! (no-break and narrow spaces, line breaks) and `\b` a boundary of Unicode word characters
//! (letters, marks, decimal digits, connector punctuation). Letters match in ASCII case only: the
//! Kelvin sign is not a `k`. A number preceded by `-`, `−` or `(` (currency signs and spaces
//! between) is also read as negative ("(500)" in accounts). Two-digit years are 1970–2069.
//! Not covered (a known gap): numbers in words ("twelve"), European decimal commas ("1.200,50"),
//! relative dates ("next Friday").

use chrono::NaiveDate;
use quarry_core::offsets::CodePointCursor;

use crate::span::Span;

#[cfg(test)]
mod oracle;
#[cfg(test)]
mod tests;

/// The normalised quantities of one text.
#[derive(Debug, Clone, Default)]
pub struct Quantities {
    numbers: Vec<(f64, Span)>,
    /// `YYYY-MM-DD`, or `YYYY-MM` for a month and year.
    dates: Vec<(String, Span)>,
}

impl Quantities {
    pub fn scan(text: &str) -> Quantities {
        let source = Source(text);
        let mut numbers = Vec::new();
        let digit_or_point = |c: char| c == '.' || digit_value(c).is_some();
        for (start, end, number) in find_all(source, digit_or_point, number_at) {
            for reading in number.readings(source, start) {
                numbers.push((reading, (start, end)));
            }
        }
        let mut dates = Vec::new();
        for shape in DateShape::ALL {
            let may_start = shape.first_characters();
            for (start, end, readings) in
                find_all(source, may_start, |source, at| shape.at(source, at))
            {
                for iso in readings {
                    dates.push((iso, (start, end)));
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

    /// The first expression that reads as the ISO date (`YYYY-MM-DD` or `YYYY-MM`). Date
    /// spellings are tried in the order of the table above, each through the whole text.
    pub fn find_date(&self, iso: &str) -> Option<Span> {
        self.dates
            .iter()
            .find(|(reading, _)| reading == iso)
            .map(|(_, span)| *span)
    }
}

/// Every non-overlapping match of `match_at` (which answers the match's end), leftmost first,
/// as a regex search finds them: `(start, end, match)`. `may_start` says which characters a
/// match can start with; the others are skipped without trying.
fn find_all<'t, M>(
    source: Source<'t>,
    may_start: fn(char) -> bool,
    match_at: impl Fn(Source<'t>, usize) -> Option<(usize, M)>,
) -> impl Iterator<Item = (usize, usize, M)> {
    let mut at = 0;
    std::iter::from_fn(move || {
        while let Some(first) = source.char_at(at) {
            if may_start(first)
                && let Some((end, found)) = match_at(source, at)
            {
                let start = at;
                at = end;
                return Some((start, end, found));
            }
            at += first.len_utf8();
        }
        None
    })
}

// ---------------------------------------------------------------------------------------------
// Numbers

/// Scale words, each with its factor; a word is taken only where it ends (`5 mg` has no scale).
const SCALES: [(&str, f64); 10] = [
    ("thousand", 1e3),
    ("million", 1e6),
    ("billion", 1e9),
    ("trillion", 1e12),
    ("mln", 1e6),
    ("mn", 1e6),
    ("bn", 1e9),
    ("k", 1e3),
    ("m", 1e6),
    ("b", 1e9),
];

/// One number expression: the digits (`start..digits_end`), its scale and percent sign.
struct NumberMatch {
    digits_end: usize,
    scale: Option<f64>,
    percent: bool,
}

fn number_at(source: Source<'_>, at: usize) -> Option<(usize, NumberMatch)> {
    let digits_end = source
        .grouped_number(at)
        .or_else(|| source.plain_number(at))?;
    let mut end = digits_end;
    let scale = source.scale_word(end).map(|(scale_end, factor)| {
        end = scale_end;
        factor
    });
    let percent = source
        .one_space(end)
        .and_then(|after| source.eat(after, '%'))
        .or_else(|| source.eat(end, '%'))
        .map(|percent_end| end = percent_end)
        .is_some();
    Some((
        end,
        NumberMatch {
            digits_end,
            scale,
            percent,
        },
    ))
}

impl NumberMatch {
    fn readings(&self, source: Source<'_>, start: usize) -> Vec<f64> {
        let mut digits = String::with_capacity(self.digits_end - start);
        for c in source.0[start..self.digits_end].chars() {
            match (c, digit_value(c)) {
                (_, Some(value)) => digits.push(char::from(b'0' + value)),
                ('.', None) => digits.push('.'),
                _ => {} // a thousands separator
            }
        }
        let Ok(base) = digits.parse::<f64>() else {
            return Vec::new();
        };
        let mut readings = vec![base];
        if let Some(factor) = self.scale {
            readings.push(base * factor);
        }
        if self.percent {
            readings.push(base / 100.0);
        }
        // "-5", "−5" and "(5)" (accounting) may stand for a negative number.
        let before = source.0[..start].trim_end_matches(['$', '€', '£', '¥', '₹', ' ']);
        if before.ends_with(['-', '−', '(']) {
            let negatives: Vec<f64> = readings.iter().map(|r| -r).collect();
            readings.extend(negatives);
        }
        readings
    }
}

// ---------------------------------------------------------------------------------------------
// Dates

/// Month names and abbreviations with their numbers, longest spelling of a month first.
const MONTHS: [(&str, u32); 24] = [
    ("january", 1),
    ("february", 2),
    ("march", 3),
    ("april", 4),
    ("may", 5),
    ("june", 6),
    ("july", 7),
    ("august", 8),
    ("september", 9),
    ("october", 10),
    ("november", 11),
    ("december", 12),
    ("jan", 1),
    ("feb", 2),
    ("mar", 3),
    ("apr", 4),
    ("jun", 6),
    ("jul", 7),
    ("aug", 8),
    ("sept", 9),
    ("sep", 9),
    ("oct", 10),
    ("nov", 11),
    ("dec", 12),
];

const ORDINAL_SUFFIXES: [&str; 4] = ["st", "nd", "rd", "th"];

/// The date spellings, in the order their readings are listed.
#[derive(Debug, Clone, Copy)]
enum DateShape {
    /// `2024-01-15`, `2024/1/15`, `2024.01.15`.
    YearMonthDay,
    /// `05/06/2024`, `5-6-24`: read both as day/month and month/day.
    Ambiguous,
    /// `15 January 2024`, `15th of Jan. 2024`.
    DayMonthName,
    /// `January 15, 2024`, `Jan 15th 2024`.
    MonthNameDay,
    /// `January 2024`, `Jan. 2024` (a `YYYY-MM` reading).
    MonthNameYear,
}

impl DateShape {
    const ALL: [DateShape; 5] = [
        DateShape::YearMonthDay,
        DateShape::Ambiguous,
        DateShape::DayMonthName,
        DateShape::MonthNameDay,
        DateShape::MonthNameYear,
    ];

    /// Which characters a match can start with: a digit, or a month's first letter.
    fn first_characters(self) -> fn(char) -> bool {
        match self {
            DateShape::YearMonthDay | DateShape::Ambiguous | DateShape::DayMonthName => {
                |c| digit_value(c).is_some()
            }
            DateShape::MonthNameDay | DateShape::MonthNameYear => {
                |c| "jfmasondJFMASOND".contains(c)
            }
        }
    }

    /// The match of this spelling starting at `at`: its end and ISO readings (none for a date
    /// that does not exist, like 2024-02-30: the text is still consumed, as a regex would).
    fn at(self, source: Source<'_>, at: usize) -> Option<(usize, Vec<String>)> {
        if !source.is_boundary(at) {
            return None;
        }
        match self {
            DateShape::YearMonthDay => {
                let year = source.digits(at).exactly(4)?;
                let month = source.digits(source.date_separator(year.end)?).up_to(2)?;
                let day = source.digits(source.date_separator(month.end)?).up_to(2)?;
                if !source.ends_word(day.end) {
                    return None;
                }
                let reading = ymd(year.year(source), month.value(source), day.value(source));
                Some((day.end, reading.into_iter().collect()))
            }
            DateShape::Ambiguous => {
                let first = source.digits(at).up_to(2)?;
                let second = source.digits(source.date_separator(first.end)?).up_to(2)?;
                let year = source.digits(source.date_separator(second.end)?);
                if !matches!(year.count, 2 | 4) || !source.ends_word(year.end) {
                    return None;
                }
                let (a, b) = (first.value(source), second.value(source));
                let mut readings: Vec<String> = [(b, a), (a, b)]
                    .into_iter()
                    .filter_map(|(month, day)| ymd(year.year(source), month, day))
                    .collect();
                readings.dedup();
                Some((year.end, readings))
            }
            DateShape::DayMonthName => {
                let day = source.digits(at).up_to(2)?;
                let after_day = source.ordinal_suffix(day.end);
                let month_at = source.spaces(after_day)?;
                let after_of = source
                    .eat_word(month_at, "of")
                    .and_then(|of_end| source.spaces(of_end));
                let (month, year) = after_of
                    .and_then(|at| source.month_then(at, Source::year_after_month))
                    .or_else(|| source.month_then(month_at, Source::year_after_month))?;
                let reading = ymd(year.year(source), month, day.value(source));
                Some((year.end, reading.into_iter().collect()))
            }
            DateShape::MonthNameDay => {
                let (month, (day, year)) = source.month_then(at, |source, at| {
                    let after_point = source.eat(at, '.').unwrap_or(at);
                    let day = source.digits(source.spaces(after_point)?).up_to(2)?;
                    let after_day = source.ordinal_suffix(day.end);
                    let after_comma = source.eat(after_day, ',').unwrap_or(after_day);
                    let year = source.digits(source.spaces(after_comma)?).exactly(4)?;
                    source.ends_word(year.end).then_some((day, year))
                })?;
                let reading = ymd(year.year(source), month, day.value(source));
                Some((year.end, reading.into_iter().collect()))
            }
            DateShape::MonthNameYear => {
                let (month, year) = source.month_then(at, Source::year_after_month)?;
                Some((
                    year.end,
                    vec![format!("{:04}-{month:02}", year.value(source))],
                ))
            }
        }
    }
}

/// `YYYY-MM-DD` when the date exists.
fn ymd(year: i32, month: u32, day: u32) -> Option<String> {
    NaiveDate::from_ymd_opt(year, month, day)?;
    Some(format!("{year:04}-{month:02}-{day:02}"))
}

// ---------------------------------------------------------------------------------------------
// The text as the patterns see it

/// A run of decimal digits: `start..end` in bytes, `count` digits.
#[derive(Debug, Clone, Copy)]
struct Digits {
    start: usize,
    end: usize,
    count: usize,
}

impl Digits {
    /// The run, when it has exactly `n` digits (`\d{n}` followed by something else).
    fn exactly(self, n: usize) -> Option<Digits> {
        (self.count == n).then_some(self)
    }

    /// The run, when it has one to `n` digits (a greedy `\d{1,n}` followed by a non-digit).
    fn up_to(self, n: usize) -> Option<Digits> {
        (1..=n).contains(&self.count).then_some(self)
    }

    fn value(self, source: Source<'_>) -> u32 {
        source.0[self.start..self.end]
            .chars()
            .filter_map(digit_value)
            .fold(0, |value, digit| value * 10 + u32::from(digit))
    }

    /// A year: two digits are 1970–2069.
    fn year(self, source: Source<'_>) -> i32 {
        let value = self.value(source) as i32;
        match self.count {
            2 if value < 70 => 2000 + value,
            2 => 1900 + value,
            _ => value,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Source<'t>(&'t str);

impl<'t> Source<'t> {
    fn char_at(self, at: usize) -> Option<char> {
        self.0.get(at..)?.chars().next()
    }

    fn char_before(self, at: usize) -> Option<char> {
        self.0[..at].chars().next_back()
    }

    /// `\b`: a word character on exactly one side.
    fn is_boundary(self, at: usize) -> bool {
        self.char_before(at).is_some_and(is_word_char) != self.char_at(at).is_some_and(is_word_char)
    }

    /// `\b` after a word character: no word character follows.
    fn ends_word(self, at: usize) -> bool {
        !self.char_at(at).is_some_and(is_word_char)
    }

    /// The end of `c` at `at`.
    fn eat(self, at: usize, c: char) -> Option<usize> {
        (self.char_at(at) == Some(c)).then(|| at + c.len_utf8())
    }

    /// The end of the ASCII `word` at `at`, in any case.
    fn eat_word(self, at: usize, word: &str) -> Option<usize> {
        let found = self.0.as_bytes().get(at..at + word.len())?;
        found
            .eq_ignore_ascii_case(word.as_bytes())
            .then_some(at + word.len())
    }

    /// The digits starting at `at` (none when `at` is not a digit).
    fn digits(self, at: usize) -> Digits {
        let mut end = at;
        let mut count = 0;
        for c in self.0[at..].chars() {
            if digit_value(c).is_none() {
                break;
            }
            end += c.len_utf8();
            count += 1;
        }
        Digits {
            start: at,
            end,
            count,
        }
    }

    /// `\s?`: the end of one whitespace character at `at`.
    fn one_space(self, at: usize) -> Option<usize> {
        self.char_at(at)
            .filter(|c| c.is_whitespace())
            .map(|c| at + c.len_utf8())
    }

    /// `\s+`: the end of the whitespace at `at`, if there is any.
    fn spaces(self, at: usize) -> Option<usize> {
        let rest = &self.0[at..];
        let end = at + rest.len() - rest.trim_start().len();
        (end > at).then_some(end)
    }

    /// `[-/.]`
    fn date_separator(self, at: usize) -> Option<usize> {
        ['-', '/', '.'].into_iter().find_map(|c| self.eat(at, c))
    }

    /// `(st|nd|rd|th)?`, in any case: the end of the suffix, or `at`.
    fn ordinal_suffix(self, at: usize) -> usize {
        ORDINAL_SUFFIXES
            .iter()
            .find_map(|suffix| self.eat_word(at, suffix))
            .unwrap_or(at)
    }

    /// `\d{1,3}(,\d{3})+(\.\d+)?`: the end of a number with thousands separators.
    fn grouped_number(self, at: usize) -> Option<usize> {
        let mut end = self.digits(at).up_to(3)?.end;
        let mut groups = 0;
        while let Some(group_start) = self.eat(end, ',') {
            let group = self.digits(group_start);
            if group.count < 3 {
                break;
            }
            // Exactly three digits: a longer run ends the number after its third digit.
            end = group_start
                + self.0[group_start..]
                    .chars()
                    .take(3)
                    .map(char::len_utf8)
                    .sum::<usize>();
            groups += 1;
        }
        (groups > 0).then(|| self.fraction(end))
    }

    /// `\d+(\.\d+)?|\.\d+`: the end of a number without separators.
    fn plain_number(self, at: usize) -> Option<usize> {
        let whole = self.digits(at);
        if whole.count > 0 {
            return Some(self.fraction(whole.end));
        }
        let point = self.eat(at, '.')?;
        let decimals = self.digits(point);
        (decimals.count > 0).then_some(decimals.end)
    }

    /// `(\.\d+)?`: the end of the decimals after `at`, or `at`.
    fn fraction(self, at: usize) -> usize {
        self.eat(at, '.')
            .map(|point| self.digits(point))
            .filter(|decimals| decimals.count > 0)
            .map_or(at, |decimals| decimals.end)
    }

    /// `(\s?SCALE\b)?`: the end of a scale word after `at` and its factor.
    fn scale_word(self, at: usize) -> Option<(usize, f64)> {
        let word_at = |from: usize| {
            SCALES.iter().find_map(|&(word, factor)| {
                self.eat_word(from, word)
                    .filter(|&end| self.ends_word(end))
                    .map(|end| (end, factor))
            })
        };
        self.one_space(at).and_then(word_at).or_else(|| word_at(at))
    }

    /// `\bMONTH` followed by what `then` matches: the month's number and `then`'s match. Each
    /// spelling that starts at `at` is tried in turn, as a regex alternation is.
    fn month_then<T>(
        self,
        at: usize,
        then: impl Fn(Source<'t>, usize) -> Option<T>,
    ) -> Option<(u32, T)> {
        MONTHS.iter().find_map(|&(name, number)| {
            let end = self.eat_word(at, name)?;
            then(self, end).map(|found| (number, found))
        })
    }

    /// `\.?,?\s+(\d{4})\b` after a month's name: the year.
    fn year_after_month(self, at: usize) -> Option<Digits> {
        let after_point = self.eat(at, '.').unwrap_or(at);
        let after_comma = self.eat(after_point, ',').unwrap_or(after_point);
        let year = self.digits(self.spaces(after_comma)?).exactly(4)?;
        self.ends_word(year.end).then_some(year)
    }
}

/// `\w` of Rust's regex with Unicode on: Alphabetic, marks, decimal digits, connector
/// punctuation and the joiners.
fn is_word_char(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphanumeric() || c == '_'
    } else {
        regex_syntax::is_word_character(c)
    }
}

/// The value of a decimal digit of any script (Unicode's Nd: every script's digits are ten
/// consecutive code points from its zero).
fn digit_value(c: char) -> Option<u8> {
    if c.is_ascii() {
        return c.is_ascii_digit().then(|| c as u8 - b'0');
    }
    let code = u32::from(c);
    let index = DIGIT_ZEROS
        .partition_point(|&zero| zero <= code)
        .checked_sub(1)?;
    let offset = code - DIGIT_ZEROS[index];
    (offset < 10).then_some(offset as u8)
}

/// The zero of every run of decimal digits (general category Nd, Unicode 16, as in
/// `regex-syntax`'s `\d`; a test compares them character by character).
const DIGIT_ZEROS: [u32; 76] = [
    0x30, 0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66,
    0xDE6, 0xE50, 0xED0, 0xF20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90,
    0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10,
    0x104A0, 0x10D30, 0x10D40, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0,
    0x11650, 0x116C0, 0x116D0, 0x116DA, 0x11730, 0x118E0, 0x11950, 0x11BF0, 0x11C50, 0x11D50,
    0x11DA0, 0x11F50, 0x16130, 0x16A60, 0x16AC0, 0x16B50, 0x16D70, 0x1CCF0, 0x1D7CE, 0x1D7D8,
    0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E4F0, 0x1E5F1, 0x1E950, 0x1FBF0,
];
