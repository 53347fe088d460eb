//! Recurrences: "every"/"each" joined to any piece the grammar reads — a unit with or without a
//! count ("every three weeks", "each quarter", "every other day"), a weekday, a date or a part of
//! the day with or without a time ("every Monday at 4pm", "each May 1", "every morning"), a
//! clock time ("every day at 7", "every 9am") — plural weekdays ("Mondays at 5pm") and frequency
//! words ("daily", "biweekly"). The period comes from the piece's grain: a weekday repeats
//! weekly, a month and day yearly, a day of the month monthly, a time or a part of the day
//! daily. An anchored recurrence starts at the piece's first occurrence after now.

use super::clock::time;
use chrono::Datelike;

use super::cursor::{Cursor, Found};
use super::duration::{amount, unit_dur};
use super::lexicon::{Lex, Rel, Unit};
use super::model::{Dur, Moment, Point};
use super::relative::part_of_day_span;
use super::resolve::weekday_after;

/// A recurrence starting at token `i`.
pub(crate) fn recurrence(c: &Cursor, i: usize) -> Found {
    if let Some(found) = once_a(c, i).or_else(|| day_of_every(c, i)) {
        return Some(found);
    }
    match c.lex(i) {
        Lex::Rel(Rel::Every) if c.joined(i + 1) => every(c, i + 1),
        // "billed monthly", "meets weekly" — but not the adjective after a determiner ("the
        // quarterly numbers", "our weekly call"), which names a thing, not a time.
        Lex::Frequency(unit) if !after_determiner(c, i) => {
            Some((i + 1, unanchored(period_of(unit, 1))))
        }
        Lex::Weekday(_) if is_plural(c.word(i)) => anchored(c, i),
        _ => None,
    }
}

/// "once a week", "one a day", "once per month": every one of the unit.
fn once_a(c: &Cursor, i: usize) -> Found {
    if !(c.is(i, "once") || c.lex(i) == Lex::Cardinal(1)) {
        return None;
    }
    if !(c.rel(i + 1, Rel::A) || c.is(i + 1, "per")) || !c.joined(i + 1) || !c.joined(i + 2) {
        return None;
    }
    let unit = c.unit(i + 2).filter(|_| !c.word(i + 2).ends_with('s'))?;
    Some((i + 3, unanchored(period_of(unit, 1))))
}

/// "the 19th of every month", "1st of each month": monthly from the next such day.
fn day_of_every(c: &Cursor, i: usize) -> Found {
    let j = if c.rel(i, Rel::The) { i + 1 } else { i };
    let (k, day) = super::absolute::day_number(c, j)?;
    if !c.rel(k, Rel::Of) || !c.rel(k + 1, Rel::Every) || c.unit(k + 2) != Some(Unit::Month) {
        return None;
    }
    let today = c.today();
    let this_month = chrono::NaiveDate::from_ymd_opt(today.year(), today.month(), day);
    let first = match this_month {
        Some(date) if date > today => date,
        _ => {
            let next =
                super::resolve::first_of_month(today).checked_add_months(chrono::Months::new(1))?;
            chrono::NaiveDate::from_ymd_opt(next.year(), next.month(), day)?
        }
    };
    Some((
        k + 3,
        Moment::Every {
            first: Some(Point::Day(first)),
            period: Dur {
                months: 1,
                ..Dur::default()
            },
        },
    ))
}

/// What follows "every"/"each" at `j`.
fn every(c: &Cursor, j: usize) -> Found {
    // "every other week", "every second day", "every other Tuesday": every two.
    let (j, factor) = if (c.is(j, "other")
        || c.is(j, "alternate")
        || c.unit(j) == Some(Unit::Second)
            && (c.unit(j + 1).is_some() || matches!(c.lex(j + 1), Lex::Weekday(_))))
        && c.joined(j + 1)
    {
        (j + 1, 2)
    } else {
        (j, 1)
    };
    // "every three weeks", "every 2 days", "each 45 minutes"
    if factor == 1
        && let Some((end, dur, _)) = amount(c, j)
    {
        // "every two weekends": a weekend recurs weekly, so two of them are two weeks apart.
        let dur = if c.unit(end - 1) == Some(Unit::Weekend) {
            days(dur.days / 2 * 7)
        } else {
            dur
        };
        return Some((end, unanchored(dur)));
    }
    // "every week", "each quarter", "every two weekends" (above, as a count of weekends)
    if let Some(unit) = c.unit(j)
        && !matches!(c.lex(j + 1), Lex::Rel(Rel::Of))
    {
        // "every day at 7am": daily from the time's next occurrence.
        if unit == Unit::Day
            && factor == 1
            && (c.rel(j + 1, Rel::At) || c.punct(j + 1, b'@'))
            && c.joined(j + 2)
            && let Some(found) = daily_at(c, j + 2)
        {
            return Some(found);
        }
        return Some((j + 1, unanchored(period_of(unit, factor))));
    }
    if factor != 1 {
        // "every other Tuesday (at 3pm)": fortnightly from the next one.
        if !matches!(c.lex(j), Lex::Weekday(_)) {
            return None;
        }
        let (end, moment) = anchored(c, j)?;
        let Moment::Every { first, .. } = moment else {
            return None;
        };
        return Some((
            end,
            Moment::Every {
                first,
                period: days(14),
            },
        ));
    }
    anchored(c, j)
}

