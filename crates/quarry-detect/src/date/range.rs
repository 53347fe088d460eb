//! Two-ended ranges: "January 12, 2016 - 01/22/2016", "from 10/1 to 11/7", "between 2014 and
//! 2018", "July 13 to 15", "13 to 15 July", "Jan-Feb 2017", "3:30-6:00pm", "Monday 8-9am".
//!
//! Each end is parsed on its own as a [`End`] that may lack parts; the missing parts are taken
//! from the other end ("July 13 to 15" reuses July, "Jan-Feb 2017" reuses 2017).

use chrono::{Datelike, NaiveDate, NaiveTime, Timelike};

use super::absolute::{day_number, named_date, numeric_date};
use super::clock::time;
use super::compose::{date_at, ends};
use super::cursor::Cursor;
use super::lexicon::{Lex, Rel};
use super::model::{DatePart, Moment, Point, TimePart};
use super::resolve;

/// One end of a range before the other end fills its gaps.
#[derive(Debug, Clone, Copy)]
enum End {
    Part(DatePart),
    Year(i32),
    Day(u32),
    Clock(TimePart),
    Hour(u32),
    Resolved(Moment),
}

/// A range starting at token `i` (which may be "from" or "between").
pub(crate) fn range(c: &Cursor, i: usize) -> Option<(usize, Moment)> {
    let (start, joiners): (usize, &[Rel]) = match c.lex(i) {
        Lex::Rel(Rel::From) => (i + 1, &[Rel::To, Rel::Till, Rel::Through]),
        Lex::Rel(Rel::Between) => (i + 1, &[Rel::And, Rel::To]),
        _ => (i, &[Rel::To, Rel::Till, Rel::Through]),
    };
    if start != i && !c.joined(start) {
        return None;
    }
    // Never start inside a longer number ("10/1-11/7" is not "1-11/7").
    if c.tight(i)
        && i >= 2
        && [b'/', b'.', b'-', b':'].iter().any(|&p| c.punct(i - 1, p))
        && c.num(i - 2).is_some()
    {
        return None;
    }
    let (a_end, a) = end_at(c, start)?;
    // The joiner: a dash, or a word.
    let dash =
        (c.punct(a_end, b'-') || c.punct(a_end, 0) && is_dash(c.word(a_end))) && c.joined(a_end);
    let word = joiners.iter().any(|&r| c.rel(a_end, r)) && c.joined(a_end);
    if !(dash && (start == i || c.rel(i, Rel::From) || c.rel(i, Rel::Between)) || word)
        || !c.joined(a_end + 1)
    {
        return None;
    }
    let (b_end, b) = end_at(c, a_end + 1)?;
    // "June 10-12, 2019", "10 to 12 June 2019": a year after the range is both ends' year.
    let (b_end, a, b) = with_trailing_year(c, b_end, a, b);
    // A dash range glued to more digit groups is a phone or an identifier ("2014-2015-3344",
    // "10-12-555"), not a range.
    if dash
        && c.tight(b_end)
        && [b'-', b'/', b'.'].iter().any(|&p| c.punct(b_end, p))
        && c.tight(b_end + 1)
        && c.num(b_end + 1).is_some()
    {
        return None;
    }
    let (moment, weak) = combine(c, a, b, dash)?;
    // A date after a time range: "9h30 - 11h00 on Thursday", "between 3 and 5 on 1/1/2015",
    // "between 7 and 9 last night".
    if let Moment::Range(Some(Point::Clock(t1, _)), Some(Point::Clock(t2, _))) = moment {
        let k = if c.rel(b_end, Rel::On) || c.rel(b_end, Rel::Of) {
            b_end + 1
        } else {
            b_end
        };
        if c.joined(k)
            && let Some((after, m)) = date_at(c, k)
            && let Some((date, pm)) = day_and_part(m)
        {
            return Some((after, on_day(date, t1, t2, pm)));
        }
    }
    // Two bare numbers are a time range only beside a date ("Monday 6-8"), never alone ("3-1").
    (!weak).then_some((b_end, moment))
}

