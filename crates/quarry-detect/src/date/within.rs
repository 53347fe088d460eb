//! A unit inside a period, whatever the period is: a selector (an ordinal, "last"), a unit (a
//! weekday, day, week, weekend, month, quarter or half) and "of"/"in" joined to any expression
//! that names a span of days — a month ("March", "March 2020"), a year ("2020"), a relative
//! period ("next month", "this week", "the year"), a quarter:
//! "the second Tuesday of March", "the last Friday of next month", "the first day of next
//! month", "the 40th day of 2019", "the third week of May", "the last weekend of June", "the
//! first month of next year", "the second half of 2019", "the last quarter of 2021"; and a
//! weekday of a week without a selector: "Monday of next week", "Friday of this week"; and
//! the span around a day: "the week of April 10th" (its Monday to Sunday), "the week starting
//! on February 4" (seven days from it), "the weekend of Easter", "Labor Day weekend" (the
//! weekend touching the day: with a Friday or a Monday holiday, three days), "the month of
//! June", "the year 2020"; and the same pieces named with a possessive: "last week's Sunday",
//! "next month's first Monday".
//!
//! Weeks run Monday to Sunday; the first week of a period is the one holding its first day and
//! the last the one holding its last day (Duckling's `cycleLastOf`, Recognizers-Text's
//! week-of-month); a weekend is a Saturday and the Sunday after it.

use chrono::{Datelike, Duration, Months, NaiveDate};

use super::cursor::{Cursor, Found};
use super::lexicon::{Lex, Rel, Unit};
use super::model::{Moment, Point};
use super::relative::{period, period_at};
use super::resolve::{self, week_start, weekday_after, weekday_before};

/// Which one of the units: the nth (1-based) or the last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pick {
    Nth(i64),
    Last,
}

/// What is picked inside the period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece {
    Weekday(u8),
    Unit(Unit),
    Half,
}

/// A unit inside a period, or the span around a day, starting at token `i` (which may be
/// "the").
pub(crate) fn unit_of_period(c: &Cursor, i: usize) -> Found {
    if let Some(found) = span_around(c, i) {
        return Some(found);
    }
    let s = if c.rel(i, Rel::The) && c.joined(i + 1) {
        i + 1
    } else {
        i
    };
    let (j, pick, piece) = selection(c, s)?;
    if !(c.rel(j, Rel::Of) || c.rel(j, Rel::In)) || !c.joined(j) || !c.joined(j + 1) {
        return None;
    }
    let (end, first, last) = period_at(c, j + 1)?;
    let found = choose(pick, piece, first, last)?;
    // "the 1st week of Oct. on Friday": that day of the week.
    if let Moment::Range(Some(Point::Day(monday)), _) = found
        && piece == Piece::Unit(Unit::Week)
    {
        let k = if c.rel(end, Rel::On) { end + 1 } else { end };
        if c.joined(k)
            && let Lex::Weekday(w) = c.lex(k)
        {
            return Some((k + 1, Moment::day(monday + Duration::days(i64::from(w)))));
        }
    }
    Some((end, found))
}

/// A selector (optional) and the piece it selects, at `s`: "second Tuesday", "last week",
/// "Monday"; the index after the piece.
fn selection(c: &Cursor, s: usize) -> Option<(usize, Option<Pick>, Piece)> {
    let (j, pick) = match pick_at(c, s) {
        Some(pick) => (s + 1, Some(pick)),
        None => (s, None),
    };
    if j > s && !c.joined(j) {
        return None;
    }
    let piece = match c.lex(j) {
        Lex::Weekday(w) if !c.word(j).to_ascii_lowercase().ends_with("days") => Piece::Weekday(w),
        Lex::Unit(
            unit @ (Unit::Day | Unit::Week | Unit::Weekend | Unit::Month | Unit::Quarter),
        ) if !c.word(j).ends_with('s') => Piece::Unit(unit),
        Lex::Rel(Rel::Half) => Piece::Half,
        _ => return None,
    };
    // Without a selector only a weekday of a week reads ("Monday of next week").
    if pick.is_none() && !matches!(piece, Piece::Weekday(_)) {
        return None;
    }
    Some((j + 1, pick, piece))
}

/// The selected piece of `first..=last`; without a selector, a weekday of a week-long period.
fn choose(pick: Option<Pick>, piece: Piece, first: NaiveDate, last: NaiveDate) -> Option<Moment> {
    match pick {
        Some(pick) => pick_in(piece, pick, first, last),
        None => {
            let Piece::Weekday(w) = piece else {
                return None;
            };
            ((last - first).num_days() == 6).then(|| Moment::day(weekday_after(first, w, true)))
        }
    }
}

