//! Phone numbers in free text.
//!
//! The `phonenumber` crate parses and validates one number but cannot find numbers in text, so
//! this module does what libphonenumber's `PhoneNumberMatcher` does around it:
//!
//! 1. [`candidate`] scans for digit groups joined by phone punctuation (spaces, dashes, dots,
//!    slashes, brackets, a leading `+`, fullwidth forms) plus an optional extension, and rejects
//!    candidates glued to letters, followed by `%` or `:30`, or preceded by `=`.
//! 2. [`shape`] rejects what is number-shaped but not a phone: dates, year ranges, page ranges,
//!    decimals, IPv4 addresses, thousands-grouped amounts.
//! 3. [`leniency`] decides whether what is left is a phone and computes its value.
//!
//! When a whole candidate fails, the pieces between strong breaks (slash, bracket, spaced dash,
//! full stop, space) are tried in turn, as libphonenumber does, so `$20 415-666-7777` still yields
//! `415-666-7777`.

mod candidate;
mod chars;
mod leniency;
mod metadata;
mod shape;

use phonenumber::country::Id;

use crate::Detection;

/// The default region [`find`] reads national numbers for (`Region::US`, `"GB".parse()`), so
/// callers need not depend on `phonenumber` themselves.
pub use phonenumber::country::Id as Region;

/// Finds phone numbers in `text`, reading numbers without a country code as numbers of `region`.
///
/// `value` is E.164 (`+14155552671`, with `;ext=123` when an extension was written) when the
/// number is valid, or possible with an explicit country code, and otherwise the digits as written
/// (see [`leniency`] for what is accepted).
pub fn find(text: &str, region: Id) -> Vec<Detection> {
    if !candidate::may_contain_phone(text) {
        return Vec::new();
    }
    candidate::find_all(text, region)
}

#[cfg(test)]
mod tests {
    use super::*;
    use phonenumber::country::Id;

    fn found(text: &str, region: Id) -> Vec<(&str, String)> {
        find(text, region)
            .into_iter()
            .map(|d| (&text[d.range], d.value))
            .collect()
    }

    fn spans(text: &str, region: Id) -> Vec<&str> {
        found(text, region).into_iter().map(|(s, _)| s).collect()
    }

    #[test]
    fn value_is_e164_for_valid_national_number() {
        assert_eq!(
            found("Call (415) 555-2671 today", Id::US),
            [("(415) 555-2671", "+14155552671".to_owned())]
        );
    }

    #[test]
    fn region_argument_decides_national_numbers() {
        // The same national digits mean London for GB and are kept as digits for the US.
        assert_eq!(
            found("ring 020 7946 0958 now", Id::GB),
            [("020 7946 0958", "+442079460958".to_owned())]
        );
        assert_eq!(
            found("ring 020 7946 0958 now", Id::US),
            [("020 7946 0958", "02079460958".to_owned())]
        );
    }

    #[test]
    fn plus_country_code_overrides_region() {
        assert_eq!(
            found("Call +64 3 331 6005 before 6:30", Id::US),
            [("+64 3 331 6005", "+6433316005".to_owned())]
        );
    }

    #[test]
    fn international_dialling_prefix_is_read_for_region() {
        assert_eq!(
            found("0011-650-333-6000, 45 days a year", Id::SG),
            [("0011-650-333-6000", "+16503336000".to_owned())]
        );
    }

    #[test]
    fn dates_are_not_phones() {
        for text in [
            "03/27/2011",
            "As I said on 03/10/2011, ok",
            "16/04/2010 doesn't look like a phone number.",
            "2014-04-12 04:04 PM",
            "born 12.03.1985 in Rome",
            "2009/2010",
            "As quoted by Alfonso 12-15 (2009), you may",
        ] {
            assert!(find(text, Id::US).is_empty(), "{text}");
        }
    }

    #[test]
    fn money_percentages_times_and_decimals_are_not_phones() {
        for text in [
            "It costs $1234567 now",
            "growth of 12345678%",
            "March 1 14377:00 is not a phone number",
            "80.585 [79.964, 81.191]",
            "-77.034040723966",
            "1000-1=999",
            "3333/2=6666",
        ] {
            assert!(find(text, Id::US).is_empty(), "{text}");
        }
    }

    #[test]
    fn amount_before_number_is_left_out() {
        assert_eq!(spans("$20 415-666-7777", Id::US), ["415-666-7777"]);
    }

    #[test]
    fn digits_glued_to_letters_are_not_phones() {
        for text in [
            "abc415-666-7777def",
            "415-666-7777def",
            "abc415-666-7777",
            "+14156667777def",
            "s666666666s",
            "91a-677-0060 is not a phone number",
        ] {
            assert!(find(text, Id::US).is_empty(), "{text}");
        }
        // A bracket or plus marks the start of a number even right after a word.
        assert_eq!(spans("abc(415)6667777", Id::US), ["(415)6667777"]);
        assert_eq!(spans("É+14156667777.", Id::US), ["+14156667777"]);
    }

    #[test]
    fn unmatched_brackets_are_not_phones() {
        assert!(
            find("(415 666-7777", Id::US)
                .iter()
                .all(|d| d.range.start > 0)
        );
        assert!(find("80.585 [79.964, 81.191]", Id::US).is_empty());
    }

    #[test]
    fn numbers_inside_longer_digit_runs_are_not_found() {
        assert!(find("ref 41555526710000000123", Id::US).is_empty());
        assert!(find("Visa 5111 1111 1111 1111", Id::US).is_empty());
    }

    #[test]
    fn extension_is_kept_in_span_and_value() {
        assert_eq!(
            found("(800) 901-3355 ext: 7246433 to call me!", Id::US),
            [(
                "(800) 901-3355 ext: 7246433",
                "+18009013355;ext=7246433".to_owned()
            )]
        );
        assert_eq!(
            spans("+44 2034567890x456;x 7246433", Id::GB),
            ["+44 2034567890x456"]
        );
    }

    #[test]
    fn second_number_after_slash_x_is_cut_off() {
        assert_eq!(
            spans("Call +1 (650) 333-6000/x12 more", Id::NZ),
            ["+1 (650) 333-6000"]
        );
    }

    #[test]
    fn fullwidth_digits_and_punctuation_are_read() {
        assert_eq!(
            found("   ＋１　（６５０）　３３３－６０００\t", Id::SG),
            [(
                "＋１　（６５０）　３３３－６０００",
                "+16503336000".to_owned()
            )]
        );
    }

    #[test]
    fn bare_digit_run_needs_a_phone_cue_or_validity() {
        assert_eq!(spans("My phone number is 12345678.", Id::US), ["12345678"]);
        assert!(find("minha conta é 12345678", Id::BR).is_empty());
        // Valid for the region without any cue.
        assert_eq!(spans("Hello 033316005", Id::NZ), ["033316005"]);
    }

    #[test]
    fn code_point_offsets_in_non_ascii_text() {
        let text = "我的电话号是+86 189-1111-1111。谢谢";
        let matches = crate::to_matches(text, find(text, Id::CN));
        assert_eq!(matches.len(), 1);
        assert_eq!((matches[0].start, matches[0].end), (6, 23));
        assert_eq!(matches[0].value, "+8618911111111");
    }

    #[test]
    fn text_without_digits_is_skipped() {
        assert!(find("Random text body - number is foobar, see you there", Id::US).is_empty());
        assert!(find("", Id::US).is_empty());
    }
}