/// A piece with a place in time ("Monday at 4pm", "May 1", "morning", "9am"), repeated at its
/// grain from its first occurrence.
fn anchored(c: &Cursor, j: usize) -> Found {
    // A part of the day, with an optional time inside it: "every morning", "evenings at 7".
    if let Lex::Rel(part @ (Rel::Morning | Rel::Afternoon | Rel::Evening | Rel::Night)) = c.lex(j) {
        let start = match part_of_day_span(c.today(), part)? {
            Moment::Range(Some(start), _) => start,
            _ => return None,
        };
        return Some((j + 1, every_from(start, days(1))));
    }
    // A weekday (plural or not), from its next occurrence after today, with what time follows.
    if let Lex::Weekday(weekday) = c.lex(j) {
        let date = weekday_after(c.today(), weekday, false);
        let (end, moment) = c.then_time(j + 1, date)?;
        let first = match moment {
            Moment::Point(point) => point,
            Moment::Range(Some(start), _) => start,
            _ => return None,
        };
        return Some((end, every_from(first, days(7))));
    }
    let period = match c.lex(j) {
        Lex::Month(_) => Dur {
            months: 12,
            ..Dur::default()
        },
        _ if c.num(j).is_some_and(|n| n.ordinal) || matches!(c.lex(j), Lex::Ordinal(_)) => Dur {
            months: 1,
            ..Dur::default()
        },
        // A clock time alone: daily.
        _ => return daily_at(c, j),
    };
    let (end, moment) = c.date_at(j)?;
    let (end, moment) = match moment {
        Moment::Point(Point::Day(date)) => c.then_time(end, date)?,
        other => (end, other),
    };
    let first = match moment {
        Moment::Point(point) => point,
        Moment::Range(Some(start), _) => start,
        _ => return None,
    };
    Some((end, every_from(first, period)))
}

/// Daily from the next occurrence of the time written at `j`.
fn daily_at(c: &Cursor, j: usize) -> Found {
    let (end, t) = time(c, j)?;
    let at = c.today().and_time(t.naive()?);
    let first = if at > c.now {
        at
    } else {
        at + chrono::Duration::days(1)
    };
    Some((end, every_from(Point::At(first, t.offset), days(1))))
}

fn days(n: i32) -> Dur {
    Dur {
        days: n,
        ..Dur::default()
    }
}

fn every_from(first: Point, period: Dur) -> Moment {
    Moment::Every {
        first: Some(first),
        period,
    }
}

fn unanchored(period: Dur) -> Moment {
    Moment::Every {
        first: None,
        period,
    }
}

/// One `unit` times `count`; a weekend recurs weekly.
fn period_of(unit: Unit, count: i32) -> Dur {
    let unit = if unit == Unit::Weekend {
        Unit::Week
    } else {
        unit
    };
    unit_dur(unit, f64::from(count))
}

fn after_determiner(c: &Cursor, i: usize) -> bool {
    i > 0
        && (matches!(
            c.lex(i - 1),
            Lex::Rel(Rel::The | Rel::A | Rel::This | Rel::Every)
        ) || [
            "our", "your", "their", "its", "his", "her", "my", "that", "these", "those",
        ]
        .iter()
        .any(|w| c.is(i - 1, w)))
}

/// "Mondays", "thursdays" (not "tues", "thurs").
fn is_plural(word: &str) -> bool {
    word.len() > 4 && word.to_ascii_lowercase().ends_with("days")
}