/// A period's own unit, named with a possessive: "last week's Sunday", "next month's first
/// Monday", "2024's last quarter".
pub(crate) fn possessive(c: &Cursor, i: usize) -> Found {
    let (end, first, last) = named_period(c, i)?;
    let apostrophe = c.punct(end, b'\'') || c.word(end) == "\u{2019}";
    if !(apostrophe && c.tight(end) && c.tight(end + 1) && c.is(end + 1, "s")) {
        return None;
    }
    let (after, pick, piece) = selection(c, end + 2).filter(|_| c.joined(end + 2))?;
    Some((after, choose(pick, piece, first, last)?))
}

/// A period that names itself without reading a whole expression (a possessive starts where the
/// date readers start, so it must not call them at the same token): this/next/last + week,
/// month, quarter or year; a year in digits.
fn named_period(c: &Cursor, i: usize) -> Option<(usize, NaiveDate, NaiveDate)> {
    if let Some(direction) = super::relative::direction(c, i)
        && let Some(unit @ (Unit::Week | Unit::Month | Unit::Quarter | Unit::Year)) = c.unit(i + 1)
        && c.joined(i + 1)
        && let Moment::Range(Some(Point::Day(first)), Some(Point::Day(last))) =
            period(c.today(), unit, direction)?
    {
        return Some((i + 2, first, last));
    }
    let (end, year) = super::absolute::lone_year(c, i)?;
    Some((
        end,
        NaiveDate::from_ymd_opt(year, 1, 1)?,
        NaiveDate::from_ymd_opt(year, 12, 31)?,
    ))
}

/// A selector: an ordinal (word, digits or "second") or "last".
pub(crate) fn pick_at(c: &Cursor, i: usize) -> Option<Pick> {
    match (c.lex(i), c.num(i)) {
        (Lex::Rel(Rel::Last), _) => Some(Pick::Last),
        (Lex::Ordinal(n), _) => Some(Pick::Nth(i64::from(n))),
        (Lex::Unit(Unit::Second), _) if c.is(i, "second") => Some(Pick::Nth(2)),
        (_, Some(n)) if n.ordinal && (1..=366).contains(&n.value) => {
            Some(Pick::Nth(i64::from(n.value)))
        }
        _ => None,
    }
}

/// The picked piece inside `first..=last`; `None` when the period holds fewer.
fn pick_in(piece: Piece, pick: Pick, first: NaiveDate, last: NaiveDate) -> Option<Moment> {
    let nth = |n: i64, step: i64, start: NaiveDate| start + Duration::days(step * (n - 1));
    let found = match (piece, pick) {
        (Piece::Weekday(w), Pick::Nth(n)) => Moment::day(nth(n, 7, weekday_after(first, w, true))),
        (Piece::Weekday(w), Pick::Last) => Moment::day(weekday_before(last.succ_opt()?, w)),
        (Piece::Unit(Unit::Day), Pick::Nth(n)) => Moment::day(nth(n, 1, first)),
        (Piece::Unit(Unit::Day), Pick::Last) => Moment::day(last),
        (Piece::Unit(Unit::Week), pick) => {
            let monday = match pick {
                Pick::Nth(n) => nth(n, 7, week_start(first)),
                Pick::Last => week_start(last),
            };
            Moment::days(monday, monday + Duration::days(6))
        }
        (Piece::Unit(Unit::Weekend), pick) => {
            let saturday = match pick {
                Pick::Nth(n) => nth(n, 7, weekday_after(first, 5, true)),
                Pick::Last => weekday_before(last.succ_opt()?, 5),
            };
            Moment::days(saturday, saturday + Duration::days(1))
        }
        (Piece::Unit(unit @ (Unit::Month | Unit::Quarter)), pick) => {
            let step = if unit == Unit::Month { 1 } else { 3 };
            let count = months_between(first, last)? / step;
            let k = match pick {
                Pick::Nth(n) => n - 1,
                Pick::Last => count - 1,
            };
            if first.day() != 1 || k < 0 || k >= count {
                return None;
            }
            let start = first.checked_add_months(Months::new((k * step) as u32))?;
            let end = start
                .checked_add_months(Months::new(step as u32))?
                .pred_opt()?;
            Moment::days(start, end)
        }
        (Piece::Half, pick) => {
            let second = match pick {
                Pick::Nth(1) => false,
                Pick::Nth(2) | Pick::Last => true,
                Pick::Nth(_) => return None,
            };
            let (a, b) = match months_between(first, last) {
                // Whole months, an even number of them: halves of months.
                Some(months) if first.day() == 1 && months % 2 == 0 => {
                    let middle = first.checked_add_months(Months::new((months / 2) as u32))?;
                    (middle.pred_opt()?, middle)
                }
                _ => {
                    let middle = first + Duration::days((last - first).num_days() / 2);
                    (middle, middle.succ_opt()?)
                }
            };
            if second {
                Moment::days(b, last)
            } else {
                Moment::days(first, a)
            }
        }
        _ => return None,
    };
    // The piece must lie in the period (a week may start before it: the first week holds
    // the period's first day).
    let (start, end) = match found {
        Moment::Point(Point::Day(d)) => (d, d),
        Moment::Range(Some(Point::Day(a)), Some(Point::Day(b))) => (a, b),
        _ => return None,
    };
    let inside = if piece == Piece::Unit(Unit::Week) {
        end >= first && start <= last
    } else {
        start >= first && start <= last
    };
    inside.then_some(found)
}

