//! The combination rules, tested on generated cross products: each rule joins random pieces of
//! each type it takes (days in several written forms, clock times in 12- and 24-hour notation,
//! amounts in digits or words, weekdays singular or plural) at random reference times, and the
//! expected value is computed here with chrono from the pieces' own values — never by the
//! detector's helpers. So a new combination of known pieces is tested although nobody typed it.
//!
//! | rule | pieces |
//! |---|---|
//! | every/each + weekday [+ time] | weekday × time × now |
//! | every/each [+ other] [+ N] + unit | count × unit × now |
//! | plural weekday + time | weekday × time × now |
//! | day + for + amount | day × amount (days, weeks) × now |
//! | day + from + time + for + amount | day × time × amount (hours, minutes) |
//! | amount + starting + day | amount × day × now |
//! | more/less than + shifted point | bound × amount × direction × now |
//! | N weekdays + from/after/before + anchor; [the] [Nth] weekday + before/after + day | count or ordinal × weekday × anchor × now |
//! | by + day, day + onwards | day × now |
//! | day + at + time, at + time + day | day × time notation (12 h, 24 h, `1505`, `15h05`) × now |
//! | selector + unit + of + period | ordinal or last × weekday, day, week, weekend, month, half × month, year, next month, this year × now |
//! | weekday + of + week | weekday × this, next or last week × now |
//! | period's + selector + unit | ordinal or last × weekday, day, week, weekend × year, next month, this year × now |
//! | week N of/in year | N × year, this or next year × now |
//! | the unit after next / before last; part of day + of/on + day | week, month, quarter, year × now; part × day form × now |
//! | N units + after/before + anchor, the day after/before + anchor | amount × direction × day, month or year anchor |
//! | the week/weekend of + day, the week starting + day, fiscal year | day × now, year × form |
//! | Month d-d, yyyy; Month dth through the dth, yyyy; from date until today; between year and the present | dates × now |
//! | every other + weekday [+ time]; early/late + part of day | weekday × time × now, part × half |
//! | day [,] time - time, day from time to time, day before/after time | day form × 24 h or 12 h times × now |
//! | once a + unit; Nth of every month; starting (on) + day; after around + time | unit, day, time × now |
//! | this/next/last [+ weekday] + yearless date | modifier × date form × now |
//! | [modifier] + season [+ year] | season × this, next, last, none, year × now |
//! | decade | digits, '90s, words × now |
//! | modifier + month, H1/H2 + year | month × modifier × now, half × year |
//! | spelled time + day + part of day | hour × minutes × day × part × now |

use chrono::{Datelike, Duration, NaiveDate, NaiveDateTime, NaiveTime};

use super::generated::{
    CASES_PER_FORM, Case, MONTHS, Rng, WEEKDAYS, iso, month_name, ordinal_suffix, run, twelve_hour,
    words,
};

/// A day written in one of several forms, and the day it is.
fn day_piece(rng: &mut Rng, today: NaiveDate) -> (String, NaiveDate) {
    let date = rng.date(1995, 2035);
    match rng.below(5) {
        0 => (
            format!(
                "{} {}, {}",
                month_name(date.month(), rng),
                date.day(),
                date.year()
            ),
            date,
        ),
        1 => (
            format!(
                "{} {} {}",
                date.day(),
                MONTHS[date.month0() as usize],
                date.year()
            ),
            date,
        ),
        2 => (iso(date), date),
        3 => ("tomorrow".to_owned(), today + Duration::days(1)),
        _ => {
            let k = rng.below(7) as usize;
            (WEEKDAYS[k].to_owned(), next_weekday(today, k))
        }
    }
}

/// The weekday `k` (0 = Monday) strictly after `today`, as a bare weekday resolves.
fn next_weekday(today: NaiveDate, k: usize) -> NaiveDate {
    (1..=7)
        .map(|d| today + Duration::days(d))
        .find(|d| d.weekday().num_days_from_monday() as usize == k)
        .expect("a week holds every weekday")
}

/// A clock time in 12- or 24-hour notation, and the time it is.
fn time_piece(rng: &mut Rng) -> (String, NaiveTime) {
    let (h, m) = (rng.range(0, 23) as u32, rng.range(0, 11) as u32 * 5);
    let text = if rng.coin() {
        twelve_hour(h, m, rng)
    } else {
        format!("{h:02}:{m:02}")
    };
    (text, NaiveTime::from_hms_opt(h, m, 0).expect("valid"))
}

/// A count written in digits or words.
fn count_text(n: u32, rng: &mut Rng) -> String {
    if rng.coin() {
        n.to_string()
    } else {
        words(n, rng)
    }
}

/// Units: the word, its length in seconds (days for calendar units) and its ISO letter.
#[derive(Clone, Copy)]
struct UnitPiece {
    word: &'static str,
    days: i64,
    seconds: i64,
}

const DAY_UNITS: [UnitPiece; 2] = [
    UnitPiece {
        word: "day",
        days: 1,
        seconds: 0,
    },
    UnitPiece {
        word: "week",
        days: 7,
        seconds: 0,
    },
];
const CLOCK_UNITS: [UnitPiece; 2] = [
    UnitPiece {
        word: "hour",
        days: 0,
        seconds: 3600,
    },
    UnitPiece {
        word: "minute",
        days: 0,
        seconds: 60,
    },
];

