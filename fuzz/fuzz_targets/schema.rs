#![no_main]
//! The schema loader (`quarry_agent::Schema::parse`): a user's YAML or JSON schema file.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = quarry_agent::Schema::parse(text);
});
