//! Number-shaped text that is not a phone number: dates, year and page ranges, decimals, IPv4
//! addresses and thousands-grouped amounts. Checked on the whole candidate before any parsing.

use std::sync::LazyLock;

use regex::Regex;

/// Patterns that make a candidate something other than a phone; each is anchored or bounded by
/// non-digits so that a date-like run inside a longer number (`3333/2/6666`) does not count.
static NOT_A_PHONE: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        // 03/27/2011, 27/3/11 (libphonenumber's SLASH_SEPARATED_DATES, bounded by non-digits).
        r"(?:^|[^0-9])(?:[0-3]?[0-9]/[01]?[0-9]|[01]?[0-9]/[0-3]?[0-9])/(?:[12][0-9])?[0-9]{2}(?:$|[^0-9])",
        // 2011-03-27, 2011.03.27, 2016 10 16, also followed by a time (libphonenumber's
        // TIME_STAMPS).
        r"^[12][0-9]{3}[-/. ][01]?[0-9][-/. ][0-3]?[0-9](?:$|[^0-9])",
        // 27.03.2011, 27. 05. 2022, 03-27-2011 (four-digit year, so 12-34-56-78 stays a phone).
        r"^(?:[0-3]?[0-9][-.] ?[01]?[0-9]|[01]?[0-9][-.] ?[0-3]?[0-9])[-.] ?(?:19|20)[0-9]{2}$",
        // 2009/2010, 1990-95, 1985 -- 1987.
        r"^(?:1[89]|20)[0-9]{2} *[-/\x{2013}\x{2014}]+ *(?:(?:1[89]|20)[0-9]{2}|[0-9]{2})$",
        // Clock-time ranges: 0730-0930.
        r"^(?:[01][0-9]|2[0-3])[0-5][0-9] *[-\x{2013}] *(?:[01][0-9]|2[0-3])[0-5][0-9]$",
        // Publication pages "12-15 (2009)" (libphonenumber's PUB_PAGES).
        r"[0-9]{1,5}-+[0-9]{1,5}\s{0,4}\([0-9]{1,4}",
        // 192.168.0.1
        r"^[0-9]{1,3}(?:\.[0-9]{1,3}){3}$",
        // 80.585, 0.000000012
        r"^[0-9]+\.[0-9]+$",
        // 1.234.567
        r"^[0-9]{1,3}(?:\.[0-9]{3}){2,}$",
    ]
    .iter()
    .map(|pattern| Regex::new(pattern).expect("phone shape pattern compiles"))
    .collect()
});

/// Whether `candidate` is a date, range, decimal, address or amount rather than a phone.
pub(super) fn is_not_a_phone(candidate: &str) -> bool {
    NOT_A_PHONE
        .iter()
        .any(|pattern| pattern.is_match(candidate))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_and_number_shapes_are_recognised() {
        for text in [
            "03/27/2011",
            "2011-03-27",
            "2012-01-02 08",
            "27.03.2011",
            "2009/2010",
            "1985 -- 1987",
            "2016 10 16",
            "27. 05. 2022",
            "0730-0930",
            "12-15 (2009)",
            "192.168.0.1",
            "0.000000012",
            "1.234.567",
        ] {
            assert!(is_not_a_phone(text), "{text}");
        }
    }

    #[test]
    fn phone_shapes_are_left_alone() {
        for text in [
            "3333/2/6666",
            "0123/456789",
            "12-34-56-78",
            "123.456.7890",
            "9002309. 158",
            "+49176/ 12345678",
        ] {
            assert!(!is_not_a_phone(text), "{text}");
        }
    }
}
