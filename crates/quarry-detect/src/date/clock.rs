//! Times of day: `15:30`, `3pm`, `3:30 p.m.`, `8.30 pm`, `15h00`, `4 o'clock`, `noon`, with an
//! optional part of day ("in the morning") or zone (`UTC`, `EST`) after them.

use super::cursor::Cursor;
use super::lexicon::{Lex, Rel};
use super::model::TimePart;
use super::spelled;

/// A time starting at token `i`.
pub(crate) fn time(c: &Cursor, i: usize) -> Option<(usize, TimePart)> {
    let (end, part) = bare_time(c, i)
        .or_else(|| minutes_to_hour(c, i))
        .or_else(|| hour_with_part_of_day(c, i))?;
    let (end, part) = part_of_day(c, end, part);
    Some(zone(c, end, part))
}

/// An hour word or number 1..=12 standing alone (not inside a longer number).
fn lone_hour(c: &Cursor, i: usize) -> Option<u32> {
    let h = match c.lex(i) {
        Lex::Cardinal(h) => u32::from(h),
        _ => {
            let n = c.num(i).filter(|n| !n.ordinal && n.digits <= 2)?;
            if c.tight(i) && i > 0 && !c.is_punct(i - 1) || c.glued(i + 1) {
                return None;
            }
            n.value
        }
    };
    (1..=12).contains(&h).then_some(h)
}

/// "9 in the morning", "seven this evening", "11 at night", "7 tonight": an hour that only a
/// part of the day after it makes a clock time ("tonight" is left for the date after it).
fn hour_with_part_of_day(c: &Cursor, i: usize) -> Option<(usize, TimePart)> {
    let h = lone_hour(c, i)?;
    // "building 4 this afternoon": a number after a noun labels the noun.
    if i > 0
        && c.joined(i)
        && c.lex(i - 1) == Lex::Other
        && c.is_word(i - 1)
        && ![
            "around",
            "about",
            "circa",
            "approximately",
            "by",
            "until",
            "before",
            "after",
        ]
        .iter()
        .any(|w| c.is(i - 1, w))
    {
        return None;
    }
    if c.rel(i + 1, Rel::Tonight) && c.joined(i + 1) {
        return Some((i + 1, at(if h < 12 { h + 12 } else { h }, 0, 0, true)));
    }
    let (end, part) = part_of_day(c, i + 1, at(h, 0, 0, false));
    (end > i + 1).then_some((end, part))
}

/// "half past three", "a quarter to noon", "twenty past six pm", "ten minutes to five",
/// "5 past 3": minutes counted from or to an hour. Bare digit minutes before "to" need
/// "minutes" ("10 to 5" is also a range).
fn minutes_to_hour(c: &Cursor, i: usize) -> Option<(usize, TimePart)> {
    let (j, minutes, digits) = match c.lex(i) {
        Lex::Rel(Rel::Half) => (i + 1, 30, false),
        Lex::Rel(Rel::A) if c.is(i + 1, "quarter") => (i + 2, 15, false),
        _ if c.is(i, "quarter") => (i + 1, 15, false),
        _ => {
            let (e, n, digits) = match c.plain(i, 2) {
                Some(n) => (i + 1, n, true),
                None => {
                    let (e, n) = spelled::below_hundred(c, i)?;
                    (e, n, false)
                }
            };
            if !(1..60).contains(&n) {
                return None;
            }
            match c.unit(e) {
                Some(super::lexicon::Unit::Minute) if c.joined(e) => (e + 1, n, false),
                _ => (e, n, digits),
            }
        }
    };
    let past = match c.lex(j) {
        Lex::Rel(Rel::Past | Rel::After) => true,
        Lex::Rel(Rel::To | Rel::Till | Rel::Before) if !digits => false,
        _ => return None,
    };
    if !c.joined(j) || !c.joined(j + 1) {
        return None;
    }
    let k = j + 1;
    let (mut end, mut hour, mut written) = match c.lex(k) {
        Lex::Rel(Rel::Noon) => (k + 1, 12, true),
        Lex::Rel(Rel::Midnight) => (k + 1, 24, true),
        // "15 minutes past 15h": a 24-hour hour.
        _ if c.is(k + 1, "h") && c.tight(k + 1) && !c.glued(k + 2) => {
            let h = c.plain(k, 2).filter(|&h| h < 24)?;
            (k + 2, h, true)
        }
        // "a quarter past 3pm": an hour glued to its am/pm.
        _ => {
            let hour = lone_hour(c, k).or_else(|| {
                let n = c.num(k).filter(|n| !n.ordinal && n.digits <= 2)?;
                meridiem(c, k + 1).and((1..=12).contains(&n.value).then_some(n.value))
            })?;
            (k + 1, hour, false)
        }
    };
    if !written && let Some((after, pm)) = meridiem(c, end) {
        hour = with_meridiem(hour, 0, 0, pm)?.hour;
        written = true;
        end = after;
    }
    let (hour, minute) = if past {
        (hour % 24, minutes)
    } else {
        ((hour + 23) % 24, 60 - minutes)
    };
    Some((end, at(hour, minute, 0, written)))
}

