//! Numbers written in words, as dates and times use them: cardinals ("twenty-one", "one
//! hundred and five", "two thousand and twenty"), years ("nineteen eighty-six", "nineteen oh
//! five", "twenty twenty", "two thousand"), and the minutes of a clock time ("seven
//! twenty-seven", "five oh five", "nine thirty").
//!
//! The grammar (words may be joined by a space or a hyphen; "and" may follow "hundred" or
//! "thousand", as British English writes it):
//!
//! ```text
//! below_hundred := teen | unit | tens [unit]          (1..=99)
//! below_thousand := below_hundred | unit "hundred" ["and"] [below_hundred]
//! cardinal      := below_thousand | below_hundred "thousand" ["and"] [below_thousand]
//! year          := cardinal in 1000..=2999 written with "thousand" or "hundred"
//!                | (teen | "twenty") ("hundred" | two_digits | ("oh" | "o") unit)
//! minutes       := two_digits | ("oh" | "o") unit      (1..=59)
//! ```

use super::cursor::Cursor;
use super::lexicon::{Lex, Rel};

/// A word number 1..=99 at `i`: "seven", "fourteen", "forty", "forty-two", "forty two".
pub(crate) fn below_hundred(c: &Cursor, i: usize) -> Option<(usize, u32)> {
    match c.lex(i) {
        Lex::Cardinal(n) => Some((i + 1, u32::from(n))),
        Lex::Tens(t) => {
            let j = if c.punct(i + 1, b'-') && c.tight(i + 1) && c.tight(i + 2) {
                i + 2
            } else {
                i + 1
            };
            match c.lex(j) {
                Lex::Cardinal(u) if u < 10 && c.joined(j) => Some((j + 1, u32::from(t + u))),
                _ => Some((i + 1, u32::from(t))),
            }
        }
        _ => None,
    }
}

/// A word number 10..=99 written as one tens-and-units group: "ten", "nineteen", "twenty-seven".
fn two_digits(c: &Cursor, i: usize) -> Option<(usize, u32)> {
    below_hundred(c, i).filter(|&(_, n)| n >= 10)
}

/// A word number 1..=9999 at `i`.
pub(crate) fn cardinal(c: &Cursor, i: usize) -> Option<(usize, u32)> {
    let (end, value, _) = cardinal_with_scale(c, i)?;
    Some((end, value))
}

/// A cardinal and whether it used "hundred" or "thousand" (the only forms that read as a
/// year in words besides the paired form).
fn cardinal_with_scale(c: &Cursor, i: usize) -> Option<(usize, u32, bool)> {
    let (mut end, first) = below_hundred(c, i)?;
    if let Some(after) = scale_word(c, end, "thousand") {
        let mut value = first * 1000;
        let mut end = after;
        let k = skip_and(c, end);
        if let Some((after, rest)) = below_thousand(c, k) {
            value += rest;
            end = after;
        }
        return Some((end, value, true));
    }
    if first < 10
        && let Some(after) = scale_word(c, end, "hundred")
    {
        let mut value = first * 100;
        end = after;
        let k = skip_and(c, end);
        if let Some((after, rest)) = below_hundred(c, k) {
            value += rest;
            end = after;
        }
        return Some((end, value, true));
    }
    Some((end, first, false))
}

fn below_thousand(c: &Cursor, i: usize) -> Option<(usize, u32)> {
    let (end, first) = below_hundred(c, i)?;
    if first < 10
        && let Some(after) = scale_word(c, end, "hundred")
    {
        let k = skip_and(c, after);
        return Some(match below_hundred(c, k) {
            Some((e, rest)) => (e, first * 100 + rest),
            None => (after, first * 100),
        });
    }
    Some((end, first))
}

/// `word` ("hundred", "thousand") on the same line at `i`.
fn scale_word(c: &Cursor, i: usize, word: &str) -> Option<usize> {
    (c.joined(i) && c.is(i, word)).then_some(i + 1)
}

/// "and" between the parts of a number, only when a number word follows it.
fn skip_and(c: &Cursor, i: usize) -> usize {
    if c.rel(i, Rel::And)
        && c.joined(i + 1)
        && matches!(c.lex(i + 1), Lex::Cardinal(_) | Lex::Tens(_))
    {
        i + 1
    } else {
        i
    }
}

