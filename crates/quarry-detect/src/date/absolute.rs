//! Calendar dates written out: numeric (`2024-01-15`, `01/22/2016`, `15.01.2024`) and with month
//! names (`January 15, 2024`, `15 Jan 2024`, `the 4th of July`, `March 2014`).
//!
//! Rules return a [`DatePart`] with whatever parts the text gave; `resolve` fills in the rest.

use super::cursor::Cursor;
use super::lexicon::{Lex, Rel, Unit};
use super::model::DatePart;
use super::spelled;

/// A numeric date starting at token `i`. Slash and dash dates read month first unless the first
/// number cannot be a month; dotted dates read day first unless the second cannot be a month.
pub(crate) fn numeric_date(c: &Cursor, i: usize) -> Option<(usize, DatePart)> {
    let a = c.num(i).filter(|n| !n.ordinal)?;
    // Inside a longer dotted or slashed number ("1.2.3.4", "0.8/15"): not a date.
    if i > 0
        && c.tight(i)
        && (c.punct(i - 1, b'.') || c.punct(i - 1, b'/'))
        && c.num(i.wrapping_sub(2)).is_some()
    {
        return None;
    }
    if a.digits == 8 {
        return compact_date(c, i);
    }
    let sep = separator(c, i + 1)?;
    let b = c.num(i + 2).filter(|n| !n.ordinal && c.tight(i + 2))?;
    if b.digits == 4 {
        return month_year(c, i, sep);
    }
    if b.digits > 2 {
        return None;
    }
    let third = c.tight(i + 3) && c.punct(i + 3, sep) && c.tight(i + 4);
    if third {
        let y = c.num(i + 4).filter(|n| !n.ordinal)?;
        if trailing_number(c, i + 5) {
            return None;
        }
        let end = i + 5;
        if a.digits == 4 {
            let part = full(a.value as i32, b.value, y.value)?;
            return (y.digits <= 2).then_some((end, part));
        }
        if a.digits > 2 || !(y.digits == 4 || y.digits == 2) {
            return None;
        }
        if y.digits == 2 && sep == b'.' && (a.digits != 2 || b.digits != 2) {
            return None; // "1.2.10" is a version number
        }
        let year = if y.digits == 2 {
            two_digit_year(y.value)
        } else {
            y.value as i32
        };
        let day_first = match sep {
            b'.' => b.value <= 12,
            _ => a.value > 12,
        };
        let (month, day) = if day_first {
            (b.value, a.value)
        } else {
            (a.value, b.value)
        };
        return full(year, month, day).map(|part| (end, part));
    }
    if trailing_number(c, i + 3) || c.tight(i + 3) && c.punct(i + 3, sep) {
        return None;
    }
    // ISO 8601 year and month: "2015-12", "2015/12".
    if a.digits == 4 && sep != b'.' && b.digits == 2 {
        if !(1000..=2999).contains(&a.value) || !(1..=12).contains(&b.value) || c.glued(i + 3) {
            return None;
        }
        return Some((
            i + 3,
            DatePart {
                year: Some(a.value as i32),
                month: Some(b.value),
                ..DatePart::default()
            },
        ));
    }
    // Two numbers: month/day with a slash only, never a fraction or a ratio.
    if sep != b'/' || a.digits > 2 {
        return None;
    }
    if a.value < b.value && b.value <= 8 {
        return None; // 1/2, 3/4: fractions
    }
    if matches!(c.lex(i + 3), Lex::Unit(_)) || c.is(i + 3, "h") || c.punct(i + 3, b'%') {
        return None;
    }
    let (month, day) = if a.value > 12 {
        (b.value, a.value)
    } else {
        (a.value, b.value)
    };
    valid_month_day(month, day).then_some((
        i + 3,
        DatePart {
            month: Some(month),
            day: Some(day),
            ..DatePart::default()
        },
    ))
}

/// A month number and a four-digit year: "12/2014", "03-2019" (RT's `MonthNumRegex/YearRegex`).
fn month_year(c: &Cursor, i: usize, sep: u8) -> Option<(usize, DatePart)> {
    let (m, y) = (c.num(i)?, c.num(i + 2)?);
    if sep == b'.' || m.digits > 2 || !(1..=12).contains(&m.value) {
        return None;
    }
    if !(1000..=2999).contains(&y.value) || c.glued(i + 3) || trailing_number(c, i + 3) {
        return None;
    }
    if c.tight(i + 3) && c.punct(i + 3, sep) {
        return None;
    }
    Some((
        i + 3,
        DatePart {
            year: Some(y.value as i32),
            month: Some(m.value),
            ..DatePart::default()
        },
    ))
}

