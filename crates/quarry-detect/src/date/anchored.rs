//! Intervals built from an amount of time and a place in time, whatever pieces they are made of:
//!
//! - a start and how long: "<start> for <amount>" and "from <start> for <amount>" ("14th Feb
//!   from 9:30am for 7 hours", "June 5 for three days", "from 3pm for 2 hours"), and
//!   "<amount> starting|beginning|commencing <start>" ("two weeks starting Monday");
//! - an amount that bounds a shifted point: "more than|over|at least <shifted>" is open on the
//!   far side of the point, "less than|under|at most|within <shifted>" runs between the point
//!   and now ("more than 2 weeks before today", "less than 3 days ago", "more than a month from
//!   now").
//!
//! - a count of weekdays from an anchor: "three Fridays from now", "2 Sundays after Easter",
//!   "4 Tuesdays ago": the Nth such weekday after (or before) the anchor's day.
//!
//! A start that is a day and an amount in days (weeks, months) ends on the last whole day
//! ("June 5 for three days" is June 5–7); otherwise the end is the start plus the amount.

use super::clock::time;
use super::cursor::{Cursor, Found};
use super::duration::{Count, amount, quantity};
use super::lexicon::{Lex, Rel};
use super::model::{Dur, Moment, Point};
use super::resolve::{shift, weekday_after, weekday_before};
use super::within::{Pick, pick_at};

/// "<start> for <amount>", "from <start> for <amount>".
pub(crate) fn start_for_amount(c: &Cursor, i: usize) -> Found {
    let from = c.rel(i, Rel::From) && c.joined(i + 1);
    let j = if from { i + 1 } else { i };
    let (mut end, moment) = c.date_or_time(j)?;
    let Moment::Point(mut start) = moment else {
        return None;
    };
    // "14th Feb from 9:30am for 7 hours": a day, then the time it starts at.
    if let Point::Day(date) = start
        && c.rel(end, Rel::From)
        && c.joined(end + 1)
        && let Some((after, t)) = time(c, end + 1)
    {
        start = Point::At(date.and_time(t.naive()?), t.offset);
        end = after;
    }
    if !c.is(end, "for") || !c.joined(end + 1) {
        return None;
    }
    let (after, dur, _) = amount(c, end + 1)?;
    Some((after, lasting(start, dur)?))
}

/// "<amount> starting|beginning|commencing [on|from|at] <start>".
pub(crate) fn amount_from_start(c: &Cursor, i: usize) -> Found {
    let (end, dur, _) = amount(c, i)?;
    let starting = ["starting", "beginning", "commencing", "effective"]
        .iter()
        .any(|w| c.is(end, w));
    if !starting || !c.joined(end + 1) {
        return None;
    }
    let j = if matches!(c.lex(end + 1), Lex::Rel(Rel::On | Rel::From | Rel::At)) {
        end + 2
    } else {
        end + 1
    };
    let (after, moment) = c.date_or_time(j)?;
    let Moment::Point(start) = moment else {
        return None;
    };
    Some((after, lasting(start, dur)?))
}

/// From `start`, lasting `dur`.
fn lasting(start: Point, dur: Dur) -> Option<Moment> {
    let last = match start {
        Point::Day(_) if !dur.has_clock_part() => match shift(start, dur)? {
            Point::Day(next) => Point::Day(next.pred_opt()?),
            other => other,
        },
        Point::Day(date) => shift(Point::At(date.and_time(chrono::NaiveTime::MIN), None), dur)?,
        Point::At(..) => shift(start, dur)?,
        Point::Clock(t, offset) => {
            let (moved, wrapped) = t.overflowing_add_signed(chrono::Duration::seconds(
                dur.seconds + i64::from(dur.days) * 86_400,
            ));
            if wrapped != 0 || dur.months != 0 {
                return None;
            }
            Point::Clock(moved, offset)
        }
    };
    Some(Moment::Range(Some(start), Some(last)))
}

