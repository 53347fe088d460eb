//! The background worker: episodes as a job kind of the leased queue. The loop is
//! `quarry_queue::work` (claims in batches of `claim_batch` beyond `concurrency`, one heartbeat
//! renewing every held lease each `lease / 3`, wake-ups from this process and — PostgreSQL —
//! others, the retry backoffs); this file says how an episode is claimed (a worker without a
//! model takes only pre-structured ones) and processed: each on its own tokio task, so
//! extractions of several episodes use several cores, its end recorded under its lease
//! ([`GraphExtractor::process_and_finish`]: done, failed, or released for a retry); a lease lost
//! meanwhile is logged and counted, never retried.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use quarry_core::model::{Episode, JobKind, Lease};
use quarry_core::store::{QueueStore, StoreError};
use quarry_queue::{JobEnd, JobRunner, QueueConfig, QueueControl, QueueStats};
use tokio::task::JoinHandle;

use crate::{AttemptEnd, GraphExtractor};

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

    fn kind(&self) -> JobKind {
        JobKind::Episode
    }

    fn store(&self) -> &dyn QueueStore {
        self.extractor.store().as_ref()
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

    fn run(&self, episode: Episode) -> BoxFuture<'_, JobEnd> {
        let extractor = self.extractor.clone();
        Box::pin(async move {
            match tokio::spawn(process_one(extractor, episode)).await {
                Ok(end) => end,
                Err(error) => {
                    tracing::warn!(%error, "a graph extraction task ended abnormally");
                    JobEnd::NotRecorded
                }
            }
        })
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

/// One attempt at a claimed episode, its end recorded under its lease. A panic is recorded as a
/// permanent failure (panics come from parsing and resolving, before the transaction).
async fn process_one(extractor: Arc<GraphExtractor>, episode: Episode) -> JobEnd {
    let ended = match AssertUnwindSafe(extractor.process_and_finish(&episode))
        .catch_unwind()
        .await
    {
        Ok(ended) => ended,
        Err(_) => match episode.lease() {
            Some(held) => {
                let reason = format!(
                    "graph extraction panicked (attempt {}; not retried)",
                    episode.attempts
                );
                extractor.end_failed(&episode, &held, reason).await
            }
            None => AttemptEnd::LeaseLost("the episode was not claimed".to_owned()),
        },
    };
    let (episode_id, project) = (&episode.id, &episode.project_id);
    match ended {
        AttemptEnd::Done(_) => JobEnd::Completed,
        AttemptEnd::Failed(outcome) => {
            tracing::warn!(
                episode = %episode_id,
                %project,
                error = outcome.error.as_deref().unwrap_or_default(),
                "graph extraction failed"
            );
            JobEnd::Failed
        }
        AttemptEnd::Released { error, retry_after } => {
            tracing::info!(
                episode = %episode_id,
                %project,
                attempt = episode.attempts,
                %error,
                retry_in_ms = u64::try_from(retry_after.as_millis()).unwrap_or(u64::MAX),
                "graph extraction failed transiently; it will be retried"
            );
            JobEnd::Released { retry_after }
        }
        AttemptEnd::LeaseLost(reason) => {
            tracing::warn!(
                episode = %episode_id,
                %project,
                %reason,
                "the episode's lease was taken over before its end was written; nothing written"
            );
            JobEnd::LeaseLost
        }
        AttemptEnd::NotRecorded { error, cause } => {
            tracing::warn!(
                episode = %episode_id,
                %project,
                %error,
                %cause,
                "recording a graph extraction outcome failed; the episode is taken over once \
                 its lease expires"
            );
            JobEnd::NotRecorded
        }
    }
}
