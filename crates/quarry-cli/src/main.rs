//! The `quarry` binary: parses arguments and hands off; every command lives in its own module.

mod agents;
mod args;
mod bench;
mod bench_local;
mod check;
mod completions;
mod config;
mod corpus;
mod corrections;
mod database_retrieval;
mod document_file;
mod extract;
mod failure;
mod follow;
mod graph;
#[cfg(test)]
mod help_audit;
mod jsonl;
mod man;
mod mcp;
mod model;
mod model_files;
mod open_files;
mod outbound;
mod owner;
mod progress;
mod retrieval;
mod schema_extract;
mod schema_jsonl;
mod serve;
mod table;
mod team;
mod version;
mod worker;
mod workspace;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};
use quarry_core::model::ReviewDecision;

use crate::args::{Cli, Command};

/// mimalloc instead of the system allocator: see `Cargo.toml` for the measured reason.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // Settings are resolved once, here: quarry.toml's flag-like keys become the flags' defaults
    // (flag > environment > file), and the file itself is passed to the commands that build
    // model clients (its `[headers]` and `[local]` tables).
    let config = match config::load() {
        Ok(config) => config,
        Err(failure) => return failure.report(),
    };
    let matches = config.command(Cli::command()).get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => error.exit(),
    };
    let config = &config;
    let outcome = match cli.command {
        Command::Extract(args) => extract::run(args, config),
        Command::Check(args) => check::run(args),
        Command::Serve(args) => serve::run(args, config),
        Command::Mcp(args) => mcp::run(args, config),
        Command::Bench(args) => bench::run(args),
        Command::Type(command) => team::types(command),
        Command::Entity(command) => team::entities(command),
        Command::Doc(command) => team::documents(command),
        Command::Run(args) => team::run(args, config),
        Command::Retry(args) => team::retry(args, config),
        Command::Worker(args) => worker::run(args, config),
        Command::Results(args) => team::results(args),
        Command::Approve(args) => team::review(args, ReviewDecision::Approve, config),
        Command::Reject(args) => team::review(
            args.review,
            ReviewDecision::Reject {
                reason: args.reason.filter(|reason| !reason.trim().is_empty()),
            },
            config,
        ),
        Command::History(args) => team::history(args),
        Command::Key(command) => team::keys(command),
        Command::Correction(command) => corrections::run(command),
        Command::Episode(command) => graph::episodes(command, config),
        Command::Graph(command) => graph::graph(command),
        Command::Completions(args) => completions::run(args),
        Command::Model(command) => model_files::run(command),
        Command::Man(args) => man::run(args),
    };
    match outcome {
        Ok(code) => code,
        Err(failure) => failure.report(),
    }
}
