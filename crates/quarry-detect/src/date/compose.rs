//! Joins the pieces into one expression: a date with a time ("January 15, 2024 at 3pm"), a
//! time with a date ("10:06am Dec 11, 2014"), open ranges ("since tomorrow", "before 2018"),
//! shifted dates ("3 days after January 12th"), bare years after a preposition, durations.

use chrono::NaiveDate;

use super::absolute::{lone_year, named_date, numeric_date, quarter, year_month};
use super::anchored::{amount_from_start, bounded_amount, start_for_amount, weekdays_from};
use super::clock::{iso_offset, time};
use super::cursor::{Cursor, Entries, Found};
use super::duration::{Count, amount};
use super::holiday::holiday;
use super::lexicon::{Lex, Rel};
use super::model::{DatePart, Moment, Point, TimePart};
use super::periods::named_period;
use super::recurrence::recurrence;
use super::relative::{part_of_day_span, relative};
use super::resolve::{self, shift};
use super::within::unit_of_period;

/// The rules that read a whole expression, as the cursor carries them for the rules that embed
/// one (see [`Entries`]).
pub(crate) const ENTRIES: Entries = Entries {
    moment,
    date_at,
    date_or_time,
    then_time,
};

fn longer(best: Found, candidate: Found) -> Found {
    match (best, candidate) {
        (Some(b), Some(c)) if c.0 > b.0 => Some(c),
        (None, c) => c,
        (b, _) => b,
    }
}

/// The longest single expression (not a two-ended range) starting at token `i`.
pub(crate) fn moment(c: &Cursor, i: usize) -> Found {
    c.memoized(&c.moment_memo, i, || moment_uncached(c, i))
}

fn moment_uncached(c: &Cursor, i: usize) -> Found {
    // "around next tuesday", "circa 5 in the morning": the hedge stays in the span.
    if is_hedge(c, i) && c.joined(i + 1) {
        return moment(c, i + 1).filter(|(_, m)| !matches!(m, Moment::Duration(_)));
    }
    let found = core_moment(c, i)?;
    Some(or_later(c, found))
}

fn is_hedge(c: &Cursor, i: usize) -> bool {
    ["around", "about", "circa", "approximately", "approx"]
        .iter()
        .any(|w| c.is(i, w))
}

/// "3 pm or later", "Friday or earlier", "2020 and after", "June onwards": an open range from
/// (or to) the moment.
fn or_later(c: &Cursor, (end, m): (usize, Moment)) -> (usize, Moment) {
    if matches!(m, Moment::Duration(_) | Moment::Every { .. }) {
        return (end, m);
    }
    let Some((first, last)) = ends(m) else {
        return (end, m);
    };
    if ["onwards", "onward", "forward"]
        .iter()
        .any(|w| c.is(end, w))
        && c.joined(end)
    {
        return (end + 1, Moment::Range(Some(first), None));
    }
    if !(c.is(end, "or") || c.rel(end, Rel::And)) || !c.joined(end + 1) {
        return (end, m);
    }
    if c.rel(end + 1, Rel::Later) || c.rel(end + 1, Rel::After) {
        return (end + 2, Moment::Range(Some(first), None));
    }
    if c.is(end + 1, "earlier") || c.rel(end + 1, Rel::Before) {
        return (end + 2, Moment::Range(None, Some(last)));
    }
    (end, m)
}

fn core_moment(c: &Cursor, i: usize) -> Found {
    // "at 6.": a bare hour after "at" (the span leaves "at" out).
    if i > 0
        && c.rel(i - 1, Rel::At)
        && c.joined(i)
        && let Some((end, t)) = bare_hour(c, i)
        && time(c, i).is_none()
    {
        // "at 7 tomorrow morning": with the day after it.
        return with_day_at(c, end, t)
            .or_else(|| Some((end, Moment::Point(Point::Clock(t.naive()?, None)))));
    }
    // A recurrence first, so that it wins a tie ("Mondays at 5pm" is not one Monday).
    let mut best = recurrence(c, i);
    best = longer(best, date_or_time(c, i));
    best = longer(best, open_range(c, i));
    best = longer(best, shifted_date(c, i));
    best = longer(best, year_after_preposition(c, i));
    best = longer(best, year_in_words(c, i));
    best = longer(best, start_for_amount(c, i));
    best = longer(best, amount_from_start(c, i));
    best = longer(best, bounded_amount(c, i));
    best = longer(best, weekdays_from(c, i));
    best = longer(best, part_of_date(c, i));
    if best.is_none() {
        best = duration_alone(c, i);
    }
    best
}

