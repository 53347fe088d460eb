//! Amounts of time: "3 days", "two weeks", "an hour and a half", "2 weeks and 2 days", and the
//! counts inside them.

use super::cursor::Cursor;
use super::lexicon::{Lex, Rel, Unit};
use super::model::Dur;

/// How a count was written; an article ("a day") is too weak to report as a duration alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Count {
    Number,
    Article,
}

/// A count at `i`: `3`, `three`, `twenty-one`, `a`, `a few`, `a couple of`, `one and a half`.
pub(crate) fn quantity(c: &Cursor, i: usize) -> Option<(usize, f64, Count)> {
    let (mut end, mut value, count) = if let Some(n) = c.plain(i, 6) {
        // "1.5 hours"
        if c.punct(i + 1, b'.')
            && c.tight(i + 1)
            && c.tight(i + 2)
            && let Some(frac) = c.num(i + 2)
        {
            let decimal = f64::from(frac.value) / 10f64.powi(i32::from(frac.digits));
            (i + 3, f64::from(n) + decimal, Count::Number)
        } else {
            (i + 1, f64::from(n), Count::Number)
        }
    } else {
        match c.lex(i) {
            // "twenty-one", "one hundred and twenty", "two thousand"
            Lex::Cardinal(_) | Lex::Tens(_) => {
                let (end, n) = super::spelled::cardinal(c, i)?;
                (end, f64::from(n), Count::Number)
            }
            Lex::Rel(Rel::A) => match c.lex(i + 1) {
                Lex::Rel(Rel::Few) => (i + 2, 3.0, Count::Number),
                Lex::Rel(Rel::Couple) => {
                    let end = if c.rel(i + 2, Rel::Of) { i + 3 } else { i + 2 };
                    (end, 2.0, Count::Number)
                }
                _ => (i + 1, 1.0, Count::Article),
            },
            Lex::Rel(Rel::Few) => (i + 1, 3.0, Count::Number),
            Lex::Rel(Rel::Couple) => {
                let end = if c.rel(i + 1, Rel::Of) { i + 2 } else { i + 1 };
                (end, 2.0, Count::Number)
            }
            Lex::Rel(Rel::Half) if c.rel(i + 1, Rel::A) => (i + 2, 0.5, Count::Number),
            _ => return None,
        }
    };
    // "one and a half"
    if c.rel(end, Rel::And) && c.rel(end + 1, Rel::A) && c.rel(end + 2, Rel::Half) {
        value += 0.5;
        end += 3;
    }
    Some((end, value, count))
}

/// `quantity unit` with an optional "and a half" or "and N unit" tail.
pub(crate) fn amount(c: &Cursor, i: usize) -> Option<(usize, Dur, Count)> {
    let (j, value, count) = quantity(c, i)?;
    if !c.joined(j) {
        return None;
    }
    // "a 30-minute call": the hyphenated adjective form.
    let j = if c.punct(j, b'-') && c.tight(j) && count == Count::Number {
        j + 1
    } else {
        j
    };
    let unit = c.unit(j)?;
    if count == Count::Article && c.word(j).ends_with('s') {
        return None; // "a days" is not English; avoid "a Mondays"-style noise
    }
    let mut dur = unit_dur(unit, value);
    let mut end = j + 1;
    if c.rel(end, Rel::And) && c.rel(end + 1, Rel::A) && c.rel(end + 2, Rel::Half) {
        dur = dur.add(unit_dur(unit, 0.5));
        end += 3;
    }
    while c.rel(end, Rel::And) && c.joined(end + 1) {
        match quantity(c, end + 1).filter(|q| q.2 == Count::Number || c.unit(q.0).is_some()) {
            Some((k, value, _)) if c.unit(k).is_some() && c.joined(k) => {
                dur = dur.add(unit_dur(c.unit(k)?, value));
                end = k + 1;
            }
            _ => break,
        }
    }
    Some((end, dur, count))
}

pub(crate) fn unit_dur(unit: Unit, value: f64) -> Dur {
    let seconds = |s: f64| Dur {
        seconds: (value * s).round() as i64,
        ..Dur::default()
    };
    let days = |d: f64| {
        let total = value * d;
        Dur {
            days: total.trunc() as i32,
            seconds: ((total - total.trunc()) * 86_400.0).round() as i64,
            ..Dur::default()
        }
    };
    let months = |m: f64| {
        let total = value * m;
        Dur {
            months: total.trunc() as i32,
            days: ((total - total.trunc()) * 30.0).round() as i32,
            ..Dur::default()
        }
    };
    match unit {
        Unit::Second => seconds(1.0),
        Unit::Minute => seconds(60.0),
        Unit::Hour => seconds(3600.0),
        Unit::Day => days(1.0),
        Unit::Week => days(7.0),
        Unit::Fortnight => days(14.0),
        Unit::Weekend => days(2.0),
        Unit::Month => months(1.0),
        Unit::Quarter => months(3.0),
        Unit::Year => months(12.0),
        Unit::Decade => months(120.0),
    }
}

/// ISO 8601 duration text: `P3D`, `P2W`, `PT1H30M`, `P1Y6M`.
pub(crate) fn iso(d: Dur) -> String {
    let mut out = String::from("P");
    let (years, months) = (d.months / 12, d.months % 12);
    if years != 0 {
        out.push_str(&format!("{years}Y"));
    }
    if months != 0 {
        out.push_str(&format!("{months}M"));
    }
    if d.days != 0 {
        if d.days % 7 == 0 && d.months == 0 && d.seconds == 0 {
            out.push_str(&format!("{}W", d.days / 7));
        } else {
            out.push_str(&format!("{}D", d.days));
        }
    }
    if d.seconds != 0 {
        out.push('T');
        let (h, m, s) = (d.seconds / 3600, d.seconds % 3600 / 60, d.seconds % 60);
        if h != 0 {
            out.push_str(&format!("{h}H"));
        }
        if m != 0 {
            out.push_str(&format!("{m}M"));
        }
        if s != 0 {
            out.push_str(&format!("{s}S"));
        }
    }
    if out.len() == 1 {
        out.push_str("T0S");
    }
    out
}
