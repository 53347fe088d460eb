//! Calendar arithmetic against the reference time, and rendering resolved moments as ISO 8601.
//!
//! Missing parts resolve forward: "Jan 15" is the next January 15 on or after today, "Tuesday"
//! the next Tuesday after today, "March" this March if it has not ended.

use chrono::{Datelike, Days, Months, NaiveDate, NaiveDateTime, NaiveTime, Timelike, Weekday};
use quarry_core::MatchKind;

use super::duration;
use super::model::{DatePart, Dur, Moment, Point};

/// Turns a written date into a day (with day) or a month or year period (without).
pub(crate) fn date_part(today: NaiveDate, part: DatePart) -> Option<Moment> {
    match (part.year, part.month, part.day) {
        (Some(y), Some(m), Some(d)) => Some(Moment::day(NaiveDate::from_ymd_opt(y, m, d)?)),
        (None, Some(m), Some(d)) => Some(Moment::day(month_day(today, m, d, part.weekday)?)),
        (None, None, Some(d)) => {
            let this = NaiveDate::from_ymd_opt(today.year(), today.month(), d);
            match this {
                Some(date) if date >= today => Some(Moment::day(date)),
                _ => {
                    let next = first_of_month(today).checked_add_months(Months::new(1))?;
                    Some(Moment::day(NaiveDate::from_ymd_opt(
                        next.year(),
                        next.month(),
                        d,
                    )?))
                }
            }
        }
        (Some(y), Some(m), None) => month_span(y, m),
        (None, Some(m), None) => {
            let year = if m >= today.month() {
                today.year()
            } else {
                today.year() + 1
            };
            month_span(year, m)
        }
        (Some(y), None, None) => year_span(y),
        _ => None,
    }
}

/// The next `month`/`day` on or after today; with a weekday, the nearest year (future first)
/// whose date falls on it, as in "Fri, Jul 18".
fn month_day(today: NaiveDate, month: u32, day: u32, weekday: Option<u8>) -> Option<NaiveDate> {
    let this_year = NaiveDate::from_ymd_opt(today.year(), month, day);
    let base = match this_year {
        Some(date) if date >= today => today.year(),
        _ => today.year() + 1,
    };
    let Some(weekday) = weekday else {
        return NaiveDate::from_ymd_opt(base, month, day)
            .or_else(|| NaiveDate::from_ymd_opt(base + 1, month, day))
            .or_else(|| NaiveDate::from_ymd_opt(base + 2, month, day))
            .or_else(|| NaiveDate::from_ymd_opt(base + 3, month, day));
    };
    for delta in [
        0, -1, 1, -2, 2, -3, 3, -4, 4, -5, 5, -6, 6, 7, -7, 8, -8, 9, 10, 11,
    ] {
        if let Some(date) = NaiveDate::from_ymd_opt(base + delta, month, day)
            && date.weekday().num_days_from_monday() == u32::from(weekday)
        {
            return Some(date);
        }
    }
    NaiveDate::from_ymd_opt(base, month, day)
}

pub(crate) fn first_of_month(date: NaiveDate) -> NaiveDate {
    date.with_day(1).unwrap_or(date)
}

pub(crate) fn month_span(year: i32, month: u32) -> Option<Moment> {
    let first = NaiveDate::from_ymd_opt(year, month, 1)?;
    let last = first.checked_add_months(Months::new(1))?.pred_opt()?;
    Some(Moment::days(first, last))
}

pub(crate) fn year_span(year: i32) -> Option<Moment> {
    Some(Moment::days(
        NaiveDate::from_ymd_opt(year, 1, 1)?,
        NaiveDate::from_ymd_opt(year, 12, 31)?,
    ))
}

pub(crate) fn quarter_span(year: i32, quarter: u32) -> Option<Moment> {
    let first = NaiveDate::from_ymd_opt(year, (quarter - 1) * 3 + 1, 1)?;
    let last = first.checked_add_months(Months::new(3))?.pred_opt()?;
    Some(Moment::days(first, last))
}

/// Monday of the week holding `date`.
pub(crate) fn week_start(date: NaiveDate) -> NaiveDate {
    date - chrono::Duration::days(i64::from(date.weekday().num_days_from_monday()))
}

/// The first `weekday` after `date` (or on it, when `inclusive`).
pub(crate) fn weekday_after(date: NaiveDate, weekday: u8, inclusive: bool) -> NaiveDate {
    let current = date.weekday().num_days_from_monday() as i64;
    let mut ahead = (i64::from(weekday) - current).rem_euclid(7);
    if ahead == 0 && !inclusive {
        ahead = 7;
    }
    date + chrono::Duration::days(ahead)
}

/// The last `weekday` strictly before `date`.
pub(crate) fn weekday_before(date: NaiveDate, weekday: u8) -> NaiveDate {
    let current = date.weekday().num_days_from_monday() as i64;
    let mut back = (current - i64::from(weekday)).rem_euclid(7);
    if back == 0 {
        back = 7;
    }
    date - chrono::Duration::days(back)
}

