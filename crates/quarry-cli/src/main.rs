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

use clap::Parser;
use quarry_core::model::ReviewDecision;

use crate::args::{Cli, Command};

/// mimalloc instead of the system allocator: see `Cargo.toml` for the measured reason.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(failure) = config::load() {
        return failure.report();
    }
    let outcome = match cli.command {
        Command::Extract(args) => extract::run(args),
        Command::Check(args) => check::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Mcp(args) => mcp::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Type(command) => team::types(command),
        Command::Entity(command) => team::entities(command),
        Command::Doc(command) => team::documents(command),
        Command::Run(args) => team::run(args),
        Command::Retry(args) => team::retry(args),
        Command::Worker(args) => worker::run(args),
        Command::Results(args) => team::results(args),
        Command::Approve(args) => team::review(args, ReviewDecision::Approve),
        Command::Reject(args) => team::review(
            args.review,
            ReviewDecision::Reject {
                reason: args.reason.filter(|reason| !reason.trim().is_empty()),
            },
        ),
        Command::History(args) => team::history(args),
        Command::Key(command) => team::keys(command),
        Command::Correction(command) => corrections::run(command),
        Command::Episode(command) => graph::episodes(command),
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
