//! Shared by the `detect_*` targets: one detector through the skill entry point
//! (`quarry_detect::skill::run`), as the CLI, JSONL batch and HTTP hosts call it, with the
//! fuzzer's bytes as the text. Any panic is a crash; libFuzzer's `-timeout` catches slow inputs.

use chrono::DateTime;
use quarry_detect::skill::{SkillDefaults, SkillInput, run};

pub fn run_target(target: &str, data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let now = DateTime::parse_from_rfc3339("2024-01-10T12:00:00Z").expect("a valid constant");
    let defaults = SkillDefaults::new(now);
    let input = SkillInput {
        text: text.to_owned(),
        target: Some(target.to_owned()),
        detail: Some(true),
        ..SkillInput::default()
    };
    let _ = run(&input, &defaults);
}
