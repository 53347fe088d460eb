//! The background worker: drains the durable episode queue. No process assumes it is alone: the
//! worker claims episodes in batches under a lease in its owner's name (the claim is atomic in
//! the database, so several workers, in one process or several, never take the same episode),
//! a heartbeat renews the leases of the episodes it holds every `lease / 3`, and an episode
//! whose lease expired (its worker died or stalled) is taken over by the next claim. Nothing is
//! requeued because a process started. It processes up to `concurrency` episodes at once and
//! records each outcome under its lease ([`GraphExtractor::process_and_finish`]: done, failed,
//! or released for a retry after a backoff); a lease lost meanwhile is logged and counted,
//! never retried. With nothing to do it sleeps until [`GraphWorkerHandle::wake`], `idle_poll`,
//! or the time an episode it released becomes claimable again.

use std::collections::{HashMap, VecDeque};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::FutureExt;
use quarry_core::model::{Episode, EpisodeLease};
use quarry_core::store::Store;
use tokio::sync::{Notify, watch};
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;

use crate::{AttemptEnd, GraphExtractor};

/// Starts workers; see the module docs.
pub struct GraphWorker;

/// Counts since the worker started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WorkerStats {
    /// Episodes finished (done or failed) and recorded.
    pub finished: u64,
    /// Of those, extractions that failed (permanently, or on their last attempt).
    pub failed: u64,
    /// Attempts that failed transiently and put their episode back in the queue for a retry.
    pub released: u64,
    /// Attempts whose lease was taken over before their end was written (nothing written).
    pub lease_lost: u64,
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
    released: AtomicU64,
    lease_lost: AtomicU64,
    /// The leases of the episodes this worker holds (claimed, queued or in flight), by episode
    /// id: what the heartbeat renews.
    held: Mutex<HashMap<String, EpisodeLease>>,
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
            released: AtomicU64::new(0),
            lease_lost: AtomicU64::new(0),
            held: Mutex::new(HashMap::new()),
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
    /// flight and none of the episodes it released for a retry still waiting for their backoff,
    /// after this call began; returns at once if the worker has stopped.
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
            released: self.shared.released.load(Ordering::SeqCst),
            lease_lost: self.shared.lease_lost.load(Ordering::SeqCst),
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

/// Publishes "stopped" and stops the heartbeat when the worker task ends, even by a panic.
struct Stopped(Arc<Shared>, JoinHandle<()>);

impl Drop for Stopped {
    fn drop(&mut self) {
        self.1.abort();
        self.0.idle.send_replace(u64::MAX);
    }
}

impl Shared {
    fn hold(&self, lease: EpisodeLease) {
        let mut held = self
            .held
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        held.insert(lease.episode_id.clone(), lease);
    }

    fn let_go(&self, lease: &EpisodeLease) {
        let mut held = self
            .held
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if held.get(&lease.episode_id) == Some(lease) {
            held.remove(&lease.episode_id);
        }
    }

    fn holds(&self, lease: &EpisodeLease) -> bool {
        let held = self
            .held
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        held.get(&lease.episode_id) == Some(lease)
    }

    fn leases(&self) -> Vec<EpisodeLease> {
        let held = self
            .held
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        held.values().cloned().collect()
    }
}

/// Renews the leases of the episodes the worker holds every `lease / 3`, until aborted. A lease
/// that cannot be renewed was taken over (the worker stalled past its expiry): the attempt's
/// end will be refused, so it is only logged here.
async fn heartbeat(store: Arc<dyn Store>, shared: Arc<Shared>, lease: Duration) {
    let every = (lease / 3).max(Duration::from_millis(10));
    loop {
        tokio::time::sleep(every).await;
        for held in shared.leases() {
            match store.renew_episode_lease(&held, lease).await {
                Ok(true) => {}
                // Ended meanwhile (the worker let go of it), or taken over.
                Ok(false) if shared.holds(&held) => tracing::warn!(
                    episode = %held.episode_id,
                    owner = %held.owner,
                    attempt = held.attempt,
                    "an episode's lease was taken over before its extraction ended"
                ),
                Ok(false) => {}
                Err(error) => tracing::warn!(
                    episode = %held.episode_id,
                    %error,
                    "renewing an episode's lease failed"
                ),
            }
        }
    }
}

