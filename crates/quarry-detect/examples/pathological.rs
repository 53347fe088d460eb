//! `cargo run --release -p quarry-detect --example pathological -- [--kib N] [--budget S]
//! [--cross | --unit TEXT]`:
//! seconds each target takes on 1 MiB (or `--kib N`) of each hostile input in
//! `tests/support/pathological.rs`, and how cost grows with length.
//!
//! Each input is timed at doubling lengths from 16 KiB. When a length would take longer than
//! the budget (default 60 s), the figure at the full length is extrapolated from the growth
//! measured so far and marked `est.`, so a quadratic scanner is reported without waiting
//! hours. `growth` is the exponent between the last two lengths: about 1 for a linear scan,
//! 2 for a quadratic one. `--cross` reads every unit for every target, and `--unit TEXT` one
//! unit for every target (for hunting).

use std::time::Instant;

use chrono::DateTime;
use quarry_core::Target;
use quarry_detect::{DetectOptions, detect};

#[path = "../tests/support/pathological.rs"]
mod pathological;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .and_then(|n| n.parse::<f64>().ok())
    };
    let full = (number("--kib").unwrap_or(1024.0) * 1024.0) as usize;
    let budget = number("--budget").unwrap_or(60.0);
    let now = DateTime::parse_from_rfc3339("2024-01-10T12:00:00Z").expect("a valid constant");
    let options = DetectOptions::new(now);

    // `--unit TEXT`: only this unit, read for every target.
    let unit = args
        .iter()
        .position(|a| a == "--unit")
        .and_then(|i| args.get(i + 1));
    let mut cases: Vec<(Target, &str)> = Vec::new();
    if let Some(unit) = unit {
        cases.extend(Target::ALL.iter().map(|&t| (t, unit.as_str())));
    }
    for pattern in pathological::PATTERNS.iter().filter(|_| unit.is_none()) {
        if args.iter().any(|a| a == "--cross") {
            cases.extend(Target::ALL.iter().map(|&t| (t, pattern.unit)));
        } else {
            cases.push((pattern.target, pattern.unit));
        }
    }
    if args.iter().any(|a| a == "--cross") {
        for unit in HUNT_UNITS {
            cases.extend(Target::ALL.iter().map(|&t| (t, *unit)));
        }
    }
    println!(
        "{:<7} {:<28} {:>10} {:>7}",
        "target",
        "unit (repeated)",
        format!("s/{} KiB", full / 1024),
        "growth"
    );
    for (target, unit) in cases {
        let (seconds, growth, estimated) = cost(target, unit, full, budget, &options);
        println!(
            "{:<7} {:<28} {:>10} {:>7.2}",
            target.as_str(),
            format!("{unit:?}"),
            format!("{seconds:.3}{}", if estimated { " est." } else { "" }),
            growth
        );
    }
}

/// Seconds for `full` bytes of `unit` (measured, or extrapolated when over `budget`), the growth
/// exponent between the last two lengths timed, and whether the seconds are extrapolated.
fn cost(
    target: Target,
    unit: &str,
    full: usize,
    budget: f64,
    options: &DetectOptions,
) -> (f64, f64, bool) {
    let mut len = (16 * 1024).min(full);
    let mut last: Option<(usize, f64)> = None;
    loop {
        let text = pathological::repeated(unit, len);
        let started = Instant::now();
        std::hint::black_box(detect(&text, target, options));
        let seconds = started.elapsed().as_secs_f64().max(1e-6);
        // Timings under a few milliseconds are too noisy to extrapolate from; growth is
        // clamped to what a scanner can plausibly show (linear to cubic).
        let growth = last.map_or(1.0, |(l, s)| {
            (seconds / s).ln() / (len as f64 / l as f64).ln()
        });
        let trusted_growth = if seconds < 0.05 {
            1.0
        } else {
            growth.clamp(1.0, 3.0)
        };
        if len >= full {
            return (seconds, growth, false);
        }
        let next = (len * 2).min(full);
        let predicted = seconds * (next as f64 / len as f64).powf(trusted_growth);
        if predicted > budget {
            let estimate = seconds * (full as f64 / len as f64).powf(trusted_growth);
            return (estimate, growth, true);
        }
        last = Some((len, seconds));
        len = next;
    }
}

/// More units for `--cross` hunting read for every target, they look for rescans
/// that `PATTERNS` does not cover yet.
const HUNT_UNITS: &[&str] = &[
    "a",
    "A",
    "Aa",
    " ",
    "\n",
    ".",
    "-",
    "é",
    "。",
    "\u{200b}",
    "0",
    "1 1",
    "(1)",
    "1)",
    "1 x1 ",
    "ext1",
    "1#",
    "+",
    "++1",
    "1 - ",
    "1 – ",
    ". 1",
    "1,",
    "1%",
    "1 1 ",
    "1.1.",
    "1:1:",
    "Jan 1, ",
    "the 1st ",
    "between 1 and ",
    "1st of ",
    "from Monday to ",
    "9am-",
    "in ",
    "ago ",
    "Q",
    "week ",
    "one two three ",
    "nineteen ",
    "2020-01-01T",
    "2020-",
    "'",
    "12/12/12 ",
    "10:30 - ",
    "between ",
    "and ",
    "A.A.",
    "O'",
    "Aa's ",
    "New York ",
    "Inc. ",
    "The ",
    "Aa\n",
    "Aa: \n",
    "Aa, Aa and ",
    "Lake ",
    "Mount ",
    "Coach ",
    "General ",
    "d'A",
    "a@b",
    "a.a",
    "a:",
    "a/",
    "a?",
    "a#",
    "(",
    ")",
    "\"",
    "<",
    ">",
    "a..",
    "..",
    "@.",
    ".@",
    "a-@",
    "mailto:",
    "http://a",
    "https://a.com/(",
    "a.com/(",
    "a.com:",
    "a.com:1",
    "xn--",
    "a.xn--",
    "ftp://",
    "//",
    "/",
    "#",
    "a.com#",
    "a.com?",
    "[a@b.com]",
    "a@b.com.",
    "\u{a0}",
    "é@é.é",
    "1.1",
    "1::",
    "::1.",
    "ffff:",
    "1.1.1.1:",
    "::ffff:1.1.1.1 ",
    "1.2.3.4 ",
];
