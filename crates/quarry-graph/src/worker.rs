//! The background worker: drains the durable episode queue. On start it requeues episodes a
//! crash left `running`, then claims pending episodes in batches (the claim is atomic in the
//! database, so several workers, in one process or several, never take the same episode),
//! processes up to `concurrency` at once and records each outcome. With nothing to do it sleeps
//! until [`GraphWorkerHandle::wake`] or `idle_poll`.

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use futures_util::FutureExt;
use quarry_core::model::{Episode, EpisodeOutcome};
use tokio::sync::{Notify, watch};
use tokio::task::{JoinHandle, JoinSet};

use crate::GraphExtractor;

/// Starts workers; see the module docs.
pub struct GraphWorker;

/// Counts since the worker started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WorkerStats {
    /// Episodes finished (done or failed) and recorded.
    pub finished: u64,
    /// Of those, extractions that failed (model unreachable, unreadable reply, store error).
    pub failed: u64,
    /// Episodes found `running` at start and put back in the queue.
    pub requeued: u64,
}

struct Shared {
    notify: Notify,
    stopping: AtomicBool,
    /// Incremented by every `wait_idle` call: its ticket.
    requested: AtomicU64,
    /// The highest ticket seen before a claim that found the queue empty with nothing in
    /// flight; `u64::MAX` once the worker has stopped.
    idle: watch::Sender<u64>,
    finished: AtomicU64,
    failed: AtomicU64,
    requeued: AtomicU64,
}

/// Controls a running worker. Dropping it asks the worker to stop after its in-flight episodes
/// (use [`shutdown`](Self::shutdown) to wait for that).
pub struct GraphWorkerHandle {
    shared: Arc<Shared>,
    task: Option<JoinHandle<()>>,
}

impl GraphWorker {
    /// Spawns the worker on the current tokio runtime.
    pub fn start(extractor: Arc<GraphExtractor>) -> GraphWorkerHandle {
        let (idle, _) = watch::channel(0);
        let shared = Arc::new(Shared {
            notify: Notify::new(),
            stopping: AtomicBool::new(false),
            requested: AtomicU64::new(0),
            idle,
            finished: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            requeued: AtomicU64::new(0),
        });
        let task = tokio::spawn(run(extractor, shared.clone()));
        GraphWorkerHandle {
            shared,
            task: Some(task),
        }
    }
}

impl GraphWorkerHandle {
    /// Something was queued: look at the queue now instead of at the next idle poll.
    pub fn wake(&self) {
        self.shared.notify.notify_one();
    }

    /// Waits until the worker has found the queue empty (of episodes it can take) with nothing in
    /// flight, after this call began; returns at once if the worker has stopped.
    pub async fn wait_idle(&self) {
        let ticket = self.shared.requested.fetch_add(1, Ordering::SeqCst) + 1;
        let mut idle = self.shared.idle.subscribe();
        self.shared.notify.notify_one();
        loop {
            if *idle.borrow_and_update() >= ticket {
                return;
            }
            if idle.changed().await.is_err() {
                return;
            }
        }
    }

    pub fn stats(&self) -> WorkerStats {
        WorkerStats {
            finished: self.shared.finished.load(Ordering::SeqCst),
            failed: self.shared.failed.load(Ordering::SeqCst),
            requeued: self.shared.requeued.load(Ordering::SeqCst),
        }
    }

    /// Stops claiming, finishes the episodes already claimed, and returns when the worker ended.
    pub async fn shutdown(mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        self.shared.notify.notify_one();
        if let Some(task) = self.task.take()
            && let Err(error) = task.await
        {
            tracing::warn!(%error, "the graph worker ended abnormally");
        }
    }
}

impl Drop for GraphWorkerHandle {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        self.shared.notify.notify_one();
    }
}

/// Publishes "stopped" when the worker task ends, even by a panic.
struct Stopped(Arc<Shared>);

impl Drop for Stopped {
    fn drop(&mut self) {
        self.0.idle.send_replace(u64::MAX);
    }
}

