//! Whether a candidate is a phone number, and its value.
//!
//! The default leniency, chosen for extraction from real text where numbers are often foreign or
//! loosely written:
//!
//! * **Metadata says yes:** the number is valid for `region` (or for the country its `+`, `00` or
//!   other international prefix names), or its length is possible there and it was written with a
//!   country code or with phone punctuation. The value is E.164.
//! * **Shape says yes:** otherwise a number written with a `+` (8–17 digits), or grouped with
//!   phone punctuation (7–15 digits, at most two single-digit groups, not a list of equal
//!   groups) is accepted, because users paste numbers from every country and metadata for the
//!   default region cannot vouch for them. The value is the digits, with `+` if written.
//! * **Context says yes:** a bare digit run (or loose two-digit pairs) is only a phone when a
//!   phone word ("phone", "tel", "call", "电话", …) comes shortly before it, since order numbers,
//!   timestamps and accounts look the same.

use std::ops::Range;
use std::sync::LazyLock;

use phonenumber::country::{Id, Source};
use phonenumber::metadata::Database;
use phonenumber::{Metadata, PhoneNumber};
use regex::Regex;

use super::chars::{digit_value, extension_pattern, is_plus};
use super::metadata;

/// The extension at the end of a candidate (anchored, as libphonenumber's parser does).
static EXTENSION_AT_END: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!("(?i)(?:{})$", extension_pattern())).expect("pattern compiles")
});

/// A trunk prefix in brackets, as in "+44 (0) 161 …".
static TRUNK_ZERO: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[(（][0０]+[)）]").expect("pattern compiles"));

/// Fewest digits a phone number is written with here; shorter runs are codes, years or counts.
pub(super) const MIN_DIGITS: usize = 7;
/// E.164 allows 15 digits; an international prefix (`00`, `011`) or a trailing sub-number adds up
/// to two more.
const MAX_DIGITS: usize = 15;
/// Fewest digits after the country code; shorter parses are service codes or mangled input.
const MIN_NATIONAL_DIGITS: usize = 5;
const MAX_DIGITS_INTERNATIONAL: usize = 17;

/// How far before a bare digit run to look for a phone word, in characters.
const CUE_WINDOW: usize = 48;

/// Words that announce a phone number. Latin ones must start a word ("tel" but not "hotel").
const PHONE_CUES: &[&str] = &[
    "phone",
    "tel",
    "tél",
    "call",
    "mobile",
    "cell",
    "fax",
    "dial",
    "whatsapp",
    "sms",
    "hotline",
    "helpline",
    "contact",
    "ring",
    "reach",
    "celular",
    "móvil",
    "movil",
    "handy",
    "ligue",
    "llame",
    "appel",
    "anruf",
    "fone",
    "ramal",
    "电话",
    "電話",
    "手机",
    "手機",
    "号码",
    "號碼",
    "致电",
    "拨打",
    "联系",
    "전화",
    "फोन",
    "फ़ोन",
    "नंबर",
    "телефон",
];

/// The parts of a candidate that decide whether it is a phone.
struct Written {
    /// ASCII digits of the number without extension, `(0)` trunk digits dropped after a `+`.
    digits: String,
    extension: Option<String>,
    plus: bool,
    /// Lengths of the digit groups as written.
    groups: Vec<usize>,
    /// Whether any group separator other than a plain space was used.
    punctuated: bool,
}

impl Written {
    fn read(candidate: &str) -> Written {
        let (number, extension) = match EXTENSION_AT_END.captures(candidate) {
            Some(captures) if captures.get(0).is_some_and(|m| m.start() > 0) => {
                let digits = ["labelled", "marked", "hashed"]
                    .iter()
                    .find_map(|name| captures.name(name))
                    .map(|m| ascii_digits(m.as_str()));
                let start = captures.get(0).map_or(candidate.len(), |m| m.start());
                (&candidate[..start], digits)
            }
            _ => (candidate, None),
        };
        let plus = number
            .chars()
            .find(|&c| digit_value(c).is_some() || is_plus(c))
            .is_some_and(is_plus);
        let number = if plus {
            // "+44 (0) 161…": the bracketed trunk zero is not dialled from abroad.
            drop_bracketed_zero(number)
        } else {
            number.to_owned()
        };
        let mut groups = Vec::new();
        let mut current = 0;
        let mut punctuated = false;
        for c in number.chars() {
            if digit_value(c).is_some() {
                current += 1;
                continue;
            }
            if current > 0 {
                groups.push(current);
                current = 0;
            }
            if !matches!(c, ' ' | '\u{A0}' | '\u{3000}') {
                punctuated = true;
            }
        }
        if current > 0 {
            groups.push(current);
        }
        Written {
            digits: ascii_digits(&number),
            extension,
            plus,
            groups,
            punctuated,
        }
    }

