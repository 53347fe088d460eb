//! `quarry check`: the output guardrail as a command. Prints the verdict as JSON on stdout; a
//! rejection also prints one `Error: <Code> - <reason>` line per reason on stderr and exits 1.

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Context;
use quarry_core::json::to_spaced_string;
use quarry_detect::skill;

use crate::args::CheckArgs;
use crate::document_file::read_text;
use crate::failure::Failure;

pub fn run(args: CheckArgs) -> Result<ExitCode, Failure> {
    // The target is checked before any input is read: an unknown target fails at once.
    let target = args.target.parse()?;
    let text = read_text(&args.input)?;
    let verdict = skill::check(&text, target, &args.output, args.input.max_bytes)?;
    writeln!(io::stdout().lock(), "{}", to_spaced_string(&verdict))
        .context("writing the verdict to stdout")?;
    for reason in verdict.reasons() {
        eprintln!("Error: {} - {}", reason.kind.code(), reason.message);
    }
    Ok(if verdict.is_accepted() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
