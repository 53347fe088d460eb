//! `quarry serve`: the HTTP host.

use std::process::ExitCode;

use anyhow::Context;
use std::sync::Arc;

use quarry_engine::Extractor;
use quarry_server::ServerConfig;

use crate::model::{client_from, extractor_config};

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
    let has_model = args.model.model.is_some() || std::env::var_os("QUARRY_MODEL").is_some();
    let agent = if has_model {
        let (client, spec) = client_from(&args.model)?;
        Some(Arc::new(Extractor::new(
            client,
            spec.model,
            extractor_config(&args.model),
        )))
    } else {
        None
    };
    let config = ServerConfig {
        max_body_bytes: args.max_body_bytes,
        agent,
        ..ServerConfig::default()
    };
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime
        .block_on(quarry_server::serve(args.addr, config))
        .with_context(|| format!("serving on {}", args.addr))?;
    Ok(ExitCode::SUCCESS)
}