/// A range that is only a pair of bare hours, to be accepted only next to a date.
pub(crate) fn weak_range(c: &Cursor, i: usize) -> Option<(usize, Moment)> {
    let (start, joiner_ok) = match c.lex(i) {
        Lex::Rel(Rel::From) => (i + 1, true),
        Lex::Rel(Rel::Between) => (i + 1, true),
        _ => (i, false),
    };
    let (a_end, a) = end_at(c, start)?;
    let joined = c.joined(a_end)
        && (c.punct(a_end, b'-')
            || joiner_ok
                && [Rel::To, Rel::Till, Rel::And]
                    .iter()
                    .any(|&r| c.rel(a_end, r)));
    if !joined {
        return None;
    }
    let (b_end, b) = end_at(c, a_end + 1)?;
    let (moment, _) = combine(c, a, b, false)?;
    Some((b_end, moment))
}

/// The day of a date or of a part of a day, and whether that part is after noon.
fn day_and_part(m: Moment) -> Option<(NaiveDate, bool)> {
    match m {
        Moment::Point(Point::Day(d)) => Some((d, false)),
        Moment::Range(Some(Point::At(a, _)), Some(Point::At(b, _))) if a.date() == b.date() => {
            Some((a.date(), a.hour() >= 12))
        }
        _ => None,
    }
}

/// Both ends, with a year written right after the second one (", 2019" or " 2019") given to
/// any end that lacks one; the end moves past the year.
fn with_trailing_year(c: &Cursor, end: usize, a: End, b: End) -> (usize, End, End) {
    let yearless = |e: &End| matches!(e, End::Part(p) if p.year.is_none() && p.month.is_some());
    let gives_day = |e: &End| matches!(e, End::Day(_) | End::Hour(_));
    if !(yearless(&b) || gives_day(&b) && yearless(&a)) {
        return (end, a, b);
    }
    let k = if c.punct(end, b',') { end + 1 } else { end };
    let Some((after, year)) = super::absolute::lone_year(c, k).filter(|_| c.joined(k)) else {
        return (end, a, b);
    };
    let with_year = |e: End| match e {
        End::Part(p) if p.year.is_none() => End::Part(DatePart {
            year: Some(year),
            ..p
        }),
        other => other,
    };
    (after, with_year(a), with_year(b))
}

fn is_dash(s: &str) -> bool {
    matches!(s, "–" | "—")
}

fn end_at(c: &Cursor, i: usize) -> Option<(usize, End)> {
    let mut best: Option<(usize, End)> = None;
    let offer = |best: &mut Option<(usize, End)>, candidate: Option<(usize, End)>| {
        if let Some(cand) = candidate
            && best.is_none_or(|b| cand.0 > b.0)
        {
            *best = Some(cand);
        }
    };
    offer(
        &mut best,
        numeric_date(c, i).map(|(e, p)| (e, End::Part(p))),
    );
    offer(&mut best, named_date(c, i).map(|(e, p)| (e, End::Part(p))));
    offer(&mut best, time(c, i).map(|(e, t)| (e, End::Clock(t))));
    if let Some(month) = month_alone(c, i) {
        offer(
            &mut best,
            Some((
                i + 1,
                End::Part(DatePart {
                    month: Some(month),
                    ..DatePart::default()
                }),
            )),
        );
    }
    if let Some(n) = c.num(i).filter(|n| n.digits == 4 && !n.ordinal)
        && !c.glued(i + 1)
    {
        if c.word(i).starts_with('0') && n.value % 100 < 60 {
            // "0730-0930": a 24-hour time; no year starts with a zero.
            offer(
                &mut best,
                Some((
                    i + 1,
                    End::Clock(TimePart {
                        hour: n.value / 100,
                        minute: n.value % 100,
                        second: 0,
                        offset: None,
                        meridiem: true,
                    }),
                )),
            );
        } else if (1000..=2999).contains(&n.value) {
            offer(&mut best, Some((i + 1, End::Year(n.value as i32))));
        }
    }
    // "until the present", "to present": today.
    let present = if c.rel(i, Rel::The) && c.is(i + 1, "present") {
        Some(i + 2)
    } else {
        c.is(i, "present").then_some(i + 1)
    };
    if let Some(end) = present {
        offer(
            &mut best,
            Some((end, End::Resolved(Moment::day(c.today())))),
        );
    }
    if let Some(n) = c.num(i).filter(|n| n.digits <= 2 && !c.glued(i + 1)) {
        if n.ordinal || n.value > 24 {
            offer(&mut best, day_number(c, i).map(|(e, d)| (e, End::Day(d))));
        } else {
            offer(&mut best, Some((i + 1, End::Hour(n.value))));
        }
    } else if c.num(i).is_none() {
        offer(&mut best, day_number(c, i).map(|(e, d)| (e, End::Day(d))));
    }
    // "June 3rd through the 7th": a day of the other end's month.
    if c.rel(i, Rel::The) && c.joined(i + 1) && c.num(i + 1).is_some_and(|n| n.ordinal) {
        offer(
            &mut best,
            day_number(c, i + 1).map(|(e, d)| (e, End::Day(d))),
        );
    }
    if best.is_none() || matches!(best, Some((_, End::Hour(_) | End::Day(_)))) {
        offer(&mut best, date_at(c, i).map(|(e, m)| (e, End::Resolved(m))));
    }
    // "Tuesday, Jan 15, 1:00 PM" style ends come through `date_at` as resolved points.
    if let Some((e, End::Part(_))) = best
        && let Some((e2, m)) = date_at_with_time(c, i)
        && e2 > e
    {
        best = Some((e2, End::Resolved(m)));
    }
    best
}