async fn run(extractor: Arc<GraphExtractor>, shared: Arc<Shared>) {
    let store = extractor.store().clone();
    let config = extractor.config();
    let lease = config.lease.max(Duration::from_millis(30));
    let beat = tokio::spawn(heartbeat(store.clone(), shared.clone(), lease));
    let _stopped = Stopped(shared.clone(), beat);
    let owner = config.owner.clone();
    let concurrency = config.concurrency.max(1);
    let batch = config.claim_batch.max(1);
    let idle_poll = config.idle_poll;
    let ingest_only = !extractor.has_model();
    let mut queue: VecDeque<Episode> = VecDeque::new();
    let mut running: JoinSet<Option<Duration>> = JoinSet::new();
    // When the episodes this worker released become claimable again: until then the queue is
    // not done with (`wait_idle` waits for them), and the worker looks again at those times.
    let mut retries: Vec<Instant> = Vec::new();
    loop {
        while let Some(joined) = running.try_join_next() {
            note_retry(joined, &mut retries);
        }
        let stopping = shared.stopping.load(Ordering::SeqCst);
        // A batch is claimed when every claimed episode has a slot, so the worker holds at most
        // `concurrency + claim_batch` episodes of the queue and claims once per batch.
        let mut found_nothing = false;
        let mut claim_failed = false;
        let ticket = shared.requested.load(Ordering::SeqCst);
        if !stopping && queue.len() + running.len() <= concurrency {
            let asked_at = Instant::now();
            let claimed = store
                .claim_episodes(&owner, lease, batch, ingest_only)
                .await;
            match claimed {
                Ok(claimed) => {
                    found_nothing = claimed.is_empty();
                    // Released episodes due by now were claimable to this claim (taken here
                    // or by another worker).
                    retries.retain(|due| *due > asked_at);
                    for episode in &claimed {
                        if let Some(held) = episode.lease() {
                            shared.hold(held);
                        }
                    }
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
            if found_nothing && retries.is_empty() {
                shared.idle.send_replace(ticket);
            }
            let wait = retries
                .iter()
                .min()
                .map_or(idle_poll, |due| {
                    due.saturating_duration_since(Instant::now()) + Duration::from_millis(5)
                })
                .min(idle_poll);
            tokio::select! {
                _ = shared.notify.notified() => {}
                _ = tokio::time::sleep(wait) => {}
            }
            continue;
        }
        let full = running.len() >= concurrency;
        if full || found_nothing || claim_failed || stopping {
            // Wait for a slot, or (queue empty) for new work.
            tokio::select! {
                Some(joined) = running.join_next(), if !running.is_empty() => {
                    note_retry(joined, &mut retries);
                }
                _ = shared.notify.notified(), if !full && !stopping => {}
                _ = tokio::time::sleep(idle_poll), if !full && !stopping => {}
            }
        }
    }
}

/// Records when an episode released by a finished task becomes claimable again.
fn note_retry(
    joined: Result<Option<Duration>, tokio::task::JoinError>,
    retries: &mut Vec<Instant>,
) {
    match joined {
        Ok(Some(retry_after)) => retries.push(Instant::now() + retry_after),
        Ok(None) => {}
        Err(error) => tracing::warn!(%error, "a graph extraction task ended abnormally"),
    }
}

/// One attempt at a claimed episode, its end recorded under its lease; returns the backoff when
/// the episode was released for a retry. A panic is recorded as a permanent failure (panics
/// come from parsing and resolving, before the transaction).
async fn process_one(
    extractor: Arc<GraphExtractor>,
    shared: Arc<Shared>,
    episode: Episode,
) -> Option<Duration> {
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
    if let Some(held) = episode.lease() {
        shared.let_go(&held);
    }
    let (episode_id, project) = (&episode.id, &episode.project_id);
    match ended {
        AttemptEnd::Done(_) => {
            shared.finished.fetch_add(1, Ordering::SeqCst);
            None
        }
        AttemptEnd::Failed(outcome) => {
            tracing::warn!(
                episode = %episode_id,
                %project,
                error = outcome.error.as_deref().unwrap_or_default(),
                "graph extraction failed"
            );
            shared.finished.fetch_add(1, Ordering::SeqCst);
            shared.failed.fetch_add(1, Ordering::SeqCst);
            None
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
            shared.released.fetch_add(1, Ordering::SeqCst);
            Some(retry_after)
        }
        AttemptEnd::LeaseLost(reason) => {
            tracing::warn!(
                episode = %episode_id,
                %project,
                %reason,
                "the episode's lease was taken over before its end was written; nothing written"
            );
            shared.lease_lost.fetch_add(1, Ordering::SeqCst);
            None
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
            None
        }
    }
}
