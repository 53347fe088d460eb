use regex::Regex;

use super::*;

fn slice(text: &str, span: Span) -> &str {
    &text[span.byte_start..span.byte_end]
}

use super::oracle::Readings;

fn readings(q: &Quantities) -> Readings {
    let bytes = |span: &Span| (span.byte_start, span.byte_end);
    (
        q.numbers.iter().map(|(v, s)| (*v, bytes(s))).collect(),
        q.dates
            .iter()
            .map(|date| (date.iso.as_str().to_owned(), bytes(&date.span)))
            .collect(),
    )
}

/// The scale words with their factors, as the generators write them.
const SCALES: [(&str, f64); 10] = [
    ("thousand", 1e3),
    ("million", 1e6),
    ("billion", 1e9),
    ("trillion", 1e12),
    ("mln", 1e6),
    ("mn", 1e6),
    ("bn", 1e9),
    ("k", 1e3),
    ("m", 1e6),
    ("b", 1e9),
];

/// Every spelling of a month's name with its number, as the generators write them.
const MONTHS: [(&str, u32); 24] = [
    ("january", 1),
    ("february", 2),
    ("march", 3),
    ("april", 4),
    ("may", 5),
    ("june", 6),
    ("july", 7),
    ("august", 8),
    ("september", 9),
    ("october", 10),
    ("november", 11),
    ("december", 12),
    ("jan", 1),
    ("feb", 2),
    ("mar", 3),
    ("apr", 4),
    ("jun", 6),
    ("jul", 7),
    ("aug", 8),
    ("sept", 9),
    ("sep", 9),
    ("oct", 10),
    ("nov", 11),
    ("dec", 12),
];

/// Readings with code point spans (`start..end` of numbers, `start` of dates).
type CodePointReadings = (Vec<(f64, usize, usize)>, Vec<(String, usize)>);

/// A small seeded generator: the generated tests are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // SplitMix64.
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// `word` with each ASCII letter in a random case.
    fn any_case(&mut self, word: &str) -> String {
        word.chars()
            .map(|c| {
                if self.chance(50) {
                    c.to_ascii_uppercase()
                } else {
                    c.to_ascii_lowercase()
                }
            })
            .collect()
    }
}

// --- Examples ------------------------------------------------------------------------------

#[test]
fn amounts_with_scale_words_and_separators() {
    let text = "Revenue was $1.2 million, up from 1,200 units; fee 3.5k and 25% off.";
    let q = Quantities::scan(text);
    assert_eq!(
        slice(text, q.find_number(1_200_000.0).unwrap()),
        "1.2 million"
    );
    assert_eq!(slice(text, q.find_number(1200.0).unwrap()), "1,200");
    assert_eq!(slice(text, q.find_number(3500.0).unwrap()), "3.5k");
    assert_eq!(slice(text, q.find_number(0.25).unwrap()), "25%");
    assert_eq!(q.find_number(1500.0), None);
}

#[test]
fn dates_in_common_spellings_normalise_to_iso() {
    let text = "Signed 15 January 2024, due March 3rd, 2024; paid 2024-04-01; \
                review 05/06/2024; period Feb 2024.";
    let q = Quantities::scan(text);
    assert_eq!(
        slice(text, q.find_date("2024-01-15").unwrap()),
        "15 January 2024"
    );
    assert_eq!(
        slice(text, q.find_date("2024-03-03").unwrap()),
        "March 3rd, 2024"
    );
    assert_eq!(
        slice(text, q.find_date("2024-04-01").unwrap()),
        "2024-04-01"
    );
    assert!(q.find_date("2024-06-05").is_some());
    assert!(q.find_date("2024-05-06").is_some());
    assert_eq!(slice(text, q.find_date("2024-02").unwrap()), "Feb 2024");
    assert_eq!(q.find_date("2024-01-16"), None);
}

#[test]
fn spans_are_code_points() {
    let text = "Café ☕ total €1,200";
    let span = Quantities::scan(text).find_number(1200.0).unwrap();
    assert_eq!((span.start, span.end), (14, 19));
}

#[test]
fn accounting_negatives() {
    let q = Quantities::scan("Loss of (500) and -20.");
    assert!(q.find_number(-500.0).is_some());
    assert!(q.find_number(-20.0).is_some());
}

