//! Native throughput of the browser host's own code path (`requests::extract`: the JSON request
//! in, the contract's JSON out), for the package benchmark (`packages/quarry/bench/run.mjs`) to
//! set beside the same code compiled to WebAssembly.
//!
//! `cargo run --release -p quarry-wasm --example native_throughput -- CORPUS [PASSES]` prints
//! `{"email+url": MB/s, "date": MB/s}`, each the best of PASSES passes (default 3).

use std::process::ExitCode;
use std::time::Instant;

use quarry_wasm::requests;

/// The reference time `quarry bench` uses.
const NOW: &str = "2024-01-10T12:00:00Z";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(path), passes) = (args.next(), args.next()) else {
        eprintln!("usage: native_throughput CORPUS [PASSES]");
        return ExitCode::from(2);
    };
    let passes: usize = passes.and_then(|p| p.parse().ok()).unwrap_or(3).max(1);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) => {
            eprintln!("reading {path}: {error}");
            return ExitCode::FAILURE;
        }
    };
    let request = |target: &str| serde_json::json!({"text": text, "target": target}).to_string();
    let (email, url, date) = (request("email"), request("url"), request("date"));
    let mb_per_s = |batch: &[&String]| {
        let best = (0..passes)
            .map(|_| {
                let started = Instant::now();
                for request in batch {
                    requests::extract(request, NOW).expect("the corpus is a valid request");
                }
                started.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min);
        text.len() as f64 / 1e6 / best
    };
    println!(
        "{}",
        serde_json::json!({"email+url": mb_per_s(&[&email, &url]), "date": mb_per_s(&[&date])})
    );
    ExitCode::SUCCESS
}