fn bare_time(c: &Cursor, i: usize) -> Option<(usize, TimePart)> {
    match c.lex(i) {
        Lex::Rel(Rel::Noon) => return Some((i + 1, at(12, 0, 0, true))),
        Lex::Rel(Rel::Midnight) => return Some((i + 1, at(0, 0, 0, true))),
        Lex::Cardinal(h) if (1..=12).contains(&h) => {
            let h = u32::from(h);
            // "seven twenty-seven pm", "five oh five", "five-thirty"
            let minutes_at = if c.punct(i + 1, b'-') && c.tight(i + 1) && c.tight(i + 2) {
                i + 2
            } else {
                i + 1
            };
            let (end, m) = spelled::minutes(c, minutes_at).unwrap_or((i + 1, 0));
            if let Some((after, pm)) = meridiem(c, end) {
                return Some((after, with_meridiem(h, m, 0, pm)?));
            }
            if let Some(after) = oclock(c, end).filter(|_| end == i + 1) {
                return Some((after, at(h, 0, 0, false)));
            }
            // After "at" the words are a clock time even without am/pm: "at seven twenty-seven";
            // so are they before a day or a part of the day: "five-thirty tomorrow evening".
            if end > i + 1 && (after_at(c, i) || names_a_day_after(c, end)) {
                return Some((end, at(h, m, 0, false)));
            }
            return None;
        }
        _ => {}
    }
    if let Some(found) = four_digit_time(c, i) {
        return Some(found);
    }
    let h = c.num(i).filter(|n| !n.ordinal && n.digits <= 2)?;
    // Inside a longer number ("1.5:30", "v2:10").
    if i > 0
        && c.tight(i)
        && (c.num(i - 1).is_some()
            || c.punct(i - 1, b'.')
            || c.punct(i - 1, b':')
            || c.punct(i - 1, b'/')
            || c.is_word(i - 1) && !c.is(i - 1, "t"))
    {
        return None;
    }
    let h = h.value;
    // 15:30, 3:30:15, 12:15PM
    if c.punct(i + 1, b':') && c.tight(i + 1) && c.tight(i + 2) {
        let m = two_digits(c, i + 2).filter(|&m| m < 60)?;
        if h > 24 {
            return None;
        }
        let mut end = i + 3;
        let mut s = 0;
        if c.punct(end, b':') && c.tight(end) && c.tight(end + 1) {
            s = two_digits(c, end + 1).filter(|&s| s < 60)?;
            end += 2;
            // fractional seconds
            if c.punct(end, b'.') && c.tight(end) && c.tight(end + 1) && c.num(end + 1).is_some() {
                end += 2;
            }
        }
        if c.tight(end) && (c.punct(end, b':') || c.num(end).is_some()) {
            return None;
        }
        if let Some((after, pm)) = meridiem(c, end) {
            return Some((after, with_meridiem(h, m, s, pm)?));
        }
        // "08:00", "01:30": a leading zero writes the 24-hour clock, so a later end of a range
        // ("01:30 - 19:05") does not move this one past noon.
        let twenty_four = h > 12 || h == 0 || c.word(i).starts_with('0');
        return Some((end, at(h, m, s, twenty_four)));
    }
    // 8.30 pm (a dot needs the meridiem, or it is a decimal)
    if c.punct(i + 1, b'.') && c.tight(i + 1) && c.tight(i + 2) {
        let m = two_digits(c, i + 2).filter(|&m| m < 60)?;
        let (after, pm) = meridiem(c, i + 3)?;
        return Some((after, with_meridiem(h, m, 0, pm)?));
    }
    // 15h00, 10h11, and a bare "7h" ("at 7h", "15h")
    if c.is(i + 1, "h") && c.tight(i + 1) && h < 24 {
        if c.tight(i + 2)
            && let Some(m) = two_digits(c, i + 2).filter(|&m| m < 60)
        {
            return Some((i + 3, at(h, m, 0, true)));
        }
        // A bare "7h" is an hour only after "at" ("in 2h" counts hours).
        if !c.glued(i + 2) && after_at(c, i) {
            return Some((i + 2, at(h, 0, 0, true)));
        }
        return None;
    }
    // 3pm, 3 pm, 11ish, 3ish pm
    let mut end = i + 1;
    if c.is(end, "ish") && c.tight(end) {
        end += 1;
    }
    if let Some((after, pm)) = meridiem(c, end) {
        return Some((after, with_meridiem(h, 0, 0, pm)?));
    }
    if end > i + 1 && h <= 24 {
        return Some((end, at(h, 0, 0, false)));
    }
    if let Some(after) = oclock(c, end).filter(|_| h <= 12) {
        return Some((after, at(h, 0, 0, false)));
    }
    None
}

