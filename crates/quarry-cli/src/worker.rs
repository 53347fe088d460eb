//! `quarry worker`: works the durable queues (workflow field tasks and conversation episodes)
//! without HTTP. Any number of workers and servers may share one database: claims are leased,
//! so each unit of work runs in one place, and a unit whose worker died is taken over once its
//! lease expires. Stops on Ctrl-C or SIGTERM after the tasks in flight end.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use quarry_pipeline::{QueueControl, WorkerConfig};

use crate::agents::{ModelRegistry, pipeline};
use crate::args::WorkerArgs;
use crate::failure::Failure;
use crate::owner::worker_owner;
use crate::workspace::Workspace;

pub fn run(args: WorkerArgs) -> Result<ExitCode, Failure> {
    crate::serve::init_logging();
    let ws = Workspace::open(&args.store)?;
    let retriever = ws.followed_retriever(&args.embedder)?;
    // One client per model for the process: field tasks and episodes share it and its
    // `--concurrency` limit.
    let models = Arc::new(ModelRegistry::new(&args.model));
    let pipeline = Arc::new(pipeline(
        ws.store.clone(),
        retriever.clone(),
        models.clone(),
        &args.model,
        &args.queue,
    )?);
    let lease = Duration::from_secs(args.lease_secs.max(1));
    let config = WorkerConfig {
        owner: worker_owner(),
        concurrency: args.model.concurrency.max(1),
        lease,
        ..WorkerConfig::default()
    };
    let extractor = crate::graph::graph_extractor(
        ws.store.clone(),
        &models,
        &args.model,
        &args.queue,
        &args.graph,
        Some(lease),
    )?
    .with_retriever(retriever);
    let graph = crate::serve::start_graph_worker(&ws.runtime, extractor);
    let webhooks = crate::serve::start_webhook_worker(&ws.runtime, ws.store.clone(), lease);
    let signal = QueueControl::new();
    tracing::info!(owner = %config.owner, "worker started");
    let stats = ws
        .runtime
        .block_on(async {
            let stop = signal.clone();
            tokio::spawn(async move {
                quarry_server::shutdown_signal().await;
                stop.stop();
            });
            pipeline.work(&config, &signal).await
        })
        .context("working the task queue")?;
    drop(graph);
    drop(webhooks);
    tracing::info!(?stats, "worker stopped");
    Ok(ExitCode::SUCCESS)
}
