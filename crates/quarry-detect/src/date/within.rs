//! A unit inside a period, whatever the period is: a selector (an ordinal, "last"), a unit (a
//! weekday, day, week, weekend, month, quarter or half) and "of"/"in" joined to any expression
//! that names a span of days — a month ("March", "March 2020"), a year ("2020"), a relative
//! period ("next month", "this week", "the year"), a quarter:
//! "the second Tuesday of March", "the last Friday of next month", "the first day of next
//! month", "the 40th day of 2019", "the third week of May", "the last weekend of June", "the
//! first month of next year", "the second half of 2019", "the last quarter of 2021"; and a
//! weekday of a week without a selector: "Monday of next week", "Friday of this week".
//!
//! Weeks run Monday to Sunday; the first week of a period is the one holding its first day and
//! the last the one holding its last day (Duckling's `cycleLastOf`, Recognizers-Text's
//! week-of-month); a weekend is a Saturday and the Sunday after it.

use chrono::{Datelike, Duration, Months, NaiveDate};

use super::compose::moment;
use super::cursor::{Cursor, Found};
use super::lexicon::{Lex, Rel, Unit};
use super::model::{Moment, Point};
use super::resolve::{self, week_start, weekday_after};

/// Which one of the units: the nth (1-based) or the last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pick {
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

/// A unit inside a period, starting at token `i` (which may be "the").
pub(crate) fn unit_of_period(c: &Cursor, i: usize) -> Found {
    let s = if c.rel(i, Rel::The) && c.joined(i + 1) {
        i + 1
    } else {
        i
    };
    let (j, pick) = match pick_at(c, s) {
        Some(pick) => (s + 1, Some(pick)),
        None => (s, None),
    };
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
    if !(c.rel(j + 1, Rel::Of) || c.rel(j + 1, Rel::In)) || !c.joined(j + 1) || !c.joined(j + 2) {
        return None;
    }
    let (end, first, last) = period_at(c, j + 2)?;
    let found = match pick {
        Some(pick) => pick_in(piece, pick, first, last)?,
        None => {
            let Piece::Weekday(w) = piece else {
                return None;
            };
            // A weekday of a week-long period.
            if (last - first).num_days() != 6 {
                return None;
            }
            Moment::day(weekday_after(first, w, true))
        }
    };
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

fn pick_at(c: &Cursor, i: usize) -> Option<Pick> {
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

/// The span of days named at `j` ("the" allowed): any expression of whole days, or a bare
/// unit for the current one ("the month", "the year").
fn period_at(c: &Cursor, j: usize) -> Option<(usize, NaiveDate, NaiveDate)> {
    let j = if c.rel(j, Rel::The) && c.joined(j + 1) {
        j + 1
    } else {
        j
    };
    if let Some(unit @ (Unit::Week | Unit::Month | Unit::Quarter | Unit::Year)) = c.unit(j)
        && !c.word(j).ends_with('s')
    {
        let (first, last) = current(c.today(), unit)?;
        return Some((j + 1, first, last));
    }
    // A year in digits after "of" is a year whatever follows it ("the last Friday of 2010 then").
    if let Some((end, year)) = super::absolute::lone_year(c, j) {
        return Some((
            end,
            NaiveDate::from_ymd_opt(year, 1, 1)?,
            NaiveDate::from_ymd_opt(year, 12, 31)?,
        ));
    }
    match moment(c, j)? {
        (end, Moment::Range(Some(Point::Day(first)), Some(Point::Day(last)))) if last > first => {
            Some((end, first, last))
        }
        _ => None,
    }
}

/// The current week, month, quarter or year.
fn current(today: NaiveDate, unit: Unit) -> Option<(NaiveDate, NaiveDate)> {
    let (first, months) = match unit {
        Unit::Week => {
            let monday = week_start(today);
            return Some((monday, monday + Duration::days(6)));
        }
        Unit::Month => (resolve::first_of_month(today), 1),
        Unit::Quarter => (
            NaiveDate::from_ymd_opt(today.year(), (today.month0() / 3) * 3 + 1, 1)?,
            3,
        ),
        _ => (NaiveDate::from_ymd_opt(today.year(), 1, 1)?, 12),
    };
    Some((
        first,
        first.checked_add_months(Months::new(months))?.pred_opt()?,
    ))
}

/// The picked piece inside `first..=last`; `None` when the period holds fewer.
fn pick_in(piece: Piece, pick: Pick, first: NaiveDate, last: NaiveDate) -> Option<Moment> {
    let nth = |n: i64, step: i64, start: NaiveDate| start + Duration::days(step * (n - 1));
    let found = match (piece, pick) {
        (Piece::Weekday(w), Pick::Nth(n)) => Moment::day(nth(n, 7, weekday_after(first, w, true))),
        (Piece::Weekday(w), Pick::Last) => {
            let back =
                (i64::from(last.weekday().num_days_from_monday()) - i64::from(w)).rem_euclid(7);
            Moment::day(last - Duration::days(back))
        }
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
                Pick::Last => {
                    let back = (i64::from(last.weekday().num_days_from_monday()) - 5).rem_euclid(7);
                    last - Duration::days(back)
                }
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
