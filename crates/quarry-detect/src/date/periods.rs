//! Named periods and their modifiers, any of which combine: seasons ("summer", "this winter",
//! "next spring", "summer 2015", "the summer of 2015"), decades ("the 1990s", "the '90s", "the
//! eighties", "2010s"), halves ("H1 2021"), fiscal years ("fiscal year 2021", "FY21": the
//! twelve months ending September 30 of that year, the US federal convention), a month with
//! a modifier ("next March", "this coming June", "last October") and a day of the year written
//! without its year after one ("next 5/12", "next 6th of April": the first one after today;
//! "this 5/12", "this Friday 5/12": this year's, whichever weekday is written).
//!
//! Seasons are astronomical, as Duckling gives them: spring March 20 – June 20, summer June 21
//! – September 23, fall September 24 – December 20, winter December 21 – March 19 (the winter
//! of a year starts in its December). "this" is the season holding today (else this year's),
//! "next" the first one starting after today, "last" the latest one ended before today; a bare
//! season is the one holding today or the next. "next March" is the first March after this
//! month, "last March" the latest before it, "this March" this year's.

use chrono::{Datelike, NaiveDate};

use super::cursor::{Cursor, Found};
use super::lexicon::{Lex, Rel};
use super::model::Moment;
use super::resolve::month_span;

