//! Every target's scan costs time linear in the length of the text, on the hostile inputs of
//! `support/pathological.rs` (issue 14: `www.` repeated took over a minute per megabyte).
//!
//! Each input is read once at `SMALL` bytes `FACTOR` times and once at `FACTOR × SMALL`
//! bytes, so both sides read the same number of bytes: a linear scan costs the same on both
//! (ratio about 1), a quadratic one `FACTOR` times more on the long side (ratio about 8). The
//! cost is the thread's CPU time, which other processes on a loaded machine do not inflate,
//! and a failing ratio is measured again before the test fails. No absolute time is asserted.
//!
//! Release builds (`cargo test -p quarry-detect --release --test linear_time`) read 1 MiB and
//! 8 MiB; debug builds (`cargo test --workspace`), tens of times slower, read 8 KiB and 64 KiB,
//! where each quadratic scan issue 14 found still shows a ratio near 8.
//!
//! Its own test binary, unlike the crate's other integration tests (`tests/it/`): it measures
//! CPU time, and other tests running in the same process beside it (on these machines the two
//! CPUs may share a core) inflated one side's cost 4 to 5 times.

#[path = "support/pathological.rs"]
mod pathological;

use std::time::{Duration, Instant};

use chrono::DateTime;
use quarry_core::Target;
use quarry_detect::{DetectOptions, detect};

const SMALL: usize = if cfg!(debug_assertions) {
    8 << 10
} else {
    1 << 20
};
const FACTOR: usize = 8;
/// The long side may cost this many times the short side (`FACTOR` times the input for at
/// most `FACTOR × MAX_RATIO` the cost): room for noise and `n log n` sorts, far below the 8 of
/// a quadratic scan.
const MAX_RATIO: f64 = 2.5;
/// Each side is repeated until it has run this long, so clock ticks are small against it.
const MIN_SIDE: Duration = Duration::from_millis(100);
const ATTEMPTS: usize = 3;
/// Bounds the repetitions should the clock not advance.
const MAX_ROUNDS: usize = 1000;

#[test]
fn url_scan_is_linear() {
    check_target(Target::Url);
}

#[test]
fn email_scan_is_linear() {
    check_target(Target::Email);
}

#[test]
fn phone_scan_is_linear() {
    check_target(Target::Phone);
}

#[test]
fn ip_scan_is_linear() {
    check_target(Target::Ip);
}

#[test]
fn date_scan_is_linear() {
    check_target(Target::Date);
}

#[test]
fn entity_scan_is_linear() {
    check_target(Target::Entity);
}

#[test]
fn name_scan_is_linear() {
    check_target(Target::Name);
}

/// The figures must come from work the detector did: the inputs hold what it looks for.
#[test]
fn hostile_inputs_cover_every_target() {
    for target in Target::ALL {
        assert!(
            pathological::PATTERNS.iter().any(|p| p.target == target),
            "no hostile input for {}",
            target.as_str()
        );
    }
}

fn check_target(target: Target) {
    let now = DateTime::parse_from_rfc3339("2024-01-10T12:00:00Z").expect("a valid constant");
    let options = DetectOptions::new(now);
    for pattern in pathological::PATTERNS.iter().filter(|p| p.target == target) {
        let small = pathological::repeated(pattern.unit, SMALL);
        let large = pathological::repeated(pattern.unit, SMALL * FACTOR);
        let mut ratios = Vec::new();
        for _ in 0..ATTEMPTS {
            let ratio = cost_ratio(target, &small, &large, &options);
            // Shown with `--nocapture`.
            eprintln!("{} {:?}: {ratio:.2}", target.as_str(), pattern.unit);
            if ratio <= MAX_RATIO {
                break;
            }
            ratios.push(ratio);
        }
        assert!(
            ratios.len() < ATTEMPTS,
            "{} on {:?} repeated: {} bytes read as one text cost {ratios:.1?} times the same \
             bytes read as {FACTOR} texts of {SMALL} (linear is about 1)",
            target.as_str(),
            pattern.unit,
            large.len(),
        );
    }
}

/// CPU time of one pass over `large` against `FACTOR` passes over `small`, each side repeated
/// until it has run for [`MIN_SIDE`].
fn cost_ratio(target: Target, small: &str, large: &str, options: &DetectOptions) -> f64 {
    let mut large_cost = Duration::ZERO;
    let mut small_cost = Duration::ZERO;
    let mut rounds = 0;
    while (large_cost < MIN_SIDE || small_cost < MIN_SIDE) && rounds < MAX_ROUNDS {
        rounds += 1;
        large_cost += cpu_time(|| {
            std::hint::black_box(detect(large, target, options));
        });
        small_cost += cpu_time(|| {
            for _ in 0..FACTOR {
                std::hint::black_box(detect(small, target, options));
            }
        });
    }
    large_cost.as_secs_f64() / small_cost.as_secs_f64().max(f64::MIN_POSITIVE)
}

/// The CPU time this thread spent in `work`: from the kernel's per-thread accounting where
/// there is one (Linux), else the wall-clock time.
fn cpu_time(work: impl FnOnce()) -> Duration {
    let started = Instant::now();
    let before = thread_cpu_ticks();
    work();
    match (before, thread_cpu_ticks()) {
        (Some(before), Some(after)) => Duration::from_millis((after - before) * 10),
        _ => started.elapsed(),
    }
}

/// User and system time of the calling thread in clock ticks (USER_HZ, 100 a second), from
/// `/proc/thread-self/stat`.
fn thread_cpu_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces: state is
    // the first, utime the twelfth and stime the thirteenth.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let user: u64 = fields.get(11)?.parse().ok()?;
    let system: u64 = fields.get(12)?.parse().ok()?;
    Some(user + system)
}
