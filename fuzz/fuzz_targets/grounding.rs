#![no_main]
//! The grounding aligner (`quarry_core::grounding::align_all`): the input is a source text, then
//! extractions, separated by NUL bytes; aligned with the default options and with fuzzy
//! alignment off and lesser matches accepted.

use quarry_core::grounding::{AlignOptions, align_all};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut parts = text.split('\0');
    let source = parts.next().unwrap_or_default();
    let extractions: Vec<&str> = parts.take(8).collect();
    let _ = align_all(source, &extractions, &AlignOptions::default());
    let exact = AlignOptions {
        enable_fuzzy_alignment: false,
        accept_match_lesser: true,
        ..AlignOptions::default()
    };
    let _ = align_all(source, &extractions, &exact);
});