/// A date (with the time written after it) or a time (with the date written after it), the
/// longer: the start of an interval built around it.
pub(crate) fn date_or_time(c: &Cursor, i: usize) -> Found {
    c.memoized(&c.date_or_time_memo, i, || {
        longer(date_with_time(c, i), time_with_date(c, i))
    })
}

/// A date alone: the longest of the absolute, holiday and relative readings.
pub(crate) fn date_at(c: &Cursor, i: usize) -> Found {
    c.memoized(&c.date_memo, i, || date_uncached(c, i))
}

fn date_uncached(c: &Cursor, i: usize) -> Found {
    let today = c.today();
    let part = |found: Option<(usize, DatePart)>| -> Found {
        let (end, part) = found?;
        Some((end, resolve::date_part(today, part)?))
    };
    let mut best = part(numeric_date(c, i));
    best = longer(best, part(named_date(c, i)));
    best = longer(best, part(year_month(c, i)));
    best = longer(best, quarter(c, i, today));
    best = longer(best, holiday(c, i));
    best = longer(best, unit_of_period(c, i));
    best = longer(best, super::within::possessive(c, i));
    best = longer(best, named_period(c, i));
    longer(best, relative(c, i))
}

/// A date, then optionally a time or part of day: "Jan 15, 2024 at 3pm", "2024-01-15T15:00:00Z",
/// "tuesday afternoon", "Wed Aug 05 12:00:00 2015".
fn date_with_time(c: &Cursor, i: usize) -> Found {
    let (end, moment) = date_at(c, i)?;
    let Moment::Point(Point::Day(date)) = moment else {
        return Some(part_of_day_with_time(c, end, moment).unwrap_or((end, moment)));
    };
    then_time(c, end, date)
}

/// The day `date` written up to token `end`, with the time or part of day written after it
/// ("… at 3pm", "…T15:00:00Z", "… afternoon"), or alone.
pub(crate) fn then_time(c: &Cursor, end: usize, date: NaiveDate) -> Found {
    let moment = Moment::day(date);
    // ISO 8601: 2024-01-15T15:00:00+02:00
    if c.tight(end)
        && c.is(end, "t")
        && c.tight(end + 1)
        && let Some((after, t)) = time(c, end + 1)
    {
        let (after, offset) = match iso_offset(c, after) {
            Some((after, offset)) => (after, Some(offset)),
            None => (after, t.offset),
        };
        return Some((after, at(date, t, offset)?));
    }
    let mut k = end;
    // "May/22(Tue)-11:30 AM": a weekday in brackets after the date.
    if c.punct(k, b'(') && matches!(c.lex(k + 1), Lex::Weekday(_)) && c.punct(k + 2, b')') {
        k += 3;
    }
    if (c.punct(k, b',') || c.punct(k, b'-') && c.tight(k)) && c.joined(k + 1) {
        k += 1;
    }
    let at_word =
        c.rel(k, Rel::At) || c.punct(k, b'@') || c.is(k, "um") || c.is(k, "u") || c.is(k, "klo");
    if at_word && c.joined(k + 1) {
        k += 1;
    }
    if c.joined(k) {
        if let Some((after, t)) =
            time(c, k).or_else(|| if at_word { bare_hour(c, k) } else { None })
        {
            // "Wed Aug 05 12:00:00 2015": the year after the time.
            if let Some((year_end, year)) = ctime_year(c, after)
                && let Some(fixed) = date.with_year_checked(year)
            {
                return Some((year_end, at(fixed, t, t.offset)?));
            }
            return Some((after, at(date, t, t.offset)?));
        }
        // "tuesday afternoon", "15 of february in the morning"
        let j = if c.rel(k, Rel::In) && c.rel(k + 1, Rel::The) {
            k + 2
        } else {
            k
        };
        if let Lex::Rel(part @ (Rel::Morning | Rel::Afternoon | Rel::Evening | Rel::Night)) =
            c.lex(j)
            && c.joined(j)
            && (j == k || j == end + 2)
        {
            return Some((j + 1, part_of_day_span(date, part)?));
        }
    }
    Some((end, moment))
}

