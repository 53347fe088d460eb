//! Hostile inputs for each target: units that, repeated, make a naive scanner rescan the text
//! (repeated partial matches, long runs of separators, digits, capitalised words, `@`, dots,
//! brackets). Shared by `tests/linear_time.rs`, which checks that each costs time linear in
//! its length, and `examples/pathological.rs`, which prints seconds per megabyte for each.

use quarry_core::Target;

/// One hostile input: `unit` repeated to the wanted length, read for `target`.
pub struct Pattern {
    pub target: Target,
    pub unit: &'static str,
}

/// The worst inputs found for each target, grouped by target.
pub const PATTERNS: &[Pattern] = &[
    // Links: candidates that linkify reads to the end of the run and the scan rejects, scans
    // from every `//`, `#` or `@`, and pairwise coverage checks.
    p(Target::Url, "www."),
    p(Target::Url, "ab."),
    p(Target::Url, "x.zz"),
    p(Target::Url, "a.b/"),
    p(Target::Url, "http://"),
    p(Target::Url, ".//"),
    p(Target::Url, " //a.com"),
    p(Target::Url, "@http://"),
    p(Target::Url, "x@http://a.com "),
    p(Target::Url, "http://a.com#"),
    p(Target::Url, "a_b."),
    p(Target::Url, "é."),
    p(Target::Url, "a.com。"),
    p(Target::Url, "a.com./"),
    p(Target::Url, "["),
    p(Target::Url, "a.com "),
    p(Target::Url, "a.zz/,x.com#"),
    p(Target::Url, "é.com#!x.com#"),
    // Addresses: unclosed literals, runs of `@` and dots, addresses glued together.
    p(Target::Email, "a@["),
    p(Target::Email, "a@"),
    p(Target::Email, "@"),
    p(Target::Email, "a."),
    p(Target::Email, "a@b."),
    p(Target::Email, "a@b.com"),
    p(Target::Email, "a@b.com "),
    p(Target::Email, "a@http://"),
    // Phones: digit runs and groups joined by every kind of phone punctuation.
    p(Target::Phone, "1"),
    p(Target::Phone, "1 "),
    p(Target::Phone, "(1"),
    p(Target::Phone, "+1 "),
    p(Target::Phone, "1-"),
    p(Target::Phone, "1/"),
    p(Target::Phone, "12."),
    p(Target::Phone, "415-555-0100 "),
    p(Target::Phone, "(415) 555-0100 x"),
    p(Target::Phone, "$1 "),
    // Addresses of both families, glued runs of dots and colons.
    p(Target::Ip, "1."),
    p(Target::Ip, "1:"),
    p(Target::Ip, "a:"),
    p(Target::Ip, "::"),
    p(Target::Ip, "1.2.3.4 ::1 "),
    p(Target::Ip, "10.0.0.1 - fe80::1 GET /\n"),
    p(Target::Ip, "1.2.3.4."),
    // Dates: numbers and words that start an expression and never finish one.
    p(Target::Date, "1 "),
    p(Target::Date, "1/"),
    p(Target::Date, "1-"),
    p(Target::Date, "Jan "),
    p(Target::Date, "next "),
    p(Target::Date, "from 1 to "),
    p(Target::Date, "1 Jan 2020 - "),
    p(Target::Date, "at 3 "),
    p(Target::Date, "12:00 "),
    p(Target::Date, "Monday, "),
    p(Target::Date, "twenty-"),
    p(Target::Date, "2020"),
    p(Target::Date, "1 Jan, 2 Feb, "),
    p(Target::Date, "9:00-"),
    // Entities and names: endless capitalised runs, titles, initials, joiners.
    p(Target::Entity, "Aa "),
    p(Target::Entity, "A."),
    p(Target::Entity, "Aa of "),
    p(Target::Entity, "University of "),
    p(Target::Entity, "de Aa "),
    p(Target::Entity, "Aa & "),
    p(Target::Entity, "AAA "),
    p(Target::Entity, "Aa. "),
    p(Target::Entity, "Aa-"),
    p(Target::Entity, "Bank of "),
    p(Target::Name, "Dr. "),
    p(Target::Name, "Mr Aa "),
    p(Target::Name, "Aa Bb, "),
];

const fn p(target: Target, unit: &'static str) -> Pattern {
    Pattern { target, unit }
}

/// `unit` repeated to `bytes` bytes (cut back to a character boundary).
pub fn repeated(unit: &str, bytes: usize) -> String {
    let mut text = unit.repeat(bytes / unit.len() + 1);
    let mut end = bytes.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text
}
