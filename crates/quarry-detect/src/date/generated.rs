//! Generated cases: random dates, times and reference times rendered through every form the
//! date module claims, embedded in random prose; each must be found with exactly its span and
//! resolve to the value computed here from the calendar (with chrono), not by the detector's
//! own helpers. A failure prints the seed's text, so a case can be turned into a named test.
//!
//! Forms covered (see the module docs for each): month-name dates in both orders, with
//! ordinals, weekdays and years in digits, `'yy` or words; ISO, US slash, dotted and compact
//! numeric dates; year-first dates with month names and any separator; two-digit years with
//! the century window; month-and-year in every written form; dates with clock times (digits,
//! `9a`, words, "half past three pm"); durations in words; and the relative forms against random reference times
//! (`in N days`, `N weeks ago`, today/tomorrow with a time, `next/this/last <weekday>`).

use chrono::{DateTime, Datelike, Duration, FixedOffset, NaiveDate, Weekday};

use super::find;

/// A seeded generator (fastrand's wyrand): a failing case is reproduced by its seed.
pub(super) struct Rng(fastrand::Rng);

impl Rng {
    pub(super) fn seeded(seed: u64) -> Rng {
        Rng(fastrand::Rng::with_seed(seed))
    }

    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.0.u64(..n)
    }

    pub(super) fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }

    pub(super) fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }

    pub(super) fn coin(&mut self) -> bool {
        self.below(2) == 0
    }

    pub(super) fn date(&mut self, from: i32, to: i32) -> NaiveDate {
        let start = NaiveDate::from_ymd_opt(from, 1, 1).expect("valid");
        let end = NaiveDate::from_ymd_opt(to, 12, 31).expect("valid");
        start + Duration::days(self.range(0, (end - start).num_days()))
    }

    pub(super) fn now(&mut self) -> DateTime<FixedOffset> {
        let day = self.date(2000, 2030);
        let at = day
            .and_hms_opt(self.range(0, 23) as u32, self.range(0, 59) as u32, 0)
            .expect("valid");
        at.and_local_timezone(FixedOffset::east_opt(0).expect("valid"))
            .single()
            .expect("fixed offsets are unambiguous")
    }
}

pub(super) const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
pub(super) const WEEKDAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];
const UNITS: [&str; 20] = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
];
const TENS: [&str; 10] = [
    "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
];
const PREFIXES: [&str; 6] = ["", "See you ", "Due: ", "(", "It was ", "We met "];
const SUFFIXES: [&str; 6] = ["", ".", " then.", ")", ", thanks", "; ok"];

/// 1..=99 in words, with a hyphen or a space between tens and units.
pub(super) fn words(n: u32, rng: &mut Rng) -> String {
    match n {
        0..=19 => UNITS[n as usize].to_owned(),
        _ if n.is_multiple_of(10) => TENS[(n / 10) as usize].to_owned(),
        _ => format!(
            "{}{}{}",
            TENS[(n / 10) as usize],
            if rng.coin() { "-" } else { " " },
            UNITS[(n % 10) as usize]
        ),
    }
}

/// A year in words, in the forms people say: "nineteen eighty-six", "nineteen oh five",
/// "two thousand and five", "twenty twenty-one", "two thousand".
fn year_words(year: i32, rng: &mut Rng) -> String {
    let (hi, lo) = ((year / 100) as u32, (year % 100) as u32);
    if (2000..2010).contains(&year) || year % 1000 == 0 {
        return match lo {
            0 => format!("{} thousand", UNITS[(year / 1000) as usize]),
            _ => format!("two thousand and {}", words(lo, rng)),
        };
    }
    match lo {
        0 => format!("{} hundred", words(hi, rng)),
        1..=9 => format!("{} oh {}", words(hi, rng), UNITS[lo as usize]),
        _ => format!("{} {}", words(hi, rng), words(lo, rng)),
    }
}

pub(super) fn ordinal_suffix(d: u32) -> &'static str {
    match (d % 10, d % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    }
}

pub(super) fn month_name(m: u32, rng: &mut Rng) -> String {
    let full = MONTHS[(m - 1) as usize];
    match rng.below(3) {
        0 => full.to_owned(),
        1 => full[..3].to_owned(),
        _ => full.to_lowercase(),
    }
}

pub(super) fn iso(d: NaiveDate) -> String {
    d.format("%Y-%m-%d").to_string()
}

fn month_range(y: i32, m: u32) -> String {
    let first = NaiveDate::from_ymd_opt(y, m, 1).expect("valid");
    let next = first + chrono::Months::new(1);
    format!("{}/{}", iso(first), iso(next.pred_opt().expect("valid")))
}

