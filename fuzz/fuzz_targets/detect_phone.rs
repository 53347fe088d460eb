#![no_main]
//! The `phone` detector through the skill entry point.

#[path = "skill.rs"]
mod skill;

libfuzzer_sys::fuzz_target!(|data: &[u8]| skill::run_target("phone", data));
