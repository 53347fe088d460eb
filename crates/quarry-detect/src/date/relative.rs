//! Expressions that only mean something against the reference time: "today", "next Tuesday",
//! "last week", "in 3 days", "2 weeks ago", "the next 3 months", "end of the month", "week 10";
//! and the span of days a period names ("next month", "the year", "March 2020"), which `within`
//! and "week 10 of 2024" read after "of"/"in".

use chrono::{Datelike, NaiveDate, NaiveTime};

use super::cursor::Cursor;
use super::duration::{Count, amount};
use super::lexicon::{Lex, Rel, Unit};
use super::model::{Dur, Moment, Point};
use super::resolve::{
    self, month_span, quarter_span, shift, week_start, weekday_after, weekday_before, year_span,
};

/// A relative expression starting at token `i`.
pub(crate) fn relative(c: &Cursor, i: usize) -> Option<(usize, Moment)> {
    if let Some(found) = day_of_relative_month(c, i) {
        return Some(found);
    }
    match c.lex(i) {
        Lex::Rel(Rel::Today | Rel::Tomorrow | Rel::Yesterday | Rel::Tonight | Rel::Now) => {
            deictic_day(c, i)
        }
        Lex::Rel(Rel::The) => the_phrase(c, i),
        Lex::Rel(
            Rel::Next
            | Rel::Last
            | Rel::This
            | Rel::Coming
            | Rel::Past
            | Rel::Previous
            | Rel::Following
            | Rel::Current,
        ) => shifted(c, i),
        Lex::Weekday(_) => weekday(c, i),
        Lex::Rel(Rel::In | Rel::Within) => in_amount(c, i),
        Lex::Rel(Rel::End | Rel::Beginning | Rel::Middle | Rel::Eod | Rel::Eom | Rel::Eoy) => {
            edge_of(c, i)
        }
        Lex::Rel(Rel::Early | Rel::Late | Rel::Later) => early_or_late(c, i),
        Lex::Unit(Unit::Week) => week_number(c, i),
        _ => amount_ago(c, i),
    }
}

/// today, tomorrow, yesterday, tonight, now, each with an optional part of day after it.
fn deictic_day(c: &Cursor, i: usize) -> Option<(usize, Moment)> {
    let today = c.today();
    let date = match c.lex(i) {
        Lex::Rel(Rel::Tomorrow) => today.succ_opt()?,
        Lex::Rel(Rel::Yesterday) => today.pred_opt()?,
        Lex::Rel(Rel::Now) => return Some((i + 1, Moment::Point(Point::At(c.now, None)))),
        Lex::Rel(Rel::Tonight) => return Some((i + 1, part_of_day_span(today, Rel::Night)?)),
        _ => today,
    };
    if c.joined(i + 1)
        && let Lex::Rel(part @ (Rel::Morning | Rel::Afternoon | Rel::Evening | Rel::Night)) =
            c.lex(i + 1)
    {
        return Some((i + 2, part_of_day_span(date, part)?));
    }
    Some((i + 1, Moment::day(date)))
}

/// A part of the day as a datetime range (Recognizers-Text hours).
pub(crate) fn part_of_day_span(date: NaiveDate, part: Rel) -> Option<Moment> {
    let (from, to) = match part {
        Rel::Morning => ((8, 0, 0), (12, 0, 0)),
        Rel::Afternoon => ((12, 0, 0), (16, 0, 0)),
        Rel::Evening => ((16, 0, 0), (20, 0, 0)),
        Rel::Night => ((20, 0, 0), (23, 59, 59)),
        _ => return None,
    };
    let at = |(h, m, s): (u32, u32, u32)| {
        Some(Point::At(
            date.and_time(NaiveTime::from_hms_opt(h, m, s)?),
            None,
        ))
    };
    Some(Moment::Range(at(from), at(to)))
}