/// "oh five", "o five": a zero tens digit spoken as a letter.
fn oh_unit(c: &Cursor, i: usize) -> Option<(usize, u32)> {
    if !(c.is(i, "oh") || c.is(i, "o")) || !c.joined(i + 1) {
        return None;
    }
    match c.lex(i + 1) {
        Lex::Cardinal(u @ 1..=9) => Some((i + 2, u32::from(u))),
        _ => None,
    }
}

/// How a year in words was written; the paired form ("nineteen eighty-six") reads as a year
/// on its own, the cardinal form ("two thousand and twenty") only where a year is expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum YearForm {
    Paired,
    Cardinal,
}

/// A year in words at `i`, 1000..=2999.
pub(crate) fn year(c: &Cursor, i: usize) -> Option<(usize, i32, YearForm)> {
    let paired = paired_year(c, i);
    let cardinal = cardinal_with_scale(c, i)
        .filter(|&(_, v, scaled)| scaled && (1000..=2999).contains(&v))
        .map(|(end, v, _)| (end, v as i32, YearForm::Cardinal));
    match (paired, cardinal) {
        (Some(p), Some(q)) => Some(if q.0 > p.0 { q } else { p }),
        (p, q) => p.or(q),
    }
}

/// "nineteen eighty-six", "nineteen oh five", "twenty twenty", "nineteen hundred".
fn paired_year(c: &Cursor, i: usize) -> Option<(usize, i32, YearForm)> {
    let century = match c.lex(i) {
        Lex::Cardinal(n @ 10..=19) => u32::from(n),
        Lex::Tens(20) => 20,
        _ => return None,
    };
    let j = i + 1;
    if !c.joined(j) {
        return None;
    }
    if c.is(j, "hundred") {
        return Some((j + 1, (century * 100) as i32, YearForm::Paired));
    }
    let (end, rest) = two_digits(c, j).or_else(|| oh_unit(c, j))?;
    Some((end, (century * 100 + rest) as i32, YearForm::Paired))
}

/// The minutes of a clock time in words after its hour: "twenty-seven", "thirty", "oh five".
pub(crate) fn minutes(c: &Cursor, i: usize) -> Option<(usize, u32)> {
    if !c.joined(i) {
        return None;
    }
    two_digits(c, i)
        .or_else(|| oh_unit(c, i))
        .filter(|&(_, m)| m < 60)
}

#[cfg(test)]
mod tests {
    use chrono::NaiveDate;

    use super::super::cursor::{Entries, Found};
    use super::super::token::tokenize;
    use super::*;

    /// The numbers in words read no whole expression: entry rules that find nothing.
    const NO_ENTRIES: Entries = Entries {
        moment: nothing,
        date_at: nothing,
        date_or_time: nothing,
        then_time: |_, _, _| None,
    };

    fn nothing(_: &Cursor, _: usize) -> Found {
        None
    }

    fn with<T>(text: &str, f: impl Fn(&Cursor) -> T) -> T {
        let mut toks = Vec::new();
        tokenize(text, &mut toks);
        let now = NaiveDate::from_ymd_opt(2020, 1, 1)
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .expect("valid");
        f(&Cursor::new(text, &toks, now, NO_ENTRIES))
    }

    #[test]
    fn reads_cardinals_and_years_in_words() {
        for (text, want) in [
            ("seven", 7),
            ("forty-two", 42),
            ("ninety nine", 99),
            ("one hundred and five", 105),
            ("two thousand and twenty", 2020),
            ("nineteen", 19),
        ] {
            assert_eq!(
                with(text, |c| cardinal(c, 0).map(|x| x.1)),
                Some(want),
                "{text}"
            );
        }
        for (text, want) in [
            ("nineteen eighty six", 1986),
            ("nineteen eighty-six", 1986),
            ("nineteen oh five", 1905),
            ("twenty twenty", 2020),
            ("twenty twenty-one", 2021),
            ("two thousand and twenty", 2020),
            ("two thousand", 2000),
            ("nineteen hundred", 1900),
            ("one thousand nine hundred and ninety", 1990),
        ] {
            assert_eq!(
                with(text, |c| year(c, 0).map(|x| x.1)),
                Some(want),
                "{text}"
            );
        }
        assert_eq!(with("twenty one", |c| year(c, 0)), None);
        assert_eq!(with("seven", |c| year(c, 0)), None);
    }
}
