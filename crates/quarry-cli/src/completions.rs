//! `quarry completions SHELL`: a completion script generated from the same clap definition the
//! binary parses with, so it cannot drift from the commands.

use std::process::ExitCode;

use clap::CommandFactory;

use crate::args::{Cli, CompletionsArgs};
use crate::failure::Failure;

pub fn run(args: CompletionsArgs) -> Result<ExitCode, Failure> {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "quarry", &mut script);
    crate::man::write_stdout(&script)?;
    Ok(ExitCode::SUCCESS)
}
