//! The one worker loop of Quarry's leased queue (`quarry_core::model::queue`), for every job
//! kind. A [`JobRunner`] says how to claim and run one kind's jobs; [`work`] does the rest, the
//! same way for all of them:
//!
//! - it claims in batches, as many jobs as it has room for (`concurrency` running plus
//!   `prefetch` waiting), in one statement, atomically in the database;
//! - one heartbeat renews every lease it holds each `lease / 3`; a job whose worker died or
//!   stalled is taken over by the next claim once its lease expired, never earlier;
//! - each job ends under its lease (the runner's fenced completion or release), so an attempt
//!   whose lease was taken over writes nothing;
//! - an idle worker sleeps until this process queues work ([`QueueControl::wake`]), another
//!   process does (the store's `work_queued`: `LISTEN/NOTIFY` on PostgreSQL), a job it released
//!   for a retry becomes due, or `poll` passes (what no notification announces: expired leases,
//!   backoffs ended in other processes);
//! - each attempt is settled by the one retry policy (`retry.rs`): the runner reports done,
//!   transient or failed, and the loop applies the attempt limit, the backoff and the failure
//!   record.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use futures_util::stream::FuturesUnordered;
use futures_util::{FutureExt, StreamExt};
use quarry_core::model::{JobKind, Lease};
use quarry_core::store::{QueueStore, StoreError};
use tokio::sync::{Notify, watch};
use tokio::time::Instant;

mod retry;

pub use retry::{
    Attempts, Failure, JobEnd, Outcome, RetryPolicy, Retryable, Settled, backoff, backoff_up_to,
    settle,
};

/// One job kind, as the loop sees it: how its jobs are claimed; how one is attempted and its
/// end written is its [`Retryable`] part.
pub trait JobRunner: Send + Sync {
    type Job: Send;

    /// How an attempt at one of these jobs runs and ends.
    type Retry: Retryable<Job = Self::Job> + ?Sized;

    fn kind(&self) -> JobKind;

    fn retryable(&self) -> &Self::Retry;

    /// The lease a claimed job carries.
    fn lease_of(&self, job: &Self::Job) -> Option<Lease>;

    /// Takes up to `limit` jobs under `owner` for `lease` (the store's claim for the kind).
    fn claim<'a>(
        &'a self,
        owner: &'a str,
        lease: Duration,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<Self::Job>, StoreError>>;

    /// For a worker bound to some work (the runs of one `quarry run`): whether that work is
    /// finished, asked whenever the worker holds nothing. `None` (the default): a background
    /// worker, which runs until stopped and outlives a failed claim.
    fn finished(&self) -> Option<BoxFuture<'_, Result<bool, StoreError>>> {
        None
    }
}

/// How a worker claims.
#[derive(Debug, Clone)]
pub struct QueueConfig {
    /// Who holds the leases: process id, host and start time.
    pub owner: String,
    /// Jobs running at once.
    pub concurrency: usize,
    /// Jobs claimed beyond `concurrency`, waiting for a slot (one claim then serves a batch).
    pub prefetch: usize,
    /// How long a claim lasts without a heartbeat; renewed every third of it.
    pub lease: Duration,
    /// How often an idle worker looks at the queue when nothing wakes it.
    pub poll: Duration,
}

/// What a worker did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct QueueStats {
    pub completed: u64,
    pub failed: u64,
    /// Attempts released for a retry.
    pub retried: u64,
    /// Ends refused because the lease had been taken over.
    pub lease_lost: u64,
    /// Ends that could not be written (the job is taken over when its lease expires).
    pub not_recorded: u64,
}

impl QueueStats {
    /// Jobs ended for good (completed or failed).
    pub fn finished(&self) -> u64 {
        self.completed + self.failed
    }

    fn count(&mut self, end: JobEnd) {
        match end {
            JobEnd::Completed => self.completed += 1,
            JobEnd::Failed => self.failed += 1,
            JobEnd::Released { .. } => self.retried += 1,
            JobEnd::LeaseLost => self.lease_lost += 1,
            JobEnd::NotRecorded => self.not_recorded += 1,
        }
    }
}

/// Stops a worker (after the jobs it holds end), wakes it, and tells when it is idle.
#[derive(Debug)]
pub struct QueueControl {
    stop: AtomicBool,
    wake: Notify,
    /// Incremented by every `wait_idle` call: its ticket.
    requested: AtomicU64,
    /// The highest ticket seen before a claim that found nothing with nothing held and no
    /// release pending; `u64::MAX` once the worker stopped.
    idle: watch::Sender<u64>,
    stats: Mutex<QueueStats>,
}

impl Default for QueueControl {
    fn default() -> Self {
        QueueControl {
            stop: AtomicBool::new(false),
            wake: Notify::new(),
            requested: AtomicU64::new(0),
            idle: watch::channel(0).0,
            stats: Mutex::new(QueueStats::default()),
        }
    }
}