/// One rendered case: the expression, its expected value, and the reference time.
pub(super) struct Case {
    pub form: &'static str,
    pub expr: String,
    pub value: String,
    pub now: DateTime<FixedOffset>,
}

/// The two-digit-year window the module claims: 00–39 are 20xx, 40–99 are 19xx.
fn windowed(yy: i32) -> i32 {
    if yy < 40 { 2000 + yy } else { 1900 + yy }
}

fn absolute_case(rng: &mut Rng, form: usize) -> Case {
    let now = rng.now();
    let date = rng.date(1950, 2035);
    let (y, m, d) = (date.year(), date.month(), date.day());
    let value = iso(date);
    let (form, expr, value): (&'static str, String, String) = match form {
        0 => (
            "Month d, yyyy",
            format!(
                "{} {d}{}, {y}",
                month_name(m, rng),
                if rng.coin() { ordinal_suffix(d) } else { "" }
            ),
            value,
        ),
        1 => (
            "d Mon yyyy",
            format!("{d} {} {y}", month_name(m, rng)),
            value,
        ),
        2 => (
            "the dth of Month yyyy",
            format!(
                "the {d}{} of {}{} {y}",
                ordinal_suffix(d),
                month_name(m, rng),
                if rng.coin() { "," } else { "" }
            ),
            value,
        ),
        3 => ("yyyy-mm-dd", format!("{y}-{m:02}-{d:02}"), value),
        4 => {
            // Month first, as the module reads slashes; day first when the day exceeds 12.
            if d > 12 && rng.coin() {
                ("d/m/yyyy", format!("{d}/{m}/{y}"), value)
            } else {
                ("m/d/yyyy", format!("{m:02}/{d:02}/{y}"), value)
            }
        }
        5 => ("dd.mm.yyyy", format!("{d:02}.{m:02}.{y}"), value),
        6 => {
            let sep = rng.pick(&["/", "-", "."]);
            let mon = &MONTHS[(m - 1) as usize][..3];
            ("yyyy/Mon/dd", format!("{y}{sep}{mon}{sep}{d:02}"), value)
        }
        7 => (
            "yyyy Month d",
            format!("{y} {} {d}", MONTHS[(m - 1) as usize]),
            value,
        ),
        8 => ("yyyymmdd", format!("{y}{m:02}{d:02}"), value),
        9 => {
            let yy = y % 100;
            let date = NaiveDate::from_ymd_opt(windowed(yy), m, d);
            match date {
                Some(date) => ("m/d/yy", format!("{m}/{d}/{yy:02}"), iso(date)),
                None => ("yyyy-mm-dd", format!("{y}-{m:02}-{d:02}"), value),
            }
        }
        10 => (
            "Weekday, Month d, yyyy",
            format!(
                "{}, {} {d}, {y}",
                WEEKDAYS[date.weekday().num_days_from_monday() as usize],
                month_name(m, rng)
            ),
            value,
        ),
        11 => (
            "Month d, year in words",
            format!("{} {d}, {}", MONTHS[(m - 1) as usize], year_words(y, rng)),
            value,
        ),
        12 => (
            "Month yyyy",
            format!("{} {y}", MONTHS[(m - 1) as usize]),
            month_range(y, m),
        ),
        13 => {
            let sep = rng.pick(&["/", "-"]);
            let mon = &MONTHS[(m - 1) as usize][..3];
            ("Mon/yyyy", format!("{mon}{sep}{y}"), month_range(y, m))
        }
        14 => ("yyyy-mm", format!("{y}-{m:02}"), month_range(y, m)),
        15 => ("mm/yyyy", format!("{m:02}/{y}"), month_range(y, m)),
        16 => {
            let yy = y % 100;
            (
                "Month of yy",
                format!("{} of {yy:02}", MONTHS[(m - 1) as usize]),
                month_range(windowed(yy), m),
            )
        }
        _ => (
            "Month d, 'yy",
            format!("{} {d}, '{:02}", MONTHS[(m - 1) as usize], y % 100),
            NaiveDate::from_ymd_opt(windowed(y % 100), m, d).map_or(value, iso),
        ),
    };
    Case {
        form,
        expr,
        value,
        now,
    }
}

const ABSOLUTE_FORMS: usize = 18;

fn clock(h24: u32, minute: u32) -> String {
    format!("{h24:02}:{minute:02}:00")
}