fn date_at_with_time(c: &Cursor, i: usize) -> Option<(usize, Moment)> {
    super::compose::moment(c, i)
}

fn month_alone(c: &Cursor, i: usize) -> Option<u32> {
    match c.lex(i) {
        Lex::Month(m) => Some(u32::from(m)),
        _ => None,
    }
}

fn combine(c: &Cursor, a: End, b: End, dash: bool) -> Option<(Moment, bool)> {
    let today = c.today();
    let resolved = |p: DatePart| resolve::date_part(today, p);
    let moment = match (a, b) {
        (End::Hour(ha), End::Hour(hb)) if ha <= 24 && hb <= 24 => {
            let at = |hour| TimePart {
                hour,
                minute: 0,
                second: 0,
                offset: None,
                meridiem: false,
            };
            // "Monday 11-4": an end before the start on the 12-hour clock is after noon.
            let hb = if hb < ha && hb < 12 && ha <= 12 {
                hb + 12
            } else {
                hb
            };
            return Some((clocks(at(ha), at(hb))?, true));
        }
        // "between 0730-1530": a 24-hour time read as a year when it came second.
        (End::Clock(ta), End::Year(y)) if y % 100 < 60 && y / 100 < 24 => {
            let tb = TimePart {
                hour: (y / 100) as u32,
                minute: (y % 100) as u32,
                second: 0,
                offset: None,
                meridiem: true,
            };
            clocks(ta, tb)?
        }
        (End::Part(pa), End::Part(pb)) => {
            let mut pa = pa;
            let mut pb = pb;
            // Neither end has a year: the range is the next one that has not ended yet.
            if pa.year.is_none() && pb.year.is_none() && pa.month.is_some() && pb.month.is_some() {
                let mut year = today.year();
                let last_day = pb.day.unwrap_or(28);
                if NaiveDate::from_ymd_opt(year, pb.month?, last_day).is_some_and(|d| d < today) {
                    year += 1;
                }
                pb.year = Some(year);
                pa.year = Some(if (pa.month, pa.day) > (pb.month, pb.day) {
                    year - 1
                } else {
                    year
                });
            }
            if pa.year.is_none()
                && let Some(y) = pb.year
            {
                pa.year = Some(if pa.month > pb.month { y - 1 } else { y });
            }
            if pb.year.is_none()
                && let Some(y) = pa.year
            {
                pb.year = Some(if pb.month < pa.month { y + 1 } else { y });
            }
            if pa.day.is_some() != pb.day.is_some() {
                return None;
            }
            span(resolved(pa)?, resolved(pb)?)?
        }
        (End::Part(pa), End::Day(d)) if pa.day.is_some() => {
            let pb = DatePart {
                day: Some(d),
                weekday: None,
                ..pa
            };
            span(resolved(pa)?, resolved(pb)?)?
        }
        (End::Day(d), End::Part(pb)) if pb.day.is_some() => {
            let pa = DatePart {
                day: Some(d),
                weekday: None,
                ..pb
            };
            span(resolved(pa)?, resolved(pb)?)?
        }
        (End::Hour(d), End::Part(pb)) if pb.day.is_some() && d >= 1 => {
            let pa = DatePart {
                day: Some(d),
                weekday: None,
                ..pb
            };
            span(resolved(pa)?, resolved(pb)?)?
        }
        (End::Part(pa), End::Hour(d)) if pa.day.is_some() && pa.month.is_some() && d >= 1 => {
            let pb = DatePart {
                day: Some(d),
                weekday: None,
                ..pa
            };
            span(resolved(pa)?, resolved(pb)?)?
        }
        // "between 2015 and the present", "from 2010 to today"
        (End::Year(ya), End::Resolved(mb)) => span(resolve::year_span(ya)?, mb)?,
        (End::Year(ya), End::Year(yb)) if ya < yb && yb - ya < 200 => {
            span(resolve::year_span(ya)?, resolve::year_span(yb)?)?
        }
        (End::Clock(ta), End::Clock(tb)) => clocks(ta, tb)?,
        (End::Hour(h), End::Clock(tb)) if h <= 12 => {
            let ta = TimePart {
                hour: h,
                minute: 0,
                second: 0,
                offset: None,
                meridiem: false,
            };
            clocks(ta, tb)?
        }
        (End::Clock(ta), End::Hour(h)) if h <= 24 && !dash => {
            let tb = TimePart {
                hour: h,
                minute: 0,
                second: 0,
                offset: None,
                meridiem: false,
            };
            clocks(ta, tb)?
        }
        (End::Resolved(ma), End::Resolved(Moment::Point(Point::Day(b)))) if matches!(ma, Moment::Point(Point::Day(a)) if b < a && a - b < chrono::Duration::days(7)) =>
        {
            // "from next monday to friday": the weekday after the start.
            span(ma, Moment::day(b + chrono::Duration::days(7)))?
        }
        (End::Resolved(ma), End::Resolved(mb)) => span(ma, mb)?,
        (End::Resolved(ma), End::Part(pb)) => span(ma, resolved(pb)?)?,
        (End::Part(pa), End::Resolved(mb)) => {
            // "June 5 until today": a start without a year is the latest one before the end.
            let last = match ends(mb)?.1 {
                Point::Day(day) => Some(day),
                Point::At(at, _) => Some(at.date()),
                Point::Clock(..) => None,
            };
            let start = match (pa.year, last) {
                (None, Some(last)) => {
                    let in_year = |year| {
                        resolved(DatePart {
                            year: Some(year),
                            ..pa
                        })
                    };
                    match in_year(last.year()) {
                        Some(m)
                            if ends(m).and_then(|(f, _)| order_key(f))
                                <= order_key(Point::Day(last)) =>
                        {
                            m
                        }
                        _ => in_year(last.year() - 1)?,
                    }
                }
                _ => resolved(pa)?,
            };
            span(start, mb)?
        }
        (End::Resolved(ma @ Moment::Point(Point::Day(first))), End::Day(d)) => {
            let last = NaiveDate::from_ymd_opt(first.year(), first.month(), d)?;
            span(ma, Moment::day(last))?
        }
        _ => return None,
    };
    Some((moment, false))
}

