//! The `quarry` binary: parses arguments and hands off; every command lives in its own module.

mod args;
mod bench;
mod check;
mod corpus;
mod extract;
mod failure;
mod jsonl;
mod model;
mod schema_extract;
mod serve;

use std::process::ExitCode;

use clap::Parser;

use crate::args::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Extract(args) => extract::run(args),
        Command::Check(args) => check::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Bench(args) => bench::run(args),
    };
    match outcome {
        Ok(code) => code,
        Err(failure) => failure.report(),
    }
}
