//! `quarry extract --target T (--text T | --file F | --jsonl | stdin)`.

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Context;
use chrono::{DateTime, FixedOffset, Local};
use quarry_core::SkillError;
use quarry_core::json::to_spaced_string;
use quarry_detect::skill::{self, SkillDefaults};

use crate::args::ExtractArgs;
use crate::document_file::read_text;
use crate::failure::Failure;
use crate::{jsonl, schema_extract};

pub fn run(args: ExtractArgs, config: &crate::config::Config) -> Result<ExitCode, Failure> {
    if args.schema.is_some() {
        return schema_extract::run(args, config);
    }
    let defaults = defaults_from(&args)?;
    if args.jsonl {
        return jsonl::run(&defaults);
    }
    let target = defaults.target.ok_or(SkillError::MissingTarget)?;
    let text = read_text(&args.input)?;
    let extraction = skill::extract(&text, target, &defaults.options, args.input.max_bytes)?;
    let mut stdout = io::stdout().lock();
    writeln!(
        stdout,
        "{}",
        to_spaced_string(&extraction.to_json(args.detail))
    )
    .context("writing the result to stdout")?;
    Ok(ExitCode::SUCCESS)
}

/// The settings every text of this invocation shares, validated before any input is read so a
/// bad target fails at once.
fn defaults_from(args: &ExtractArgs) -> Result<SkillDefaults, SkillError> {
    let now: DateTime<FixedOffset> = match &args.now {
        Some(raw) => skill::parse_now(raw)?,
        None => Local::now().fixed_offset(),
    };
    let mut defaults = SkillDefaults::new(now);
    defaults.target = args.target.as_deref().map(str::parse).transpose()?;
    defaults.options.region = skill::parse_region(&args.region)?;
    defaults.detail = args.detail;
    defaults.max_input_bytes = args.input.max_bytes;
    Ok(defaults)
}