/// "(the) week after next", "month after next", "weekend after next", "year before last": the
/// period one further than next (or last), as "friday after next" is for weekdays.
fn unit_after_next(c: &Cursor, j: usize) -> Option<(usize, Moment)> {
    let unit @ (Unit::Week | Unit::Weekend | Unit::Month | Unit::Quarter | Unit::Year) =
        c.unit(j)?
    else {
        return None;
    };
    if c.word(j).ends_with('s') || !c.joined(j) || !c.joined(j + 1) || !c.joined(j + 2) {
        return None;
    }
    let direction = match (c.lex(j + 1), c.lex(j + 2)) {
        (Lex::Rel(Rel::After), Lex::Rel(Rel::Next)) => Direction::Next,
        (Lex::Rel(Rel::Before), Lex::Rel(Rel::Last)) => Direction::Last,
        _ => return None,
    };
    let Moment::Range(Some(Point::Day(first)), Some(Point::Day(last))) =
        period(c.today(), unit, direction)?
    else {
        return None;
    };
    // One more beyond: the next (last) one as seen from inside that one.
    let inside = if direction == Direction::Next {
        first
    } else {
        last
    };
    Some((j + 3, period(inside, unit, direction)?))
}

/// "the day after tomorrow", "the day before yesterday", "the weekend", "the 4th" (after "on").
fn the_phrase(c: &Cursor, i: usize) -> Option<(usize, Moment)> {
    let today = c.today();
    if c.unit(i + 1) == Some(Unit::Day) {
        if c.rel(i + 2, Rel::After) && c.rel(i + 3, Rel::Tomorrow) {
            return Some((
                i + 4,
                Moment::day(today.checked_add_days(chrono::Days::new(2))?),
            ));
        }
        if c.rel(i + 2, Rel::Before) && c.rel(i + 3, Rel::Yesterday) {
            return Some((
                i + 4,
                Moment::day(today.checked_sub_days(chrono::Days::new(2))?),
            ));
        }
        if c.rel(i + 2, Rel::After) && (c.is_punct(i + 3) || i + 3 >= c.len()) {
            return Some((i + 3, Moment::day(today.succ_opt()?)));
        }
        return None;
    }
    if let Some(found) = unit_after_next(c, i + 1) {
        return Some(found);
    }
    if c.unit(i + 1) == Some(Unit::Weekend) && c.joined(i + 1) {
        let saturday = weekday_after(today, 5, true);
        return Some((i + 2, Moment::days(saturday, saturday.succ_opt()?)));
    }
    // "the 4th", only after "on"/"by"/"until" so that "the 21st century" stays prose.
    let n = c.num(i + 1).filter(|n| n.ordinal && n.digits <= 2)?;
    let after_prep = i > 0
        && ["on", "by", "until", "till", "since", "before", "after"]
            .iter()
            .any(|w| c.is(i - 1, w));
    if !after_prep
        || matches!(
            c.lex(i + 2),
            Lex::Rel(Rel::Of) | Lex::Month(_) | Lex::Unit(_)
        )
    {
        return None;
    }
    let moment = resolve::date_part(
        today,
        super::model::DatePart {
            day: Some(n.value),
            ..Default::default()
        },
    )?;
    Some((i + 2, moment))
}

/// The word before a weekday name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WeekdayWord {
    /// "next"
    Next,
    /// "this", "current"
    This,
    /// "coming", "upcoming", "following"
    Coming,
    /// "last", "past", "previous", "prior"
    Last,
}

impl WeekdayWord {
    fn of(lex: Lex) -> Option<WeekdayWord> {
        match lex {
            Lex::Rel(Rel::Next) => Some(WeekdayWord::Next),
            Lex::Rel(Rel::This | Rel::Current) => Some(WeekdayWord::This),
            Lex::Rel(Rel::Coming | Rel::Following) => Some(WeekdayWord::Coming),
            Lex::Rel(Rel::Last | Rel::Past | Rel::Previous) => Some(WeekdayWord::Last),
            _ => None,
        }
    }
}