/// A named period or a modified month starting at token `i`.
pub(crate) fn named_period(c: &Cursor, i: usize) -> Found {
    // "the summer of 2015": "the" before a season joins the span.
    if c.rel(i, Rel::The)
        && c.joined(i + 1)
        && let Some(season) = season_at(c, i + 1)
    {
        return season_moment(c, i + 1, season, None);
    }
    let (j, modifier) = match c.lex(i) {
        Lex::Rel(Rel::This | Rel::Current) => (i + 1, Some(Modifier::This)),
        Lex::Rel(Rel::Next | Rel::Coming | Rel::Following) => (i + 1, Some(Modifier::Next)),
        Lex::Rel(Rel::Last | Rel::Past | Rel::Previous) => (i + 1, Some(Modifier::Last)),
        _ => (i, None),
    };
    // "this coming June", "this past summer"
    let (j, modifier) = match (modifier, c.lex(j)) {
        (Some(Modifier::This), Lex::Rel(Rel::Coming)) => (j + 1, Some(Modifier::Next)),
        (Some(Modifier::This), Lex::Rel(Rel::Past)) => (j + 1, Some(Modifier::Last)),
        _ => (j, modifier),
    };
    if j > i && !c.joined(j) {
        return None;
    }
    if let Some(season) = season_at(c, j) {
        return season_moment(c, j, season, modifier);
    }
    if let Some(found) = decade(c, j) {
        return (modifier.is_none()).then_some(found);
    }
    if modifier.is_none() {
        return half(c, i).or_else(|| fiscal_year(c, i));
    }
    if let Some(found) = modified_day(c, j, modifier?) {
        return Some(found);
    }
    // "next March": a month name alone after the modifier (not "next March 3").
    let Lex::Month(m) = c.lex(j) else {
        return None;
    };
    // "this may or may not": the verb, unless written as the month's name.
    if m == 5 && !c.capital(j) {
        return None;
    }
    if c.num(j + 1).is_some() && c.joined(j + 1) {
        return None;
    }
    let today = c.today();
    let m = u32::from(m);
    let year = match modifier? {
        Modifier::This => today.year(),
        Modifier::Next if m > today.month() => today.year(),
        Modifier::Next => today.year() + 1,
        Modifier::Last if m < today.month() => today.year(),
        Modifier::Last => today.year() - 1,
    };
    Some((j + 1, month_span(year, m)?))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Modifier {
    This,
    Next,
    Last,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Season {
    Spring,
    Summer,
    Fall,
    Winter,
}

/// Whether a season is named at `i`.
pub(crate) fn is_season(c: &Cursor, i: usize) -> bool {
    season_at(c, i).is_some()
}

fn season_at(c: &Cursor, i: usize) -> Option<Season> {
    if c.lex(i) != Lex::Named {
        return None;
    }
    const SEASONS: [(&str, Season); 8] = [
        ("spring", Season::Spring),
        ("springtime", Season::Spring),
        ("summer", Season::Summer),
        ("summertime", Season::Summer),
        ("fall", Season::Fall),
        ("autumn", Season::Fall),
        ("winter", Season::Winter),
        ("wintertime", Season::Winter),
    ];
    SEASONS
        .iter()
        .find(|(word, _)| c.is(i, word))
        .map(|&(_, season)| season)
}

/// "twenties" … "nineties": the decade's tens.
pub(crate) fn decade_word(c: &Cursor, i: usize) -> Option<i32> {
    const DECADES: [(&str, i32); 8] = [
        ("twenties", 20),
        ("thirties", 30),
        ("forties", 40),
        ("fifties", 50),
        ("sixties", 60),
        ("seventies", 70),
        ("eighties", 80),
        ("nineties", 90),
    ];
    let word = c.word(i);
    if !(7..=9).contains(&word.len()) || !c.is_word(i) {
        return None;
    }
    DECADES
        .iter()
        .find(|(name, _)| word.eq_ignore_ascii_case(name))
        .map(|&(_, tens)| tens)
}

/// The season of `year` (the winter of a year starts in its December).
fn season_span(year: i32, season: Season) -> Option<(NaiveDate, NaiveDate)> {
    let day = |y: i32, m: u32, d: u32| NaiveDate::from_ymd_opt(y, m, d);
    Some(match season {
        Season::Spring => (day(year, 3, 20)?, day(year, 6, 20)?),
        Season::Summer => (day(year, 6, 21)?, day(year, 9, 23)?),
        Season::Fall => (day(year, 9, 24)?, day(year, 12, 20)?),
        Season::Winter => (day(year, 12, 21)?, day(year + 1, 3, 19)?),
    })
}

fn season_moment(c: &Cursor, j: usize, season: Season, modifier: Option<Modifier>) -> Found {
    // "summer 2015", "the summer of 2015", "winter of 2019"
    let k = if c.rel(j + 1, Rel::Of) { j + 2 } else { j + 1 };
    if modifier.is_none()
        && c.joined(k)
        && let Some((end, year)) = super::absolute::lone_year(c, k)
    {
        let (a, b) = season_span(year, season)?;
        return Some((end, Moment::days(a, b)));
    }
    // "spring" and "fall" are verbs and nouns too: alone they need a modifier.
    if modifier.is_none() && matches!(season, Season::Spring | Season::Fall) {
        return None;
    }
    let today = c.today();
    let spans = (today.year() - 2..=today.year() + 1).filter_map(|y| season_span(y, season));
    let spans: Vec<(NaiveDate, NaiveDate)> = spans.collect();
    let holding = spans
        .iter()
        .find(|(a, b)| *a <= today && today <= *b)
        .copied();
    let (a, b) = match modifier {
        None => holding.or_else(|| spans.iter().find(|(a, _)| *a > today).copied())?,
        Some(Modifier::This) => holding.or_else(|| season_span(today.year(), season))?,
        Some(Modifier::Next) => spans.iter().find(|(a, _)| *a > today).copied()?,
        Some(Modifier::Last) => spans.iter().rev().find(|(_, b)| *b < today).copied()?,
    };
    Some((j + 1, Moment::days(a, b)))
}

/// "the 1990s", "1990s", "the '90s", "the 90s", "the eighties".
fn decade(c: &Cursor, i: usize) -> Found {
    let j = if c.rel(i, Rel::The) && c.joined(i + 1) {
        i + 1
    } else {
        i
    };
    let today = c.today();
    let (end, start) = if let Some(n) = c.num(j) {
        // `1990s`, `90s` (one token each, or the number then a glued `s`).
        let (value, digits) = (n.value as i32, n.digits);
        let s_end = if c.is(j + 1, "s") && c.tight(j + 1) {
            j + 2
        } else {
            return None;
        };
        let apostrophe = j > 0 && c.punct(j - 1, b'\'') && c.tight(j);
        match digits {
            4 if value % 10 == 0 && (1000..=2990).contains(&value) => (s_end, value),
            2 if value % 10 == 0 && (j > i || apostrophe) => {
                let start = 2000 + value;
                (
                    s_end,
                    if start <= today.year() {
                        start
                    } else {
                        1900 + value
                    },
                )
            }
            _ => return None,
        }
    } else {
        if j == i {
            return None;
        }
        let tens = decade_word(c, j)?;
        let start = 2000 + tens;
        (
            j + 1,
            if start <= today.year() {
                start
            } else {
                1900 + tens
            },
        )
    };
    Some((
        end,
        Moment::days(
            NaiveDate::from_ymd_opt(start, 1, 1)?,
            NaiveDate::from_ymd_opt(start + 9, 12, 31)?,
        ),
    ))
}

/// "H1 2021", "H2 2019": a half of a year.
fn half(c: &Cursor, i: usize) -> Found {
    if !c.is(i, "h") || !c.tight(i + 1) {
        return None;
    }
    let second = match c.plain(i + 1, 1) {
        Some(1) => false,
        Some(2) => true,
        _ => return None,
    };
    let k = i + 2;
    let (end, year) = super::absolute::lone_year(c, k).filter(|_| c.joined(k))?;
    let day = |month, day| NaiveDate::from_ymd_opt(year, month, day);
    let (a, b) = if second {
        (day(7, 1)?, day(12, 31)?)
    } else {
        (day(1, 1)?, day(6, 30)?)
    };
    Some((end, Moment::days(a, b)))
}

/// "fiscal year 2021", "fiscal 2021", "FY2021", "FY 21", "FY'21": October 1 of the year before
/// to September 30.
fn fiscal_year(c: &Cursor, i: usize) -> Found {
    let k = if c.is(i, "fiscal") && c.joined(i + 1) {
        if c.unit(i + 1) == Some(super::lexicon::Unit::Year) {
            i + 2
        } else {
            i + 1
        }
    } else if c.is(i, "fy") {
        if c.punct(i + 1, b'\'') { i + 2 } else { i + 1 }
    } else {
        return None;
    };
    if !c.joined(k) {
        return None;
    }
    let n = c.num(k).filter(|n| !n.ordinal)?;
    let year = match n.digits {
        4 if (1900..=2100).contains(&n.value) => n.value as i32,
        2 if c.is(i, "fy") => 2000 + n.value as i32,
        _ => return None,
    };
    Some((
        k + 1,
        Moment::days(
            NaiveDate::from_ymd_opt(year - 1, 10, 1)?,
            NaiveDate::from_ymd_opt(year, 9, 30)?,
        ),
    ))
}

/// "next 5/12", "next 6th of April", "this 5/12", "this Friday 5/12": a month and day written
/// without a year after a modifier; "next" is the first one after today, "this" this year's,
/// "last" the latest before today.
fn modified_day(c: &Cursor, j: usize, modifier: Modifier) -> Found {
    // "this Friday 5/12": the written date decides.
    let k = if matches!(c.lex(j), Lex::Weekday(_)) && c.joined(j + 1) {
        j + 1
    } else {
        j
    };
    let (end, month, day) = match super::absolute::numeric_date(c, k)
        .or_else(|| super::absolute::named_date(c, k))
        .filter(|(_, p)| p.year.is_none() && p.month.is_some() && p.day.is_some())
    {
        Some((end, part)) => (end, part.month?, part.day?),
        // "next 1/4": after a modifier a short m/d is a date, not a fraction.
        None => {
            let month = c.plain(k, 2).filter(|m| (1..=12).contains(m))?;
            let day = c.plain(k + 2, 2).filter(|d| (1..=31).contains(d))?;
            if !(c.punct(k + 1, b'/') && c.tight(k + 1) && c.tight(k + 2)) || c.glued(k + 3) {
                return None;
            }
            if c.tight(k + 3) && (c.punct(k + 3, b'/') || c.punct(k + 3, b'-')) {
                return None; // "1/4/2020" has a year: not this rule's
            }
            (k + 3, month, day)
        }
    };
    let today = c.today();
    let this_year = NaiveDate::from_ymd_opt(today.year(), month, day);
    let date = match modifier {
        Modifier::This => this_year?,
        Modifier::Next => match this_year {
            Some(date) if date > today => date,
            _ => NaiveDate::from_ymd_opt(today.year() + 1, month, day)?,
        },
        Modifier::Last => match this_year {
            Some(date) if date < today => date,
            _ => NaiveDate::from_ymd_opt(today.year() - 1, month, day)?,
        },
    };
    Some((end, Moment::day(date)))
}