async fn run(extractor: Arc<GraphExtractor>, shared: Arc<Shared>) {
    let _stopped = Stopped(shared.clone());
    let store = extractor.store().clone();
    match store.requeue_interrupted_episodes().await {
        Ok(0) => {}
        Ok(n) => {
            shared.requeued.store(n, Ordering::SeqCst);
            tracing::info!(episodes = n, "requeued episodes interrupted by a restart");
        }
        Err(error) => tracing::warn!(%error, "requeueing interrupted episodes failed"),
    }
    let config = extractor.config();
    let concurrency = config.concurrency.max(1);
    let batch = config.claim_batch.max(1);
    let idle_poll = config.idle_poll;
    let ingest_only = !extractor.has_model();
    let mut queue: VecDeque<Episode> = VecDeque::new();
    let mut running: JoinSet<()> = JoinSet::new();
    loop {
        while let Some(joined) = running.try_join_next() {
            log_join(joined);
        }
        let stopping = shared.stopping.load(Ordering::SeqCst);
        // A batch is claimed when every claimed episode has a slot, so the worker holds at most
        // `concurrency + claim_batch` episodes of the queue and claims once per batch.
        let mut found_nothing = false;
        let mut claim_failed = false;
        let ticket = shared.requested.load(Ordering::SeqCst);
        if !stopping && queue.len() + running.len() <= concurrency {
            let claimed = store.claim_episodes(batch, ingest_only).await;
            match claimed {
                Ok(claimed) => {
                    found_nothing = claimed.is_empty();
                    queue.extend(claimed);
                }
                Err(error) => {
                    tracing::warn!(%error, "claiming episodes failed");
                    claim_failed = true;
                }
            }
        }
        while running.len() < concurrency {
            let Some(episode) = queue.pop_front() else {
                break;
            };
            running.spawn(process_one(extractor.clone(), shared.clone(), episode));
        }
        if stopping && queue.is_empty() && running.is_empty() {
            break;
        }
        if queue.is_empty() && running.is_empty() {
            if found_nothing {
                shared.idle.send_replace(ticket);
            }
            tokio::select! {
                _ = shared.notify.notified() => {}
                _ = tokio::time::sleep(idle_poll) => {}
            }
            continue;
        }
        let full = running.len() >= concurrency;
        if full || found_nothing || claim_failed || stopping {
            // Wait for a slot, or (queue empty) for new work.
            tokio::select! {
                Some(joined) = running.join_next(), if !running.is_empty() => log_join(joined),
                _ = shared.notify.notified(), if !full && !stopping => {}
                _ = tokio::time::sleep(idle_poll), if !full && !stopping => {}
            }
        }
    }
}

fn log_join(joined: Result<(), tokio::task::JoinError>) {
    if let Err(error) = joined {
        tracing::warn!(%error, "a graph extraction task ended abnormally");
    }
}

/// Processes one episode and records its outcome: a success in the graph's own transaction, a
/// failure with `finish_episode`. A panic is recorded as a failure (panics come from parsing and
/// resolving, before the transaction; one after it would turn `done` into `failed`).
async fn process_one(extractor: Arc<GraphExtractor>, shared: Arc<Shared>, episode: Episode) {
    let (outcome, finished) = match AssertUnwindSafe(extractor.process_and_finish(&episode))
        .catch_unwind()
        .await
    {
        Ok(done) => done,
        Err(_) => {
            let outcome = EpisodeOutcome {
                error: Some("graph extraction panicked".to_owned()),
                ..EpisodeOutcome::default()
            };
            let finished = extractor.finish(&episode, &outcome).await;
            (outcome, finished)
        }
    };
    if let Some(error) = &outcome.error {
        tracing::warn!(
            episode = %episode.id,
            project = %episode.project_id,
            %error,
            "graph extraction failed"
        );
    }
    match finished {
        Ok(_) => {
            shared.finished.fetch_add(1, Ordering::SeqCst);
            if outcome.error.is_some() {
                shared.failed.fetch_add(1, Ordering::SeqCst);
            }
        }
        Err(error) => tracing::warn!(
            episode = %episode.id,
            project = %episode.project_id,
            %error,
            "recording a graph extraction outcome failed"
        ),
    }
}
