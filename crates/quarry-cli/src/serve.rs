//! `quarry serve`: the HTTP host.

use std::process::ExitCode;

use anyhow::Context;
use std::sync::Arc;

use quarry_agent::Extractor;
use quarry_graph::GraphWorker;
use quarry_server::ServerConfig;

use crate::agents::pipeline;
use crate::graph::graph_extractor;
use crate::model::{chosen_model, client_from, extractor_config};
use crate::retrieval::open_retriever;
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
    let mut config = ServerConfig {
        max_body_bytes: args.max_body_bytes,
        agent,
        ..ServerConfig::default()
    };
    if let Some(url) = configured_database(args.db.as_deref()) {
        let store = open_store(&runtime, &url)?;
        // One index for the pipeline's tools, the graph's entities and graph search.
        let retriever = open_retriever(
            &runtime,
            store.as_ref(),
            true,
            args.embedder.as_deref(),
            args.model.base_url.clone(),
        )?;
        let extractor = graph_extractor(store.clone(), &args.model, &args.graph)?
            .with_retriever(retriever.clone());
        let worker = {
            let _entered = runtime.enter();
            GraphWorker::start(Arc::new(extractor))
        };
        config.pipeline = Some(Arc::new(pipeline(
            store.clone(),
            retriever.clone(),
            &args.model,
        )));
        config.retriever = Some(retriever);
        config.graph_worker = Some(Arc::new(worker));
        config.store = Some(store);
    }
    runtime
        .block_on(quarry_server::serve(args.addr, config))
        .with_context(|| format!("serving on {}", args.addr))?;
    Ok(ExitCode::SUCCESS)
}