/// From the first point of `a` to the last point of `b`, if in order.
fn span(a: Moment, b: Moment) -> Option<Moment> {
    let (mut first, _) = ends(a)?;
    let (_, mut last) = ends(b)?;
    // Mixed precision ("between now and November 15th") compares and reports by day.
    match (first, last) {
        (Point::At(at, _), Point::Day(_)) => first = Point::Day(at.date()),
        (Point::Day(_), Point::At(at, _)) => last = Point::Day(at.date()),
        _ => {}
    }
    if order_key(first)? > order_key(last)? {
        return None;
    }
    Some(Moment::Range(Some(first), Some(last)))
}

fn order_key(p: Point) -> Option<chrono::NaiveDateTime> {
    match p {
        Point::Day(d) => Some(d.and_time(NaiveTime::MIN)),
        Point::At(at, _) => Some(at),
        Point::Clock(..) => None,
    }
}

/// Two clock times; an am/pm written only on the second applies to the first when it keeps
/// the range in order ("8-9am", "3:30-6:00pm", but "2:30 to 2:15 pm" stays 02:30).
fn clocks(a: TimePart, b: TimePart) -> Option<Moment> {
    let mut a = a;
    if !a.meridiem
        && b.meridiem
        && b.hour >= 12
        && a.hour < 12
        && (a.hour + 12, a.minute) <= (b.hour, b.minute)
    {
        a.hour += 12;
    }
    let (ta, tb) = (a.naive()?, b.naive()?);
    Some(Moment::Range(
        Some(Point::Clock(ta, a.offset.or(b.offset))),
        Some(Point::Clock(tb, b.offset)),
    ))
}

