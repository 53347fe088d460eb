//! Scanning text for phone-number candidates and judging the characters around them.
//!
//! The candidate pattern follows libphonenumber's `PhoneNumberMatcher.PATTERN`: up to two leading
//! brackets or plus signs, then at most 21 digit groups joined by up to four punctuation characters
//! each, then an optional extension. The group limit keeps every candidate short, so the scan is
//! linear in the text however long a run of digits and spaces gets.

use std::ops::Range;
use std::sync::LazyLock;

use phonenumber::country::Id;
use regex::Regex;

use super::chars::{DIGIT_CLASS, digit_value, extension_pattern, is_digit, is_plus};
use super::{leniency, shape};
use crate::Detection;
use quarry_core::MatchKind;

/// Punctuation allowed between digit groups (libphonenumber's VALID_PUNCTUATION): dashes, dots,
/// slashes, spaces, brackets, tildes and `x` (as in `(0xx)` carrier placeholders).
const PUNCTUATION_CLASS: &str = r"\-x\x{2010}-\x{2015}\x{2212}\x{30FC}\x{FF0D}-\x{FF0F} \x{00A0}\x{00AD}\x{200B}\x{2060}\x{3000}()\x{FF08}\x{FF09}\x{FF3B}\x{FF3D}.\[\]/~\x{2053}\x{223C}\x{FF5E}";

/// Characters that may open a number: brackets and plus signs.
const LEAD_CLASS: &str = r"(\[\x{FF08}\x{FF3B}+\x{FF0B}";

static CANDIDATE: LazyLock<Regex> = LazyLock::new(|| {
    let (digit, punctuation, lead) = (DIGIT_CLASS, PUNCTUATION_CLASS, LEAD_CLASS);
    let extension = extension_pattern();
    Regex::new(&format!(
        r"(?i)(?:[{lead}][{punctuation}]{{0,4}}){{0,2}}[{digit}]+(?:[{punctuation}]{{0,4}}[{digit}]+){{0,20}}(?:{extension})?"
    ))
    .expect("phone candidate pattern compiles")
});

/// A slash followed by `x` starts a second number ("…6000/x12"); the candidate ends before it.
static SECOND_NUMBER_START: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)[\\/] *x").expect("pattern compiles"));

/// Where to look for a smaller number when a whole candidate fails, in libphonenumber's order
/// (`INNER_MATCHES`): after slashes, from an opening bracket, after a spaced or wide dash, after
/// full stops, and single space-separated tokens. Group 1 is the piece to try.
static INNER_PIECES: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        r"/+(.*)",
        r"(\([^(]*)",
        r"(?:\p{Z}-|-\p{Z})\p{Z}*(.+)",
        r"[\x{2012}-\x{2015}\x{FF0D}]\p{Z}*(.+)",
        r"\.+\p{Z}*([^.]+)",
        r"\p{Z}+(\P{Z}+)",
    ]
    .iter()
    .map(|pattern| Regex::new(pattern).expect("inner pattern compiles"))
    .collect()
});

/// Caps the pieces tried per failed candidate (libphonenumber caps its tries too).
const MAX_INNER_TRIES: usize = 16;

/// A cheap test that `text` holds at least one digit, so prose without numbers skips the regex.
pub(super) fn may_contain_phone(text: &str) -> bool {
    text.bytes().any(|b| b.is_ascii_digit()) || (!text.is_ascii() && text.chars().any(is_digit))
}

/// Every accepted number, in text order.
pub(super) fn find_all(text: &str, region: Id) -> Vec<Detection> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(candidate) = CANDIDATE.find_at(text, from) {
        let range = trim(text, cut_second_number(text, candidate.range()));
        match extract(text, range, region) {
            Some(detection) => {
                // An inner piece may end early; scanning resumes right after it.
                from = detection.range.end;
                found.push(detection);
            }
            None => from = candidate.end(),
        }
    }
    found
}

fn cut_second_number(text: &str, range: Range<usize>) -> Range<usize> {
    match SECOND_NUMBER_START.find(&text[range.clone()]) {
        Some(second) => range.start..range.start + second.start(),
        None => range,
    }
}

/// Narrows `range` to start at a digit or opening mark and end at a digit, letter or `#`.
fn trim(text: &str, range: Range<usize>) -> Range<usize> {
    let slice = &text[range.clone()];
    let Some(start) = slice.find(|c: char| is_digit(c) || is_lead(c)) else {
        return range.start..range.start;
    };
    let end = slice
        .char_indices()
        .rev()
        .find(|&(_, c)| is_digit(c) || c.is_alphabetic() || c == '#')
        .map_or(start, |(index, c)| index + c.len_utf8());
    range.start + start..range.start + end.max(start)
}

/// What the characters around a candidate say about it.
enum Surroundings {
    Fine,
    /// A currency sign precedes it: the first digit group is an amount, not part of the number.
    AfterCurrency,
    NotAPhone,
}

fn extract(text: &str, range: Range<usize>, region: Id) -> Option<Detection> {
    if too_few_digits(&text[range.clone()]) {
        return None;
    }
    let after_currency = match surroundings(text, range.clone()) {
        Surroundings::NotAPhone => return None,
        Surroundings::AfterCurrency => true,
        Surroundings::Fine => false,
    };
    if shape::is_not_a_phone(&text[range.clone()]) {
        return None;
    }
    let whole = if after_currency {
        None
    } else {
        verify(text, range.clone(), region)
    };
    whole.or_else(|| extract_inner(text, range, region, after_currency))
}