/// A part of the day of any day: "the morning of June 3", "evening of Christmas Eve", "the
/// night of the 4th of July", "afternoon on Friday".
fn part_of_date(c: &Cursor, i: usize) -> Found {
    let j = if c.rel(i, Rel::The) && c.joined(i + 1) {
        i + 1
    } else {
        i
    };
    let Lex::Rel(part @ (Rel::Morning | Rel::Afternoon | Rel::Evening | Rel::Night)) = c.lex(j)
    else {
        return None;
    };
    if !(c.rel(j + 1, Rel::Of) || c.rel(j + 1, Rel::On)) || !c.joined(j + 1) || !c.joined(j + 2) {
        return None;
    }
    let (end, Moment::Point(Point::Day(date))) = date_at(c, j + 2)? else {
        return None;
    };
    Some((end, part_of_day_span(date, part)?))
}

/// "this afternoon at 3:20", "tonight at 11pm", "this evening at 8": a time inside a part of
/// the day, moved to the afternoon when written without am/pm.
fn part_of_day_with_time(c: &Cursor, end: usize, m: Moment) -> Found {
    let Moment::Range(Some(Point::At(from, _)), Some(Point::At(to, _))) = m else {
        return None;
    };
    if from.date() != to.date() || !c.rel(end, Rel::At) || !c.joined(end + 1) {
        return None;
    }
    let (after, mut t) = time(c, end + 1).or_else(|| bare_hour(c, end + 1))?;
    use chrono::Timelike;
    if !t.meridiem && from.hour() >= 12 && t.hour < 12 {
        t.hour += 12;
    }
    Some((after, at(from.date(), t, t.offset)?))
}

trait WithYear {
    fn with_year_checked(self, year: i32) -> Option<NaiveDate>;
}

impl WithYear for NaiveDate {
    fn with_year_checked(self, year: i32) -> Option<NaiveDate> {
        use chrono::Datelike;
        self.with_year(year)
    }
}

fn ctime_year(c: &Cursor, i: usize) -> Option<(usize, i32)> {
    let n = c
        .num(i)
        .filter(|n| n.digits == 4 && !n.ordinal && c.joined(i))?;
    (1000..=2999)
        .contains(&n.value)
        .then_some((i + 1, n.value as i32))
}

/// "at 6", "at 7." — a bare hour is a time only after "at" and before a boundary.
fn bare_hour(c: &Cursor, i: usize) -> Option<(usize, TimePart)> {
    let h = c
        .plain(i, 2)
        .or_else(|| match c.lex(i) {
            Lex::Cardinal(h) => Some(u32::from(h)),
            _ => None,
        })
        .filter(|&h| (1..=12).contains(&h))?;
    let next_ok = i + 1 >= c.len()
        || !c.joined(i + 1)
        || c.punct(i + 1, b'.') && !c.tight(i + 2)
        || c.punct(i + 1, b',')
        || c.punct(i + 1, b'!')
        || c.punct(i + 1, b'?')
        || matches!(
            c.lex(i + 1),
            Lex::Rel(Rel::Tomorrow | Rel::Today | Rel::Tonight | Rel::On) | Lex::Weekday(_)
        );
    next_ok.then_some((
        i + 1,
        TimePart {
            hour: h,
            minute: 0,
            second: 0,
            offset: None,
            meridiem: false,
        },
    ))
}

fn at(date: NaiveDate, t: TimePart, offset: Option<i16>) -> Option<Moment> {
    let mut date = date;
    if t.hour == 24 {
        date = date.succ_opt()?;
    }
    Some(Moment::Point(Point::At(date.and_time(t.naive()?), offset)))
}

/// A time, then optionally its date: "10:06am Dec 11, 2014", "8.30 pm today",
/// "at 7:30 PM on Fri, Sep 20", "1 a.m 20.07.2021".
fn time_with_date(c: &Cursor, i: usize) -> Found {
    let (end, t) = time(c, i)?;
    // "8 this evening", "4:30 this afternoon": the part of the day names today.
    if end >= i + 3
        && c.rel(end - 2, Rel::This)
        && matches!(
            c.lex(end - 1),
            Lex::Rel(Rel::Morning | Rel::Afternoon | Rel::Evening | Rel::Night)
        )
    {
        return Some((end, at(c.today(), t, t.offset)?));
    }
    // "7 tonight", "11:30 tonight": today, after noon.
    if c.rel(end, Rel::Tonight) && c.joined(end) {
        let mut t = t;
        if !t.meridiem && t.hour < 12 {
            t.hour += 12;
        }
        return Some((end + 1, at(c.today(), t, t.offset)?));
    }
    if let Some(found) = with_day_at(c, end, t) {
        return Some(found);
    }
    Some((end, Moment::Point(Point::Clock(t.naive()?, t.offset))))
}

