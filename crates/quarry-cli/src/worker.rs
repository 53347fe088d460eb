//! `quarry worker`: works the durable queues (workflow field tasks and conversation episodes)
//! without HTTP. Any number of workers and servers may share one database: claims are leased,
//! so each unit of work runs in one place, and a unit whose worker died is taken over once its
//! lease expires. Stops on Ctrl-C or SIGTERM once the tasks in flight end, or at the end of the
//! grace period (`--shutdown-grace-secs`), abandoning the rest to their leases.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use quarry_pipeline::{QueueControl, WorkerConfig};

use crate::agents::pipeline;
use crate::args::WorkerArgs;
use crate::failure::Failure;
use crate::owner::worker_owner;
use crate::workspace::Workspace;

pub fn run(args: WorkerArgs, file: &crate::config::Config) -> Result<ExitCode, Failure> {
    crate::serve::init_logging();
    let ws = Workspace::open(&args.store)?;
    let retriever = ws.followed_retriever(&args.embedder)?;
    // One client per model for the process: field tasks and episodes share it and its
    // `--concurrency` limit.
    let models = crate::model::registry(&args.model, file);
    let pipeline = Arc::new(pipeline(
        ws.store.clone(),
        retriever.clone(),
        models.clone(),
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
        &args.queue,
        &args.graph,
        Some(lease),
    )?
    .with_retriever(retriever);
    let graph = crate::serve::start_graph_worker(&ws.runtime, extractor);
    let webhooks = crate::serve::start_webhook_worker(&ws.runtime, ws.store.clone(), lease)?;
    let signal = QueueControl::new();
    let grace = Duration::from_secs(args.shutdown_grace_secs);
    // Listening for signals from here on: "worker started" means a signal is seen.
    let signalled_by = {
        let _entered = ws.runtime.enter();
        quarry_server::shutdown_signal()
    };
    tracing::info!(owner = %config.owner, "worker started");
    let worked = ws.runtime.block_on(async {
        let signalled = Arc::new(tokio::sync::Notify::new());
        let (stop, told) = (signal.clone(), signalled.clone());
        tokio::spawn(async move {
            signalled_by.await;
            stop.stop();
            told.notify_one();
        });
        let work = pipeline.work(&config, &signal);
        tokio::pin!(work);
        tokio::select! {
            worked = &mut work => Some(worked),
            () = async {
                signalled.notified().await;
                tokio::time::sleep(grace).await;
            } => None,
        }
    });
    drop(graph);
    // Deliveries in flight get a second more; the rest are retried by another worker.
    let _ = ws.runtime.block_on(async move {
        tokio::time::timeout(Duration::from_secs(1), webhooks.shutdown()).await
    });
    // Model calls still decoding on blocking threads are abandoned, not awaited.
    let Workspace { runtime, .. } = ws;
    runtime.shutdown_background();
    match worked {
        Some(stats) => {
            let stats = stats.context("working the task queue")?;
            tracing::info!(?stats, "worker stopped");
        }
        None => tracing::warn!(
            ?grace,
            "tasks still in flight after the shutdown grace period; abandoning them to their \
             leases"
        ),
    }
    Ok(ExitCode::SUCCESS)
}
