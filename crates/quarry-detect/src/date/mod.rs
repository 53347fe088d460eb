//! Dates, times, ranges and durations in English text, normalised to ISO 8601.
//!
//! One pass cuts the text into tokens ([`token`]); the grammar then runs only at tokens that
//! can start an expression (numbers, month and weekday names, relative words) and keeps the
//! longest expression found there. Values resolve against the caller's `now`.
//!
//! | file | owns |
//! |---|---|
//! | `lexicon` | the words the grammar knows |
//! | `token` | the tokenizer |
//! | `cursor` | typed peeks at the token stream, and the entry rules the grammar recurses through |
//! | `absolute` | written calendar dates, numeric and with month names |
//! | `clock` | times of day |
//! | `duration` | counts and amounts of time |
//! | `relative` | expressions that need the reference time |
//! | `holiday` | named holidays |
//! | `anchored` | intervals from an amount and a start, and amounts bounding a shifted point |
//! | `compose` | date + time, open ranges, shifted dates, lone years, durations |
//! | `periods` | seasons, decades, halves and modified months ("next March") |
//! | `range` | two-ended ranges |
//! | `recurrence` | "every …", plural weekdays and frequency words, as repeating intervals |
//! | `within` | a unit inside any period ("the last Friday of next month", "Monday of next week") |
//! | `resolve` | calendar arithmetic and ISO rendering |
//! | `spelled` | numbers and years written in words |

mod absolute;
mod anchored;
mod clock;
mod compose;
mod cursor;
mod duration;
mod holiday;
mod lexicon;
mod model;
mod periods;
mod range;
mod recurrence;
mod relative;
mod resolve;
mod spelled;
mod token;
mod within;

use chrono::{DateTime, FixedOffset};

use crate::Detection;
use cursor::Cursor;
use lexicon::{Lex, Rel, Unit};
use model::Moment;

/// Every date, time, range and duration in `text`, in order, with byte ranges; relative
/// expressions resolve against `now` (read as local time).
pub fn find(text: &str, now: DateTime<FixedOffset>) -> Vec<Detection> {
    let mut out = Vec::new();
    let mut tokens = Vec::with_capacity(WINDOW.min(text.len() / 4 + 8));
    // Tokens are cut in windows so that memory stays flat on large inputs. A window keeps
    // `BEHIND` tokens before the first one it parses (rules look back a little) and stops
    // parsing `AHEAD` tokens before its end (no expression is longer).
    let (mut from, mut gap, mut skip) = (0, token::Gap::Break, 0);
    loop {
        tokens.clear();
        let stopped = token::tokenize_window(text, from, gap, WINDOW, &mut tokens);
        let last_window = stopped >= text.len();
        let parse_until = if last_window {
            tokens.len()
        } else {
            tokens.len() - AHEAD
        };
        let c = Cursor::new(text, &tokens, now.naive_local(), compose::ENTRIES);
        let mut i = skip;
        let mut taken = skip;
        while i < parse_until {
            if !worth_trying(&c, i) {
                i += 1;
                continue;
            }
            match longest_at(&c, i) {
                Some((end, moment)) if end > i => {
                    let (kind, value) = resolve::render(moment);
                    let first = lead_in(&c, i, taken, kind);
                    taken = end;
                    out.push(Detection {
                        range: tokens[first].start..tokens[end - 1].end,
                        value,
                        kind,
                    });
                    i = end;
                }
                _ => i += 1,
            }
        }
        if last_window {
            return out;
        }
        let restart = i.saturating_sub(BEHIND);
        skip = i - restart;
        from = tokens[restart].start;
        gap = tokens[restart].gap;
    }
}

/// Where the span starts when words before the expression at `i` belong to it (no earlier
/// than `taken`), as Recognizers-Text marks them: "the" before a relative period ("the next
/// decade", "the eod"), "at" before a clock time with a date ("at 8.30 pm today").
fn lead_in(c: &Cursor, i: usize, taken: usize, kind: quarry_core::MatchKind) -> usize {
    let after = |rel: Rel| i > taken && c.joined(i) && c.rel(i - 1, rel);
    let period = matches!(c.lex(i), Lex::Rel(Rel::Eod | Rel::Eom | Rel::Eoy))
        || (matches!(
            c.lex(i),
            Lex::Rel(Rel::Next | Rel::Last | Rel::Previous | Rel::Coming | Rel::Following)
        ) && c.unit(i + 1).is_some());
    // Recognizers-Text leaves "at" out before a time in words ("at five-thirty tomorrow").
    let clock = kind == quarry_core::MatchKind::DateTime && c.num(i).is_some();
    if (period && after(Rel::The)) || (clock && after(Rel::At)) {
        i - 1
    } else {
        i
    }
}

