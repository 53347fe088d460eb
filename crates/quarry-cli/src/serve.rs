//! `quarry serve`: the HTTP host.

use std::process::ExitCode;

use anyhow::Context;
use std::sync::Arc;

use quarry_agent::Extractor;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use quarry_graph::GraphWorker;
use quarry_pipeline::{QueueControl, WorkerConfig};
use quarry_server::{ConnectionLimits, ServerConfig, WorkLimits};

use crate::owner::worker_owner;

use crate::agents::pipeline;
use crate::config::Config;
use crate::graph::graph_extractor;
use crate::model::{extractor_config, model_failure, registry};
use crate::retrieval::{embedder_base_url, open_followed_retriever};
use crate::workspace::{configured_database, open_store};

use crate::args::{HostArgs, LogFormat, ServeArgs, ServeLimitArgs};
use crate::failure::Failure;
use crate::open_files::connection_cap;

/// Logs text to stderr, filtered by `QUARRY_LOG` (default `info`).
pub fn init_logging() {
    init_logging_as("info", LogFormat::Text);
}

/// Logs text to stderr, filtered by `QUARRY_LOG` (default `level`).
pub fn init_logging_at(level: &str) {
    init_logging_as(level, LogFormat::Text);
}

/// Logs to stderr in `format`, filtered by `QUARRY_LOG` (default `level`). JSON lines carry
/// the event's fields at the top level beside `timestamp`, `level`, `target` and `message`,
/// and the `request` span (its `request_id`) of whatever a request handler logs.
pub fn init_logging_as(level: &str, format: LogFormat) {
    let filter =
        tracing_subscriber::EnvFilter::try_from_env("QUARRY_LOG").unwrap_or_else(|_| level.into());
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => logs.init(),
        LogFormat::Json => logs
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .init(),
    }
}

/// The webhook delivery worker for field actions, set up from the environment
/// ([`crate::outbound::webhook_config`]).
pub fn start_webhook_worker(
    runtime: &tokio::runtime::Runtime,
    store: Arc<dyn quarry_core::store::Store>,
    lease: Duration,
) -> Result<quarry_webhooks::WebhookWorker, Failure> {
    let config = crate::outbound::webhook_config(worker_owner(), lease)?;
    let _entered = runtime.enter();
    Ok(quarry_webhooks::WebhookWorker::start(store, config))
}

/// The episode queue's background worker, running `extractor` on `runtime`.
pub fn start_graph_worker(
    runtime: &tokio::runtime::Runtime,
    extractor: quarry_graph::GraphExtractor,
) -> quarry_graph::GraphWorkerHandle {
    let _entered = runtime.enter();
    GraphWorker::start(Arc::new(extractor))
}

pub fn run(args: ServeArgs, file: &Config) -> Result<ExitCode, Failure> {
    init_logging_as("info", args.log_format);
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let database = configured_database(args.host.db.as_deref());
    let host = Host::start(&runtime, &args.host, database.as_deref(), file)?;
    let limits = &args.limits;
    let grace = Duration::from_secs(limits.shutdown_grace_secs);
    let config = ServerConfig {
        max_body_bytes: args.max_body_bytes,
        secure_cookies: args.secure_cookies,
        mcp_allowed_hosts: args.mcp_allowed_hosts.clone(),
        connections: connection_limits(limits),
        work: work_limits(limits),
        request_timeout: Duration::from_secs(limits.request_timeout_secs),
        turn_lease: Duration::from_secs(limits.turn_lease_secs.max(1)),
        ..host.config.clone()
    };
    let task_worker = host.task_worker;
    // The task worker stops claiming at the signal, so its tasks in flight share the grace
    // period with the server's requests in flight.
    let signalled = Arc::new(OnceLock::new());
    let shutdown = {
        let (signalled, worker) = (
            signalled.clone(),
            task_worker.as_ref().map(|(_, s)| s.clone()),
        );
        // Listening for signals before the server says it listens.
        let signal = {
            let _entered = runtime.enter();
            quarry_server::shutdown_signal()
        };
        async move {
            signal.await;
            let _ = signalled.set(Instant::now());
            if let Some(worker) = worker {
                worker.stop();
            }
        }
    };
    let served = runtime
        .block_on(quarry_server::serve(args.addr, config, shutdown))
        .with_context(|| format!("serving on {}", args.addr));
    if let Some((handle, _)) = task_worker {
        let left = signalled.get().map_or(Duration::ZERO, |at: &Instant| {
            grace.saturating_sub(at.elapsed())
        });
        // The timer is made inside the runtime (`block_on(async …)`): made outside, it panics
        // with "there is no reactor running".
        let _ = runtime.block_on(async move { tokio::time::timeout(left, handle).await });
    }
    // What is still running is abandoned, not awaited: extractions on blocking threads whose
    // requests are gone, the graph worker's and task worker's model calls (their leases expire
    // and other workers take the units over).
    runtime.shutdown_background();
    served?;
    Ok(ExitCode::SUCCESS)
}

