//! `quarry serve`: the HTTP host.

use std::process::ExitCode;

use anyhow::Context;
use std::sync::Arc;

use quarry_engine::Extractor;
use quarry_server::ServerConfig;

use crate::agents::pipeline;
use crate::model::{chosen_model, client_from, extractor_config};
use crate::workspace::{configured_database, open_store};

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
    let agent = if chosen_model(&args.model).is_some() {
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
    let (store, pipeline) = match configured_database(args.db.as_deref()) {
        Some(url) => {
            let store = open_store(&runtime, &url)?;
            let pipeline = Arc::new(pipeline(store.clone(), &args.model));
            (Some(store), Some(pipeline))
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
