//! `quarry serve`: the HTTP host.

use std::process::ExitCode;

use anyhow::Context;
use std::sync::Arc;

use quarry_engine::Extractor;
use quarry_engine::pipeline::{Pipeline, PipelineConfig};
use quarry_server::ServerConfig;

use crate::agents::{default_agent, registry};
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
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let db = args.db.clone().or_else(|| {
        std::env::var("QUARRY_DB")
            .ok()
            .filter(|d| !d.trim().is_empty())
    });
    let (store, pipeline) = match db {
        Some(url) => {
            let store = runtime
                .block_on(quarry_store::open(&url))
                .map_err(|error| {
                    Failure::coded("StorageError", format!("opening {url}: {error}"))
                })?;
            let interrupted = runtime
                .block_on(store.fail_interrupted_runs())
                .map_err(|error| Failure::coded("StorageError", error))?;
            if interrupted > 0 {
                eprintln!("marked {interrupted} interrupted run(s) as failed");
            }
            let config = PipelineConfig {
                default_agent: default_agent(&args.model),
                max_concurrency: args.model.concurrency.max(1),
                ..PipelineConfig::default()
            };
            let pipeline = Pipeline::new(store.clone(), registry(&args.model), config);
            (Some(store), Some(Arc::new(pipeline)))
        }
        None => (None, None),
    };
    let config = ServerConfig {
        max_body_bytes: args.max_body_bytes,
        agent,
        store,
        pipeline,
        ..ServerConfig::default()
    };
    runtime
        .block_on(quarry_server::serve(args.addr, config))
        .with_context(|| format!("serving on {}", args.addr))?;
    Ok(ExitCode::SUCCESS)
}