/// A 12-hour rendering of `h24:minute`: `3:05 pm`, `3pm`, `3:05 p.m.`.
pub(super) fn twelve_hour(h24: u32, minute: u32, rng: &mut Rng) -> String {
    let h12 = match h24 % 12 {
        0 => 12,
        h => h,
    };
    let pm = h24 >= 12;
    let mark = match (rng.below(3), pm) {
        (0, true) => " pm",
        (0, false) => " am",
        (1, true) => "PM",
        (1, false) => "AM",
        (_, true) => " p.m.",
        (_, false) => " a.m.",
    };
    if minute == 0 && rng.coin() {
        format!("{h12}{mark}")
    } else {
        format!("{h12}:{minute:02}{mark}")
    }
}

fn time_case(rng: &mut Rng, form: usize) -> Case {
    let now = rng.now();
    let today = now.date_naive();
    let date = rng.date(1990, 2030);
    let (h24, minute) = (rng.range(0, 23) as u32, rng.range(0, 59) as u32);
    let (form, expr, value): (&'static str, String, String) = match form {
        0 => (
            "Month d, yyyy at h:mm pm",
            format!(
                "{} {}, {} at {}",
                MONTHS[date.month0() as usize],
                date.day(),
                date.year(),
                twelve_hour(h24, minute, rng)
            ),
            format!("{}T{}", iso(date), clock(h24, minute)),
        ),
        1 => (
            "yyyy-mm-ddThh:mm:ss",
            format!("{}T{}", iso(date), clock(h24, minute)),
            format!("{}T{}", iso(date), clock(h24, minute)),
        ),
        2 => {
            let (word, day) = match rng.below(3) {
                0 => ("today", today),
                1 => ("tomorrow", today.succ_opt().expect("valid")),
                _ => ("yesterday", today.pred_opt().expect("valid")),
            };
            let h12 = rng.range(1, 12) as u32;
            let pm = rng.coin();
            let h24 = if pm { h12 % 12 + 12 } else { h12 % 12 };
            (
                "today at 9a",
                format!("{word} at {h12}{}", if pm { "p" } else { "a" }),
                format!("{}T{}", iso(day), clock(h24, 0)),
            )
        }
        4 => {
            // "half past three pm", "a quarter to seven am", "twenty past six pm"
            let h12 = rng.range(1, 12) as u32;
            let pm = rng.coin();
            let h24 = if pm { h12 % 12 + 12 } else { h12 % 12 };
            let (phrase, hour, minute) = match rng.below(4) {
                0 => ("half past".to_owned(), h24, 30),
                1 => ("quarter past".to_owned(), h24, 15),
                2 => ("a quarter to".to_owned(), (h24 + 23) % 24, 45),
                _ => {
                    let m = rng.range(1, 29) as u32;
                    (format!("{} past", words(m, rng)), h24, m)
                }
            };
            // The hour in words or digits, the mark spaced or glued ("a quarter past 3pm").
            let mark = if pm { "pm" } else { "am" };
            let written = match rng.below(3) {
                0 => format!("{} {mark}", UNITS[h12 as usize]),
                1 => format!("{h12} {mark}"),
                _ => format!("{h12}{mark}"),
            };
            (
                "half past three pm",
                format!("{phrase} {written}"),
                clock(hour, minute),
            )
        }
        _ => {
            // "tomorrow at seven twenty-seven pm": hour and minutes in words.
            let h12 = rng.range(1, 12) as u32;
            let minute = rng.range(10, 59) as u32;
            let pm = rng.coin();
            let h24 = if pm { h12 % 12 + 12 } else { h12 % 12 };
            let day = today.succ_opt().expect("valid");
            (
                "tomorrow at seven twenty-seven pm",
                format!(
                    "tomorrow at {} {} {}",
                    UNITS[h12 as usize],
                    words(minute, rng),
                    if pm { "pm" } else { "am" }
                ),
                format!("{}T{}", iso(day), clock(h24, minute)),
            )
        }
    };
    Case {
        form,
        expr,
        value,
        now,
    }
}

const TIME_FORMS: usize = 5;

/// The weekday conventions, written out from the module's documentation (not its code).
fn expected_weekday(today: NaiveDate, word: &str, target: Weekday) -> NaiveDate {
    let offset = i64::from(target.num_days_from_monday());
    let monday = today - Duration::days(i64::from(today.weekday().num_days_from_monday()));
    match word {
        "next" => monday + Duration::days(7 + offset),
        "this" | "coming" => (0..7)
            .map(|k| today + Duration::days(k))
            .find(|d| d.weekday() == target)
            .expect("a week holds every weekday"),
        _ => (1..=7)
            .map(|k| today - Duration::days(k))
            .find(|d| d.weekday() == target)
            .expect("a week holds every weekday"),
    }
}