    fn international(&self) -> bool {
        self.plus || self.digits.starts_with("00") || self.digits.starts_with("011")
    }

    /// Written as a phone would be: `+`, brackets or dashes, or space-separated groups that are
    /// neither loose pairs ("12 34 56 78") nor a list of equal numbers ("2019 2020 2021"; "612 345
    /// 678" is a Spanish or Italian mobile, so three-digit groups do not count as a list).
    fn is_formatted(&self) -> bool {
        if self.plus || self.punctuated {
            return true;
        }
        if self.groups.len() < 2 || self.groups.iter().all(|&len| len <= 2) {
            return false;
        }
        let equal_list = self.groups.len() >= 3
            && self
                .groups
                .iter()
                .all(|&len| len == self.groups[0] && len >= 4)
            && !self.digits.starts_with('0');
        !equal_list
    }

    /// Too many one-digit groups read as a list or arithmetic ("1 2 3 4 5 6 7").
    fn has_plausible_groups(&self) -> bool {
        self.groups.iter().filter(|&&len| len == 1).count() <= 2
    }
}

/// The value of the number in `text[range]` if it is accepted as a phone (see the module docs).
pub(super) fn accept(text: &str, range: Range<usize>, region: Id) -> Option<String> {
    let written = Written::read(&text[range.clone()]);
    let count = written.digits.len();
    let max = if written.international() {
        MAX_DIGITS_INTERNATIONAL
    } else {
        MAX_DIGITS
    };
    if count < MIN_DIGITS || count > max || !written.has_plausible_groups() {
        return None;
    }
    let formatted = written.is_formatted();
    if let Some((number, scope)) = parse(&written, region) {
        let explicit_country = number.code().source() != Source::Default;
        let national_digits = number.national().to_string().len();
        // The number's likely territory first; the whole calling code only when it says no.
        let valid = || {
            scope.territory().is_some_and(|db| number.is_valid_with(db))
                || scope.group().is_some_and(|db| number.is_valid_with(db))
        };
        let possible = || {
            scope
                .group()
                .is_some_and(|database| is_possible(&number, database))
        };
        if national_digits >= MIN_NATIONAL_DIGITS
            && (valid() || ((explicit_country || formatted) && possible()))
        {
            return Some(e164(&number, &written));
        }
    }
    let plausible = if written.plus {
        count > MIN_DIGITS
    } else {
        formatted || has_phone_cue(&text[..range.start])
    };
    if !plausible {
        return None;
    }
    // Metadata could not vouch for the number, so its E.164 form would be a guess.
    let sign = if written.plus { "+" } else { "" };
    Some(match &written.extension {
        Some(extension) => format!("{sign}{};ext={extension}", written.digits),
        None => format!("{sign}{}", written.digits),
    })
}

/// Parses the digits. Numbers with a `+` or an international prefix are parsed without the
/// default region, because the crate otherwise strips the default region's national prefix from
/// a foreign national number (`+45 12345678` read for CN loses digits). Returns the number with
/// the metadata it is checked against.
fn parse(written: &Written, region: Id) -> Option<(PhoneNumber, metadata::Scope)> {
    let international = if written.plus {
        Some(written.digits.as_str())
    } else {
        after_international_prefix(&written.digits, region)
    };
    let parsed_international = international.and_then(|digits| {
        let scope = metadata::for_international(digits)?;
        let number =
            phonenumber::parse_with(scope.territory()?, None, format!("+{digits}")).ok()?;
        Some((number, scope))
    });
    if parsed_international.is_some() {
        return parsed_international;
    }
    let scope = metadata::for_region(region)?;
    let number = phonenumber::parse_with(scope.territory()?, Some(region), &written.digits).ok()?;
    Some((number, scope))
}

