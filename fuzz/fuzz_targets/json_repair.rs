#![no_main]
//! The lenient JSON parser (`quarry_parse::repair`), lenient and strict: model output of any shape
//! must yield a value or an error, never a panic.

use quarry_parse::{RepairOptions, repair};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = repair(text, RepairOptions::default());
    let _ = repair(text, RepairOptions { strict: true });
});
