//! The cost of `Quantities::scan`, the number and date scan run once per grounded document.
//!
//! - `quantities_scan short [N]` scans a 68-byte invoice line N times (default 10,000): run it
//!   under `valgrind --tool=callgrind` and divide `Quantities::scan`'s inclusive instructions
//!   by N for the cost of one scan of a short text.
//! - `quantities_scan long [MB]` times scans of MB megabytes (default 1) of number-dense prose
//!   (amounts, percentages, dates in every spelling, plain words) and prints ms per MB.
//!
//! Build: `cargo build --release -p quarry-agent --example quantities_scan`.

use std::hint::black_box;
use std::time::Instant;

use quarry_agent::quantities::Quantities;

const INVOICE_LINE: &str = "Invoice from Acme Supplies Ltd, 15 January 2024. Total due: $1,200.";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let count = |default: usize| args.get(1).map_or(default, |n| n.parse().expect("a count"));
    match args.first().map(String::as_str) {
        None | Some("short") => short(count(10_000)),
        Some("long") => long(count(1)),
        Some(other) => panic!("unknown mode {other:?}: short [N] or long [MB]"),
    }
}

fn short(scans: usize) {
    for _ in 0..scans {
        black_box(Quantities::scan(black_box(INVOICE_LINE)));
    }
}

fn long(megabytes: usize) {
    let text = number_dense_prose(megabytes << 20);
    let rounds = 5;
    let mut best = f64::INFINITY;
    for _ in 0..rounds {
        let started = Instant::now();
        black_box(Quantities::scan(black_box(&text)));
        best = best.min(started.elapsed().as_secs_f64());
    }
    let ms_per_mb = best * 1e3 / (text.len() as f64 / f64::from(1 << 20));
    println!(
        "{:.1} MB of number-dense prose: {ms_per_mb:.1} ms per MB (best of {rounds})",
        text.len() as f64 / f64::from(1 << 20)
    );
}

/// Seeded prose where about one word in three is a number, an amount or a date.
fn number_dense_prose(bytes: usize) -> String {
    const WORDS: &[&str] = &[
        "the",
        "invoice",
        "total",
        "was",
        "paid",
        "on",
        "for",
        "net",
        "amount",
        "report",
        "Ltd",
        "café",
        "units",
        "March",
        "may",
        "of",
        "and",
        "deliveries",
        "order",
        "Mon",
        "Sept",
    ];
    const QUANTITIES: &[&str] = &[
        "$1,200.00",
        "1.2 million",
        "25%",
        "3.5k",
        "(500)",
        "-20",
        "2024-01-15",
        "05/06/2024",
        "15 January 2024",
        "March 3rd, 2024",
        "Feb 2024",
        "12",
        "1999",
        "0.75",
        "7 bn",
        "4,500",
        "31.12.23",
        "Jan. 5, 2025",
        "3rd of June, 2023",
        "€ 12,345.67",
        "42",
        "8.5 %",
    ];
    let mut state: u64 = 13;
    let mut next = |n: usize| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as usize % n
    };
    let mut text = String::with_capacity(bytes + 64);
    while text.len() < bytes {
        let piece = if next(3) == 0 {
            QUANTITIES[next(QUANTITIES.len())]
        } else {
            WORDS[next(WORDS.len())]
        };
        text.push_str(piece);
        text.push_str([" ", " ", ", ", ". ", "\n"][next(5)]);
    }
    text
}