impl QueueControl {
    pub fn new() -> Arc<QueueControl> {
        Arc::new(QueueControl::default())
    }

    /// Work was queued in this process: look at the queue now.
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// Stop claiming; the worker returns once the jobs it holds have ended.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.wake.notify_one();
    }

    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// Counts of every worker run under this control.
    pub fn stats(&self) -> QueueStats {
        *self
            .stats
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Waits until a worker under this control has found the queue empty (of jobs it can take),
    /// with nothing held and none of the jobs it released still waiting for their backoff,
    /// after this call began; returns at once once the worker has stopped.
    pub async fn wait_idle(&self) {
        let ticket = self.requested.fetch_add(1, Ordering::SeqCst) + 1;
        let mut idle = self.idle.subscribe();
        self.wake.notify_one();
        loop {
            if *idle.borrow_and_update() >= ticket {
                return;
            }
            if idle.changed().await.is_err() {
                return;
            }
        }
    }

    /// Marks the worker stopped (`wait_idle` returns), even when it ends by a panic.
    pub fn mark_stopped(&self) {
        self.idle.send_replace(u64::MAX);
    }

    fn count(&self, end: JobEnd) {
        self.stats
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .count(end);
    }
}

/// The leases a worker holds (claimed, waiting or running): what the heartbeat renews.
#[derive(Default)]
struct Held(Mutex<HashMap<String, Lease>>);

impl Held {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Lease>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn hold(&self, lease: Lease) {
        self.map().insert(lease.job_id.clone(), lease);
    }

    fn let_go(&self, lease: &Lease) {
        let mut held = self.map();
        if held.get(&lease.job_id) == Some(lease) {
            held.remove(&lease.job_id);
        }
    }

    fn holds(&self, lease: &Lease) -> bool {
        self.map().get(&lease.job_id) == Some(lease)
    }

    fn leases(&self) -> Vec<Lease> {
        self.map().values().cloned().collect()
    }
}

/// Works `runner`'s queue until `control` says stop (a background worker) or, for a bounded
/// runner, until its work is finished; returns what this call did. A bounded worker returns a
/// failed claim's error; a background one logs it and tries again later.
pub async fn work<R: JobRunner>(
    runner: &R,
    config: &QueueConfig,
    control: &QueueControl,
) -> Result<QueueStats, StoreError> {
    let held = Held::default();
    let lease = config.lease.max(Duration::from_millis(30));
    let worked = work_held(runner, config, control, &held);
    let beat = heartbeat(runner.retryable().store(), runner.kind(), &held, lease);
    tokio::select! {
        worked = worked => worked,
        () = beat => unreachable!("the heartbeat never ends"),
    }
}

/// Renews the leases in `held` every `lease / 3`. A lease that cannot be renewed was taken
/// over (the worker stalled past its expiry): the attempt's end will be refused, so it is only
/// logged here.
async fn heartbeat(store: &dyn QueueStore, kind: JobKind, held: &Held, lease: Duration) {
    let every = (lease / 3).max(Duration::from_millis(10));
    loop {
        tokio::time::sleep(every).await;
        for lease_held in held.leases() {
            match store.renew_lease(&lease_held, lease).await {
                Ok(true) => {}
                Ok(false) if held.holds(&lease_held) => tracing::warn!(
                    kind = kind.as_str(),
                    job = %lease_held.job_id,
                    attempt = lease_held.attempt,
                    "a lease was taken over before its attempt ended"
                ),
                // Ended meanwhile.
                Ok(false) => {}
                Err(error) => tracing::warn!(
                    kind = kind.as_str(),
                    job = %lease_held.job_id,
                    %error,
                    "renewing a lease failed"
                ),
            }
        }
    }
}