/// `0730`, `1930 hrs`, `2215h`: a 24-hour time written without a separator, read only where it
/// cannot be a year or an amount — after "at"/"@", or with "h"/"hrs"/"hours" after it (a
/// leading zero is needed before "hours", which otherwise counts them).
fn four_digit_time(c: &Cursor, i: usize) -> Option<(usize, TimePart)> {
    let n = c.num(i).filter(|n| n.digits == 4 && !n.ordinal)?;
    let (hour, minute) = (n.value / 100, n.value % 100);
    if hour > 23 || minute > 59 {
        return None;
    }
    let leading_zero = c.word(i).starts_with('0');
    let marked = c.joined(i + 1)
        && (c.is(i + 1, "h")
            || c.is(i + 1, "hrs")
            || c.is(i + 1, "hr")
            || leading_zero && c.is(i + 1, "hours"));
    if marked {
        return Some((i + 2, at(hour, minute, 0, true)));
    }
    (after_at(c, i) && !c.glued(i + 1)).then_some((i + 1, at(hour, minute, 0, true)))
}

/// Whether a day or a part of the day is written at `i` ("tomorrow", "tonight", "this
/// evening", "in the morning", "on Monday").
fn names_a_day_after(c: &Cursor, i: usize) -> bool {
    c.joined(i)
        && match c.lex(i) {
            Lex::Rel(
                Rel::Tomorrow
                | Rel::Today
                | Rel::Tonight
                | Rel::Yesterday
                | Rel::Morning
                | Rel::Afternoon
                | Rel::Evening
                | Rel::Night,
            ) => true,
            Lex::Rel(Rel::This | Rel::In | Rel::On | Rel::Next) => matches!(
                c.lex(i + 1),
                Lex::Rel(Rel::Morning | Rel::Afternoon | Rel::Evening | Rel::Night | Rel::The)
                    | Lex::Weekday(_)
            ),
            _ => false,
        }
}

fn two_digits(c: &Cursor, i: usize) -> Option<u32> {
    c.num(i)
        .filter(|n| n.digits == 2 && !n.ordinal)
        .map(|n| n.value)
}

fn at(hour: u32, minute: u32, second: u32, meridiem: bool) -> TimePart {
    TimePart {
        hour,
        minute,
        second,
        offset: None,
        meridiem,
    }
}

fn with_meridiem(hour: u32, minute: u32, second: u32, pm: bool) -> Option<TimePart> {
    let hour = match (hour, pm) {
        (0, _) | (13..=23, true) => hour,
        (12, false) => 0,
        (1..=11, true) => hour + 12,
        (1..=12, _) => hour,
        _ => return None,
    };
    Some(at(hour, minute, second, true))
}

/// `am`, `pm`, `a.m.`, `p.m`, `AM`, and a lone `a`/`p` glued to a time after "at" (`at 9a`,
/// `@ 5:30p`); returns the index after it and whether it is pm.
pub(crate) fn meridiem(c: &Cursor, i: usize) -> Option<(usize, bool)> {
    if !c.joined(i) {
        return None;
    }
    if let Lex::Meridiem(pm) = c.lex(i) {
        return Some((i + 1, pm));
    }
    let pm = if c.is(i, "p") {
        true
    } else if c.is(i, "a") {
        false
    } else {
        return None;
    };
    if c.punct(i + 1, b'.') && c.tight(i + 1) && c.is(i + 2, "m") && c.tight(i + 2) {
        let mut end = i + 3;
        if c.punct(end, b'.') && c.tight(end) {
            end += 1;
        }
        return Some((end, pm));
    }
    if i > 0 && c.tight(i) && c.num(i - 1).is_some() && !c.glued(i + 1) && time_after_at(c, i - 1) {
        return Some((i + 1, pm));
    }
    None
}

