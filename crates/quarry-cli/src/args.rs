//! Command-line arguments.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Quarry turns unstructured text into structured, validated, grounded data.
#[derive(Debug, Parser)]
#[command(name = "quarry", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Extract emails, URLs, dates, phones, IPs, names or entities from text, with no model.
    Extract(ExtractArgs),
    /// Serve the extract skill over HTTP (POST /skill/extract, GET /healthz).
    Serve(ServeArgs),
    /// Measure detector throughput (MB/s) and peak memory on a generated corpus.
    Bench(BenchArgs),
}

#[derive(Debug, Args)]
pub struct ExtractArgs {
    /// What to extract: email, url, date, entity, name, phone or ip.
    #[arg(long)]
    pub target: Option<String>,
    /// The text to extract from.
    #[arg(long, conflicts_with_all = ["file", "jsonl"])]
    pub text: Option<String>,
    /// Read the text from this file (UTF-8).
    #[arg(long, conflicts_with = "jsonl")]
    pub file: Option<PathBuf>,
    /// Batch mode: read one JSON object per line on stdin ({"text", "now"?, "target"?, "region"?})
    /// and write one result per line on stdout, in order.
    #[arg(long)]
    pub jsonl: bool,
    /// Reference time for relative dates, RFC 3339 (default: now).
    #[arg(long)]
    pub now: Option<String>,
    /// Default region for phone numbers without a country code (ISO 3166 alpha-2).
    #[arg(long, default_value = "US")]
    pub region: String,
    /// Add every match with code-point offsets, normalised value and type.
    #[arg(long)]
    pub detail: bool,
    /// Refuse texts larger than this many bytes.
    #[arg(long, default_value_t = quarry_detect::skill::DEFAULT_MAX_INPUT_BYTES)]
    pub max_bytes: usize,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on; port 0 picks a free port (printed on stderr).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,
    /// Largest request body accepted, in bytes.
    #[arg(long, default_value_t = quarry_server::DEFAULT_BODY_LIMIT)]
    pub max_body_bytes: usize,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Size of the generated corpus in MiB.
    #[arg(long, default_value_t = 8)]
    pub size_mib: usize,
    /// Passes over the corpus per target (the best pass is reported).
    #[arg(long, default_value_t = 3)]
    pub passes: usize,
    /// Print the figures as JSON.
    #[arg(long)]
    pub json: bool,
}
