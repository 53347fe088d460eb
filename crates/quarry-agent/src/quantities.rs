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
    /// In the order of the table above, spelling by spelling, each in text order.
    dates: Vec<DateReading>,
}

/// One reading of a date expression.
#[derive(Debug, Clone, Copy)]
struct DateReading {
    iso: IsoDate,
    span: Span,
    shape: DateShape,
}

impl Quantities {
    /// One pass over `text`: each pattern is tried only where it may start (a digit, a point,
    /// a month's name at a word start), so a short text costs a few thousand instructions and
    /// nothing is allocated per match (`examples/quantities_scan.rs` measures both).
    pub fn scan(text: &str) -> Quantities {
        let source = Source(text);
        let mut scanner = Scanner::new(source);
        for (at, start) in source.starts() {
            match start {
                Start::Digit => scanner.at_digit(at),
                Start::Point => scanner.number(at),
                Start::MonthName => scanner.at_month_name(at),
            }
        }
        scanner.finish()
    }

    /// The first expression that reads as `value`.
    pub fn find_number(&self, value: f64) -> Option<Span> {
        let tolerance = 1e-9 * value.abs().max(1.0);
        self.numbers
            .iter()
            .find(|(reading, _)| (reading - value).abs() <= tolerance)
            .map(|(_, span)| *span)
    }

    /// Every reading of every number expression, in text order (an expression with several
    /// readings appears once per reading).
    pub fn numbers(&self) -> &[(f64, Span)] {
        &self.numbers
    }

    /// Where each date with a day is written ("15 January 2024", "2024-01-15"; not "January
    /// 2024"), one entry per reading.
    pub fn day_spans(&self) -> impl Iterator<Item = Span> + '_ {
        self.dates
            .iter()
            .filter(|date| date.shape != DateShape::MonthNameYear)
            .map(|date| date.span)
    }

    /// The first expression that reads as the ISO date (`YYYY-MM-DD` or `YYYY-MM`). Date
    /// spellings are tried in the order of the table above, each through the whole text.
    pub fn find_date(&self, iso: &str) -> Option<Span> {
        self.dates
            .iter()
            .find(|date| date.iso.as_str() == iso)
            .map(|date| date.span)
    }
}

// ---------------------------------------------------------------------------------------------
// The pass

/// What a pattern can start with; every other character is passed over.
#[derive(Debug, Clone, Copy)]
enum Start {
    /// A decimal digit of any script: a number, or a date written with digits first.
    Digit,
    /// `.`: a number without its whole part (`.5`).
    Point,
    /// A month's name, at the start of a word.
    MonthName,
}

/// The patterns tried along one pass. Each resumes after its own last match, as a separate
/// regex search would: matches of one kind never overlap, kinds do not see each other.
struct Scanner<'t> {
    source: Source<'t>,
    /// Match starts only move forward, so code points are counted once along the text; in
    /// an ASCII text they are the bytes.
    code_points: Option<CodePointCursor<'t>>,
    number_from: usize,
    date_from: [usize; DateShape::COUNT],
    numbers: Vec<(f64, Span)>,
    dates: Vec<DateReading>,
}

