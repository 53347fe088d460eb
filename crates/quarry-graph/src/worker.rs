//! The background worker: episodes as a job kind of the leased queue. The loop is
//! `quarry_queue::work` (claims in batches of `claim_batch` beyond `concurrency`, one heartbeat
//! renewing every held lease each `lease / 3`, wake-ups from this process and — PostgreSQL —
//! others, the retry backoffs); this file says how an episode is claimed (a worker without a
//! model takes only pre-structured ones) and processed: each on its own tokio task, so
//! extractions of several episodes use several cores, its end settled by the queue's one retry
//! policy (done, failed, or released for a retry; see [`GraphExtractor::process_and_finish`]); a
//! lease lost meanwhile is logged and counted, never retried.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use quarry_core::model::EpisodeOutcome;
use quarry_core::model::{Episode, JobKind, Lease};
use quarry_core::store::{QueueStore, StoreError};
use quarry_queue::{
    Attempts, Failure, JobRunner, Outcome, QueueConfig, QueueControl, QueueStats, RetryPolicy,
    Retryable,
};
use tokio::task::JoinHandle;

use crate::GraphExtractor;

/// Counts since the worker started.
pub type WorkerStats = QueueStats;

/// Starts workers; see the module docs.
pub struct GraphWorker;

/// Controls a running worker. Dropping it asks the worker to stop after its in-flight episodes
/// (use [`shutdown`](Self::shutdown) to wait for that).
pub struct GraphWorkerHandle {
    control: Arc<QueueControl>,
    task: Option<JoinHandle<()>>,
}

/// Episodes as a job kind of the queue.
struct Episodes {
    extractor: Arc<GraphExtractor>,
    /// Without a model only episodes carrying a pre-structured `ingest` can be done.
    ingest_only: bool,
}

impl JobRunner for Episodes {
    type Job = Episode;
    type Retry = Self;

    fn kind(&self) -> JobKind {
        JobKind::Episode
    }

    fn retryable(&self) -> &Self {
        self
    }

    fn lease_of(&self, episode: &Episode) -> Option<Lease> {
        episode.lease()
    }

    fn claim<'a>(
        &'a self,
        owner: &'a str,
        lease: Duration,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<Episode>, StoreError>> {
        self.extractor
            .store()
            .claim_episodes(owner, lease, limit, self.ingest_only)
    }
}

/// The extractor's attempts, each extraction on its own tokio task.
impl Retryable for Episodes {
    type Job = Episode;
    type Done = EpisodeOutcome;

    fn store(&self) -> &dyn QueueStore {
        self.extractor.store().as_ref()
    }

    fn attempts<'a>(&self, episode: &'a Episode) -> Attempts<'a> {
        self.extractor.attempts(episode)
    }

    fn project<'a>(&self, episode: &'a Episode) -> &'a str {
        &episode.project_id
    }

    fn retry_policy(&self) -> RetryPolicy {
        self.extractor.retry_policy()
    }

    fn attempt<'a>(
        &'a self,
        episode: &'a Episode,
        held: &'a Lease,
    ) -> BoxFuture<'a, Outcome<EpisodeOutcome>> {
        let (extractor, episode, held) = (self.extractor.clone(), episode.clone(), held.clone());
        Box::pin(async move {
            let attempt = tokio::spawn(async move { extractor.attempt(&episode, &held).await });
            attempt.await.unwrap_or_else(|error| {
                Outcome::Failed(Failure::new(format!(
                    "the graph extraction task ended abnormally: {error}"
                )))
            })
        })
    }

    fn record_failure<'a>(
        &'a self,
        episode: &'a Episode,
        held: &'a Lease,
        failure: &'a Failure,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.extractor.record_failure(episode, held, failure)
    }
}

impl GraphWorker {
    /// Spawns the worker on the current tokio runtime.
    pub fn start(extractor: Arc<GraphExtractor>) -> GraphWorkerHandle {
        let control = QueueControl::new();
        let config = extractor.config();
        let queue = QueueConfig {
            owner: config.owner.clone(),
            concurrency: config.concurrency,
            prefetch: config.claim_batch.max(1),
            lease: config.lease,
            poll: config.idle_poll,
        };
        let episodes = Episodes {
            ingest_only: !extractor.has_model(),
            extractor,
        };
        let running = control.clone();
        let task = tokio::spawn(async move {
            let _stopped = Stopped(running.clone());
            if let Err(error) = quarry_queue::work(&episodes, &queue, &running).await {
                tracing::warn!(%error, "the graph worker stopped");
            }
        });
        GraphWorkerHandle {
            control,
            task: Some(task),
        }
    }
}

impl GraphWorkerHandle {
    /// Something was queued: look at the queue now instead of at the next idle poll.
    pub fn wake(&self) {
        self.control.wake();
    }

    /// Waits until the worker has found the queue empty (of episodes it can take) with nothing in
    /// flight and none of the episodes it released for a retry still waiting for their backoff,
    /// after this call began; returns at once if the worker has stopped.
    pub async fn wait_idle(&self) {
        self.control.wait_idle().await;
    }

    pub fn stats(&self) -> WorkerStats {
        self.control.stats()
    }

    /// Stops claiming, finishes the episodes already claimed, and returns when the worker ended.
    pub async fn shutdown(mut self) {
        self.control.stop();
        if let Some(task) = self.task.take()
            && let Err(error) = task.await
        {
            tracing::warn!(%error, "the graph worker ended abnormally");
        }
    }
}

impl Drop for GraphWorkerHandle {
    fn drop(&mut self) {
        self.control.stop();
    }
}

/// Publishes "stopped" when the worker task ends, even by a panic.
struct Stopped(Arc<QueueControl>);

impl Drop for Stopped {
    fn drop(&mut self) {
        self.0.mark_stopped();
    }
}