/// Whole months from `first` to the day after `last`, when `last` ends a month.
fn months_between(first: NaiveDate, last: NaiveDate) -> Option<i64> {
    let next = last.succ_opt()?;
    if next.day() != 1 {
        return None;
    }
    Some(
        i64::from(next.year() - first.year()) * 12 + i64::from(next.month())
            - i64::from(first.month()),
    )
}

/// "the week of April 10th", "the week starting (on) February 4", "the weekend of Easter",
/// "the month of June", "the year 2020"; and a day then "weekend" ("Labor Day weekend").
fn span_around(c: &Cursor, i: usize) -> Found {
    if c.rel(i, Rel::The) && c.joined(i + 1) && c.joined(i + 2) {
        let unit = c.unit(i + 1).filter(|_| !c.word(i + 1).ends_with('s'))?;
        let starting = ["starting", "beginning", "commencing"]
            .iter()
            .any(|w| c.is(i + 2, w));
        let of = c.rel(i + 2, Rel::Of);
        // "the year 2020"
        if unit == Unit::Year
            && let Some((end, year)) = super::absolute::lone_year(c, i + 2)
        {
            return Some((end, resolve::year_span(year)?));
        }
        if !of && !starting {
            return None;
        }
        let mut j = i + 3;
        if starting && matches!(c.lex(j), Lex::Rel(Rel::On | Rel::From)) {
            j += 1;
        }
        if !c.joined(j) {
            return None;
        }
        // "the month of June": the month itself.
        if unit == Unit::Month && of {
            let (end, moment) = c.moment(j)?;
            return matches!(moment, Moment::Range(..)).then_some((end, moment));
        }
        let (end, moment) = c.date_at(j)?;
        let Moment::Point(Point::Day(day)) = moment else {
            return None;
        };
        return match (unit, starting) {
            (Unit::Week, true) => Some((end, Moment::days(day, day + Duration::days(6)))),
            (Unit::Week, false) => {
                let monday = week_start(day);
                Some((end, Moment::days(monday, monday + Duration::days(6))))
            }
            (Unit::Weekend, false) => Some((end, weekend_touching(day))),
            _ => None,
        };
    }
    // "Labor Day weekend", "Easter weekend": a holiday then "weekend".
    let (end, moment) = super::holiday::holiday(c, i)?;
    if c.unit(end) != Some(Unit::Weekend) || !c.joined(end) || c.word(end).ends_with('s') {
        return None;
    }
    let Moment::Point(Point::Day(day)) = moment else {
        return None;
    };
    Some((end + 1, weekend_touching(day)))
}

/// The weekend a day belongs to: its own on a Saturday or Sunday, with it on a Friday or a
/// Monday (a long weekend), else the next one.
fn weekend_touching(day: NaiveDate) -> Moment {
    match day.weekday().num_days_from_monday() {
        5 => Moment::days(day, day + Duration::days(1)),
        6 => Moment::days(day - Duration::days(1), day),
        0 => Moment::days(day - Duration::days(2), day),
        4 => Moment::days(day, day + Duration::days(2)),
        _ => {
            let saturday = weekday_after(day, 5, false);
            Moment::days(saturday, saturday + Duration::days(1))
        }
    }
}