/// The hour word or number at `i` comes right after "at" or "@".
fn after_at(c: &Cursor, i: usize) -> bool {
    i > 0 && c.joined(i) && (c.rel(i - 1, Rel::At) || c.punct(i - 1, b'@'))
}

/// The number at `i` ends a clock time (`9`, `9:30`) that follows "at" or "@".
fn time_after_at(c: &Cursor, i: usize) -> bool {
    let start = if i >= 2 && c.punct(i - 1, b':') && c.tight(i) && c.tight(i - 1) {
        i - 2
    } else {
        i
    };
    after_at(c, start)
}

/// `o'clock`, `oclock`, `o clock`.
fn oclock(c: &Cursor, i: usize) -> Option<usize> {
    if !c.joined(i) {
        return None;
    }
    if c.rel(i, Rel::Oclock) {
        return Some(i + 1);
    }
    if c.is(i, "o") && (c.punct(i + 1, b'\'') || c.punct(i + 1, 0)) && c.is(i + 2, "clock") {
        return Some(i + 3);
    }
    (c.is(i, "o") && c.is(i + 1, "clock")).then_some(i + 2)
}

/// "in the morning", "in the afternoon", "this evening", "at night", "tonight": moves an hour
/// written without am/pm to the right half of the day.
fn part_of_day(c: &Cursor, i: usize, part: TimePart) -> (usize, TimePart) {
    if part.meridiem || !c.joined(i) {
        return (i, part);
    }
    let (end, pm) = if (c.rel(i, Rel::In) || c.rel(i, Rel::This)) && c.joined(i + 1) {
        let j = if c.rel(i + 1, Rel::The) { i + 2 } else { i + 1 };
        match c.lex(j) {
            Lex::Rel(Rel::Morning) | Lex::Meridiem(false) => (j + 1, false),
            Lex::Rel(Rel::Afternoon | Rel::Evening) | Lex::Meridiem(true) => (j + 1, true),
            _ => return (i, part),
        }
    } else if c.rel(i, Rel::At) && c.rel(i + 1, Rel::Night) {
        (i + 2, true)
    } else {
        return (i, part);
    };
    let hour = if pm && part.hour < 12 {
        part.hour + 12
    } else {
        part.hour
    };
    (
        end,
        TimePart {
            hour,
            meridiem: true,
            ..part
        },
    )
}

/// A zone abbreviation after a time: ` UTC`, ` EST`, `Z`.
fn zone(c: &Cursor, i: usize, part: TimePart) -> (usize, TimePart) {
    if let Lex::Zone(offset) = c.lex(i)
        && c.joined(i)
        && (c.word(i).len() > 1 || c.tight(i))
    {
        return (
            i + 1,
            TimePart {
                offset: Some(offset),
                ..part
            },
        );
    }
    (i, part)
}

/// A numeric ISO offset glued after a time: `+02:00`, `-0500`, `Z`.
pub(crate) fn iso_offset(c: &Cursor, i: usize) -> Option<(usize, i16)> {
    if !c.tight(i) {
        return None;
    }
    if c.is(i, "z") {
        return Some((i + 1, 0));
    }
    let sign: i16 = if c.punct(i, b'+') {
        1
    } else if c.punct(i, b'-') {
        -1
    } else {
        return None;
    };
    let first = c.num(i + 1).filter(|_| c.tight(i + 1))?;
    let (hours, minutes, end) = match first.digits {
        4 => (first.value / 100, first.value % 100, i + 2),
        2 if c.punct(i + 2, b':') && c.tight(i + 2) && c.tight(i + 3) => {
            (first.value, two_digits(c, i + 3)?, i + 4)
        }
        2 => (first.value, 0, i + 2),
        _ => return None,
    };
    if hours > 14 || minutes >= 60 {
        return None;
    }
    Some((end, sign * (hours * 60 + minutes) as i16))
}