fn on_day(date: NaiveDate, a: NaiveTime, b: NaiveTime, pm: bool) -> Moment {
    let later = |t: NaiveTime| {
        if pm && t.hour() < 12 {
            t + chrono::Duration::hours(12)
        } else {
            t
        }
    };
    let (a, b) = (later(a), later(b));
    Moment::Range(
        Some(Point::At(date.and_time(a), None)),
        Some(Point::At(date.and_time(b), None)),
    )
}

/// "before|until|by <time>" (open before it) or "after|since <time>" (open after it) on `date`.
fn time_bound_on_day(c: &Cursor, k: usize, date: NaiveDate) -> Option<(usize, Moment)> {
    let before = match c.lex(k) {
        Lex::Rel(Rel::Before | Rel::Till) => true,
        Lex::Rel(Rel::After | Rel::Since) => false,
        _ if c.is(k, "by") => true,
        _ => return None,
    };
    if !c.joined(k) || !c.joined(k + 1) {
        return None;
    }
    let (end, time) = super::clock::time(c, k + 1)?;
    let point = Some(Point::At(date.and_time(time.naive()?), None));
    let moment = if before {
        Moment::Range(None, point)
    } else {
        Moment::Range(point, None)
    };
    Some((end, moment))
}

/// A date followed by a time range: "Monday 8-9am", "December 12th at 4 - 6:30 pm",
/// "tomorrow from 7:00 to 8:00pm", "Thursday 19:00 - 21:00".
pub(crate) fn date_then_times(c: &Cursor, i: usize) -> Option<(usize, Moment)> {
    // The date with a part of the day it may carry ("next Monday morning 6-8"); else the date
    // alone, when the longest reading already took the range's first time ("Thursday 19:00 -
    // 21:00", "Tuesday, Jan 15, 1:00 PM - 1:15 PM").
    let longest = super::compose::moment(c, i);
    let day = longest
        .and_then(|(end, m)| Some((end, day_and_part(m)?)))
        .or_else(|| {
            let (end, m) = super::compose::date_at(c, i)?;
            Some((end, day_and_part(m)?))
        });
    let (end, (date, pm)) = day?;
    times_on_day(c, end, date, pm)
}

/// A time range written at `end` after the day `date`, on that day; or an open bound by a time
/// of that day ("23/12 before 5pm", "Friday after 3:30 pm").
fn times_on_day(c: &Cursor, end: usize, date: NaiveDate, pm: bool) -> Option<(usize, Moment)> {
    if !pm && let Some(open) = time_bound_on_day(c, end, date) {
        return Some(open);
    }
    let mut k = end;
    if c.punct(k, b',') {
        k += 1;
    }
    if c.rel(k, Rel::At) {
        k += 1;
    }
    if !c.joined(k) {
        return None;
    }
    let (after, times) = weak_range(c, k)?;
    match times {
        Moment::Range(Some(Point::Clock(a, _)), Some(Point::Clock(b, _))) => {
            Some((after, on_day(date, a, b, pm)))
        }
        _ => None,
    }
}