impl<'t> Scanner<'t> {
    fn new(source: Source<'t>) -> Scanner<'t> {
        Scanner {
            source,
            code_points: (!source.0.is_ascii()).then(|| CodePointCursor::new(source.0)),
            number_from: 0,
            date_from: [0; DateShape::COUNT],
            numbers: Vec::new(),
            dates: Vec::new(),
        }
    }

    /// A number, and at a word start the dates written with digits first.
    fn at_digit(&mut self, at: usize) {
        self.number(at);
        if self.source.starts_word(at) {
            for shape in DateShape::DIGIT_FIRST {
                self.date(shape, at);
            }
        }
    }

    fn at_month_name(&mut self, at: usize) {
        for shape in DateShape::NAME_FIRST {
            self.date(shape, at);
        }
    }

    fn number(&mut self, at: usize) {
        if at < self.number_from {
            return;
        }
        let Some(number) = number_at(self.source, at) else {
            return;
        };
        self.number_from = number.end;
        let Some(base) = decimal_value(&self.source.0[at..number.digits_end]) else {
            return;
        };
        let span = self.span(at, number.end);
        let negative = self.source.sign_before(at);
        let readings = number.readings(base);
        let negatives = readings
            .clone()
            .filter(|_| negative)
            .map(|reading| -reading);
        for reading in readings.chain(negatives) {
            self.numbers.push((reading, span));
        }
    }

    /// `shape` at `at`, which starts a word.
    fn date(&mut self, shape: DateShape, at: usize) {
        let from = &mut self.date_from[shape as usize];
        if at < *from {
            return;
        }
        let Some(found) = shape.at(self.source, at) else {
            return;
        };
        *from = found.end;
        let span = self.span(at, found.end);
        for iso in found.readings.into_iter().flatten() {
            self.dates.push(DateReading { iso, span, shape });
        }
    }

    fn span(&mut self, byte_start: usize, byte_end: usize) -> Span {
        let Some(code_points) = &mut self.code_points else {
            return Span {
                start: byte_start,
                end: byte_end,
                byte_start,
                byte_end,
            };
        };
        let start = code_points.code_point_at(byte_start);
        Span {
            start,
            end: start + self.source.0[byte_start..byte_end].chars().count(),
            byte_start,
            byte_end,
        }
    }

    fn finish(mut self) -> Quantities {
        // A stable sort: each spelling's dates stay in text order.
        self.dates.sort_by_key(|date| date.shape);
        Quantities {
            numbers: self.numbers,
            dates: self.dates,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Numbers

/// `SCALE`: a scale word's factor.
fn scale_factor(word: &[u8]) -> Option<f64> {
    Some(match word {
        b"thousand" | b"k" => 1e3,
        b"million" | b"mln" | b"mn" | b"m" => 1e6,
        b"billion" | b"bn" | b"b" => 1e9,
        b"trillion" => 1e12,
        _ => return None,
    })
}

/// One number expression from its start: the digits end at `digits_end`, the whole (scale
/// word and percent sign included) at `end`.
struct NumberMatch {
    digits_end: usize,
    end: usize,
    scale: Option<f64>,
    percent: bool,
}

fn number_at(source: Source<'_>, at: usize) -> Option<NumberMatch> {
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
    Some(NumberMatch {
        digits_end,
        end,
        scale,
        percent,
    })
}

impl NumberMatch {
    /// What the expression may stand for, given its digits' value: the value itself, scaled,
    /// and as a fraction when it is a percentage.
    fn readings(&self, base: f64) -> impl Iterator<Item = f64> + Clone + use<> {
        [
            Some(base),
            self.scale.map(|factor| base * factor),
            self.percent.then_some(base / 100.0),
        ]
        .into_iter()
        .flatten()
    }
}

/// Numbers this long or shorter are rewritten for the float parser on the stack.
const STACK_DIGITS: usize = 64;

/// The value of a number's digits as written ("1,200.5", "١٢٠٠"): digits of any script read as
/// ASCII, the point kept, thousands separators dropped.
fn decimal_value(written: &str) -> Option<f64> {
    if written
        .bytes()
        .all(|byte| byte.is_ascii_digit() || byte == b'.')
    {
        return ascii_decimal_value(written.as_bytes());
    }
    let ascii = written.chars().filter_map(|c| match digit_value(c) {
        Some(digit) => Some(b'0' + digit),
        None => (c == '.').then_some(b'.'),
    });
    let mut buffer = [0; STACK_DIGITS];
    let mut len = 0;
    for byte in ascii.clone() {
        let Some(slot) = buffer.get_mut(len) else {
            return ascii.map(char::from).collect::<String>().parse().ok();
        };
        *slot = byte;
        len += 1;
    }
    ascii_decimal_value(&buffer[..len])
}

/// The value of ASCII digits with at most one point.
fn ascii_decimal_value(ascii: &[u8]) -> Option<f64> {
    if ascii.len() <= 15 && ascii.iter().all(u8::is_ascii_digit) {
        // Exact without the float parser: 15 digits are well inside f64's 53-bit mantissa.
        let value = ascii
            .iter()
            .fold(0, |value, digit| value * 10 + u64::from(digit - b'0'));
        return Some(value as f64);
    }
    std::str::from_utf8(ascii).ok()?.parse().ok()
}

// ---------------------------------------------------------------------------------------------
// Dates

/// `MONTH`: a month's number from its name or abbreviation.
fn month_number(word: &[u8]) -> Option<u32> {
    Some(match word {
        b"january" | b"jan" => 1,
        b"february" | b"feb" => 2,
        b"march" | b"mar" => 3,
        b"april" | b"apr" => 4,
        b"may" => 5,
        b"june" | b"jun" => 6,
        b"july" | b"jul" => 7,
        b"august" | b"aug" => 8,
        b"september" | b"sept" | b"sep" => 9,
        b"october" | b"oct" => 10,
        b"november" | b"nov" => 11,
        b"december" | b"dec" => 12,
        _ => return None,
    })
}

const ORDINAL_SUFFIXES: [&str; 4] = ["st", "nd", "rd", "th"];

/// The date spellings, in the order their readings are listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
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

/// What a date spelling matched: its end and its readings — none for a date that does not
/// exist, like 2024-02-30 (the text is still consumed, as a regex would), two for a day and
/// month the text leaves in either order.
struct DateMatch {
    end: usize,
    readings: [Option<IsoDate>; 2],
}

impl DateMatch {
    fn one(end: usize, reading: Option<IsoDate>) -> DateMatch {
        DateMatch {
            end,
            readings: [reading, None],
        }
    }
}

impl DateShape {
    const COUNT: usize = 5;
    /// The spellings that start with a digit.
    const DIGIT_FIRST: [DateShape; 3] = [
        DateShape::YearMonthDay,
        DateShape::Ambiguous,
        DateShape::DayMonthName,
    ];
    /// The spellings that start with a month's name.
    const NAME_FIRST: [DateShape; 2] = [DateShape::MonthNameDay, DateShape::MonthNameYear];

    /// The match of this spelling starting at `at`, where a word starts (the `\b` every
    /// spelling begins with; the caller checks it).
    fn at(self, source: Source<'_>, at: usize) -> Option<DateMatch> {
        match self {
            DateShape::YearMonthDay => {
                let year = source.digits(at).exactly(4)?;
                let month = source.digits(source.date_separator(year.end)?).up_to(2)?;
                let day = source.digits(source.date_separator(month.end)?).up_to(2)?;
                if !source.ends_word(day.end) {
                    return None;
                }
                let reading =
                    IsoDate::day(year.year(source), month.value(source), day.value(source));
                Some(DateMatch::one(day.end, reading))
            }
            DateShape::Ambiguous => {
                let first = source.digits(at).up_to(2)?;
                let second = source.digits(source.date_separator(first.end)?).up_to(2)?;
                let year = source.digits(source.date_separator(second.end)?);
                if !matches!(year.count, 2 | 4) || !source.ends_word(year.end) {
                    return None;
                }
                let (a, b) = (first.value(source), second.value(source));
                let day_first = IsoDate::day(year.year(source), b, a);
                let month_first =
                    IsoDate::day(year.year(source), a, b).filter(|&iso| Some(iso) != day_first);
                Some(DateMatch {
                    end: year.end,
                    readings: [day_first, month_first],
                })
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
                let reading = IsoDate::day(year.year(source), month, day.value(source));
                Some(DateMatch::one(year.end, reading))
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
                let reading = IsoDate::day(year.year(source), month, day.value(source));
                Some(DateMatch::one(year.end, reading))
            }
            DateShape::MonthNameYear => {
                let (month, year) = source.month_then(at, Source::year_after_month)?;
                let reading = IsoDate::month(year.value(source), month);
                Some(DateMatch::one(year.end, Some(reading)))
            }
        }
    }
}

/// An ISO date as a date expression reads: `YYYY-MM-DD`, or `YYYY-MM` for a month and year.
/// Written in place: a date costs no allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct IsoDate {
    text: [u8; 10],
    len: usize,
}

impl IsoDate {
    /// `YYYY-MM-DD`, when the date exists.
    fn day(year: i32, month: u32, day: u32) -> Option<IsoDate> {
        NaiveDate::from_ymd_opt(year, month, day)?;
        // Years are read from at most four digits: never negative.
        let mut iso = IsoDate::month(year.unsigned_abs(), month);
        write_digits(&mut iso.text[8..10], day);
        iso.len = 10;
        Some(iso)
    }

    /// `YYYY-MM`.
    fn month(year: u32, month: u32) -> IsoDate {
        let mut text = [b'-'; 10];
        write_digits(&mut text[..4], year);
        write_digits(&mut text[5..7], month);
        IsoDate { text, len: 7 }
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.text[..self.len]).expect("ASCII digits and dashes")
    }
}

/// The last `out.len()` decimal digits of `value`, zero-padded.
fn write_digits(out: &mut [u8], mut value: u32) {
    for byte in out.iter_mut().rev() {
        *byte = b'0' + (value % 10) as u8;
        value /= 10;
    }
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
    /// Where a pattern may start, in text order. Bytes are classed without decoding: only a
    /// byte starting a non-ASCII character is decoded, to see whether it is a digit; a run of
    /// ASCII letters is looked at once, from its first letter.
    fn starts(self) -> impl Iterator<Item = (usize, Start)> {
        let bytes = self.0.as_bytes();
        let mut next = 0;
        std::iter::from_fn(move || {
            while let Some(&byte) = bytes.get(next) {
                let at = next;
                next += 1;
                match byte {
                    b'0'..=b'9' => return Some((at, Start::Digit)),
                    b'.' => return Some((at, Start::Point)),
                    _ if byte.is_ascii_alphabetic() => {
                        // No `\b` before the run's other letters: none starts a month's name.
                        next = self.letters_end(at);
                        if self.starts_month_name(at) {
                            return Some((at, Start::MonthName));
                        }
                    }
                    0xC0.. if self.digit_width(at).is_some() => return Some((at, Start::Digit)),
                    _ => {}
                }
            }
            None
        })
    }

    /// The end of the run of ASCII letters at `at`.
    fn letters_end(self, at: usize) -> usize {
        let letters = self.0.as_bytes()[at..]
            .iter()
            .take_while(|byte| byte.is_ascii_alphabetic())
            .count();
        at + letters
    }

    /// `\bMONTH` at `at`.
    fn starts_month_name(self, at: usize) -> bool {
        self.may_begin_month(at) && self.starts_word(at) && self.month_name(at).is_some()
    }

    fn char_at(self, at: usize) -> Option<char> {
        self.0.get(at..)?.chars().next()
    }

    fn char_before(self, at: usize) -> Option<char> {
        self.0[..at].chars().next_back()
    }

    /// `\b` before the word character at `at`: no word character precedes it.
    fn starts_word(self, at: usize) -> bool {
        match at.checked_sub(1).map(|before| self.0.as_bytes()[before]) {
            None => true,
            // The common case, without decoding.
            Some(byte) if byte.is_ascii() => !is_word_char(char::from(byte)),
            Some(_) => !self.char_before(at).is_some_and(is_word_char),
        }
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
        while let Some(width) = self.digit_width(end) {
            end += width;
            count += 1;
        }
        Digits {
            start: at,
            end,
            count,
        }
    }

    /// `\d`: the width in bytes of the digit at `at`.
    fn digit_width(self, at: usize) -> Option<usize> {
        match *self.0.as_bytes().get(at)? {
            b'0'..=b'9' => Some(1),
            0..=0x7F => None,
            _ => self.other_script_digit_width(at),
        }
    }

    /// The width of a digit of another script at `at`: apart, so that the ASCII test above is
    /// small enough to be inlined in every loop over digits.
    #[inline(never)]
    fn other_script_digit_width(self, at: usize) -> Option<usize> {
        self.char_at(at)
            .filter(|&c| digit_value(c).is_some())
            .map(char::len_utf8)
    }

    /// `\s?`: the end of one whitespace character at `at`.
    fn one_space(self, at: usize) -> Option<usize> {
        self.char_at(at)
            .filter(|c| c.is_whitespace())
            .map(|c| at + c.len_utf8())
    }

    /// `\s+`: the end of the whitespace at `at`, if there is any.
    fn spaces(self, at: usize) -> Option<usize> {
        let mut end = self.one_space(at)?;
        while let Some(next) = self.one_space(end) {
            end = next;
        }
        Some(end)
    }

    /// A `-`, `−` or `(` before `at`, currency signs and spaces between: "-5", "−5" and "(5)"
    /// (accounting) may stand for a negative number.
    fn sign_before(self, at: usize) -> bool {
        self.0[..at]
            .trim_end_matches(['$', '€', '£', '¥', '₹', ' '])
            .ends_with(['-', '−', '('])
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
            let (word, end) = self.ascii_word(from)?;
            let factor = scale_factor(word.as_bytes())?;
            self.ends_word(end).then_some((end, factor))
        };
        self.one_space(at).and_then(word_at).or_else(|| word_at(at))
    }

    /// `MONTH` at `at` followed by what `then` matches: the month's number and `then`'s match.
    fn month_then<T>(
        self,
        at: usize,
        then: impl FnOnce(Source<'t>, usize) -> Option<T>,
    ) -> Option<(u32, T)> {
        let (month, end) = self.month_name(at)?;
        then(self, end).map(|found| (month, found))
    }

    /// Whether a month's name may start at `at`, from its first two letters: a quick test
    /// before the word is read.
    fn may_begin_month(self, at: usize) -> bool {
        let Some(&[first, second]) = self.0.as_bytes().get(at..at + 2) else {
            return false;
        };
        matches!(
            [first.to_ascii_lowercase(), second.to_ascii_lowercase()],
            [b'j', b'a' | b'u']
                | [b'f', b'e']
                | [b'm', b'a']
                | [b'a', b'p' | b'u']
                | [b's', b'e']
                | [b'o', b'c']
                | [b'n', b'o']
                | [b'd', b'e']
        )
    }

    /// `MONTH` at `at`: the month's number and the end of its name.
    fn month_name(self, at: usize) -> Option<(u32, usize)> {
        let (word, end) = self.ascii_word(at)?;
        Some((month_number(word.as_bytes())?, end))
    }

    /// The run of ASCII letters at `at`, lowercased, and its end, when it is no longer than a
    /// month's name or a scale word. Only a whole run can be one: every pattern wants a
    /// non-letter after them (`.`, `,`, a space, `\b`), so one lookup of the run stands for
    /// trying each spelling in turn as a regex alternation does.
    fn ascii_word(self, at: usize) -> Option<(LowercaseWord, usize)> {
        let mut word = LowercaseWord {
            letters: [0; LONGEST_WORD],
            len: 0,
        };
        for &byte in self.0.as_bytes()[at..].iter() {
            if !byte.is_ascii_alphabetic() {
                break;
            }
            *word.letters.get_mut(word.len)? = byte.to_ascii_lowercase();
            word.len += 1;
        }
        let end = at + word.len;
        (word.len > 0).then_some((word, end))
    }

    /// `\.?,?\s+(\d{4})\b` after a month's name: the year.
    fn year_after_month(self, at: usize) -> Option<Digits> {
        let after_point = self.eat(at, '.').unwrap_or(at);
        let after_comma = self.eat(after_point, ',').unwrap_or(after_point);
        let year = self.digits(self.spaces(after_comma)?).exactly(4)?;
        self.ends_word(year.end).then_some(year)
    }
}

/// The longest month's name or scale word ("september").
const LONGEST_WORD: usize = 9;

/// A run of ASCII letters, lowercased.
struct LowercaseWord {
    letters: [u8; LONGEST_WORD],
    len: usize,
}

impl LowercaseWord {
    fn as_bytes(&self) -> &[u8] {
        &self.letters[..self.len]
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
