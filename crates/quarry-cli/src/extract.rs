//! `quarry extract --target T (--text T | --file F | --jsonl | stdin)`.

use std::io::{self, IsTerminal, Read, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use chrono::{DateTime, FixedOffset, Local};
use quarry_core::SkillError;
use quarry_core::json::to_spaced_string;
use quarry_detect::skill::{self, SkillDefaults};

use crate::args::{ExtractArgs, InputArgs};
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

/// The source text from `--text`, `--file` or piped stdin, checked for size and UTF-8.
pub fn read_text(args: &InputArgs) -> Result<String, Failure> {
    if let Some(text) = &args.text {
        return Ok(text.clone());
    }
    if let Some(path) = &args.file {
        return Ok(read_file(path, args.max_bytes)?);
    }
    let stdin = io::stdin();
    if stdin.is_terminal() {
        return Err(anyhow::anyhow!(
            "no input: pass --text TEXT, --file PATH, --jsonl, or pipe text on stdin"
        )
        .into());
    }
    let mut bytes = Vec::new();
    stdin
        .lock()
        .take(args.max_bytes as u64 + 1)
        .read_to_end(&mut bytes)
        .context("reading stdin")?;
    if bytes.len() > args.max_bytes {
        return Err(SkillError::InputTooLarge {
            size: bytes.len(),
            limit: args.max_bytes,
        }
        .into());
    }
    Ok(decode_utf8(bytes)?)
}

/// Reads a UTF-8 file, refusing an oversize one before loading it.
pub fn read_file(path: &Path, max_bytes: usize) -> Result<String, SkillError> {
    let unreadable = |error: io::Error| SkillError::UnreadableInput {
        path: path.display().to_string(),
        reason: error.to_string(),
    };
    let size = std::fs::metadata(path).map_err(unreadable)?.len();
    if size > max_bytes as u64 {
        return Err(SkillError::InputTooLarge {
            size: usize::try_from(size).unwrap_or(usize::MAX),
            limit: max_bytes,
        });
    }
    decode_utf8(std::fs::read(path).map_err(unreadable)?)
}

pub fn decode_utf8(bytes: Vec<u8>) -> Result<String, SkillError> {
    String::from_utf8(bytes).map_err(|error| SkillError::InvalidUtf8 {
        offset: error.utf8_error().valid_up_to(),
    })
}
