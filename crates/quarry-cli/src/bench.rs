//! `quarry bench`: detector throughput per target and for all targets in one pass, on one core,
//! over a generated corpus; each target's first-call cost (time of its first detection in a fresh
//! process, where lazily built tables and compiled patterns are paid) and its peak memory on one
//! text at two sizes (flat when the detector reads long text in bounded windows); and peak memory
//! of JSONL streaming at two input sizes (flat when the stream is processed line by line).

use std::hint::black_box;
use std::io::{self, Read};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use chrono::DateTime;
use indicatif::ProgressBar;
use quarry_core::json::to_spaced_string;
use quarry_core::{ErrorCode, Target};
use quarry_detect::skill::SkillDefaults;
use quarry_detect::{DetectOptions, detect, detect_all};
use serde_json::json;

use crate::args::BenchArgs;
use crate::corpus::{self, Rng};
use crate::failure::Failure;
use crate::jsonl;

const MIB: usize = 1024 * 1024;
/// The generator's seed: every run measures the same text.
const CORPUS_SEED: u64 = 42;

pub fn run(args: BenchArgs) -> Result<ExitCode, Failure> {
    let now = DateTime::parse_from_rfc3339("2024-01-10T12:00:00Z").expect("a valid constant");
    if let Some(model) = &args.local_model {
        return crate::bench_local::run(&args, model);
    }
    if let Some(target) = &args.probe {
        return probe(target, args.probe_mib, now);
    }
    if let Some(path) = &args.write_corpus {
        let text = corpus::generate(args.size_mib.max(1) * MIB, CORPUS_SEED, args.value_share);
        std::fs::write(path, text).map_err(|e| {
            Failure::coded(
                ErrorCode::BenchError,
                format!("writing the corpus to {path}: {e}"),
            )
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let fresh = fresh_process_costs(args.size_mib.max(1))?;
    // Streaming first, before the corpus is allocated, so the peak reflects the stream alone.
    let small = args.size_mib.max(1);
    let streamed_small = stream_jsonl(small * MIB, now)?;
    let peak_small = peak_rss_kib();
    let streamed_large = stream_jsonl(4 * small * MIB, now)?;
    let peak_large = peak_rss_kib();

    let text = corpus::generate(args.size_mib.max(1) * MIB, CORPUS_SEED, args.value_share);
    let options = DetectOptions::new(now);
    let mut rows = Vec::new();
    for target in Target::ALL {
        let (best, found) = best_of(args.passes, || detect(&text, target, &options).len());
        rows.push((
            target.as_str().to_owned(),
            mb_per_s(text.len(), best),
            found,
        ));
    }
    let (best, found) = best_of(args.passes, || {
        detect(&text, Target::Email, &options).len() + detect(&text, Target::Url, &options).len()
    });
    rows.push(("email+url".to_owned(), mb_per_s(text.len(), best), found));
    let (best, found) = best_of(args.passes, || detect_all(&text, &options).len());
    rows.push((
        "all (one pass)".to_owned(),
        mb_per_s(text.len(), best),
        found,
    ));

    if args.json {
        let report = json!({
            "corpus_bytes": text.len(),
            "value_share": args.value_share,
            "throughput_mb_per_s": rows.iter().map(|(name, mbs, found)| json!({"target": name, "mb_per_s": mbs, "matches": found})).collect::<Vec<_>>(),
            "jsonl_stream": {
                "small_bytes": streamed_small, "small_peak_rss_kib": peak_small,
                "large_bytes": streamed_large, "large_peak_rss_kib": peak_large,
            },
            "fresh_process": fresh.iter().map(|c| json!({
                "target": c.target.as_str(), "first_call_ms": c.first_call_ms,
                "text_mib": [c.small_mib, 4 * c.small_mib],
                "peak_rss_growth_kib": [c.small_growth_kib, c.large_growth_kib],
            })).collect::<Vec<_>>(),
        });
        println!("{}", to_spaced_string(&report));
    } else {
        println!(
            "corpus: {:.1} MB of generated mixed text, {:.0} % of sentences with values, best of {} passes, one thread",
            text.len() as f64 / 1e6,
            args.value_share * 100.0,
            args.passes
        );
        println!("{:<16} {:>10} {:>10}", "target", "MB/s", "matches");
        for (name, mbs, found) in &rows {
            println!("{name:<16} {mbs:>10.1} {found:>10}");
        }
        println!(
            "jsonl streaming peak RSS: {:.1} MiB after {:.0} MB, {:.1} MiB after {:.0} MB",
            kib_to_mib(peak_small),
            streamed_small as f64 / 1e6,
            kib_to_mib(peak_large),
            streamed_large as f64 / 1e6
        );
        println!(
            "{:<16} {:>14} {:>26}",
            "fresh process", "first call ms", "peak RSS growth on 1 text"
        );
        for cost in &fresh {
            println!(
                "{:<16} {:>14.2} {:>10.1} MiB ({} MiB) {:>6.1} MiB ({} MiB)",
                cost.target.as_str(),
                cost.first_call_ms,
                kib_to_mib(cost.small_growth_kib),
                cost.small_mib,
                kib_to_mib(cost.large_growth_kib),
                4 * cost.small_mib,
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What one target costs in a fresh process.
struct FreshCost {
    target: Target,
    first_call_ms: f64,
    small_mib: usize,
    small_growth_kib: u64,
    large_growth_kib: u64,
}

/// Runs this binary once per target and size with `--probe`, so each figure comes from a process
/// where nothing was built or compiled yet.
fn fresh_process_costs(small_mib: usize) -> Result<Vec<FreshCost>, Failure> {
    let mut costs = Vec::new();
    for target in Target::ALL {
        let first_call_ms = run_probe(target, None)?;
        let small_growth_kib = run_probe(target, Some(small_mib))? as u64;
        let large_growth_kib = run_probe(target, Some(4 * small_mib))? as u64;
        costs.push(FreshCost {
            target,
            first_call_ms,
            small_mib,
            small_growth_kib,
            large_growth_kib,
        });
    }
    Ok(costs)
}

fn run_probe(target: Target, mib: Option<usize>) -> Result<f64, Failure> {
    let failed = |detail: String| {
        Failure::coded(
            ErrorCode::BenchError,
            format!("measuring {target} in a fresh process failed: {detail}"),
        )
    };
    let exe = std::env::current_exe().map_err(|e| failed(e.to_string()))?;
    let mut command = std::process::Command::new(exe);
    command.args(["bench", "--probe", target.as_str()]);
    if let Some(mib) = mib {
        command.args(["--probe-mib", &mib.to_string()]);
    }
    let output = command.output().map_err(|e| failed(e.to_string()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(failed(String::from_utf8_lossy(&output.stderr).into_owned()));
    }
    stdout
        .trim()
        .parse()
        .map_err(|_| failed(format!("unexpected output {stdout:?}")))
}

/// The `--probe` child: with `mib`, detects `target` in one generated text of that size and prints
/// how much the peak resident set grew; without, prints the milliseconds of the first
/// detection in a short mixed sentence (wall time; the process does nothing else).
fn probe(
    target: &str,
    mib: Option<usize>,
    now: DateTime<chrono::FixedOffset>,
) -> Result<ExitCode, Failure> {
    let target: Target = target.parse().map_err(|e: quarry_core::SkillError| {
        Failure::coded(ErrorCode::BenchError, e.to_string())
    })?;
    let options = DetectOptions::new(now);
    match mib {
        Some(mib) => {
            let text = corpus::generate(mib * MIB, 7, 0.25);
            let before = peak_rss_kib();
            black_box(detect(&text, target, &options).len());
            println!("{}", peak_rss_kib().saturating_sub(before));
        }
        None => {
            let sentence = "Dr. Jane Smith of Acme Widgets Inc. called (415) 555-2671 from \
                            Paris on March 3, 2024 about jane@acme.example, https://acme.example/x \
                            and host 10.0.0.1.";
            // Wall time of one call in a fresh single-threaded process: the kernel's CPU
            // accounting is updated at scheduler ticks, too coarse for a millisecond call.
            let wall = Instant::now();
            black_box(detect(sentence, target, &options).len());
            let ms = wall.elapsed().as_secs_f64() * 1e3;
            println!("{ms:.3}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The fastest of `passes` runs of `work`, and what the last run returned.
fn best_of(passes: usize, mut work: impl FnMut() -> usize) -> (Duration, usize) {
    let mut best = Duration::MAX;
    let mut result = 0;
    for _ in 0..passes.max(1) {
        let started = Instant::now();
        result = black_box(work());
        best = best.min(started.elapsed());
    }
    (best, result)
}

fn mb_per_s(bytes: usize, elapsed: Duration) -> f64 {
    bytes as f64 / 1e6 / elapsed.as_secs_f64()
}

/// Streams about `bytes` of generated JSONL requests (all targets in turn) through the batch
/// path into a sink; returns the bytes streamed. The input is generated lazily, line by line.
fn stream_jsonl(bytes: usize, now: DateTime<chrono::FixedOffset>) -> Result<usize, Failure> {
    let mut defaults = SkillDefaults::new(now);
    defaults.target = Some(Target::Email);
    let reader = io::BufReader::new(GeneratedLines::new(bytes));
    let summary = jsonl::stream(reader, io::sink(), &defaults, ProgressBar::hidden())?;
    if summary.failures > 0 {
        return Err(Failure::coded(
            ErrorCode::BenchError,
            format!(
                "{} generated JSONL lines failed; the streaming figures would be wrong",
                summary.failures
            ),
        ));
    }
    Ok(bytes)
}

/// A reader that produces JSONL skill requests on demand, never holding more than one line.
struct GeneratedLines {
    rng: Rng,
    remaining: usize,
    line: Vec<u8>,
    position: usize,
}

impl GeneratedLines {
    fn new(bytes: usize) -> Self {
        GeneratedLines {
            rng: Rng::new(99),
            remaining: bytes,
            line: Vec::new(),
            position: 0,
        }
    }
}

impl Read for GeneratedLines {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.position == self.line.len() {
            if self.remaining == 0 {
                return Ok(0);
            }
            let mut text = String::new();
            corpus::paragraph(&mut self.rng, &mut text, 0.25);
            let target = Target::ALL[self.rng.below(Target::ALL.len())];
            let mut line = serde_json::to_vec(&json!({"text": text, "target": target.as_str()}))
                .map_err(io::Error::other)?;
            line.push(b'\n');
            self.remaining = self.remaining.saturating_sub(line.len());
            self.line = line;
            self.position = 0;
        }
        let n = buf.len().min(self.line.len() - self.position);
        buf[..n].copy_from_slice(&self.line[self.position..self.position + n]);
        self.position += n;
        Ok(n)
    }
}

/// Peak resident set size of this process in KiB (Linux `VmHWM`), 0 where unavailable.
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status.lines().find_map(|line| {
                line.strip_prefix("VmHWM:")
                    .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            })
        })
        .unwrap_or(0)
}

fn kib_to_mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}