/// The regexes matched digits of every script and then could not parse them; the scanner reads
/// them by value.
#[test]
fn digits_of_other_scripts_are_read() {
    let text = "المجموع ١٢٠٠ بتاريخ ٢٠٢٤-٠١-١٥ و ３.５k";
    let q = Quantities::scan(text);
    assert_eq!(slice(text, q.find_number(1200.0).unwrap()), "١٢٠٠");
    assert_eq!(slice(text, q.find_number(3500.0).unwrap()), "３.５k");
    assert_eq!(
        slice(text, q.find_date("2024-01-15").unwrap()),
        "٢٠٢٤-٠١-١٥"
    );
}

/// `\s` was Unicode's White_Space: a no-break space may stand between a number and its scale,
/// and narrow no-break spaces between a date's parts.
#[test]
fn unicode_spaces_separate_like_spaces() {
    let text = "1.2\u{a0}million on 15\u{202f}January\u{a0}2024";
    let q = Quantities::scan(text);
    assert_eq!(
        slice(text, q.find_number(1_200_000.0).unwrap()),
        "1.2\u{a0}million"
    );
    assert_eq!(
        slice(text, q.find_date("2024-01-15").unwrap()),
        "15\u{202f}January\u{a0}2024"
    );
}

/// `(?i)` folded `k` with the Kelvin sign: "300 K" of temperature read as 300000.
#[test]
fn the_kelvin_sign_is_not_a_thousand() {
    let q = Quantities::scan("cooled to 300 \u{212A} overnight");
    assert!(q.find_number(300.0).is_some());
    assert_eq!(q.find_number(300_000.0), None);
}

/// Numbers too long to rewrite on the stack are read whole, separators and other scripts too.
#[test]
fn numbers_longer_than_the_stack_buffer_are_read() {
    let plain = "7".repeat(100);
    let grouped = format!("1{}", ",000".repeat(30));
    let arabic = "٣".repeat(80);
    let text = format!("{plain} and {grouped} and {arabic}.5");
    let q = Quantities::scan(&text);
    assert_eq!(
        slice(&text, q.find_number(plain.parse().unwrap()).unwrap()),
        plain
    );
    assert_eq!(slice(&text, q.find_number(1e90).unwrap()), grouped);
    let three: f64 = format!("{}.5", "3".repeat(80)).parse().unwrap();
    assert_eq!(
        slice(&text, q.find_number(three).unwrap()),
        format!("{arabic}.5")
    );
}

#[test]
fn scale_words_and_dates_end_at_word_boundaries() {
    let q = Quantities::scan("5 mg, 7 bns, 3_k, 2 million² and 12 Marchy 2024, 2024-01-15x");
    assert_eq!(q.find_number(5e6), None);
    assert_eq!(q.find_number(7e9), None);
    assert_eq!(q.find_number(3e3), None);
    // `²` is no word character: the scale word ends before it.
    assert!(q.find_number(2e6).is_some());
    assert_eq!(q.find_date("2024-03-12"), None);
    assert_eq!(q.find_date("2024-01-15"), None);
}

// --- The scanner against the regexes it replaced ---------------------------------------------

/// Pieces of text random inputs are made of: digits, separators, signs, spaces of several
/// kinds, word characters of several kinds (a combining mark is one, `²` is not), scale words,
/// ordinals, `of` and month names.
const PIECES: &[&str] = &[
    "0", "1", "2", "3", "4", "5", "6", "7", "9", "12", "2024", "1999", "31", "00", ",", ",", ".",
    ".", "-", "/", "%", "(", ")", "$", "€ ", "−", " ", " ", " ", "\u{a0}", "\u{202f}", "\n", "\t",
    "_", "é", "\u{301}", "²", "x", "a", "s", "K", "k", "m", "M", "b", "bn", "mn", "mln", "Million",
    "thousand", "billion", "trillion", "st", "nd", "RD", "th", "of", "Of ", "jan", "Jan.",
    "January", "sept", "Sep", "march", "MAY", "jun", "june", "dec", "December", "oct", "october",
    "北", "of ", "15th ", "3 ", " 2024", "Jan ", "June, ", "5.",
];

#[test]
fn the_scanner_finds_what_the_regexes_found() {
    let mut rng = Rng(13);
    for case in 0..30_000 {
        let pieces = rng.below(30);
        let text: String = (0..pieces).map(|_| rng.pick(PIECES)).collect();
        let scanned = readings(&Quantities::scan(&text));
        let expected = super::oracle::scan(&text);
        assert_eq!(scanned, expected, "case {case}: {text:?}");
    }
}