fn plural(word: &str, n: u32) -> String {
    if n == 1 {
        word.to_owned()
    } else {
        format!("{word}s")
    }
}

/// The ISO 8601 duration of `n` of `unit`, in the module's largest-whole-unit style.
fn iso_amount(n: i64, unit: UnitPiece) -> String {
    if unit.seconds == 0 {
        let days = n * unit.days;
        return if days % 7 == 0 {
            format!("P{}W", days / 7)
        } else {
            format!("P{days}D")
        };
    }
    let seconds = n * unit.seconds;
    let (h, m) = (seconds / 3600, seconds % 3600 / 60);
    match (h, m) {
        (0, m) => format!("PT{m}M"),
        (h, 0) => format!("PT{h}H"),
        (h, m) => format!("PT{h}H{m}M"),
    }
}

fn datetime(at: NaiveDateTime) -> String {
    at.format("%Y-%m-%dT%H:%M:%S").to_string()
}

fn recurrence_case(rng: &mut Rng, form: usize) -> Case {
    let now = rng.now();
    let today = now.date_naive();
    let every = rng.pick(&["every", "each", "Every"]);
    let k = rng.below(7) as usize;
    let first = next_weekday(today, k);
    let (form, expr, value): (&'static str, String, String) = match form {
        0 => (
            "every + weekday",
            format!("{every} {}", WEEKDAYS[k]),
            format!("R/{}/P1W", iso(first)),
        ),
        1 => {
            let (time, t) = time_piece(rng);
            (
                "every + weekday + at + time",
                format!("{every} {} at {time}", WEEKDAYS[k].to_lowercase()),
                format!("R/{}/P1W", datetime(first.and_time(t))),
            )
        }
        2 => {
            let (time, t) = time_piece(rng);
            (
                "plural weekday + at + time",
                format!("{}s at {time}", WEEKDAYS[k]),
                format!("R/{}/P1W", datetime(first.and_time(t))),
            )
        }
        3 => {
            let unit =
                [DAY_UNITS[0], DAY_UNITS[1], CLOCK_UNITS[0], CLOCK_UNITS[1]][rng.below(4) as usize];
            let n = rng.range(2, 30) as u32;
            (
                "every + N + unit",
                format!("{every} {} {}", count_text(n, rng), plural(unit.word, n)),
                format!("R/{}", iso_amount(i64::from(n), unit)),
            )
        }
        _ => {
            let unit = [DAY_UNITS[0], DAY_UNITS[1], CLOCK_UNITS[0]][rng.below(3) as usize];
            let other = rng.coin();
            (
                "every [other] + unit",
                format!("{every} {}{}", if other { "other " } else { "" }, unit.word),
                format!("R/{}", iso_amount(if other { 2 } else { 1 }, unit)),
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

const RECURRENCE_FORMS: usize = 5;

fn interval_case(rng: &mut Rng, form: usize) -> Case {
    let now = rng.now();
    let today = now.date_naive();
    let (form, expr, value): (&'static str, String, String) = match form {
        0 => {
            let (day, date) = day_piece(rng, today);
            let unit = DAY_UNITS[rng.below(2) as usize];
            let n = rng.range(1, 20) as u32;
            let last = date + Duration::days(i64::from(n) * unit.days - 1);
            (
                "day + for + amount",
                format!("{day} for {} {}", count_text(n, rng), plural(unit.word, n)),
                format!("{}/{}", iso(date), iso(last)),
            )
        }
        1 => {
            let (day, date) = day_piece(rng, today);
            let (time, t) = time_piece(rng);
            let unit = CLOCK_UNITS[rng.below(2) as usize];
            let n = rng.range(1, 9) as u32;
            let start = date.and_time(t);
            let end = start + Duration::seconds(i64::from(n) * unit.seconds);
            (
                "day + from + time + for + amount",
                format!(
                    "{day} from {time} for {} {}",
                    count_text(n, rng),
                    plural(unit.word, n)
                ),
                format!("{}/{}", datetime(start), datetime(end)),
            )
        }
        2 => {
            let (day, date) = day_piece(rng, today);
            let unit = DAY_UNITS[rng.below(2) as usize];
            let n = rng.range(1, 20) as u32;
            let last = date + Duration::days(i64::from(n) * unit.days - 1);
            let starting = rng.pick(&["starting", "beginning", "starting on"]);
            (
                "amount + starting + day",
                format!(
                    "{} {} {starting} {day}",
                    count_text(n, rng),
                    plural(unit.word, n)
                ),
                format!("{}/{}", iso(date), iso(last)),
            )
        }
        3 => {
            let unit = DAY_UNITS[rng.below(2) as usize];
            let n = rng.range(2, 30) as u32;
            let beyond = rng.coin();
            let bound = if beyond {
                rng.pick(&["more than", "over", "at least"])
            } else {
                rng.pick(&["less than", "under", "at most"])
            };
            let past = rng.coin();
            let shift = Duration::days(i64::from(n) * unit.days);
            let point = if past { today - shift } else { today + shift };
            let anchor = if past { "ago" } else { "from now" };
            let value = match (beyond, past) {
                (true, true) => format!("../{}", iso(point)),
                (true, false) => format!("{}/..", iso(point)),
                (false, true) => format!("{}/{}", iso(point), iso(today)),
                (false, false) => format!("{}/{}", iso(today), iso(point)),
            };
            (
                "more/less than + shifted point",
                format!(
                    "{bound} {} {} {anchor}",
                    count_text(n, rng),
                    plural(unit.word, n)
                ),
                value,
            )
        }
        4 => {
            let k = rng.below(7) as usize;
            let n = rng.range(1, 12) as u32;
            let weekday = plural(WEEKDAYS[k], n);
            let count = count_text(n, rng);
            match rng.below(4) {
                3 => {
                    // "the Friday before June 3", "the second Monday after 4 May 2021",
                    // "Tuesday after 2019-03-01": one (or the Nth) such weekday past the day.
                    let (day, date) = day_piece(rng, today);
                    let n = rng.range(1, 4);
                    let lead = match (n, rng.below(3)) {
                        (1, 0) => String::new(),
                        (1, 1) => "the ".to_string(),
                        (n, _) => format!("the {} ", ORDINAL_WORDS[n as usize - 1]),
                    };
                    let weekday = WEEKDAYS[k];
                    if rng.coin() {
                        (
                            "[the] [Nth] weekday + after + day",
                            format!("{lead}{weekday} after {day}"),
                            iso(next_weekday(date, k) + Duration::days(7 * (n - 1))),
                        )
                    } else {
                        let back = (1..=7)
                            .map(|d| date - Duration::days(d))
                            .find(|d| d.weekday().num_days_from_monday() as usize == k)
                            .expect("a week holds every weekday");
                        (
                            "[the] [Nth] weekday + before + day",
                            format!("{lead}{weekday} before {day}"),
                            iso(back - Duration::days(7 * (n - 1))),
                        )
                    }
                }
                0 => (
                    "N weekdays + from now",
                    format!("{count} {weekday} from now"),
                    iso(next_weekday(today, k) + Duration::days(7 * (i64::from(n) - 1))),
                ),
                1 => {
                    let (day, date) = day_piece(rng, today);
                    (
                        "N weekdays + after + day",
                        format!("{count} {weekday} after {day}"),
                        iso(next_weekday(date, k) + Duration::days(7 * (i64::from(n) - 1))),
                    )
                }
                _ => {
                    let back = (1..=7)
                        .map(|d| today - Duration::days(d))
                        .find(|d| d.weekday().num_days_from_monday() as usize == k)
                        .expect("a week holds every weekday");
                    (
                        "N weekdays + ago",
                        format!("{count} {weekday} ago"),
                        iso(back - Duration::days(7 * (i64::from(n) - 1))),
                    )
                }
            }
        }
        _ => {
            let (day, date) = day_piece(rng, today);
            if rng.coin() {
                (
                    "by + day",
                    format!("by {day}"),
                    format!("{}/{}", iso(today), iso(date)),
                )
            } else {
                (
                    "day + onwards",
                    format!("{day} onwards"),
                    format!("{}/..", iso(date)),
                )
            }
        }
    };
    Case {
        form,
        expr,
        value,
        now,
    }
}

const INTERVAL_FORMS: usize = 6;

/// A clock time in one of the notations a time joined to a day may take; the time it is.
fn time_notation(rng: &mut Rng) -> (String, NaiveTime) {
    let (h, m) = (rng.range(0, 23) as u32, rng.range(0, 59) as u32);
    let text = match rng.below(4) {
        0 => twelve_hour(h, m, rng),
        1 => format!("{h:02}:{m:02}"),
        2 => format!("{h:02}{m:02}"),
        _ => format!("{h}h{m:02}"),
    };
    (text, NaiveTime::from_hms_opt(h, m, 0).expect("valid"))
}

/// A relative or named day, as written after a time; the day it is.
fn day_after_time(rng: &mut Rng, today: NaiveDate) -> (String, NaiveDate) {
    match rng.below(4) {
        0 => ("tomorrow".to_owned(), today + Duration::days(1)),
        1 => ("today".to_owned(), today),
        2 => {
            let k = rng.below(7) as usize;
            (format!("on {}", WEEKDAYS[k]), next_weekday(today, k))
        }
        _ => {
            let date = rng.date(1995, 2035);
            (
                format!(
                    "on {} {}, {}",
                    MONTHS[date.month0() as usize],
                    date.day(),
                    date.year()
                ),
                date,
            )
        }
    }
}

const HOUR_WORDS: [&str; 12] = [
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve",
];

fn clock_day_case(rng: &mut Rng, form: usize) -> Case {
    let now = rng.now();
    let today = now.date_naive();
    let (form, expr, value): (&'static str, String, String) = match form {
        0 => {
            let (day, date) = day_piece(rng, today);
            let (time, t) = time_notation(rng);
            (
                "day + at + time",
                format!("{day} at {time}"),
                datetime(date.and_time(t)),
            )
        }
        1 => {
            let (time, t) = time_notation(rng);
            let (day, date) = day_after_time(rng, today);
            (
                "at + time + day",
                format!("at {time} {day}"),
                datetime(date.and_time(t)),
            )
        }
        _ => {
            let hour = rng.range(1, 11) as u32;
            let minute = rng.range(1, 11) as u32 * 5;
            let minutes = if minute < 10 {
                format!("oh {}", words(minute, rng))
            } else {
                words(minute, rng)
            };
            let joiner = if minute >= 10 && rng.coin() { "-" } else { " " };
            let (part, pm) =
                [("morning", false), ("afternoon", true), ("evening", true)][rng.below(3) as usize];
            let (day, date) =
                [("tomorrow", today + Duration::days(1)), ("today", today)][rng.below(2) as usize];
            let hour24 = if pm { hour + 12 } else { hour };
            (
                "spelled time + day + part of day",
                format!(
                    "{}{joiner}{minutes} {day} {part}",
                    HOUR_WORDS[(hour - 1) as usize]
                ),
                datetime(date.and_time(NaiveTime::from_hms_opt(hour24, minute, 0).expect("valid"))),
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

const CLOCK_DAY_FORMS: usize = 3;

const ORDINAL_WORDS: [&str; 5] = ["first", "second", "third", "fourth", "fifth"];

/// A period of whole days, as written, and its first and last day.
fn period_piece(rng: &mut Rng, today: NaiveDate) -> (String, NaiveDate, NaiveDate) {
    let month_of = |first: NaiveDate| {
        (
            first,
            (first + chrono::Months::new(1)).pred_opt().expect("valid"),
        )
    };
    match rng.below(4) {
        0 => {
            let year = rng.range(1995, 2035) as i32;
            let month = rng.range(1, 12) as u32;
            let (a, b) = month_of(NaiveDate::from_ymd_opt(year, month, 1).expect("valid"));
            (format!("{} {year}", MONTHS[(month - 1) as usize]), a, b)
        }
        1 => {
            let year = rng.range(1995, 2035) as i32;
            (
                year.to_string(),
                NaiveDate::from_ymd_opt(year, 1, 1).expect("valid"),
                NaiveDate::from_ymd_opt(year, 12, 31).expect("valid"),
            )
        }
        2 => {
            let first = NaiveDate::from_ymd_opt(today.year(), today.month(), 1).expect("valid")
                + chrono::Months::new(1);
            let (a, b) = month_of(first);
            ("next month".to_owned(), a, b)
        }
        _ => (
            "this year".to_owned(),
            NaiveDate::from_ymd_opt(today.year(), 1, 1).expect("valid"),
            NaiveDate::from_ymd_opt(today.year(), 12, 31).expect("valid"),
        ),
    }
}

fn monday_of(date: NaiveDate) -> NaiveDate {
    date - Duration::days(i64::from(date.weekday().num_days_from_monday()))
}

fn within_case(rng: &mut Rng, form: usize) -> Case {
    let now = rng.now();
    let today = now.date_naive();
    let (period, first, last) = period_piece(rng, today);
    // The nth (1-based) or, with None, the last.
    let n = if rng.below(3) == 0 {
        None
    } else {
        Some(rng.range(1, 4))
    };
    let selector = match n {
        None => "last".to_owned(),
        Some(n) if rng.coin() => ORDINAL_WORDS[(n - 1) as usize].to_owned(),
        Some(n) => format!("{n}{}", ["st", "nd", "rd", "th"][(n - 1) as usize]),
    };
    let the = if rng.coin() { "the " } else { "" };
    let (form, piece, value): (&'static str, String, String) = match form {
        0 => {
            let k = rng.below(7) as usize;
            let day = match n {
                Some(n) => next_weekday(first - Duration::days(1), k) + Duration::days(7 * (n - 1)),
                None => (0..7)
                    .map(|d| last - Duration::days(d))
                    .find(|d| d.weekday().num_days_from_monday() as usize == k)
                    .expect("a week holds every weekday"),
            };
            ("nth weekday of period", WEEKDAYS[k].to_owned(), iso(day))
        }
        1 => {
            let day = match n {
                Some(n) => first + Duration::days(n - 1),
                None => last,
            };
            ("nth day of period", "day".to_owned(), iso(day))
        }
        2 => {
            let monday = match n {
                Some(n) => monday_of(first) + Duration::days(7 * (n - 1)),
                None => monday_of(last),
            };
            (
                "nth week of period",
                "week".to_owned(),
                format!("{}/{}", iso(monday), iso(monday + Duration::days(6))),
            )
        }
        3 => {
            let saturday = match n {
                Some(n) => next_weekday(first - Duration::days(1), 5) + Duration::days(7 * (n - 1)),
                None => (0..7)
                    .map(|d| last - Duration::days(d))
                    .find(|d| d.weekday() == chrono::Weekday::Sat)
                    .expect("a week holds every weekday"),
            };
            (
                "nth weekend of period",
                "weekend".to_owned(),
                format!("{}/{}", iso(saturday), iso(saturday + Duration::days(1))),
            )
        }
        _ => {
            // Months of a year-long period only.
            let year = rng.range(1995, 2035) as i32;
            let k = match n {
                Some(n) => n as u32,
                None => 12,
            };
            let a = NaiveDate::from_ymd_opt(year, k, 1).expect("valid");
            let b = (a + chrono::Months::new(1)).pred_opt().expect("valid");
            return Case {
                form: "nth month of year",
                expr: format!("{the}{selector} month of {year}"),
                value: format!("{}/{}", iso(a), iso(b)),
                now,
            };
        }
    };
    // A period that names itself ("2019", "next month", "this year") may own the piece:
    // "next month's first Monday", "2019's last weekend".
    let names_itself = period.chars().all(|ch| ch.is_ascii_digit())
        || period.starts_with("next")
        || period.starts_with("this");
    if names_itself && rng.coin() {
        return Case {
            form: "period's nth piece",
            expr: format!("{period}'s {selector} {piece}"),
            value,
            now,
        };
    }
    Case {
        form,
        expr: format!("{the}{selector} {piece} of {period}"),
        value,
        now,
    }
}

const WITHIN_FORMS: usize = 5;

/// "the week after next", "the year before last"; "the morning of June 3", "evening on Friday".
fn beyond_and_part_case(rng: &mut Rng, form: usize) -> Case {
    let now = rng.now();
    let today = now.date_naive();
    let range = |a: NaiveDate, b: NaiveDate| format!("{}/{}", iso(a), iso(b));
    let (form, expr, value): (&'static str, String, String) = if form == 0 {
        let after = rng.coin();
        let (words, sign) = if after {
            ("after next", 2)
        } else {
            ("before last", -2)
        };
        let month_start = NaiveDate::from_ymd_opt(today.year(), today.month(), 1).expect("valid");
        let shift_months = |first: NaiveDate, months: i32| {
            if months >= 0 {
                first + chrono::Months::new(months as u32)
            } else {
                first - chrono::Months::new((-months) as u32)
            }
        };
        let (unit, a, b) = match rng.below(4) {
            0 => {
                let monday = monday_of(today) + Duration::days(7 * sign);
                ("week", monday, monday + Duration::days(6))
            }
            1 => {
                let first = shift_months(month_start, sign as i32);
                (
                    "month",
                    first,
                    shift_months(first, 1).pred_opt().expect("valid"),
                )
            }
            2 => {
                let quarter = NaiveDate::from_ymd_opt(today.year(), today.month0() / 3 * 3 + 1, 1)
                    .expect("valid");
                let first = shift_months(quarter, 3 * sign as i32);
                (
                    "quarter",
                    first,
                    shift_months(first, 3).pred_opt().expect("valid"),
                )
            }
            _ => {
                let year = today.year() + sign as i32;
                let day = |m, d| NaiveDate::from_ymd_opt(year, m, d).expect("valid");
                ("year", day(1, 1), day(12, 31))
            }
        };
        (
            "the unit after next / before last",
            format!("the {unit} {words}"),
            range(a, b),
        )
    } else {
        let (day, date) = day_piece(rng, today);
        let (part, from, to) = [
            ("morning", (8, 0, 0), (12, 0, 0)),
            ("afternoon", (12, 0, 0), (16, 0, 0)),
            ("evening", (16, 0, 0), (20, 0, 0)),
            ("night", (20, 0, 0), (23, 59, 59)),
        ][rng.below(4) as usize];
        let at =
            |(h, m, s)| datetime(date.and_time(NaiveTime::from_hms_opt(h, m, s).expect("valid")));
        let the = if rng.coin() { "the " } else { "" };
        let joiner = rng.pick(&["of", "on"]);
        (
            "part of day of/on + day",
            format!("{the}{part} {joiner} {day}"),
            format!("{}/{}", at(from), at(to)),
        )
    };
    Case {
        form,
        expr,
        value,
        now,
    }
}

/// "week 12 of 2024", "week 3 in next year": an ISO week of a year.
fn week_number_case(rng: &mut Rng, _form: usize) -> Case {
    let now = rng.now();
    let today = now.date_naive();
    let (year, written) = match rng.below(3) {
        0 => (today.year() + 1, "next year".to_owned()),
        1 => (today.year(), "this year".to_owned()),
        _ => {
            let year = rng.range(1995, 2035) as i32;
            (year, year.to_string())
        }
    };
    let n = rng.range(1, 52) as u32;
    let monday = NaiveDate::from_isoywd_opt(year, n, chrono::Weekday::Mon).expect("valid");
    let of = rng.pick(&["of", "in"]);
    Case {
        form: "week N of year",
        expr: format!("week {n} {of} {written}"),
        value: format!("{}/{}", iso(monday), iso(monday + Duration::days(6))),
        now,
    }
}

fn weekday_of_week_case(rng: &mut Rng, _form: usize) -> Case {
    let now = rng.now();
    let today = now.date_naive();
    let k = rng.below(7) as usize;
    let (word, weeks) = [("this", 0), ("next", 1), ("last", -1)][rng.below(3) as usize];
    let monday = monday_of(today) + Duration::days(7 * weeks);
    Case {
        form: "weekday of relative week",
        expr: format!("{} of {word} week", WEEKDAYS[k]),
        value: iso(monday + Duration::days(k as i64)),
        now,
    }
}

/// The astronomical season `k` (0 spring … 3 winter) of `year`, written out from the module docs.
fn season_days(year: i32, k: usize) -> (NaiveDate, NaiveDate) {
    let d = |y, m, day| NaiveDate::from_ymd_opt(y, m, day).expect("valid");
    match k {
        0 => (d(year, 3, 20), d(year, 6, 20)),
        1 => (d(year, 6, 21), d(year, 9, 23)),
        2 => (d(year, 9, 24), d(year, 12, 20)),
        _ => (d(year, 12, 21), d(year + 1, 3, 19)),
    }
}

const SEASON_WORDS: [&str; 4] = ["spring", "summer", "autumn", "winter"];

fn period_case(rng: &mut Rng, form: usize) -> Case {
    let now = rng.now();
    let today = now.date_naive();
    let range = |(a, b): (NaiveDate, NaiveDate)| format!("{}/{}", iso(a), iso(b));
    let (form, expr, value): (&'static str, String, String) = match form {
        0 => {
            let k = rng.below(4) as usize;
            let seasons: Vec<(NaiveDate, NaiveDate)> = (today.year() - 2..=today.year() + 1)
                .map(|y| season_days(y, k))
                .collect();
            let holding = seasons
                .iter()
                .find(|(a, b)| *a <= today && today <= *b)
                .copied();
            let (word, span) = match rng.below(3) {
                0 => (
                    "this",
                    holding.unwrap_or_else(|| season_days(today.year(), k)),
                ),
                1 => (
                    "next",
                    *seasons
                        .iter()
                        .find(|(a, _)| *a > today)
                        .expect("one starts later"),
                ),
                _ => (
                    "last",
                    *seasons
                        .iter()
                        .rev()
                        .find(|(_, b)| *b < today)
                        .expect("one ended"),
                ),
            };
            (
                "modifier + season",
                format!("{word} {}", SEASON_WORDS[k]),
                range(span),
            )
        }
        1 => {
            let k = rng.below(4) as usize;
            let year = rng.range(1995, 2035) as i32;
            let expr = if rng.coin() {
                format!("{} {year}", SEASON_WORDS[k])
            } else {
                format!("the {} of {year}", SEASON_WORDS[k])
            };
            ("season + year", expr, range(season_days(year, k)))
        }
        2 => {
            let tens = rng.range(2, 9) as i32 * 10;
            let century = if 2000 + tens <= today.year() {
                2000
            } else {
                1900
            };
            let start = century + tens;
            let words = [
                "twenties",
                "thirties",
                "forties",
                "fifties",
                "sixties",
                "seventies",
                "eighties",
                "nineties",
            ];
            let expr = match rng.below(3) {
                0 => format!("the {start}s"),
                1 => format!("the {tens}s"),
                _ => format!("the {}", words[(tens / 10 - 2) as usize]),
            };
            let last = NaiveDate::from_ymd_opt(start + 9, 12, 31).expect("valid");
            let first = NaiveDate::from_ymd_opt(start, 1, 1).expect("valid");
            ("decade", expr, range((first, last)))
        }
        3 => {
            let m = rng.range(1, 12) as u32;
            let (word, year) = match rng.below(3) {
                0 => ("this", today.year()),
                1 => (
                    "next",
                    if m > today.month() {
                        today.year()
                    } else {
                        today.year() + 1
                    },
                ),
                _ => (
                    "last",
                    if m < today.month() {
                        today.year()
                    } else {
                        today.year() - 1
                    },
                ),
            };
            let first = NaiveDate::from_ymd_opt(year, m, 1).expect("valid");
            let last = (first + chrono::Months::new(1)).pred_opt().expect("valid");
            (
                "modifier + month",
                format!("{word} {}", MONTHS[(m - 1) as usize]),
                range((first, last)),
            )
        }
        _ => {
            let year = rng.range(1995, 2035) as i32;
            let second = rng.coin();
            let d = |m, day| NaiveDate::from_ymd_opt(year, m, day).expect("valid");
            let span = if second {
                (d(7, 1), d(12, 31))
            } else {
                (d(1, 1), d(6, 30))
            };
            (
                "half + year",
                format!("H{} {year}", if second { 2 } else { 1 }),
                range(span),
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

const PERIOD_FORMS: usize = 5;

fn offset_case(rng: &mut Rng, form: usize) -> Case {
    let now = rng.now();
    let today = now.date_naive();
    let after = rng.coin();
    let word = if after { "after" } else { "before" };
    let sign = if after { 1 } else { -1 };
    let (form, expr, value): (&'static str, String, String) = match form {
        0 => {
            let (day, date) = day_piece(rng, today);
            let unit = DAY_UNITS[rng.below(2) as usize];
            let n = rng.range(1, 30) as u32;
            let moved = date + Duration::days(sign * i64::from(n) * unit.days);
            (
                "N units + after/before + day",
                format!(
                    "{} {} {word} {day}",
                    count_text(n, rng),
                    plural(unit.word, n)
                ),
                iso(moved),
            )
        }
        1 => {
            let (day, date) = day_piece(rng, today);
            (
                "the day + after/before + day",
                format!("the day {word} {day}"),
                iso(date + Duration::days(sign)),
            )
        }
        _ => {
            let year = rng.range(1995, 2035) as i32;
            let n = rng.range(1, 20) as u32;
            let to = year + sign as i32 * n as i32;
            (
                "N years + after/before + year",
                format!("{} {} {word} {year}", count_text(n, rng), plural("year", n)),
                format!("{to}-01-01/{to}-12-31"),
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

const OFFSET_FORMS: usize = 3;

fn around_case(rng: &mut Rng, form: usize) -> Case {
    let now = rng.now();
    let today = now.date_naive();
    let range = |a: NaiveDate, b: NaiveDate| format!("{}/{}", iso(a), iso(b));
    let (form, expr, value): (&'static str, String, String) = match form {
        0 => {
            let (day, date) = day_piece(rng, today);
            let monday = monday_of(date);
            (
                "the week of + day",
                format!("the week of {day}"),
                range(monday, monday + Duration::days(6)),
            )
        }
        1 => {
            let (day, date) = day_piece(rng, today);
            let starting = rng.pick(&["starting", "starting on", "beginning"]);
            (
                "the week starting + day",
                format!("the week {starting} {day}"),
                range(date, date + Duration::days(6)),
            )
        }
        2 => {
            let (day, date) = day_piece(rng, today);
            let (a, b) = match date.weekday() {
                chrono::Weekday::Sat => (date, date + Duration::days(1)),
                chrono::Weekday::Sun => (date - Duration::days(1), date),
                chrono::Weekday::Mon => (date - Duration::days(2), date),
                chrono::Weekday::Fri => (date, date + Duration::days(2)),
                _ => {
                    let saturday = next_weekday(date, 5);
                    (saturday, saturday + Duration::days(1))
                }
            };
            (
                "the weekend of + day",
                format!("the weekend of {day}"),
                range(a, b),
            )
        }
        _ => {
            let year = rng.range(2000, 2035) as i32;
            let expr = match rng.below(4) {
                0 => format!("fiscal year {year}"),
                1 => format!("FY{year}"),
                2 => format!("FY {:02}", year % 100),
                _ => format!("fiscal {year}"),
            };
            (
                "fiscal year",
                expr,
                range(
                    NaiveDate::from_ymd_opt(year - 1, 10, 1).expect("valid"),
                    NaiveDate::from_ymd_opt(year, 9, 30).expect("valid"),
                ),
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

const AROUND_FORMS: usize = 4;

fn shared_case(rng: &mut Rng, form: usize) -> Case {
    let now = rng.now();
    let today = now.date_naive();
    let range = |a: NaiveDate, b: NaiveDate| format!("{}/{}", iso(a), iso(b));
    let (form, expr, value): (&'static str, String, String) = match form {
        0 => {
            let year = rng.range(1995, 2035) as i32;
            let month = rng.range(1, 12) as u32;
            let a = rng.range(1, 14) as u32;
            let b = a + rng.range(1, 14) as u32;
            let name = MONTHS[(month - 1) as usize];
            let expr = match rng.below(3) {
                0 => format!("{name} {a}-{b}, {year}"),
                1 => format!("from {name} {a} to {b}, {year}"),
                _ => format!(
                    "{name} {a}{} {} the {b}{}, {year}",
                    ordinal_suffix(a),
                    rng.pick(&["to", "through", "until"]),
                    ordinal_suffix(b)
                ),
            };
            let day = |d| NaiveDate::from_ymd_opt(year, month, d).expect("valid");
            ("month d-d, year", expr, range(day(a), day(b)))
        }
        1 => {
            // A day in the year before today, without its year, until today.
            let back = rng.range(1, 300);
            let start = today - Duration::days(back);
            let expr = format!(
                "from {} {} until today",
                MONTHS[start.month0() as usize],
                start.day()
            );
            ("from yearless date until today", expr, range(start, today))
        }
        2 => {
            let year = rng.range(1990, today.year() as i64 - 1) as i32;
            (
                "between year and the present",
                format!("between {year} and the present"),
                range(NaiveDate::from_ymd_opt(year, 1, 1).expect("valid"), today),
            )
        }
        3 => {
            let k = rng.below(7) as usize;
            let (time, t) = time_piece(rng);
            let first = next_weekday(today, k);
            (
                "every other weekday at time",
                format!("every other {} at {time}", WEEKDAYS[k]),
                format!("R/{}/P2W", datetime(first.and_time(t))),
            )
        }
        5 => {
            // A time range after a day whose first time could also join the day alone:
            // "Thursday 19:00 - 21:00", "Jan 15, 2019, 1:00 PM - 1:15 PM".
            let (day, date) = day_piece(rng, today);
            let h1 = rng.range(0, 21) as u32;
            let h2 = rng.range(i64::from(h1) + 1, 23) as u32;
            let (m1, m2) = (rng.range(0, 11) as u32 * 5, rng.range(0, 11) as u32 * 5);
            let (a, b) = if rng.coin() {
                (format!("{h1:02}:{m1:02}"), format!("{h2:02}:{m2:02}"))
            } else {
                (twelve_hour(h1, m1, rng), twelve_hour(h2, m2, rng))
            };
            let at =
                |h, m| datetime(date.and_time(NaiveTime::from_hms_opt(h, m, 0).expect("valid")));
            match rng.below(5) {
                0 => (
                    "day + time range",
                    format!("{day} {a} - {b}"),
                    format!("{}/{}", at(h1, m1), at(h2, m2)),
                ),
                1 => (
                    "day + time range",
                    format!("{day}, {a} - {b}"),
                    format!("{}/{}", at(h1, m1), at(h2, m2)),
                ),
                2 => (
                    "day + time range",
                    format!("{day} from {a} to {b}"),
                    format!("{}/{}", at(h1, m1), at(h2, m2)),
                ),
                3 => (
                    "day + before + time",
                    format!("{day} before {a}"),
                    format!("../{}", at(h1, m1)),
                ),
                _ => (
                    "day + after + time",
                    format!("{day} after {b}"),
                    format!("{}/..", at(h2, m2)),
                ),
            }
        }
        _ => {
            // The reference's parts of the day, halved.
            let (part, from, to) = [
                ("morning", 8, 12),
                ("afternoon", 12, 16),
                ("evening", 16, 20),
            ][rng.below(3) as usize];
            let early = rng.coin();
            let middle = (from + to) / 2;
            let (a, b) = if early { (from, middle) } else { (middle, to) };
            let at = |h| datetime(today.and_time(NaiveTime::from_hms_opt(h, 0, 0).expect("valid")));
            (
                "early/late + part of day",
                format!("{} {part}", if early { "early" } else { "late" }),
                format!("{}/{}", at(a), at(b)),
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

const SHARED_FORMS: usize = 6;

fn open_case(rng: &mut Rng, form: usize) -> Case {
    let now = rng.now();
    let today = now.date_naive();
    let (form, expr, value): (&'static str, String, String) = match form {
        0 => {
            let (word, iso_period) = [
                ("day", "P1D"),
                ("week", "P1W"),
                ("month", "P1M"),
                ("year", "P1Y"),
            ][rng.below(4) as usize];
            let per = rng.pick(&["a", "per"]);
            (
                "once a + unit",
                format!("once {per} {word}"),
                format!("R/{iso_period}"),
            )
        }
        1 => {
            let day = rng.range(1, 28) as u32;
            let this = NaiveDate::from_ymd_opt(today.year(), today.month(), day).expect("valid");
            let first = if this > today {
                this
            } else {
                this + chrono::Months::new(1)
            };
            (
                "Nth of every month",
                format!("the {day}{} of every month", ordinal_suffix(day)),
                format!("R/{}/P1M", iso(first)),
            )
        }
        2 => {
            let (day, date) = day_piece(rng, today);
            let word = rng.pick(&["starting", "starting on", "beginning", "effective"]);
            (
                "starting + day",
                format!("{word} {day}"),
                format!("{}/..", iso(date)),
            )
        }
        _ => {
            let (time, t) = time_piece(rng);
            (
                "after around + time",
                format!("after around {time}"),
                format!("{}/..", t.format("%H:%M:%S")),
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

const OPEN_FORMS: usize = 4;

#[test]
fn generated_frequencies_monthly_days_and_open_starts() {
    assert_eq!(run(21, OPEN_FORMS, open_case), OPEN_FORMS * CASES_PER_FORM);
}

fn modified_day_case(rng: &mut Rng, _form: usize) -> Case {
    let now = rng.now();
    let today = now.date_naive();
    // Days every year has.
    let (month, day) = (rng.range(1, 12) as u32, rng.range(1, 28) as u32);
    let this_year = NaiveDate::from_ymd_opt(today.year(), month, day).expect("valid");
    let other =
        |years: i32| NaiveDate::from_ymd_opt(today.year() + years, month, day).expect("valid");
    let (word, date) = match rng.below(3) {
        0 => ("this", this_year),
        1 => (
            "next",
            if this_year > today {
                this_year
            } else {
                other(1)
            },
        ),
        _ => (
            "last",
            if this_year < today {
                this_year
            } else {
                other(-1)
            },
        ),
    };
    let written = match rng.below(3) {
        0 => format!("{month}/{day}"),
        1 => format!("{} {day}", MONTHS[(month - 1) as usize]),
        _ => format!(
            "{day}{} of {}",
            ordinal_suffix(day),
            MONTHS[(month - 1) as usize]
        ),
    };
    let weekday = if word == "this" && rng.coin() {
        format!("{} ", WEEKDAYS[rng.below(7) as usize])
    } else {
        String::new()
    };
    Case {
        form: "modifier + yearless date",
        expr: format!("{word} {weekday}{written}"),
        value: iso(date),
        now,
    }
}

#[test]
fn generated_modified_yearless_dates() {
    assert_eq!(run(20, 1, modified_day_case), CASES_PER_FORM);
}

#[test]
fn generated_shared_fields_recurrences_and_halves_of_days() {
    assert_eq!(
        run(19, SHARED_FORMS, shared_case),
        SHARED_FORMS * CASES_PER_FORM
    );
}

#[test]
fn generated_spans_around_days_and_fiscal_years() {
    assert_eq!(
        run(18, AROUND_FORMS, around_case),
        AROUND_FORMS * CASES_PER_FORM
    );
}

#[test]
fn generated_offsets_from_any_anchor() {
    assert_eq!(
        run(17, OFFSET_FORMS, offset_case),
        OFFSET_FORMS * CASES_PER_FORM
    );
}

#[test]
fn generated_named_periods_with_modifiers() {
    assert_eq!(
        run(16, PERIOD_FORMS, period_case),
        PERIOD_FORMS * CASES_PER_FORM
    );
}

#[test]
fn generated_units_inside_periods() {
    assert_eq!(
        run(14, WITHIN_FORMS, within_case),
        WITHIN_FORMS * CASES_PER_FORM
    );
    assert_eq!(run(15, 1, weekday_of_week_case), CASES_PER_FORM);
    assert_eq!(run(21, 1, week_number_case), CASES_PER_FORM);
    assert_eq!(run(22, 2, beyond_and_part_case), 2 * CASES_PER_FORM);
}

#[test]
fn generated_times_joined_to_days() {
    assert_eq!(
        run(13, CLOCK_DAY_FORMS, clock_day_case),
        CLOCK_DAY_FORMS * CASES_PER_FORM
    );
}

#[test]
fn generated_recurrences_of_every_piece() {
    assert_eq!(
        run(11, RECURRENCE_FORMS, recurrence_case),
        RECURRENCE_FORMS * CASES_PER_FORM
    );
}

#[test]
fn generated_intervals_from_amounts_and_anchors() {
    assert_eq!(
        run(12, INTERVAL_FORMS, interval_case),
        INTERVAL_FORMS * CASES_PER_FORM
    );
}