/// The digits after `region`'s international dialling prefix ("0011" from Singapore), if the
/// number starts with it and a country code can follow.
fn after_international_prefix(digits: &str, region: Id) -> Option<&str> {
    let metadata = metadata::for_region(region)?
        .territory()?
        .by_id(region.as_ref())?;
    let prefix = metadata.international_prefix()?.find(digits)?;
    let rest = &digits[prefix.end()..];
    (prefix.start() == 0 && !rest.is_empty() && !rest.starts_with('0')).then_some(rest)
}

/// E.164 needs no metadata: `+`, the calling code, the national number. (The crate's formatter
/// would build its whole default database first, whatever database it is given.)
fn e164(number: &PhoneNumber, written: &Written) -> String {
    let formatted = format!("+{}{}", number.code().value(), number.national());
    match &written.extension {
        Some(extension) => format!("{formatted};ext={extension}"),
        None => formatted,
    }
}

/// Whether the national number has a length some number type of its country can have and fits
/// the country's general number pattern (so a US "0101234567" is not possible).
fn is_possible(number: &PhoneNumber, database: &Database) -> bool {
    let national = number.national().to_string();
    let length = national.len() as u16;
    // Only the number's own region (or the main region of its code): checking every region of a
    // shared code such as +1 would cycle the crate's small regex cache and recompile patterns.
    let metadata = number.metadata(database).or_else(|| {
        database
            .by_code(&number.code().value())
            .and_then(|regions| regions.into_iter().find(|m| m.is_main_country_for_code()))
    });
    metadata.is_some_and(|metadata| {
        let pattern = metadata.descriptors().general().national_number();
        possible_lengths(metadata).any(|possible| possible == length)
            && pattern
                .find(&national)
                .is_some_and(|m| m.start() == 0 && m.end() == national.len())
    })
}

fn possible_lengths(metadata: &Metadata) -> impl Iterator<Item = u16> + '_ {
    let descriptors = metadata.descriptors();
    [
        Some(descriptors.general()),
        descriptors.fixed_line(),
        descriptors.mobile(),
        descriptors.toll_free(),
        descriptors.premium_rate(),
        descriptors.shared_cost(),
        descriptors.personal_number(),
        descriptors.voip(),
        descriptors.pager(),
        descriptors.uan(),
        descriptors.voicemail(),
    ]
    .into_iter()
    .flatten()
    .flat_map(|descriptor| descriptor.possible_length().iter().copied())
}

/// Whether a phone word ends within [`CUE_WINDOW`] characters before the number.
fn has_phone_cue(before: &str) -> bool {
    let start = before
        .char_indices()
        .rev()
        .nth(CUE_WINDOW - 1)
        .map_or(0, |(index, _)| index);
    let window = before[start..].to_lowercase();
    PHONE_CUES.iter().any(|cue| {
        window.match_indices(cue).any(|(index, _)| {
            !cue.starts_with(|c: char| c.is_ascii_alphabetic())
                || !window[..index]
                    .chars()
                    .next_back()
                    .is_some_and(char::is_alphabetic)
        })
    })
}

fn ascii_digits(text: &str) -> String {
    text.chars()
        .filter_map(digit_value)
        .filter_map(|value| char::from_digit(value, 10))
        .collect()
}

/// Removes a `(0)` written after the country code.
fn drop_bracketed_zero(number: &str) -> String {
    let mut out = String::with_capacity(number.len());
    let mut copied = 0;
    for zero in TRUNK_ZERO.find_iter(number) {
        if number[..zero.start()]
            .chars()
            .any(|c| digit_value(c).is_some())
        {
            out.push_str(&number[copied..zero.start()]);
            copied = zero.end();
        }
    }
    out.push_str(&number[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trunk_zero_after_country_code_is_dropped() {
        assert_eq!(drop_bracketed_zero("+44(0)161234567"), "+44161234567");
        assert_eq!(drop_bracketed_zero("+31 (0)6 12345678"), "+31 6 12345678");
        // Only a zero alone in brackets after digits is a trunk prefix.
        assert_eq!(drop_bracketed_zero("(0xx) 123"), "(0xx) 123");
        assert_eq!(drop_bracketed_zero("+31 (6) 1223"), "+31 (6) 1223");
    }

    #[test]
    fn phone_words_must_start_a_word() {
        assert!(has_phone_cue("My phone number is "));
        assert!(has_phone_cue("我的电话号是"));
        assert!(!has_phone_cue("Room at the hotel "));
        assert!(!has_phone_cue("minha conta é "));
    }
}