fn connection_limits(limits: &ServeLimitArgs) -> ConnectionLimits {
    ConnectionLimits {
        header_timeout: Duration::from_secs(limits.header_timeout_secs),
        idle_timeout: Duration::from_secs(limits.idle_timeout_secs),
        max_connections: connection_cap(limits.max_connections),
        shutdown_grace: Duration::from_secs(limits.shutdown_grace_secs),
        max_request_line_bytes: limits.max_uri_bytes,
    }
}

fn work_limits(limits: &ServeLimitArgs) -> WorkLimits {
    let defaults = WorkLimits::default();
    WorkLimits {
        max_concurrent: limits.max_extractions.unwrap_or(defaults.max_concurrent),
        budget_bytes: limits.extraction_budget_bytes,
        budget_wait: Duration::from_millis(limits.overload_wait_ms),
    }
}

/// How the in-process task worker ended.
pub type WorkerOutcome = Result<quarry_pipeline::QueueStats, quarry_pipeline::PipelineError>;

/// What `serve` and `mcp` share: the server configuration over the model and, when there is one,
/// the database (its followed search index, the pipeline, and unless `--no-worker` the graph and
/// task workers running on `runtime`).
pub struct Host {
    pub config: ServerConfig,
    /// The in-process task worker and its stop signal, unless `--no-worker` or no database.
    pub task_worker: Option<(tokio::task::JoinHandle<WorkerOutcome>, Arc<QueueControl>)>,
    /// The webhook delivery worker, beside the task worker.
    pub webhook_worker: Option<quarry_webhooks::WebhookWorker>,
}

impl Host {
    pub fn start(
        runtime: &tokio::runtime::Runtime,
        args: &HostArgs,
        database: Option<&str>,
        file: &Config,
    ) -> Result<Host, Failure> {
        // One client per model for the whole process: the schema agent, the pipeline and the
        // graph share it, and with it the `--concurrency` limit.
        let models = registry(&args.model, file);
        let agent = match models.default_model() {
            Some(chosen) => {
                let (client, spec) = models.client(chosen).map_err(model_failure)?;
                Some(Arc::new(Extractor::new(
                    client,
                    spec.model,
                    extractor_config(&args.agent),
                )))
            }
            None => None,
        };
        let mut task_worker = None;
        let mut webhook_worker = None;
        let mut config = ServerConfig {
            agent,
            outbound: crate::outbound::outbound_policy(),
            ..ServerConfig::default()
        };
        if let Some(url) = database {
            let store = open_store(runtime, url)?;
            // One index for the pipeline's tools, the graph's entities and graph search,
            // following what other processes write to the store.
            let retriever = open_followed_retriever(
                runtime,
                store.clone(),
                args.embedder.embedder.as_deref(),
                embedder_base_url(args.embedder.embedder_base_url.as_deref())
                    .or(models.settings().base_url.clone()),
            )?;
            let pipeline = Arc::new(pipeline(
                store.clone(),
                retriever.clone(),
                models.clone(),
                &args.queue,
            )?);
            if !args.no_worker {
                let extractor =
                    graph_extractor(store.clone(), &models, &args.queue, &args.graph, None)?
                        .with_retriever(retriever.clone());
                let worker = start_graph_worker(runtime, extractor);
                config.graph_worker = Some(Arc::new(worker));
                let signal = QueueControl::new();
                let worker_config = WorkerConfig {
                    owner: worker_owner(),
                    concurrency: args.model.concurrency.max(1),
                    ..WorkerConfig::default()
                };
                webhook_worker = Some(start_webhook_worker(
                    runtime,
                    store.clone(),
                    WorkerConfig::default().lease,
                )?);
                let (working, stop) = (pipeline.clone(), signal.clone());
                task_worker = Some((
                    runtime.spawn(async move { working.work(&worker_config, &stop).await }),
                    signal.clone(),
                ));
                config.task_worker = Some(signal);
            }
            config.pipeline = Some(pipeline);
            config.retriever = Some(retriever);
            config.store = Some(store);
        }
        Ok(Host {
            config,
            task_worker,
            webhook_worker,
        })
    }

    /// Stops the task worker: tasks in flight get a few seconds to end; the rest are taken over
    /// by other workers once their leases expire.
    pub fn stop(self, runtime: &tokio::runtime::Runtime) {
        if let Some((handle, signal)) = self.task_worker {
            signal.stop();
            let _ = runtime.block_on(async move {
                tokio::time::timeout(Duration::from_secs(5), handle).await
            });
        }
        if let Some(webhooks) = self.webhook_worker {
            // Deliveries in flight get a few seconds; the rest are retried by other workers.
            let _ = runtime.block_on(async move {
                tokio::time::timeout(Duration::from_secs(5), webhooks.shutdown()).await
            });
        }
    }
}
