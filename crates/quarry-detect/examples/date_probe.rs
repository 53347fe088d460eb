//! `cargo run --release -p quarry-detect --example date_probe -- [--now RFC3339] [--bench [--mib N]]`:
//! prints the dates found in each stdin line, or with `--bench` measures `date::find` on the
//! same generated corpus as `quarry bench` (8 MiB, 25 % of sentences with values, best of 3)
//! and the cost of the first call in a process.

use std::io::BufRead;
use std::time::Instant;

use chrono::DateTime;

#[path = "../../quarry-cli/src/corpus.rs"]
#[allow(dead_code)]
mod corpus;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let now_text = args
        .iter()
        .position(|a| a == "--now")
        .and_then(|i| args.get(i + 1))
        .map_or("2024-01-10T12:00:00Z", String::as_str);
    let Ok(now) = DateTime::parse_from_rfc3339(now_text) else {
        eprintln!("--now wants an RFC 3339 time");
        return;
    };
    if args.iter().any(|a| a == "--bench") {
        let first = Instant::now();
        let found = quarry_detect::date::find("see you next Tuesday at 3pm", now).len();
        println!(
            "first call: {:.2} ms ({found} found)",
            first.elapsed().as_secs_f64() * 1e3
        );
        let mib: usize = args
            .iter()
            .position(|a| a == "--mib")
            .and_then(|i| args.get(i + 1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(8);
        let passes = if mib < 8 { 1 } else { 3 };
        let text = corpus::generate(mib * 1024 * 1024, 42, 0.25);
        let mut best = f64::MAX;
        let mut found = 0;
        for _ in 0..passes {
            let started = Instant::now();
            found = std::hint::black_box(quarry_detect::date::find(&text, now)).len();
            best = best.min(started.elapsed().as_secs_f64());
        }
        println!(
            "date: {:.1} MB/s, {found} matches",
            text.len() as f64 / 1e6 / best
        );
        return;
    }
    for line in std::io::stdin().lock().lines().map_while(Result::ok) {
        for d in quarry_detect::date::find(&line, now) {
            println!("{:?} -> {:?} {}", &line[d.range], d.kind, d.value);
        }
        println!("--");
    }
}