/// The convention for "<word> <weekday>" against the reference day, weeks running Monday to
/// Sunday (ISO 8601, as Recognizers-Text and Duckling count them):
///
/// * "next Friday" is the Friday of next week (Recognizers-Text `Next`: the same weekday of
///   the following week). On Tuesday 2013-02-12 "next wednesday" is 02-20, "next tuesday"
///   02-19 and "next monday" 02-18, as in the Duckling and Recognizers-Text suites.
/// * "this Friday", "coming Friday": the first such day on or after today (Duckling's
///   `this <day-of-week>`: "this monday" on that Tuesday is 02-18; "this tuesday" is today).
/// * "last Friday", "past Friday": the most recent such day strictly before today (Duckling's
///   `predNth -1`: "last sunday" on that Tuesday is 02-10, "last tuesday" 02-05).
/// * A bare weekday ("on Friday") is the first one after today, never today.
pub(crate) fn relative_weekday(today: NaiveDate, word: WeekdayWord, weekday: u8) -> NaiveDate {
    match word {
        WeekdayWord::Next => week_start(today) + chrono::Duration::days(7 + i64::from(weekday)),
        WeekdayWord::This | WeekdayWord::Coming => weekday_after(today, weekday, true),
        WeekdayWord::Last => weekday_before(today, weekday),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    Next,
    Last,
    This,
}

pub(crate) fn direction(c: &Cursor, i: usize) -> Option<Direction> {
    match c.lex(i) {
        Lex::Rel(Rel::Next | Rel::Following | Rel::Coming) => Some(Direction::Next),
        Lex::Rel(Rel::Last | Rel::Past | Rel::Previous) => Some(Direction::Last),
        Lex::Rel(Rel::This | Rel::Current) => Some(Direction::This),
        _ => None,
    }
}

/// "next Tuesday", "last week", "this month", "next 3 days", "past 2 weeks", "this afternoon".
fn shifted(c: &Cursor, i: usize) -> Option<(usize, Moment)> {
    let dir = direction(c, i)?;
    let today = c.today();
    let j = i + 1;
    if !c.joined(j) {
        return None;
    }
    match c.lex(j) {
        Lex::Weekday(w) => {
            let date = relative_weekday(today, WeekdayWord::of(c.lex(i))?, w);
            Some((j + 1, Moment::day(date)))
        }
        Lex::Unit(unit) => {
            let moment = period(today, unit, dir)?;
            let end = j + 1;
            // "next week on Tuesday", "this week Friday"
            let k = if c.rel(end, Rel::On) { end + 1 } else { end };
            if unit == Unit::Week
                && c.joined(k)
                && let Lex::Weekday(w) = c.lex(k)
                && let Moment::Range(Some(Point::Day(monday)), _) = moment
            {
                return Some((
                    k + 1,
                    Moment::day(monday + chrono::Duration::days(i64::from(w))),
                ));
            }
            Some((end, moment))
        }
        Lex::Rel(part @ (Rel::Morning | Rel::Afternoon | Rel::Evening | Rel::Night)) => {
            let date = match dir {
                Direction::Last => today.pred_opt()?,
                Direction::Next => today.succ_opt()?,
                Direction::This => today,
            };
            Some((j + 1, part_of_day_span(date, part)?))
        }
        _ => {
            // "next 3 days", "last 3 months", "past 2 weeks", "next couple weeks"
            let (end, dur, count) = amount(c, j)?;
            if count == Count::Article {
                return None;
            }
            rolling(c, today, dir, dur, c.unit(end - 1)?).map(|m| (end, m))
        }
    }
}

/// The calendar period `unit` containing today, or the one after or before it.
pub(crate) fn period(today: NaiveDate, unit: Unit, dir: Direction) -> Option<Moment> {
    let step: i32 = match dir {
        Direction::Next => 1,
        Direction::Last => -1,
        Direction::This => 0,
    };
    match unit {
        Unit::Day => {
            let date = today + chrono::Duration::days(i64::from(step));
            Some(Moment::day(date))
        }
        Unit::Week => {
            let monday = week_start(today) + chrono::Duration::days(7 * i64::from(step));
            Some(Moment::days(monday, monday + chrono::Duration::days(6)))
        }
        Unit::Weekend => {
            let saturday = week_start(today) + chrono::Duration::days(5 + 7 * i64::from(step));
            Some(Moment::days(saturday, saturday.succ_opt()?))
        }
        Unit::Month => {
            let first = resolve::add_to_date(
                resolve::first_of_month(today),
                Dur {
                    months: step,
                    ..Dur::default()
                },
            )?;
            month_span(first.year(), first.month())
        }
        Unit::Quarter => {
            let index = today.year() * 4 + (today.month0() / 3) as i32 + step;
            quarter_span(index.div_euclid(4), index.rem_euclid(4) as u32 + 1)
        }
        Unit::Year => year_span(today.year() + step),
        Unit::Decade => {
            let start = (today.year().div_euclid(10) + step) * 10;
            Some(Moment::days(
                NaiveDate::from_ymd_opt(start, 1, 1)?,
                NaiveDate::from_ymd_opt(start + 9, 12, 31)?,
            ))
        }
        Unit::Fortnight => {
            let start = today + chrono::Duration::days(14 * i64::from(step));
            Some(Moment::days(start, start + chrono::Duration::days(13)))
        }
        Unit::Hour | Unit::Minute | Unit::Second => None,
    }
}

/// The span of days named at `j` ("the" allowed): any expression of whole days, or a bare
/// unit for the current one ("the month", "the year").
pub(crate) fn period_at(c: &Cursor, j: usize) -> Option<(usize, NaiveDate, NaiveDate)> {
    let j = if c.rel(j, Rel::The) && c.joined(j + 1) {
        j + 1
    } else {
        j
    };
    if let Some(unit @ (Unit::Week | Unit::Month | Unit::Quarter | Unit::Year)) = c.unit(j)
        && !c.word(j).ends_with('s')
    {
        let Moment::Range(Some(Point::Day(first)), Some(Point::Day(last))) =
            period(c.today(), unit, Direction::This)?
        else {
            return None;
        };
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
    match c.moment(j)? {
        (end, Moment::Range(Some(Point::Day(first)), Some(Point::Day(last)))) if last > first => {
            Some((end, first, last))
        }
        _ => None,
    }
}

/// "next 3 days" (from tomorrow), "last 3 months" (up to yesterday), "following 2 quarters"
/// (whole quarters), "next 5 minutes" (from now).
fn rolling(c: &Cursor, today: NaiveDate, dir: Direction, dur: Dur, unit: Unit) -> Option<Moment> {
    if dir == Direction::This {
        return None;
    }
    if dur.has_clock_part() {
        let now = c.now;
        let other = resolve::add_to_datetime(
            now,
            if dir == Direction::Next {
                dur
            } else {
                dur.negate()
            },
        )?;
        let (a, b) = if dir == Direction::Next {
            (now, other)
        } else {
            (other, now)
        };
        return Some(Moment::Range(
            Some(Point::At(a, None)),
            Some(Point::At(b, None)),
        ));
    }
    let whole = matches!(unit, Unit::Quarter | Unit::Year | Unit::Decade);
    if whole {
        let Moment::Range(Some(Point::Day(this_start)), _) = period(today, unit, Direction::This)?
        else {
            return None;
        };
        return Some(if dir == Direction::Next {
            let start = resolve::add_to_date(this_start, unit_step(unit))?;
            Moment::days(start, resolve::add_to_date(start, dur)?.pred_opt()?)
        } else {
            Moment::days(
                resolve::add_to_date(this_start, dur.negate())?,
                this_start.pred_opt()?,
            )
        });
    }
    Some(if dir == Direction::Next {
        let start = today.succ_opt()?;
        Moment::days(start, resolve::add_to_date(today, dur)?)
    } else {
        Moment::days(
            resolve::add_to_date(today, dur.negate())?,
            today.pred_opt()?,
        )
    })
}

fn unit_step(unit: Unit) -> Dur {
    super::duration::unit_dur(unit, 1.0)
}

/// A weekday alone or with a week: "Tuesday", "tuesday next week", "Sunday 31", "Sat".
fn weekday(c: &Cursor, i: usize) -> Option<(usize, Moment)> {
    let Lex::Weekday(w) = c.lex(i) else {
        return None;
    };
    let today = c.today();
    let word = c.word(i);
    // Plural weekdays ("on Mondays") are recurring sets, not dates.
    if word.len() > 6 && word.ends_with('s') && !word.eq_ignore_ascii_case("tues") {
        return None;
    }
    let j = i + 1;
    // "friday after next": the one after the next (Duckling's `predNth 1`); "friday before
    // last": the one before the last.
    if c.joined(j) && c.joined(j + 1) {
        if c.rel(j, Rel::After) && c.rel(j + 1, Rel::Next) {
            let date = weekday_after(today, w, false) + chrono::Duration::days(7);
            return Some((j + 2, Moment::day(date)));
        }
        if c.rel(j, Rel::Before) && c.rel(j + 1, Rel::Last) {
            let date = weekday_before(today, w) - chrono::Duration::days(7);
            return Some((j + 2, Moment::day(date)));
        }
    }
    // "Monday two weeks from now", "Friday in three weeks": that weekday in the week the
    // shift lands in.
    if c.joined(j)
        && let Some((end, Moment::Point(Point::Day(day)))) =
            amount_ago(c, j).or_else(|| in_amount(c, j).filter(|_| c.rel(j, Rel::In)))
    {
        let date = week_start(day) + chrono::Duration::days(i64::from(w));
        return Some((end, Moment::day(date)));
    }
    if c.joined(j)
        && let Lex::Rel(r @ (Rel::Next | Rel::Last | Rel::This)) = c.lex(j)
        && c.unit(j + 1) == Some(Unit::Week)
    {
        let step = match r {
            Rel::Next => 7,
            Rel::Last => -7,
            _ => 0,
        };
        let date = week_start(today) + chrono::Duration::days(step + i64::from(w));
        return Some((j + 2, Moment::day(date)));
    }
    if c.joined(j)
        && let Some((end, day)) = super::absolute::day_number(c, j).or_else(|| {
            c.rel(j, Rel::The)
                .then(|| super::absolute::day_number(c, j + 1))
                .flatten()
                .filter(|_| c.joined(j + 1))
        })
        && !matches!(c.lex(end), Lex::Month(_) | Lex::Unit(_) | Lex::Rel(Rel::Of))
        && !(c.tight(end) && (c.punct(end, b':') || c.punct(end, b'/') || c.punct(end, b'-')))
        && !(c.tight(end) && c.punct(end, b'.') && c.tight(end + 1) && c.num(end + 1).is_some())
        && !c.is(end, "h")
        && super::clock::time(c, j).is_none()
        && let Some(date) = weekday_with_day(today, w, day)
    {
        return Some((end, Moment::day(date)));
    }
    if word.len() == 3
        && matches!(w, 2 | 5 | 6)
        && !(c.capital(i) && (c.is_punct(j) || j >= c.len() || c.num(j).is_some()))
    {
        return None; // "wed", "sat", "sun" are also words
    }
    Some((j, Moment::day(weekday_after(today, w, false))))
}

/// The nearest month (future first) whose `day` falls on `weekday`.
fn weekday_with_day(today: NaiveDate, weekday: u8, day: u32) -> Option<NaiveDate> {
    let first = resolve::first_of_month(today);
    for delta in [
        0, 1, -1, 2, -2, 3, -3, 4, 5, 6, 7, 8, 9, 10, 11, 12, -4, -5, -6,
    ] {
        let month = resolve::add_to_date(
            first,
            Dur {
                months: delta,
                ..Dur::default()
            },
        )?;
        if let Some(date) = NaiveDate::from_ymd_opt(month.year(), month.month(), day)
            && resolve::weekday_index(date.weekday()) == weekday
            && (delta != 0 || date >= today || day < today.day())
        {
            return Some(date);
        }
    }
    None
}

/// "in 3 days", "in a week", "within 2 hours".
fn in_amount(c: &Cursor, i: usize) -> Option<(usize, Moment)> {
    if !c.joined(i + 1) {
        return None;
    }
    let (end, dur, _) = amount(c, i + 1)?;
    Some((end, from_now(c, dur)?))
}

/// `now + dur`: a date for calendar units, a datetime for clock units.
fn from_now(c: &Cursor, dur: Dur) -> Option<Moment> {
    let base = if dur.has_clock_part() {
        Point::At(c.now, None)
    } else {
        Point::Day(c.today())
    };
    Some(Moment::Point(shift(base, dur)?))
}

/// "2 weeks ago", "3 days later", "a fortnight hence", "3 years from today", "half an hour from now".
fn amount_ago(c: &Cursor, i: usize) -> Option<(usize, Moment)> {
    let (end, dur, _) = amount(c, i)?;
    if !c.joined(end) {
        return None;
    }
    match c.lex(end) {
        Lex::Rel(Rel::Ago) => Some((end + 1, from_now(c, dur.negate())?)),
        Lex::Rel(Rel::Later | Rel::Hence) => Some((end + 1, from_now(c, dur)?)),
        Lex::Rel(Rel::From | Rel::After)
            if c.rel(end + 1, Rel::Now) || c.rel(end + 1, Rel::Today) =>
        {
            Some((end + 2, from_now(c, dur)?))
        }
        Lex::Rel(Rel::Before) if c.rel(end + 1, Rel::Now) || c.rel(end + 1, Rel::Today) => {
            Some((end + 2, from_now(c, dur.negate())?))
        }
        _ => None,
    }
}

/// "end of the month", "beginning of this week", "end of 2000", "mid-November", "EOD", "EOY".
fn edge_of(c: &Cursor, i: usize) -> Option<(usize, Moment)> {
    let today = c.today();
    let edge = match c.lex(i) {
        Lex::Rel(Rel::Eod) => {
            let at = today.and_time(NaiveTime::from_hms_opt(23, 59, 59)?);
            return Some((i + 1, Moment::Point(Point::At(at, None))));
        }
        Lex::Rel(Rel::Eom) => {
            return Some((
                i + 1,
                edge_span(
                    period(today, Unit::Month, Direction::This)?,
                    Unit::Month,
                    Rel::End,
                )?,
            ));
        }
        Lex::Rel(Rel::Eoy) => {
            return Some((
                i + 1,
                edge_span(year_span(today.year())?, Unit::Year, Rel::End)?,
            ));
        }
        Lex::Rel(edge) => edge,
        _ => return None,
    };
    // "mid-November", "mid November"
    if edge == Rel::Middle && !c.rel(i + 1, Rel::Of) {
        let j = if c.punct(i + 1, b'-') && c.tight(i + 1) {
            i + 2
        } else {
            i + 1
        };
        if let Lex::Month(m) = c.lex(j)
            && c.joined(j)
        {
            let span = resolve::date_part(
                today,
                super::model::DatePart {
                    month: Some(u32::from(m)),
                    ..Default::default()
                },
            )?;
            return Some((j + 1, edge_span(span, Unit::Month, Rel::Middle)?));
        }
        return None;
    }
    if !c.rel(i + 1, Rel::Of) {
        return None;
    }
    let mut j = i + 2;
    if c.rel(j, Rel::The) {
        j += 1;
    }
    let (end, span, unit) = if let Some(dir) = direction(c, j) {
        let unit = c.unit(j + 1)?;
        (j + 2, period(today, unit, dir)?, unit)
    } else if let Some(unit) = c.unit(j) {
        (j + 1, period(today, unit, Direction::This)?, unit)
    } else if let Some((end, year)) = super::absolute::lone_year(c, j) {
        (end, year_span(year)?, Unit::Year)
    } else if let Lex::Month(m) = c.lex(j) {
        let span = resolve::date_part(
            today,
            super::model::DatePart {
                month: Some(u32::from(m)),
                ..Default::default()
            },
        )?;
        (j + 1, span, Unit::Month)
    } else {
        return None;
    };
    Some((end, edge_span(span, unit, edge)?))
}

/// The first, middle or last part of a period, as Recognizers-Text and Duckling cut them.
fn edge_span(span: Moment, unit: Unit, edge: Rel) -> Option<Moment> {
    let Moment::Range(Some(Point::Day(first)), Some(Point::Day(last))) = span else {
        return None;
    };
    let day = |d: i64| first + chrono::Duration::days(d);
    let (a, b) = match (unit, edge) {
        (Unit::Year, Rel::End) => (NaiveDate::from_ymd_opt(first.year(), 9, 1)?, last),
        (Unit::Year, Rel::Beginning) => (first, NaiveDate::from_ymd_opt(first.year(), 3, 31)?),
        (Unit::Year, _) => (
            NaiveDate::from_ymd_opt(first.year(), 4, 1)?,
            NaiveDate::from_ymd_opt(first.year(), 9, 30)?,
        ),
        (Unit::Month, Rel::End) => (day(15), last),
        (Unit::Month, Rel::Beginning) => (first, day(9)),
        (Unit::Month, _) => (day(9), day(19)),
        (Unit::Week | Unit::Weekend, Rel::End) => (day(3), last),
        (Unit::Week | Unit::Weekend, Rel::Beginning) => (first, day(2)),
        (Unit::Week | Unit::Weekend, _) => (day(2), day(4)),
        (Unit::Day, Rel::End) => {
            let at = first.and_time(NaiveTime::from_hms_opt(23, 59, 59)?);
            return Some(Moment::Point(Point::At(at, None)));
        }
        _ => return None,
    };
    Some(Moment::days(a, b))
}

/// "week 10": ISO week `n` of the reference year, or of the year after "of"/"in" ("week 12 of
/// 2024", "week 3 of next year").
fn week_number(c: &Cursor, i: usize) -> Option<(usize, Moment)> {
    let n = c
        .plain(i + 1, 2)
        .filter(|&n| (1..=53).contains(&n) && c.joined(i + 1))?;
    if c.tight(i + 2) && !c.is_punct(i + 2) {
        return None;
    }
    let mut end = i + 2;
    let mut year = c.today().year();
    if (c.rel(end, Rel::Of) || c.rel(end, Rel::In))
        && c.joined(end)
        && c.joined(end + 1)
        && let Some((after, first, last)) = period_at(c, end + 1)
        && (first.ordinal(), last.month(), last.day(), last.year()) == (1, 12, 31, first.year())
    {
        year = first.year();
        end = after;
    }
    let monday = NaiveDate::from_isoywd_opt(year, n, chrono::Weekday::Mon)?;
    Some((
        end,
        Moment::days(monday, monday + chrono::Duration::days(6)),
    ))
}

/// "later this month", "early next week", "late last year", "early September": "early" and
/// "earlier" are the first part of the period, "late" and "later" the last part, cut as
/// [`edge_span`] cuts "beginning of" and "end of" (Recognizers-Text reads "early",
/// "beginning of" and "start of" alike). A bare year after "early" keeps its own reading.
fn early_or_late(c: &Cursor, i: usize) -> Option<(usize, Moment)> {
    let edge = match c.lex(i) {
        Lex::Rel(Rel::Early) => Rel::Beginning,
        Lex::Rel(Rel::Late | Rel::Later) => Rel::End,
        _ => return None,
    };
    let today = c.today();
    let mut j = i + 1;
    if c.rel(j, Rel::In) {
        j += 1;
    }
    if !c.joined(j) {
        return None;
    }
    // A part of a day: "early morning", "late afternoon", "later this afternoon", "late
    // tomorrow night", "early in the morning": its first or second half.
    if let Some(found) = half_of_part_of_day(c, j, edge) {
        return Some(found);
    }
    if let Some(dir) = direction(c, j) {
        let unit = c.unit(j + 1).filter(|_| c.joined(j + 1))?;
        if !matches!(unit, Unit::Week | Unit::Month | Unit::Year) {
            return None;
        }
        return Some((j + 2, edge_span(period(today, unit, dir)?, unit, edge)?));
    }
    let Lex::Month(m) = c.lex(j) else {
        return None;
    };
    let (end, part) = super::absolute::named_date(c, j)
        .filter(|(_, p)| p.day.is_none() && p.month == Some(u32::from(m)))?;
    let span = resolve::date_part(today, part)?;
    Some((end, edge_span(span, Unit::Month, edge)?))
}

/// The first (`edge` beginning) or second half of the part of a day written at `j`, with or
/// without its day ("morning", "the morning", "this afternoon", "tomorrow night").
fn half_of_part_of_day(c: &Cursor, j: usize, edge: Rel) -> Option<(usize, Moment)> {
    let j = if c.rel(j, Rel::The) { j + 1 } else { j };
    let (end, span) = match c.lex(j) {
        Lex::Rel(part @ (Rel::Morning | Rel::Afternoon | Rel::Evening | Rel::Night)) => {
            (j + 1, part_of_day_span(c.today(), part)?)
        }
        _ => {
            let (end, moment) = c.moment(j)?;
            (end, moment)
        }
    };
    let Moment::Range(Some(Point::At(from, _)), Some(Point::At(to, _))) = span else {
        return None;
    };
    // Parts of one day only (not "late next week").
    if from.date() != to.date() || to - from > chrono::Duration::hours(12) {
        return None;
    }
    let middle = from + (to - from) / 2;
    let (a, b) = if edge == Rel::Beginning {
        (from, middle)
    } else {
        (middle, to)
    };
    Some((
        end,
        Moment::Range(Some(Point::At(a, None)), Some(Point::At(b, None))),
    ))
}

/// "20 of this month", "the 3rd of next month", "the fifteenth of last month": a day of the
/// month named relative to today.
fn day_of_relative_month(c: &Cursor, i: usize) -> Option<(usize, Moment)> {
    let j = if c.rel(i, Rel::The) { i + 1 } else { i };
    let (k, day) = super::absolute::day_number(c, j)?;
    if !c.rel(k, Rel::Of) || !c.joined(k + 1) {
        return None;
    }
    let m = if c.rel(k + 1, Rel::The) { k + 2 } else { k + 1 };
    let dir = direction(c, m)?;
    if c.unit(m + 1) != Some(Unit::Month) || c.word(m + 1).ends_with('s') {
        return None;
    }
    let Moment::Range(Some(Point::Day(first)), _) = period(c.today(), Unit::Month, dir)? else {
        return None;
    };
    let date = NaiveDate::from_ymd_opt(first.year(), first.month(), day)?;
    Some((m + 2, Moment::day(date)))
}