#[test]
fn character_classes_are_the_regex_ones() {
    let digit = Regex::new(r"\A\d\z").unwrap();
    let word = Regex::new(r"\A\w\z").unwrap();
    let space = Regex::new(r"\A\s\z").unwrap();
    let mut buffer = [0; 4];
    for c in (0..=0x10FFFF).filter_map(char::from_u32) {
        let one = &*c.encode_utf8(&mut buffer);
        assert_eq!(digit_value(c).is_some(), digit.is_match(one), "{c:?}");
        assert_eq!(is_word_char(c), word.is_match(one), "{c:?}");
        assert_eq!(c.is_whitespace(), space.is_match(one), "{c:?}");
    }
}

/// Digits of another script read as the same digits in ASCII would, with the same code point
/// spans (the regexes found these expressions but dropped them).
#[test]
fn every_script_reads_its_digits_as_ascii_would() {
    let zeros: Vec<u32> = DIGIT_ZEROS.to_vec();
    let mut rng = Rng(7);
    for case in 0..5_000 {
        let pieces = rng.below(20);
        let ascii: String = (0..pieces).map(|_| rng.pick(PIECES)).collect();
        let zero = rng.pick(&zeros);
        let other: String = ascii
            .chars()
            .map(|c| match c.to_digit(10) {
                Some(value) => char::from_u32(zero + value).unwrap(),
                None => c,
            })
            .collect();
        let code_points = |q: Quantities| -> CodePointReadings {
            (
                q.numbers
                    .iter()
                    .map(|(v, s)| (*v, s.start, s.end))
                    .collect(),
                q.dates
                    .iter()
                    .map(|date| (date.iso.as_str().to_owned(), date.span.start))
                    .collect(),
            )
        };
        assert_eq!(
            code_points(Quantities::scan(&other)),
            code_points(Quantities::scan(&ascii)),
            "case {case}: {other:?}"
        );
    }
}

// --- Properties from the specification ---------------------------------------------------------

const PROSE: &[&str] = &[
    "the", "invoice", "total", "was", "paid", "for", "café", "naïve", "über", "北京", "with",
    "net", "amount", "report", "Ltd", "ÉTÉ",
];

/// Random prose with `expression` in it; its byte range.
fn in_prose(rng: &mut Rng, before: &str, expression: &str, after: &str) -> (String, usize) {
    let mut text = String::new();
    for _ in 0..rng.below(6) {
        text.push_str(rng.pick(PROSE));
        text.push_str(rng.pick(&[" ", "  ", "\n", ", "]));
    }
    text.push_str(before);
    let start = text.len();
    text.push_str(expression);
    text.push_str(after);
    for _ in 0..rng.below(6) {
        text.push_str(rng.pick(&[" ", "\n", "; "]));
        text.push_str(rng.pick(PROSE));
    }
    (text, start)
}

