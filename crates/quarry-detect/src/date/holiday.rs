//! Named holidays with fixed or computable dates: Christmas, Easter, Thanksgiving, … with an
//! optional year ("easter 2018") or a direction ("last thanksgiving").

use chrono::{Datelike, NaiveDate};

use super::cursor::Cursor;
use super::lexicon::{Lex, Rel};
use super::resolve::nth_weekday;

type Rule = fn(i32) -> Option<NaiveDate>;

/// A holiday name at `i` (one to three words, optional possessive and "day"), with its rule.
fn name_at(c: &Cursor, i: usize) -> Option<(usize, Rule)> {
    let w = |k: usize| c.word(i + k).to_ascii_lowercase();
    let first = w(0);
    let (mut end, rule): (usize, Rule) = match first.as_str() {
        "christmas" | "xmas" => {
            if c.is(i + 1, "eve") {
                (i + 2, |y| NaiveDate::from_ymd_opt(y, 12, 24))
            } else {
                (i + 1, |y| NaiveDate::from_ymd_opt(y, 12, 25))
            }
        }
        "easter" => (i + 1, easter),
        "halloween" => (i + 1, |y| NaiveDate::from_ymd_opt(y, 10, 31)),
        "thanksgiving" => (i + 1, |y| nth_weekday(y, 11, 3, 4)),
        "valentine" | "valentines" => (i + 1, |y| NaiveDate::from_ymd_opt(y, 2, 14)),
        "new" if c.is(i + 1, "year") || c.is(i + 1, "years") => {
            let j = skip_possessive(c, i + 2);
            if c.is(j, "eve") {
                (j + 1, |y| NaiveDate::from_ymd_opt(y, 12, 31))
            } else {
                (j, |y| NaiveDate::from_ymd_opt(y, 1, 1))
            }
        }
        "black" if c.is(i + 1, "friday") => (i + 2, |y| nth_weekday(y, 11, 3, 4)?.succ_opt()),
        "boxing" if c.is(i + 1, "day") => (i + 1, |y| NaiveDate::from_ymd_opt(y, 12, 26)),
        "labor" | "labour" if c.is(i + 1, "day") => (i + 1, |y| nth_weekday(y, 9, 0, 1)),
        "memorial" if c.is(i + 1, "day") => (i + 1, |y| nth_weekday(y, 5, 0, 0)),
        "independence" if c.is(i + 1, "day") => (i + 1, |y| NaiveDate::from_ymd_opt(y, 7, 4)),
        "mlk" => (i + 1, |y| nth_weekday(y, 1, 0, 3)),
        "martin" if c.is(i + 1, "luther") && (c.is(i + 2, "king") || c.is(i + 2, "kings")) => {
            (i + 3, |y| nth_weekday(y, 1, 0, 3))
        }
        "mother" | "mothers" => (i + 1, |y| nth_weekday(y, 5, 6, 2)),
        "father" | "fathers" => (i + 1, |y| nth_weekday(y, 6, 6, 3)),
        _ => return None,
    };
    end = skip_possessive(c, end);
    // "valentine's day", "thanksgiving day", "mother's day": the rule words above that are
    // not complete alone need "day".
    let needs_day = matches!(
        first.as_str(),
        "valentine" | "valentines" | "mother" | "mothers" | "father" | "fathers" | "martin" | "mlk"
    );
    if c.is(end, "day") {
        end += 1;
    } else if needs_day && !matches!(first.as_str(), "mlk" | "valentine" | "valentines") {
        return None;
    }
    Some((end, rule))
}

fn skip_possessive(c: &Cursor, i: usize) -> usize {
    if (c.punct(i, b'\'') || c.punct(i, 0)) && c.tight(i) && c.is(i + 1, "s") {
        i + 2
    } else {
        i
    }
}

/// A holiday at `i`: "christmas", "easter 2018", "thanksgiving day 2012", "last easter",
/// "next MLK day"; the date is the next one (or the one in the given year).
pub(crate) fn holiday(c: &Cursor, i: usize) -> Option<(usize, NaiveDate)> {
    let today = c.today();
    let (dir, start) = match c.lex(i) {
        Lex::Rel(Rel::Last | Rel::Previous | Rel::Past) => (-1, i + 1),
        Lex::Rel(Rel::Next | Rel::Following | Rel::Coming) => (1, i + 1),
        _ => (0, i),
    };
    if c.lex(start) != Lex::Named {
        return None;
    }
    let (end, rule) = name_at(c, start)?;
    let year_at = if c.rel(end, Rel::In) || c.punct(end, b',') {
        end + 1
    } else {
        end
    };
    if let Some(year) = c
        .num(year_at)
        .filter(|n| n.digits == 4 && !n.ordinal && c.joined(year_at))
        && dir == 0
    {
        return Some((year_at + 1, rule(year.value as i32)?));
    }
    let this_year = rule(today.year())?;
    let date = match dir {
        -1 if this_year < today => this_year,
        -1 => rule(today.year() - 1)?,
        _ if this_year > today || (dir == 0 && this_year == today) => this_year,
        _ => rule(today.year() + 1)?,
    };
    Some((end, date))
}

/// Western Easter Sunday (anonymous Gregorian computus).
fn easter(year: i32) -> Option<NaiveDate> {
    let a = year % 19;
    let b = year / 100;
    let c = year % 100;
    let d = b / 4;
    let e = b % 4;
    let f = (b + 8) / 25;
    let g = (b - f + 1) / 3;
    let h = (19 * a + b - d - g + 15) % 30;
    let i = c / 4;
    let k = c % 4;
    let l = (32 + 2 * e + 2 * i - h - k) % 7;
    let m = (a + 11 * h + 22 * l) / 451;
    let month = (h + l - 7 * m + 114) / 31;
    let day = (h + l - 7 * m + 114) % 31 + 1;
    NaiveDate::from_ymd_opt(year, month as u32, day as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn computes_easter() {
        assert_eq!(easter(2018), NaiveDate::from_ymd_opt(2018, 4, 1));
        assert_eq!(easter(2013), NaiveDate::from_ymd_opt(2013, 3, 31));
        assert_eq!(easter(2020), NaiveDate::from_ymd_opt(2020, 4, 12));
    }
}