/// Accepts `range` as a whole number if its brackets pair up and [`leniency`] agrees.
fn verify(text: &str, range: Range<usize>, region: Id) -> Option<Detection> {
    let candidate = &text[range.clone()];
    if too_few_digits(candidate)
        || !brackets_are_balanced(candidate)
        || shape::is_not_a_phone(candidate)
    {
        return None;
    }
    let value = leniency::accept(text, range.clone(), region)?;
    Some(Detection {
        range,
        value,
        kind: MatchKind::Phone,
    })
}

/// Tries the pieces of a failed candidate; the first accepted piece wins.
fn extract_inner(
    text: &str,
    range: Range<usize>,
    region: Id,
    after_currency: bool,
) -> Option<Detection> {
    let candidate = &text[range.clone()];
    let base = range.start;
    let mut tries = 0;
    // An unmatched opening bracket: "(19 35831647" is the number without its bracket.
    if !brackets_are_balanced(candidate) && candidate.starts_with(is_open_bracket) {
        let rest = candidate.trim_start_matches(is_open_bracket);
        let piece = trim(text, base + candidate.len() - rest.len()..range.end);
        tries += 1;
        if let Some(detection) = verify(text, piece, region) {
            return Some(detection);
        }
    }
    for pattern in INNER_PIECES.iter() {
        let mut first = true;
        for captures in pattern.captures_iter(candidate) {
            let whole = captures.get(0).expect("group 0 always matches");
            if first {
                first = false;
                // The text before the first break; after a currency sign that is the amount.
                if !after_currency {
                    tries += 1;
                    let piece = trim(text, base..base + whole.start());
                    if let Some(detection) = verify(text, piece, region) {
                        return Some(detection);
                    }
                }
            }
            if let Some(group) = captures.get(1) {
                tries += 1;
                let piece = trim(text, base + group.start()..base + group.end());
                if let Some(detection) = verify(text, piece, region) {
                    return Some(detection);
                }
            }
            if tries >= MAX_INNER_TRIES {
                return None;
            }
        }
    }
    None
}

fn surroundings(text: &str, range: Range<usize>) -> Surroundings {
    let candidate = &text[range.clone()];
    let mut before = text[..range.start].chars().rev();
    let mut after = text[range.end..].chars();
    let (previous, before_previous) = (before.next(), before.next());
    let (next, after_next) = (after.next(), after.next());

    if let Some(next) = next {
        let next_is_digit = after_next.is_some_and(is_digit);
        // "415-666-7777def", "12%", "1000-1=999", "14377:00", "12345678@host".
        if is_latin_letter(next)
            || is_digit(next)
            || matches!(next, '%' | '‰' | '=' | '_' | '@')
            || (next == ':' && next_is_digit)
        {
            return Surroundings::NotAPhone;
        }
    }
    let Some(previous) = previous else {
        return Surroundings::Fine;
    };
    // A bracket, plus or trunk zero marks the start of a number even right after a word
    // ("at+64 3 331 6005", "at03-331 6005"); other digits glued to a word are a code ("abc415").
    let marked_start = candidate.starts_with(|c: char| is_lead(c) || digit_value(c) == Some(0));
    // "1=999", "id_12345678", "abc415-666-7777".
    if (matches!(previous, '=' | '_') || is_latin_letter(previous)) && !marked_start {
        return Surroundings::NotAPhone;
    }
    // "91a-677-0060", "stus/87057367204202896", "会所-13604770960": joined to a word by a dash
    // or slash.
    if matches!(previous, '-' | '/' | '\\')
        && before_previous.is_some_and(char::is_alphabetic)
        && !marked_start
    {
        return Surroundings::NotAPhone;
    }
    if is_currency(previous) || (previous == ' ' && before_previous.is_some_and(is_currency)) {
        return Surroundings::AfterCurrency;
    }
    Surroundings::Fine
}

/// Cheap early exit before any pattern or metadata work (see [`leniency::MIN_DIGITS`]).
fn too_few_digits(candidate: &str) -> bool {
    candidate.chars().filter(|&c| is_digit(c)).count() < leniency::MIN_DIGITS
}

fn brackets_are_balanced(candidate: &str) -> bool {
    let mut open = false;
    for c in candidate.chars() {
        if is_open_bracket(c) {
            if open {
                return false;
            }
            open = true;
        } else if is_close_bracket(c) {
            if !open {
                return false;
            }
            open = false;
        }
    }
    !open
}

fn is_open_bracket(c: char) -> bool {
    matches!(c, '(' | '[' | '（' | '［')
}

fn is_close_bracket(c: char) -> bool {
    matches!(c, ')' | ']' | '）' | '］')
}

fn is_lead(c: char) -> bool {
    is_open_bracket(c) || is_plus(c)
}

fn is_currency(c: char) -> bool {
    matches!(
        c,
        '$' | '€'
            | '£'
            | '¥'
            | '¢'
            | '₹'
            | '₩'
            | '₽'
            | '₺'
            | '₫'
            | '₪'
            | '₱'
            | '฿'
            | '￥'
            | '＄'
    )
}

/// Latin letters (with diacritics) glue digits into codes; CJK or Devanagari letters do not,
/// because those scripts write numbers right against words ("415-666-7777是我的电话号码").
fn is_latin_letter(c: char) -> bool {
    c.is_alphabetic() && ((c as u32) < 0x0250 || ('\u{1E00}'..='\u{1EFF}').contains(&c))
}