/// The time `t` on the day written after `end` (after a comma, "on" or "of"): a day ("3pm tomorrow"), or a part of one day
/// ("five-thirty tomorrow evening"), which moves an hour written without am/pm to its half of
/// the day.
fn with_day_at(c: &Cursor, end: usize, t: TimePart) -> Found {
    let mut k = end;
    if c.punct(k, b',') {
        k += 1;
    }
    if c.rel(k, Rel::On) || c.rel(k, Rel::Of) {
        k += 1;
    }
    if !c.joined(k) {
        return None;
    }
    let (after, day) = date_at(c, k)?;
    match day {
        Moment::Point(Point::Day(date)) => Some((after, at(date, t, t.offset)?)),
        Moment::Range(Some(Point::At(from, _)), Some(Point::At(to, _)))
            if from.date() == to.date() =>
        {
            use chrono::Timelike;
            let mut t = t;
            if !t.meridiem && from.hour() >= 12 && t.hour < 12 {
                t.hour += 12;
            }
            Some((after, at(from.date(), t, t.offset)?))
        }
        _ => None,
    }
}

/// "since tomorrow", "after 2010", "before 11 am", "until Friday", "by June 3", "to date",
/// "starting on Sep 2019".
fn open_range(c: &Cursor, i: usize) -> Found {
    // "sales to date": up to today (not "up to date", which is a state).
    if c.rel(i, Rel::To) && c.is(i + 1, "date") && c.joined(i + 1) && !(i > 0 && c.is(i - 1, "up"))
    {
        return Some((i + 2, Moment::Range(None, Some(Point::Day(c.today())))));
    }
    // "starting on Sep 2019", "beginning Monday", "effective from June 1": from then on.
    let starting = ["starting", "beginning", "effective", "commencing"]
        .iter()
        .any(|w| c.is(i, w));
    let (kind, j) = match c.lex(i) {
        Lex::Rel(r @ (Rel::Since | Rel::After | Rel::Before | Rel::Till)) => (r, i + 1),
        // "by Friday": from now until its end.
        Lex::Rel(Rel::By) => (Rel::Till, i + 1),
        _ if starting => {
            let on = matches!(c.lex(i + 1), Lex::Rel(Rel::On | Rel::From | Rel::In));
            (Rel::Since, if on { i + 2 } else { i + 1 })
        }
        _ => return None,
    };
    if !c.joined(j) {
        return None;
    }
    // "after around 3:30pm": a hedge inside stays in the span. (Not `moment`, whose "or
    // later" would read "after 2010 and before 2018" as "2010 and before".)
    let j = if is_hedge(c, j) && c.joined(j + 1) {
        j + 1
    } else {
        j
    };
    let inner = core_moment(c, j)
        .filter(|(_, m)| !matches!(m, Moment::Duration(_) | Moment::Every { .. }))
        .or_else(|| {
            let (end, year) = lone_year(c, j)?;
            Some((end, resolve::year_span(year)?))
        })?;
    let (end, m) = inner;
    let (first, last) = ends(m)?;
    if c.rel(i, Rel::By) {
        // Duckling's reading: from now until then (a time alone is today's).
        let (now, last) = match last {
            Point::Day(_) => (Point::Day(c.today()), last),
            Point::At(_, offset) => (Point::At(c.now, offset), last),
            Point::Clock(t, offset) => (
                Point::At(c.now, offset),
                Point::At(c.today().and_time(t), offset),
            ),
        };
        return Some((end, Moment::Range(Some(now), Some(last))));
    }
    let range = match kind {
        Rel::Since => Moment::Range(Some(first), None),
        Rel::After => Moment::Range(Some(after(last)?), None),
        Rel::Before => Moment::Range(None, Some(before(first)?)),
        _ => Moment::Range(None, Some(last)),
    };
    Some((end, range))
}

/// The first and last points of a moment.
pub(crate) fn ends(m: Moment) -> Option<(Point, Point)> {
    match m {
        Moment::Point(p) => Some((p, p)),
        Moment::Range(Some(a), Some(b)) => Some((a, b)),
        _ => None,
    }
}