/// `digits` with a comma every three digits from the right.
fn with_thousands(digits: &str) -> String {
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[test]
fn every_number_written_in_prose_is_found_where_written() {
    let spaces = ["", " ", "\u{a0}", "\u{202f}"];
    let mut rng = Rng(42);
    for case in 0..20_000 {
        let whole = rng.next() % 10u64.pow(rng.below(10) as u32 + 1);
        let decimals = if rng.chance(40) {
            let places = rng.below(3) + 1;
            let fraction = rng.next() % 10u64.pow(places as u32);
            format!(".{fraction:0places$}")
        } else {
            String::new()
        };
        let digits = whole.to_string();
        let written = if whole >= 1000 && rng.chance(50) {
            with_thousands(&digits)
        } else {
            digits.clone()
        };
        let base: f64 = format!("{digits}{decimals}").parse().unwrap();
        let mut expression = format!("{written}{decimals}");
        let mut value = base;
        match rng.below(3) {
            0 => {}
            1 => {
                let (word, factor) = rng.pick(&SCALES);
                expression = format!("{expression}{}{}", rng.pick(&spaces), rng.any_case(word));
                value = base * factor;
            }
            _ => {
                expression = format!("{expression}{}%", rng.pick(&spaces));
                value = base / 100.0;
            }
        }
        let (before, after, negative) = match rng.below(5) {
            0 => ("-", "", true),
            1 => ("−", "", true),
            2 => (rng.pick(&["(", "($", "(€ "]), ")", true),
            3 => (rng.pick(&["$", "€", "£ "]), "", false),
            _ => ("", rng.pick(&["", ".", ",", ";", "!"]), false),
        };
        let (before, after) = (format!(" {before}"), format!("{after} "));
        let (text, start) = in_prose(&mut rng, &before, &expression, &after);
        let q = Quantities::scan(&text);
        for wanted in [value, if negative { -value } else { value }] {
            let span = q
                .find_number(wanted)
                .unwrap_or_else(|| panic!("case {case}: {wanted} not found in {text:?}"));
            assert_eq!(
                (span.byte_start, span.byte_end),
                (start, start + expression.len()),
                "case {case}: {wanted} in {text:?}"
            );
        }
        if !negative && value != 0.0 {
            assert_eq!(q.find_number(-value), None, "case {case}: {text:?}");
        }
    }
}

#[test]
fn a_scale_word_inside_a_longer_word_is_no_scale() {
    let mut rng = Rng(5);
    for case in 0..2_000 {
        let (word, factor) = rng.pick(&SCALES);
        let tail = rng.pick(&["s", "x", "é", "_", "2", "\u{301}"]);
        let base = (rng.below(999) + 1) as f64;
        let space = rng.pick(&["", " ", "\u{a0}"]);
        let expression = format!("{base}{space}{}{tail}", rng.any_case(word));
        let (text, _) = in_prose(&mut rng, " ", &expression, " ");
        let q = Quantities::scan(&text);
        assert!(q.find_number(base).is_some(), "case {case}: {text:?}");
        assert_eq!(q.find_number(base * factor), None, "case {case}: {text:?}");
    }
}

#[test]
fn every_date_written_in_prose_is_found_where_written() {
    let month_names: Vec<(&str, u32)> = MONTHS.to_vec();
    let spaces = [" ", "  ", "\u{a0}", "\u{202f}", "\n"];
    let mut rng = Rng(2024);
    for case in 0..20_000 {
        let year = 1900 + rng.below(200) as i32;
        let month = rng.below(12) as u32 + 1;
        let day = rng.below(31) as u32 + 1;
        let Some(iso) = IsoDate::day(year, month, day) else {
            continue;
        };
        let iso = iso.as_str().to_owned();
        let names: Vec<&str> = month_names
            .iter()
            .filter(|(_, number)| *number == month)
            .map(|(name, _)| *name)
            .collect();
        let name = rng.pick(&names);
        let name = rng.any_case(name);
        let point = if rng.chance(30) { "." } else { "" };
        let comma = if rng.chance(40) { "," } else { "" };
        let space = |rng: &mut Rng| rng.pick(&spaces);
        let ordinal = rng.pick(&["", "", "st", "nd", "rd", "th"]);
        let ordinal = rng.any_case(ordinal);
        let padded = |n: u32, rng: &mut Rng| {
            if n < 10 && rng.chance(50) {
                format!("0{n}")
            } else {
                n.to_string()
            }
        };
        let (expression, wanted) = match rng.below(6) {
            0 => {
                let separator = rng.pick(&["-", "/", "."]);
                let other = rng.pick(&["-", "/", "."]);
                let (m, d) = (padded(month, &mut rng), padded(day, &mut rng));
                (format!("{year}{separator}{m}{other}{d}"), iso)
            }
            1 => {
                let separator = rng.pick(&["-", "/", "."]);
                let (first, second) = if rng.chance(50) {
                    (day, month)
                } else {
                    (month, day)
                };
                let (a, b) = (padded(first, &mut rng), padded(second, &mut rng));
                let written_year = if (1970..2070).contains(&year) && rng.chance(50) {
                    format!("{:02}", year % 100)
                } else {
                    year.to_string()
                };
                (format!("{a}{separator}{b}{separator}{written_year}"), iso)
            }
            2 => {
                let of = if rng.chance(30) {
                    format!("{}{}", rng.any_case("of"), space(&mut rng))
                } else {
                    String::new()
                };
                let (s1, s2) = (space(&mut rng), space(&mut rng));
                (
                    format!("{day}{ordinal}{s1}{of}{name}{point}{comma}{s2}{year}"),
                    iso,
                )
            }
            3 => {
                let (s1, s2) = (space(&mut rng), space(&mut rng));
                (
                    format!("{name}{point}{s1}{day}{ordinal}{comma}{s2}{year}"),
                    iso,
                )
            }
            _ => {
                let s = space(&mut rng);
                (
                    format!("{name}{point}{comma}{s}{year}"),
                    format!("{year:04}-{month:02}"),
                )
            }
        };
        let before = rng.pick(&[" ", " (", "\n", ": "]);
        let after = rng.pick(&[" ", ". ", ", ", ") ", "; "]);
        let (text, start) = in_prose(&mut rng, before, &expression, after);
        let q = Quantities::scan(&text);
        let span = q
            .find_date(&wanted)
            .unwrap_or_else(|| panic!("case {case}: {wanted} not found in {text:?}"));
        assert_eq!(
            (span.byte_start, span.byte_end),
            (start, start + expression.len()),
            "case {case}: {wanted} in {text:?}"
        );
    }
}
