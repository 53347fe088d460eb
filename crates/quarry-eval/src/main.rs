//! `quarry-eval [DIR]`: prints every metric of every suite, and with `--check` fails when one is
//! below its floor in `floor.json`.

use std::process::ExitCode;

use quarry_eval::floor::{check_floor, load_floor};
use quarry_eval::{corpus, evaluate_all};

fn main() -> anyhow::Result<ExitCode> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let check = args.iter().any(|a| a == "--check");
    let json = args.iter().any(|a| a == "--json");
    args.retain(|a| !a.starts_with("--"));
    let dir = args.first().map_or_else(corpus::default_dir, Into::into);
    let metrics = evaluate_all(&dir)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&metrics)?);
    } else {
        for metric in &metrics {
            println!(
                "{:<58} {:>7.4}  ({} records)",
                metric.name, metric.value, metric.records
            );
        }
    }
    if check {
        let failures = check_floor(&metrics, &load_floor()?);
        for failure in &failures {
            eprintln!("below floor: {failure}");
        }
        if !failures.is_empty() {
            return Ok(ExitCode::FAILURE);
        }
    }
    Ok(ExitCode::SUCCESS)
}
