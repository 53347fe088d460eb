//! `quarry serve`: the HTTP host.

use std::process::ExitCode;

use anyhow::Context;
use quarry_server::ServerConfig;

use crate::args::ServeArgs;
use crate::failure::Failure;

pub fn run(args: ServeArgs) -> Result<ExitCode, Failure> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("QUARRY_LOG")
                .unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let config = ServerConfig {
        max_body_bytes: args.max_body_bytes,
        ..ServerConfig::default()
    };
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime
        .block_on(quarry_server::serve(args.addr, config))
        .with_context(|| format!("serving on {}", args.addr))?;
    Ok(ExitCode::SUCCESS)
}