/// The `n`th (1-based; 0 = last) `weekday` of a month.
pub(crate) fn nth_weekday(year: i32, month: u32, weekday: u8, n: u32) -> Option<NaiveDate> {
    let first = NaiveDate::from_ymd_opt(year, month, 1)?;
    if n == 0 {
        let last = first.checked_add_months(Months::new(1))?.pred_opt()?;
        let back =
            (last.weekday().num_days_from_monday() as i64 - i64::from(weekday)).rem_euclid(7);
        return Some(last - chrono::Duration::days(back));
    }
    let date = weekday_after(first, weekday, true) + chrono::Duration::days(7 * (i64::from(n) - 1));
    (date.month() == month).then_some(date)
}

pub(crate) fn weekday_index(weekday: Weekday) -> u8 {
    weekday.num_days_from_monday() as u8
}

/// Shifts a date by whole months and days (no clock part).
pub(crate) fn add_to_date(date: NaiveDate, dur: Dur) -> Option<NaiveDate> {
    let date = if dur.months >= 0 {
        date.checked_add_months(Months::new(dur.months as u32))?
    } else {
        date.checked_sub_months(Months::new(dur.months.unsigned_abs()))?
    };
    if dur.days >= 0 {
        date.checked_add_days(Days::new(dur.days as u64))
    } else {
        date.checked_sub_days(Days::new(u64::from(dur.days.unsigned_abs())))
    }
}

pub(crate) fn add_to_datetime(at: NaiveDateTime, dur: Dur) -> Option<NaiveDateTime> {
    let date = add_to_date(at.date(), Dur { seconds: 0, ..dur })?;
    date.and_time(at.time())
        .checked_add_signed(chrono::Duration::seconds(dur.seconds))
}

/// `point` moved by `dur`: a day stays a day unless the shift has a clock part.
pub(crate) fn shift(point: Point, dur: Dur) -> Option<Point> {
    match point {
        Point::Day(date) if !dur.has_clock_part() => Some(Point::Day(add_to_date(date, dur)?)),
        Point::Day(date) => Some(Point::At(
            add_to_datetime(date.and_time(NaiveTime::MIN), dur)?,
            None,
        )),
        Point::At(at, offset) => Some(Point::At(add_to_datetime(at, dur)?, offset)),
        Point::Clock(..) => None,
    }
}

/// The kind and ISO value of a resolved moment.
pub(crate) fn render(moment: Moment) -> (MatchKind, String) {
    match moment {
        Moment::Point(point) => {
            let kind = match point {
                Point::Day(_) => MatchKind::Date,
                Point::At(..) => MatchKind::DateTime,
                Point::Clock(..) => MatchKind::Time,
            };
            (kind, point_iso(point))
        }
        Moment::Range(start, end) => {
            let side = |p: Option<Point>| p.map_or_else(|| "..".to_owned(), point_iso);
            (MatchKind::DateRange, side(start) + "/" + &side(end))
        }
        Moment::Duration(dur) => (MatchKind::Duration, duration::iso(dur)),
        // ISO 8601 repeating intervals: `R/start/period`, or `R/period` without a start.
        Moment::Every { first, period } => {
            let mut value = String::from("R/");
            if let Some(first) = first {
                value.push_str(&point_iso(first));
                value.push('/');
            }
            value.push_str(&duration::iso(period));
            (MatchKind::Set, value)
        }
    }
}

fn point_iso(point: Point) -> String {
    // Written digit by digit: `format!` costs more than the whole parse of a date.
    let mut out = String::with_capacity(25);
    let date = |out: &mut String, d: NaiveDate| {
        if (0..=9999).contains(&d.year()) {
            push_digits(out, d.year() as u32, 4);
        } else {
            out.push_str(&format!("{:04}", d.year()));
        }
        out.push('-');
        push_digits(out, d.month(), 2);
        out.push('-');
        push_digits(out, d.day(), 2);
    };
    let time = |out: &mut String, t: NaiveTime| {
        push_digits(out, t.hour(), 2);
        out.push(':');
        push_digits(out, t.minute(), 2);
        out.push(':');
        push_digits(out, t.second(), 2);
    };
    match point {
        Point::Day(d) => date(&mut out, d),
        Point::At(at, offset) => {
            date(&mut out, at.date());
            out.push('T');
            time(&mut out, at.time());
            out.push_str(&offset_iso(offset));
        }
        Point::Clock(t, offset) => {
            time(&mut out, t);
            out.push_str(&offset_iso(offset));
        }
    }
    out
}

/// `value` as exactly `width` decimal digits (zero-padded; `value` fits).
fn push_digits(out: &mut String, value: u32, width: u32) {
    for k in (0..width).rev() {
        let digit = value / 10u32.pow(k) % 10;
        out.push(char::from(b'0' + digit as u8));
    }
}

fn offset_iso(offset: Option<i16>) -> String {
    match offset {
        None => String::new(),
        Some(minutes) => {
            let sign = if minutes < 0 { '-' } else { '+' };
            let minutes = minutes.unsigned_abs();
            format!("{sign}{:02}:{:02}", minutes / 60, minutes % 60)
        }
    }
}