fn relative_case(rng: &mut Rng, form: usize) -> Case {
    let now = rng.now();
    let today = now.date_naive();
    let n = rng.range(2, 40) as u32;
    let (form, expr, value): (&'static str, String, String) = match form {
        0 => (
            "in N days",
            format!("in {n} days"),
            iso(today + Duration::days(i64::from(n))),
        ),
        1 => (
            "N weeks ago (words)",
            format!("{} weeks ago", words(n, rng)),
            iso(today - Duration::days(7 * i64::from(n))),
        ),
        2 => {
            let months = n % 12 + 1;
            (
                "N months from now",
                format!(
                    "{months} month{} from now",
                    if months == 1 { "" } else { "s" }
                ),
                iso(today + chrono::Months::new(months)),
            )
        }
        _ => {
            let word = rng.pick(&["next", "this", "last", "coming"]);
            let k = rng.below(7) as usize;
            let target = Weekday::try_from(k as u8).expect("0..7 is a weekday");
            (
                "next/this/last/coming weekday",
                format!("{word} {}", WEEKDAYS[k]),
                iso(expected_weekday(today, word, target)),
            )
        }
    };
    Case {
        form,
        expr,
        value,
        now,
    }
}

const RELATIVE_FORMS: usize = 4;

fn duration_case(rng: &mut Rng) -> Case {
    let now = rng.now();
    let n = rng.range(2, 99) as u32;
    let (unit, iso_unit) = [
        ("days", "D"),
        ("weeks", "W"),
        ("hours", "H"),
        ("minutes", "M"),
    ][rng.below(4) as usize];
    // The module writes ISO durations in their largest whole units: 90 minutes is PT1H30M,
    // 56 days P8W.
    let value = match iso_unit {
        "M" if n >= 60 && n.is_multiple_of(60) => format!("PT{}H", n / 60),
        "M" if n >= 60 => format!("PT{}H{}M", n / 60, n % 60),
        "M" | "H" => format!("PT{n}{iso_unit}"),
        "D" if n.is_multiple_of(7) => format!("P{}W", n / 7),
        _ => format!("P{n}{iso_unit}"),
    };
    Case {
        form: "N units in words",
        expr: format!("{} {unit}", words(n, rng)),
        value,
        now,
    }
}

/// Checks one case inside random prose; returns a message when it fails.
fn check(rng: &mut Rng, case: &Case) -> Option<String> {
    let prefix = rng.pick(&PREFIXES);
    let suffix = rng.pick(&SUFFIXES);
    let text = format!("{prefix}{}{suffix}", case.expr);
    let span = prefix.len()..prefix.len() + case.expr.len();
    let found = find(&text, case.now);
    let hit = found
        .iter()
        .any(|d| d.range == span && d.value == case.value);
    (!hit).then(|| {
        let got: Vec<(String, String)> = found
            .iter()
            .map(|d| (text[d.range.clone()].to_owned(), d.value.clone()))
            .collect();
        format!(
            "[{}] {text:?} now={} want {:?} = {}, got {got:?}",
            case.form, case.now, case.expr, case.value
        )
    })
}

pub(super) const CASES_PER_FORM: usize = 300;

pub(super) fn run(seed: u64, forms: usize, make: impl Fn(&mut Rng, usize) -> Case) -> usize {
    let mut rng = Rng::seeded(seed);
    let mut failures = Vec::new();
    let mut checked = 0;
    for form in 0..forms {
        for _ in 0..CASES_PER_FORM {
            let case = make(&mut rng, form);
            checked += 1;
            failures.extend(check(&mut rng, &case));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} generated cases failed, e.g.:\n{}",
        failures.len(),
        failures
            .iter()
            .take(12)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    checked
}

#[test]
fn generated_absolute_dates_are_found_and_resolved() {
    assert_eq!(
        run(1, ABSOLUTE_FORMS, absolute_case),
        ABSOLUTE_FORMS * CASES_PER_FORM
    );
}

#[test]
fn generated_dates_with_times_are_found_and_resolved() {
    assert_eq!(run(2, TIME_FORMS, time_case), TIME_FORMS * CASES_PER_FORM);
}

#[test]
fn generated_relative_dates_follow_the_documented_conventions() {
    assert_eq!(
        run(3, RELATIVE_FORMS, relative_case),
        RELATIVE_FORMS * CASES_PER_FORM
    );
}

#[test]
fn generated_durations_in_words() {
    assert_eq!(run(4, 1, |rng, _| duration_case(rng)), CASES_PER_FORM);
}