/// ISO 8601 basic format, `YYYYMMDD` ("20161016"): eight digits standing alone that make a
/// valid date in 1900–2099; beside a `+`, a digit group or a dash they are a number or a phone.
fn compact_date(c: &Cursor, i: usize) -> Option<(usize, DatePart)> {
    let v = c.num(i)?.value;
    let (year, month, day) = ((v / 10_000) as i32, v / 100 % 100, v % 100);
    if !(1900..=2099).contains(&year) {
        return None;
    }
    let before_ok = i == 0
        || !c.tight(i)
        || matches!(
            c.toks.get(i - 1).map(|t| t.kind),
            Some(super::token::Kind::Punct(b'(' | b'"' | b'\'' | b'['))
        );
    let after_ok = !c.tight(i + 1)
        || [b',', b'.', b')', b';', b'"', b'\'', b']', b'!', b'?']
            .iter()
            .any(|&p| c.punct(i + 1, p))
            && !(c.tight(i + 2) && c.num(i + 2).is_some());
    if !before_ok || !after_ok {
        return None;
    }
    full(year, month, day).map(|part| (i + 1, part))
}

/// A date separator glued to both neighbours.
fn separator(c: &Cursor, i: usize) -> Option<u8> {
    [b'/', b'-', b'.']
        .into_iter()
        .find(|&s| c.punct(i, s) && c.tight(i))
}

/// `.5`, `/7`, `-3` or a digit glued after a candidate: part of something longer.
fn trailing_number(c: &Cursor, i: usize) -> bool {
    c.tight(i) && (c.punct(i, b'.') || c.punct(i, b'/')) && c.tight(i + 1) && c.num(i + 1).is_some()
}

/// The century window for two-digit years, as Recognizers-Text defines it
/// (`MinTwoDigitYearPastNum` = `MaxTwoDigitYearFutureNum` = 40): `00`–`39` are 2000–2039 and
/// `40`–`99` are 1940–1999, whatever the reference time ("03/18/40" is 1940).
pub(crate) const TWO_DIGIT_YEAR_PIVOT: u32 = 40;

pub(crate) fn two_digit_year(yy: u32) -> i32 {
    if yy < TWO_DIGIT_YEAR_PIVOT {
        2000 + yy as i32
    } else {
        1900 + yy as i32
    }
}

fn full(year: i32, month: u32, day: u32) -> Option<DatePart> {
    chrono::NaiveDate::from_ymd_opt(year, month, day)?;
    Some(DatePart {
        year: Some(year),
        month: Some(month),
        day: Some(day),
        weekday: None,
    })
}

fn valid_month_day(month: u32, day: u32) -> bool {
    (1..=12).contains(&month) && day >= 1 && day <= days_in_month_max(month)
}