fn after(p: Point) -> Option<Point> {
    match p {
        Point::Day(d) => Some(Point::Day(d.succ_opt()?)),
        other => Some(other),
    }
}

fn before(p: Point) -> Option<Point> {
    match p {
        Point::Day(d) => Some(Point::Day(d.pred_opt()?)),
        other => Some(other),
    }
}

/// An amount before or after any anchor: "2 weeks from January 15", "3 days after January
/// 12th", "a week before Christmas", "two years after 2010" (a period moves whole), and "the
/// day after Thanksgiving", "the day before June 3".
fn shifted_date(c: &Cursor, i: usize) -> Found {
    let (end, dur) = if c.rel(i, Rel::The) && c.unit(i + 1) == Some(super::lexicon::Unit::Day) {
        (
            i + 2,
            super::model::Dur {
                days: 1,
                ..super::model::Dur::default()
            },
        )
    } else {
        let (end, dur, _) = amount(c, i)?;
        (end, dur)
    };
    let negative = match c.lex(end) {
        Lex::Rel(Rel::After | Rel::From) => false,
        Lex::Rel(Rel::Before) => true,
        _ => return None,
    };
    if !c.joined(end + 1) || c.rel(end + 1, Rel::Now) || c.rel(end + 1, Rel::Today) {
        return None;
    }
    let dur = if negative { dur.negate() } else { dur };
    let (after, m) = date_at(c, end + 1).or_else(|| {
        let (end, year) = lone_year(c, end + 1)?;
        Some((end, resolve::year_span(year)?))
    })?;
    match m {
        Moment::Point(point) => Some((after, Moment::Point(shift(point, dur)?))),
        // A period moves whole: "two years after 2010" is 2012; whole months stay whole
        // ("a month after February" ends on March 31).
        Moment::Range(Some(a @ Point::Day(first)), Some(Point::Day(last)))
            if !dur.has_clock_part() =>
        {
            let next = Point::Day(last.succ_opt()?);
            let Point::Day(moved_next) = shift(next, dur)? else {
                return None;
            };
            Some((
                after,
                Moment::Range(
                    Some(shift(a, dur)?),
                    Some(Point::Day(moved_next.pred_opt()?)),
                ),
            ))
            .filter(|_| first <= last)
        }
        _ => None,
    }
}

/// "in 2014", "since 1998", "of 2007 and 2009": a year where a preposition says it is one.
fn year_after_preposition(c: &Cursor, i: usize) -> Found {
    let (end, year) = lone_year(c, i)?;
    let prev = i.checked_sub(1)?;
    if !c.joined(i) {
        return None;
    }
    let strong = matches!(
        c.lex(prev),
        Lex::Rel(
            Rel::In | Rel::Since | Rel::After | Rel::Before | Rel::Till | Rel::From | Rel::Through
        )
    ) || [
        "during", "by", "year", "until", "circa", "early", "late", "fiscal", "fy",
    ]
    .iter()
    .any(|w| c.is(prev, w));
    let weak = matches!(c.lex(prev), Lex::Rel(Rel::Of | Rel::To | Rel::And))
        && !(c.is_word(end) && c.joined(end) && matches!(c.lex(end), Lex::Other));
    let and_list =
        c.rel(prev, Rel::And) && prev >= 1 && c.num(prev - 1).is_some_and(|n| n.digits == 4);
    if !(strong || weak && (!c.rel(prev, Rel::And) || and_list)) {
        return None;
    }
    Some((end, resolve::year_span(year)?))
}

/// "nineteen eighty-six", "eighteen oh five": a year in words in the paired form, whose
/// first half is a teen, reads as a year on its own ("twenty twenty" and "two thousand and
/// twenty" need a date or a preposition around them).
fn year_in_words(c: &Cursor, i: usize) -> Found {
    if !matches!(c.lex(i), Lex::Cardinal(11..=19)) {
        return None;
    }
    let (end, year, form) = super::spelled::year(c, i)?;
    if form != super::spelled::YearForm::Paired || c.unit(end).is_some() {
        return None;
    }
    Some((end, resolve::year_span(year)?))
}

/// "45 minutes", "three weeks", "one and a half hours".
fn duration_alone(c: &Cursor, i: usize) -> Found {
    let (end, dur, count) = amount(c, i)?;
    (count == Count::Number).then_some((end, Moment::Duration(dur)))
}