async fn work_held<R: JobRunner>(
    runner: &R,
    config: &QueueConfig,
    control: &QueueControl,
    held: &Held,
) -> Result<QueueStats, StoreError> {
    let kind = runner.kind();
    let store = runner.retryable().store();
    let concurrency = config.concurrency.max(1);
    let capacity = concurrency + config.prefetch;
    let bounded = runner.finished().is_some();
    let mut stats = QueueStats::default();
    let mut waiting: VecDeque<R::Job> = VecDeque::new();
    let mut running = FuturesUnordered::new();
    // When the jobs this worker released become claimable again: until then the queue is not
    // done with (`wait_idle` waits for them), and the worker looks again at those times.
    let mut retries: Vec<Instant> = Vec::new();
    let mut note = |end: JobEnd, retries: &mut Vec<Instant>| {
        stats.count(end);
        control.count(end);
        if let JobEnd::Released { retry_after } = end {
            retries.push(Instant::now() + retry_after);
        }
    };
    loop {
        while let Some(Some(end)) = running.next().now_or_never() {
            note(end, &mut retries);
        }
        let stopping = control.stopped();
        if stopping && waiting.is_empty() && running.is_empty() {
            return Ok(stats);
        }
        let ticket = control.requested.load(Ordering::SeqCst);
        // Read before the claim: work queued elsewhere after it wakes the wait below.
        let seen = match store.work_signal(kind).await {
            Ok(seen) => Some(seen),
            Err(error) => {
                tracing::warn!(kind = kind.as_str(), %error, "listening for queued work failed");
                None
            }
        };
        let mut found_nothing = false;
        let mut claim_failed = false;
        let mut room_left = false;
        let holding = waiting.len() + running.len();
        if !stopping && holding < capacity {
            let asked_at = Instant::now();
            let limit = capacity - holding;
            // The jobs running go on while the claim waits: one of them may hold the store's
            // write queue (SQLite), which the claim needs too.
            let claim = runner.claim(&config.owner, config.lease, limit);
            tokio::pin!(claim);
            let claimed = loop {
                tokio::select! {
                    claimed = &mut claim => break claimed,
                    Some(end) = running.next(), if !running.is_empty() => note(end, &mut retries),
                }
            };
            match claimed {
                Ok(jobs) => {
                    found_nothing = jobs.is_empty();
                    // A full batch: more may be waiting.
                    room_left = jobs.len() == limit;
                    // Released jobs due by now were claimable to this claim (taken here or by
                    // another worker).
                    retries.retain(|due| *due > asked_at);
                    for job in &jobs {
                        if let Some(lease) = runner.lease_of(job) {
                            held.hold(lease);
                        }
                    }
                    waiting.extend(jobs);
                }
                Err(error) if bounded => return Err(error),
                Err(error) => {
                    tracing::warn!(kind = kind.as_str(), %error, "claiming failed; retrying");
                    claim_failed = true;
                }
            }
        }
        while running.len() < concurrency {
            let Some(job) = waiting.pop_front() else {
                break;
            };
            running.push(run_one(runner, held, job));
        }
        if waiting.is_empty() && running.is_empty() {
            if stopping {
                return Ok(stats);
            }
            if let Some(finished) = runner.finished()
                && finished.await?
            {
                return Ok(stats);
            }
            if found_nothing && retries.is_empty() {
                control.idle.send_replace(ticket);
            }
        } else if room_left && !claim_failed && waiting.len() + running.len() < capacity {
            continue;
        }
        let now = Instant::now();
        let wait = retries
            .iter()
            .min()
            .map_or(config.poll, |due| {
                due.saturating_duration_since(now) + Duration::from_millis(5)
            })
            .min(config.poll);
        let queued_elsewhere = async {
            match seen {
                Some(seen) if !stopping => {
                    if let Err(error) = store.work_queued(kind, seen).await {
                        tracing::warn!(kind = kind.as_str(), %error, "waiting for work failed");
                        std::future::pending::<()>().await;
                    }
                }
                _ => std::future::pending().await,
            }
        };
        tokio::select! {
            Some(end) = running.next(), if !running.is_empty() => note(end, &mut retries),
            () = control.wake.notified(), if !stopping => {}
            () = queued_elsewhere => {}
            () = tokio::time::sleep(wait) => {}
        }
    }
}

/// One job: settle an attempt under its lease (the retry policy), then let go of the lease.
async fn run_one<R: JobRunner>(runner: &R, held: &Held, job: R::Job) -> JobEnd {
    let kind = runner.kind().as_str();
    let Some(lease) = runner.lease_of(&job) else {
        tracing::warn!(kind, "a job without a lease was not run");
        return JobEnd::NotRecorded;
    };
    let settled = settle(runner.retryable(), &job, &lease).await;
    held.let_go(&lease);
    let (job, attempt) = (&lease.job_id, lease.attempt);
    match &settled {
        Settled::Ended { .. } => {}
        Settled::Failed { reason } => {
            tracing::warn!(kind, %job, attempt, %reason, "a job failed");
        }
        Settled::Released {
            reason,
            retry_after,
        } => tracing::info!(
            kind,
            %job,
            attempt,
            %reason,
            retry_in_ms = u64::try_from(retry_after.as_millis()).unwrap_or(u64::MAX),
            "a job failed transiently; it will be retried"
        ),
        Settled::LeaseLost(message) => tracing::warn!(
            kind,
            %job,
            %message,
            "completion refused: the lease was taken over; nothing written"
        ),
        Settled::NotRecorded { reason, cause } => tracing::warn!(
            kind,
            %job,
            %reason,
            %cause,
            "could not record a job's end; it is taken over once its lease expires"
        ),
    }
    settled.end()
}