fn days_in_month_max(month: u32) -> u32 {
    match month {
        2 => 29,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// A month word at `i`: `(month, foreign)`.
fn month_word(c: &Cursor, i: usize) -> Option<(u32, bool)> {
    match c.lex(i) {
        Lex::Month(m) => Some((u32::from(m), false)),
        Lex::ForeignMonth(m) => Some((u32::from(m), true)),
        _ => None,
    }
}

/// A month word with an optional abbreviation dot, returning the index after it.
fn month_at(c: &Cursor, i: usize) -> Option<(usize, u32, bool)> {
    let (month, foreign) = month_word(c, i)?;
    let mut end = i + 1;
    // "Sept.", "Jan.": the dot of an abbreviation, not a sentence's after "July" or "May".
    let full_name = ["may", "june", "july"]
        .iter()
        .any(|name| c.word(i).eq_ignore_ascii_case(name));
    if c.punct(end, b'.') && c.tight(end) && c.word(i).len() <= 4 && !full_name {
        end += 1;
    }
    Some((end, month, foreign))
}

/// A day of the month: `15`, `15th`, `fifteenth`, `twenty-first`, `second`.
pub(crate) fn day_number(c: &Cursor, i: usize) -> Option<(usize, u32)> {
    if let Some(n) = c.num(i) {
        return (n.digits <= 2 && (1..=31).contains(&n.value)).then_some((i + 1, n.value));
    }
    match c.lex(i) {
        Lex::Ordinal(d) => Some((i + 1, u32::from(d))),
        Lex::Unit(Unit::Second) if c.word(i).eq_ignore_ascii_case("second") => Some((i + 1, 2)),
        Lex::Tens(t @ (20 | 30)) => {
            let j = if c.punct(i + 1, b'-') { i + 2 } else { i + 1 };
            match c.lex(j) {
                Lex::Ordinal(d) if d < 10 && u32::from(t) + u32::from(d) <= 31 => {
                    Some((j + 1, u32::from(t) + u32::from(d)))
                }
                Lex::Unit(Unit::Second) if c.is(j, "second") => Some((j + 1, u32::from(t) + 2)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// A four-digit year 1000..=2999, or `'21`.
fn year_at(c: &Cursor, i: usize) -> Option<(usize, i32)> {
    if let Some(y) = c
        .plain(i, 4)
        .filter(|_| c.num(i).is_some_and(|n| n.digits == 4))
    {
        if (1000..=2999).contains(&y)
            && !(c.tight(i + 1) && (c.punct(i + 1, b':') || c.num(i + 1).is_some()))
        {
            return Some((i + 1, y as i32));
        }
        return None;
    }
    if c.punct(i, b'\'') && c.tight(i + 1) {
        let yy = c.num(i + 1).filter(|n| n.digits == 2 && !n.ordinal)?;
        return Some((i + 2, two_digit_year(yy.value)));
    }
    spelled::year(c, i).map(|(end, year, _)| (end, year))
}

/// A two-digit year where the words before it say it is one ("April of 87", "Sept. '01"):
/// not a day, not the hour of a time, not a count.
fn short_year_at(c: &Cursor, i: usize) -> Option<(usize, i32)> {
    let yy = c.num(i).filter(|n| n.digits == 2 && !n.ordinal)?;
    if c.glued(i + 1)
        || matches!(c.lex(i + 1), Lex::Unit(_) | Lex::Meridiem(_))
        || c.punct(i + 1, b':')
    {
        return None;
    }
    Some((i + 1, two_digit_year(yy.value)))
}

/// An optional year after a day: `, 2024`, ` 2024`, ` in 2020`, `-2012`, `.2014`, `/1974`.
fn trailing_year(c: &Cursor, i: usize, sep: Option<u8>) -> Option<(usize, i32)> {
    if !c.joined(i) {
        return None;
    }
    if let Some(sep) = sep {
        if c.punct(i, sep) && c.tight(i) && c.tight(i + 1) {
            return year_at(c, i + 1);
        }
        if sep != b' ' {
            return None;
        }
    }
    if c.punct(i, b',') && c.joined(i + 1) {
        return year_at(c, i + 1);
    }
    if c.rel(i, Rel::In) || c.rel(i, Rel::Of) {
        return year_at(c, i + 1);
    }
    year_at(c, i)
}

/// A date written with a month name, starting at `i` (which may be a weekday or "the").
pub(crate) fn named_date(c: &Cursor, i: usize) -> Option<(usize, DatePart)> {
    let mut j = i;
    let mut weekday = None;
    if let Lex::Weekday(w) = c.lex(j) {
        weekday = Some(w);
        j += 1;
        if (c.punct(j, b',') || c.punct(j, b'.')) && c.tight(j) {
            j += 1;
        }
        if !c.joined(j) {
            return None;
        }
    }
    let numeric = if weekday.is_some() {
        numeric_date(c, j)
    } else {
        None
    };
    let (end, mut part) = numeric
        .or_else(|| month_first(c, j))
        .or_else(|| day_first(c, j))?;
    if weekday.is_some() && part.day.is_none() {
        return None;
    }
    part.weekday = weekday;
    Some((end, part))
}

/// `January 15, 2024`, `Jan 15th`, `Oct/2`, `March 2014`, `March`.
fn month_first(c: &Cursor, i: usize) -> Option<(usize, DatePart)> {
    let (j, month, foreign) = month_at(c, i)?;
    let sep = if c.tight(j) && (c.punct(j, b'/') || c.punct(j, b'-')) {
        Some(c.toks[j].kind)
    } else {
        None
    };
    let k = if sep.is_some() { j + 1 } else { j };
    let day_sep = if sep.is_some() {
        c.word(j).as_bytes()[0]
    } else {
        b' '
    };
    // "May the 4th"
    let k = if c.rel(k, Rel::The)
        && c.joined(k)
        && (c.num(k + 1).is_some_and(|n| n.ordinal)
            || c.num(k + 1).is_none() && day_number(c, k + 1).is_some())
    {
        k + 1
    } else {
        k
    };
    if c.joined(k)
        && let Some((after_day, day)) = day_number(c, k)
        && (c.num(k).is_some() || c.word(k).len() > 2)
        && valid_month_day(month, day)
        && !(c.tight(after_day)
            && (c.punct(after_day, b':')
                || c.punct(after_day, b'.')
                    && c.tight(after_day + 1)
                    && c.num(after_day + 1).is_some()))
        && !matches!(c.lex(after_day), Lex::Unit(_))
    {
        let year = trailing_year(c, after_day, Some(day_sep));
        if foreign && year.is_none() {
            return None;
        }
        let (end, year) = year.map_or((after_day, None), |(end, y)| (end, Some(y)));
        return Some((
            end,
            DatePart {
                year,
                month: Some(month),
                day: Some(day),
                weekday: None,
            },
        ));
    }
    if foreign {
        return None;
    }
    if c.joined(j) {
        // "March 2014", "March, 2014", "Dec-2018", "Dec/2018", "March of 2014", "April of 87".
        let glued_sep = (c.punct(j, b'-') || c.punct(j, b'/')) && c.tight(j) && c.tight(j + 1);
        let year_start = if c.punct(j, b',') || glued_sep {
            j + 1
        } else {
            j
        };
        let of = c.rel(year_start, Rel::Of);
        let year_start = if of || c.rel(year_start, Rel::In) {
            year_start + 1
        } else {
            year_start
        };
        let year = year_at(c, year_start).or_else(|| {
            (of || glued_sep)
                .then(|| short_year_at(c, year_start))
                .flatten()
        });
        if let Some((end, year)) = year.filter(|_| c.joined(year_start)) {
            return Some((
                end,
                DatePart {
                    year: Some(year),
                    month: Some(month),
                    ..DatePart::default()
                },
            ));
        }
    }
    standalone_month_ok(c, i).then_some((
        j,
        DatePart {
            month: Some(month),
            ..DatePart::default()
        },
    ))
}

/// A month name with neither day nor year is a month only where a preposition or capital
/// letter says so; "may" needs a preposition.
fn standalone_month_ok(c: &Cursor, i: usize) -> bool {
    let word = c.word(i);
    let before = i.checked_sub(1).filter(|_| c.joined(i));
    let preposition = before.is_some_and(|b| {
        matches!(
            c.lex(b),
            Lex::Rel(
                Rel::In
                    | Rel::Of
                    | Rel::Since
                    | Rel::Till
                    | Rel::From
                    | Rel::Before
                    | Rel::After
                    | Rel::Next
                    | Rel::Last
                    | Rel::Through
                    | Rel::To
                    | Rel::Middle
                    | Rel::Coming
                    | Rel::Past
            )
        ) || ["during", "early", "late", "by", "until", "every", "each"]
            .iter()
            .any(|w| c.is(b, w))
    });
    if word.eq_ignore_ascii_case("may") {
        return preposition;
    }
    if word.len() <= 4 && !word.eq_ignore_ascii_case("june") && !word.eq_ignore_ascii_case("july") {
        return preposition || (c.capital(i) && c.punct(i + 1, b'.'));
    }
    preposition || c.capital(i)
}

/// `15 Jan 2024`, `04th Jan 2019`, `the 1st of March`, `fourth of july, 1995`, `31/Oct/1974`.
fn day_first(c: &Cursor, i: usize) -> Option<(usize, DatePart)> {
    let mut j = i;
    let the = c.rel(j, Rel::The);
    if the {
        j += 1;
    }
    let (mut k, day) = day_number(c, j)?;
    let numeric = c.num(j).is_some();
    let mut sep = b' ';
    if c.tight(k) && (c.punct(k, b'/') || c.punct(k, b'-') || c.punct(k, b'.')) {
        sep = c.word(k).as_bytes()[0];
        k += 1;
        if sep == b'.' && !c.tight(k) {
            sep = b' '; // "21. Dezember 2013"
        } else if !c.tight(k) {
            return None;
        }
    } else if c.rel(k, Rel::Of) && c.joined(k) {
        k += 1;
        if c.rel(k, Rel::The) {
            k += 1;
        }
    } else if !numeric && !the {
        return None;
    }
    if !c.joined(k) {
        return None;
    }
    let (after_month, month, foreign) = month_at(c, k)?;
    if !valid_month_day(month, day) {
        return None;
    }
    let year = trailing_year(c, after_month, Some(sep));
    if foreign && year.is_none() {
        return None;
    }
    let (end, year) = year.map_or((after_month, None), |(end, y)| (end, Some(y)));
    Some((
        end,
        DatePart {
            year,
            month: Some(month),
            day: Some(day),
            weekday: None,
        },
    ))
}

/// Year first, then a month name, then optionally the day, with one separator used
/// throughout: `2017 april`, `2020/Sep/23`, `2020-Sep-23`, `2020 September 23rd`, `2020.Sep.23`.
pub(crate) fn year_month(c: &Cursor, i: usize) -> Option<(usize, DatePart)> {
    if c.num(i).is_none_or(|n| n.digits != 4) {
        return None;
    }
    let (j, year) = year_at(c, i)?;
    if !c.joined(j) {
        return None;
    }
    let sep = [b'/', b'-', b'.']
        .into_iter()
        .find(|&s| c.punct(j, s) && c.tight(j) && c.tight(j + 1));
    let k = if sep.is_some() { j + 1 } else { j };
    let (mut end, month, foreign) = month_at(c, k)?;
    if foreign {
        return None;
    }
    if sep.is_some() {
        end = k + 1; // "2020.Sep.23": the dot after the month is the separator
    }
    let day_at = match sep {
        Some(s) if c.punct(end, s) && c.tight(end) && c.tight(end + 1) => Some(end + 1),
        Some(_) => None,
        None if c.joined(end) => Some(end),
        None => None,
    };
    if let Some(d) = day_at
        && let Some((after, day)) = day_number(c, d)
    {
        if !valid_month_day(month, day) || c.tight(after) && !c.is_punct(after) {
            return None;
        }
        return full(year, month, day).map(|part| (after, part));
    }
    if sep.is_some() && c.tight(end) && c.num(end + 1).is_some() {
        return None;
    }
    Some((
        end,
        DatePart {
            year: Some(year),
            month: Some(month),
            ..DatePart::default()
        },
    ))
}

/// A bare four-digit year where a preposition makes it one: "in 2014", "since 1998".
pub(crate) fn lone_year(c: &Cursor, i: usize) -> Option<(usize, i32)> {
    let (end, year) = year_at(c, i)?;
    if c.punct(i, b'\'') || !(1900..=2100).contains(&year) {
        return None;
    }
    // Money, measures and codes: "$ 2000", "2000 people", "ABC 2000".
    if c.tight(end) && !c.is_punct(end) || matches!(c.lex(end), Lex::Unit(_)) {
        return None;
    }
    Some((end, year))
}

/// `q` + 1..4 glued: the quarter number of "Q1".
fn quarter_word(c: &Cursor, i: usize) -> Option<u32> {
    if !c.is(i, "q") {
        return None;
    }
    c.plain(i + 1, 1)
        .filter(|q| (1..=4).contains(q) && c.tight(i + 1) && !c.glued(i + 2))
}

/// "Q1 2019", "q1-2019", "2017 q1", "third quarter", "3rd qtr of 2014".
pub(crate) fn quarter(
    c: &Cursor,
    i: usize,
    today: chrono::NaiveDate,
) -> Option<(usize, super::model::Moment)> {
    use chrono::Datelike;
    if let Some(q) = quarter_word(c, i) {
        let j = if (c.punct(i + 2, b'-') || c.punct(i + 2, b',')) && c.joined(i + 3) {
            i + 3
        } else {
            i + 2
        };
        let (end, year) = year_at(c, j).filter(|_| c.joined(j))?;
        return Some((end, super::resolve::quarter_span(year, q)?));
    }
    if let Some((j, year)) = year_at(c, i) {
        let k = if c.punct(j, b'-') && c.tight(j) {
            j + 1
        } else {
            j
        };
        let q = quarter_word(c, k).filter(|_| c.joined(k))?;
        return Some((k + 2, super::resolve::quarter_span(year, q)?));
    }
    let q = match (c.lex(i), c.num(i)) {
        (Lex::Ordinal(q @ 1..=4), _) => u32::from(q),
        (Lex::Unit(Unit::Second), _) if c.is(i, "second") => 2,
        (_, Some(n)) if n.ordinal && (1..=4).contains(&n.value) => n.value,
        _ => return None,
    };
    if c.unit(i + 1) != Some(Unit::Quarter) || !c.joined(i + 1) {
        return None;
    }
    let mut end = i + 2;
    let mut year = today.year();
    if c.rel(end, Rel::Of)
        && let Some((after, y)) = year_at(c, end + 1)
    {
        year = y;
        end = after;
    }
    Some((end, super::resolve::quarter_span(year, q)?))
}