/// "more than 2 weeks ago", "less than 3 days before Christmas", "at least a month from now".
pub(crate) fn bounded_amount(c: &Cursor, i: usize) -> Found {
    let bound = |k: usize| match c.lex(k) {
        Lex::Rel(Rel::More) => Some(true),
        Lex::Rel(Rel::Less) => Some(false),
        _ => None,
    };
    let (j, beyond) = if c.rel(i, Rel::At) && (c.is(i + 1, "least") || c.is(i + 1, "most")) {
        (i + 2, bound(i + 1)?)
    } else if c.is(i + 1, "than") && !c.is(i, "over") && !c.is(i, "under") {
        (i + 2, bound(i)?)
    } else if c.is(i, "over") || c.is(i, "under") {
        (i + 1, bound(i)?)
    } else {
        return None;
    };
    if !c.joined(j) || amount(c, j).is_none() {
        return None;
    }
    let (end, moment) = c.moment(j)?;
    let Moment::Point(point) = moment else {
        return None;
    };
    let now = match point {
        Point::Day(_) => Point::Day(c.today()),
        Point::At(_, offset) => Point::At(c.now, offset),
        Point::Clock(..) => return None,
    };
    let past = point_key(point) < point_key(now);
    let range = match (beyond, past) {
        (true, true) => Moment::Range(None, Some(point)),
        (true, false) => Moment::Range(Some(point), None),
        (false, true) => Moment::Range(Some(point), Some(now)),
        (false, false) => Moment::Range(Some(now), Some(point)),
    };
    Some((end, range))
}

fn point_key(point: Point) -> Option<chrono::NaiveDateTime> {
    match point {
        Point::Day(date) => date.and_hms_opt(0, 0, 0),
        Point::At(at, _) => Some(at),
        Point::Clock(..) => None,
    }
}

/// "three Fridays from now", "2 Mondays after June 3", "4 Tuesdays ago", "two Sundays before
/// Christmas".
pub(crate) fn weekdays_from(c: &Cursor, i: usize) -> Found {
    let (j, n, counted) = weekday_count(c, i)?;
    let Lex::Weekday(weekday) = c.lex(j) else {
        return None;
    };
    if (j > i && !c.joined(j)) || !c.joined(j + 1) {
        return None;
    }
    let (end, anchor, forward) = match c.lex(j + 1) {
        Lex::Rel(Rel::Ago) if counted => (j + 2, c.today(), false),
        Lex::Rel(Rel::Hence) if counted => (j + 2, c.today(), true),
        // "the Friday before Easter", "the first Monday after Labor Day": an anchor is needed.
        Lex::Rel(Rel::From) if !counted => return None,
        Lex::Rel(rel @ (Rel::From | Rel::After | Rel::Before)) => {
            let forward = rel != Rel::Before;
            if c.rel(j + 2, Rel::Now) || c.rel(j + 2, Rel::Today) {
                (j + 3, c.today(), forward)
            } else {
                let (end, moment) = c.date_at(j + 2)?;
                let Moment::Point(Point::Day(day)) = moment else {
                    return None;
                };
                (end, day, forward)
            }
        }
        _ => return None,
    };
    let weeks = chrono::Duration::days(7 * (n - 1));
    let day = if forward {
        weekday_after(anchor, weekday, false) + weeks
    } else {
        weekday_before(anchor, weekday) - weeks
    };
    Some((end, Moment::day(day)))
}

/// How many of the weekday at the returned index: a number ("three Fridays"), an ordinal
/// ("the second Sunday"), "the" or nothing (one). The flag says a number was written, which
/// "ago" and "from now" need ("Friday ago" is not an expression).
fn weekday_count(c: &Cursor, i: usize) -> Option<(usize, i64, bool)> {
    if matches!(c.lex(i), Lex::Weekday(_)) {
        return Some((i, 1, false));
    }
    let k = if c.rel(i, Rel::The) && c.joined(i + 1) {
        i + 1
    } else {
        i
    };
    if k > i && matches!(c.lex(k), Lex::Weekday(_)) {
        return Some((k, 1, false));
    }
    if let Some(Pick::Nth(n @ 1..=52)) = pick_at(c, k) {
        return c.joined(k + 1).then_some((k + 1, n, false));
    }
    let (j, count, kind) = quantity(c, i)?;
    if kind != Count::Number || count.fract() != 0.0 || !(1.0..=520.0).contains(&count) {
        return None;
    }
    Some((j, count as i64, true))
}