/// Tokens per window, and the look-behind and look-ahead margins inside it.
const WINDOW: usize = 4096;
const BEHIND: usize = 8;
const AHEAD: usize = 96;

fn longest_at(c: &Cursor, i: usize) -> Option<(usize, Moment)> {
    let mut best = compose::moment(c, i);
    for candidate in [range::range(c, i), range::date_then_times(c, i)] {
        if let Some(found) = candidate
            && best.is_none_or(|b| found.0 > b.0)
        {
            best = Some(found);
        }
    }
    best
}

/// A cheap test that token `i` can start an expression, so that common words ("the", "in",
/// "a") cost one or two comparisons instead of a parse.
fn worth_trying(c: &Cursor, i: usize) -> bool {
    if let Some(n) = c.num(i) {
        // A number starts an expression when it is an ordinal, a year or a compact date, when
        // "at" says it is an hour, or when a word or a date/time separator is glued or
        // spaced after it ("15 Jan", "3pm", "30 days", "10/1", "9:30", "2 - 15"); a number
        // before a comma, a percent sign or another number ("4,250", "15%", "415 555 1234")
        // is prose.
        return n.ordinal
            || n.digits == 4
            || n.digits == 8
            || i > 0 && (c.rel(i - 1, Rel::At) || c.punct(i - 1, b'@'))
            || c.joined(i + 1)
                && (c.is_word(i + 1)
                    || [b'/', b'-', b'.', b':', b'\'', 0]
                        .iter()
                        .any(|&p| c.punct(i + 1, p)));
    }
    let next = c.lex(i + 1);
    let next_is_number = c.num(i + 1).is_some();
    let countable = next_is_number
        || matches!(
            next,
            Lex::Cardinal(_) | Lex::Tens(_) | Lex::Rel(Rel::A | Rel::Few | Rel::Couple | Rel::Half)
        );
    match c.lex(i) {
        Lex::Other => false,
        Lex::Meridiem(_) | Lex::Zone(_) => false,
        // A number word starts an expression only with a unit, a clock word or more of the
        // number after it: "five days", "seven pm", "eight o'clock", "nineteen eighty-six",
        // "twenty-one", "two thousand and twenty", "five oh five", or after "at" ("at
        // eight"); "one of them" is prose.
        Lex::Cardinal(_) | Lex::Tens(_) => {
            matches!(
                next,
                Lex::Unit(_)
                    | Lex::Weekday(_)
                    | Lex::Meridiem(_)
                    | Lex::Cardinal(_)
                    | Lex::Tens(_)
                    | Lex::Rel(
                        Rel::Oclock
                            | Rel::And
                            | Rel::Past
                            | Rel::To
                            | Rel::Till
                            | Rel::After
                            | Rel::Before
                            | Rel::In
                            | Rel::This
                            | Rel::At
                            | Rel::Tonight
                    )
            ) || i > 0 && (c.rel(i - 1, Rel::At) || c.punct(i - 1, b'@'))
                || c.punct(i + 1, b'-') && c.tight(i + 1)
                || ["o", "oh", "hundred", "thousand", "p", "a"]
                    .iter()
                    .any(|w| c.is(i + 1, w))
        }
        // Units start an expression only as "week 10", "second Tuesday of …" or a holiday
        // ("Day of the Dead"); otherwise the count before them does.
        Lex::Unit(Unit::Week) => next_is_number,
        // "quarter past five", "quarter to noon"
        Lex::Unit(Unit::Quarter) => matches!(next, Lex::Rel(Rel::Past | Rel::To | Rel::Till)),
        Lex::Unit(Unit::Second) => true,
        Lex::Unit(Unit::Day) => holiday::name_at(c, i).is_some(),
        Lex::Unit(_) => false,
        // Holiday words are common ("new", "good", "all"): only a whole name starts a parse.
        // "Q1", "H1 2021", a holiday, a season
        Lex::Named => {
            (c.is(i, "q") || c.is(i, "h")) && c.tight(i + 1)
                || c.is(i, "fy")
                || c.is(i, "fiscal")
                || c.is(i, "once") && (matches!(next, Lex::Rel(Rel::A)) || c.is(i + 1, "per"))
                || ["starting", "effective", "commencing"]
                    .iter()
                    .any(|w| c.is(i, w))
                    && (!matches!(next, Lex::Other) || next_is_number)
                || holiday::name_at(c, i).is_some()
                || periods::is_season(c, i)
        }
        Lex::Rel(Rel::The) => {
            matches!(
                next,
                Lex::Unit(Unit::Day | Unit::Weekend | Unit::Second)
                    | Lex::Named
                    | Lex::Rel(Rel::Last)
            ) || c.num(i + 1).is_some_and(|n| n.ordinal)
                // "the 1990s", "the 90s"
                || c.num(i + 1).is_some() && c.is(i + 2, "s")
                // "the week of April 10th", "the week starting Monday", "the year 2020"
                || matches!(next, Lex::Unit(Unit::Week | Unit::Month | Unit::Year))
                    && (c.rel(i + 2, Rel::Of)
                        || c.is(i + 2, "starting")
                        || c.is(i + 2, "beginning")
                        || c.num(i + 2).is_some())
                || periods::decade_word(c, i + 1).is_some()
                || matches!(next, Lex::Ordinal(_) | Lex::Tens(_))
                // "the Friday before Easter"
                || matches!(next, Lex::Weekday(_))
                    && matches!(c.lex(i + 2), Lex::Rel(Rel::After | Rel::Before))
                // "the week after next", "the year before last"
                || matches!(next, Lex::Unit(_))
                    && (c.rel(i + 2, Rel::After) && c.rel(i + 3, Rel::Next)
                        || c.rel(i + 2, Rel::Before) && c.rel(i + 3, Rel::Last))
                // "the morning of June 3"
                || matches!(
                    next,
                    Lex::Rel(Rel::Morning | Rel::Afternoon | Rel::Evening | Rel::Night)
                ) && matches!(c.lex(i + 2), Lex::Rel(Rel::Of | Rel::On))
        }
        Lex::Rel(Rel::A) => matches!(next, Lex::Unit(_) | Lex::Rel(Rel::Few | Rel::Couple)),
        Lex::Rel(Rel::In | Rel::Within) => countable,
        Lex::Rel(
            Rel::This
            | Rel::Next
            | Rel::Last
            | Rel::Past
            | Rel::Previous
            | Rel::Coming
            | Rel::Following
            | Rel::Current,
        ) => {
            countable
                || matches!(
                    next,
                    Lex::Weekday(_)
                        | Lex::Month(_)
                        | Lex::Unit(_)
                        | Lex::Named
                        | Lex::Rel(Rel::Coming | Rel::Past)
                        | Lex::Rel(Rel::Morning | Rel::Afternoon | Rel::Evening | Rel::Night)
                )
        }
        // "to date"
        Lex::Rel(Rel::To) if c.is(i + 1, "date") => true,
        Lex::Rel(
            Rel::From | Rel::Between | Rel::Since | Rel::After | Rel::Before | Rel::Till | Rel::By,
        ) => {
            !matches!(next, Lex::Other)
                || next_is_number
                // "after around 3:30pm"
                || ["around", "about", "circa", "approximately"]
                    .iter()
                    .any(|w| c.is(i + 1, w))
        }
        // "night of power", "morning of June 3", "afternoon on Friday"
        Lex::Rel(Rel::Morning | Rel::Afternoon | Rel::Evening | Rel::Night) => {
            c.rel(i + 1, Rel::Of) || c.rel(i + 1, Rel::On)
        }
        // "later this month", "early next week", "late September"
        Lex::Rel(Rel::Early | Rel::Late | Rel::Later) => {
            matches!(
                next,
                Lex::Rel(
                    Rel::This
                        | Rel::Next
                        | Rel::Last
                        | Rel::In
                        | Rel::Morning
                        | Rel::Afternoon
                        | Rel::Evening
                        | Rel::Night
                        | Rel::Tomorrow
                        | Rel::Today
                        | Rel::Yesterday
                ) | Lex::Month(_)
            )
        }
        Lex::Rel(Rel::End | Rel::Beginning | Rel::Middle) => {
            // "end of the month", "mid-November", "beginning Monday"
            c.rel(i + 1, Rel::Of)
                || c.punct(i + 1, b'-')
                || matches!(next, Lex::Month(_))
                || c.rel(i, Rel::Beginning)
                    && (next_is_number
                        || matches!(
                            next,
                            Lex::Weekday(_)
                                | Lex::Rel(Rel::On | Rel::From | Rel::Tomorrow | Rel::Next)
                        ))
        }
        // "at least 2 weeks ago", "at most a day before"
        Lex::Rel(Rel::At) if matches!(next, Lex::Rel(Rel::More | Rel::Less)) => true,
        // "more than 2 weeks ago", "under a month from now"
        Lex::Rel(Rel::More | Rel::Less) => c.is(i + 1, "than") || countable,
        Lex::Rel(
            Rel::Ago
            | Rel::Hence
            | Rel::To
            | Rel::Through
            | Rel::And
            | Rel::Of
            | Rel::On
            | Rel::At
            | Rel::Oclock
            | Rel::Few
            | Rel::Couple,
        ) => false,
        _ => true,
    }
}

#[cfg(test)]
mod generated;
#[cfg(test)]
mod generated_compose;
#[cfg(test)]
mod tests;
