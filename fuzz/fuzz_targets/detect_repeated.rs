#![no_main]
//! Every detector on a short unit repeated to [`REPEATED_BYTES`]: the shape of issue 14's slow
//! inputs (`www.` repeated), which a text of a few kilobytes never shows. The first byte picks
//! the target, the rest is the unit. A scan that rereads the text after each partial match
//! takes seconds on one such input instead of milliseconds, so run with
//! `-report_slow_units=1 -timeout=5` (see ARCHITECTURE.md, `fuzz/`).

use chrono::DateTime;
use quarry_core::Target;
use quarry_detect::{DetectOptions, detect};

/// Long enough for a quadratic scan to take seconds, short enough for thousands of runs.
const REPEATED_BYTES: usize = 256 * 1024;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&selector, unit)) = data.split_first() else {
        return;
    };
    let Ok(unit) = std::str::from_utf8(unit) else {
        return;
    };
    if unit.is_empty() {
        return;
    }
    let target = Target::ALL[usize::from(selector) % Target::ALL.len()];
    let text = unit.repeat(REPEATED_BYTES / unit.len() + 1);
    let now = DateTime::parse_from_rfc3339("2024-01-10T12:00:00Z").expect("a valid constant");
    let _ = detect(&text, target, &DetectOptions::new(now));
});
