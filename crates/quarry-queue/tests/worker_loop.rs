//! The worker loop against a fake queue: an in-memory `QueueStore` (the four methods the loop
//! uses) and a runner over a list of jobs. What every job kind relies on: every job runs once,
//! claims come in batches no larger than the room a worker has, a released job comes back after
//! its backoff (and `wait_idle` waits for it), a running job's lease is renewed, and work queued
//! elsewhere wakes an idle worker without waiting for its poll; and the one retry policy:
//! transient failures are retried with backoff until the attempts run out, then recorded as the
//! job's failure, as a permanent failure is at once and a claim past the limit is untried.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use quarry_core::model::{JobKind, Lease, Release};
use quarry_core::store::{QueueStore, StoreError, StoreFuture};
use quarry_queue::{
    Attempts, Failure, JobRunner, Outcome, QueueConfig, QueueControl, RetryPolicy, Retryable, work,
};
use tokio::sync::Notify;

/// How a fake job behaves when run.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Script {
    Complete,
    /// Fails transiently once, then completes.
    TransientOnce,
    /// Fails transiently on every attempt.
    TransientAlways,
    /// Fails for good.
    Permanent,
    /// Runs until the test lets it go.
    Hold,
}

#[derive(Default)]
struct FakeQueue {
    /// Waiting jobs, by id, with the time they become claimable.
    waiting: Mutex<BTreeMap<String, tokio::time::Instant>>,
    attempts: Mutex<HashMap<String, i64>>,
    scripts: Mutex<HashMap<String, Script>>,
    ran: Mutex<Vec<String>>,
    claims: Mutex<Vec<(usize, usize)>>,
    /// The failures recorded (job, reason).
    failures: Mutex<Vec<(String, String)>>,
    renewals: AtomicU64,
    signal: AtomicU64,
    queued: Notify,
    release_held: Notify,
}

impl FakeQueue {
    fn add(&self, id: &str, script: Script) {
        self.scripts.lock().unwrap().insert(id.to_owned(), script);
        self.waiting
            .lock()
            .unwrap()
            .insert(id.to_owned(), tokio::time::Instant::now());
    }

    /// Another process queued work: the notification the store would hear.
    fn notify_queued(&self) {
        self.signal.fetch_add(1, Ordering::SeqCst);
        self.queued.notify_waiters();
    }

    fn ran(&self) -> Vec<String> {
        self.ran.lock().unwrap().clone()
    }

    fn failures(&self) -> Vec<(String, String)> {
        self.failures.lock().unwrap().clone()
    }
}

impl QueueStore for FakeQueue {
    fn renew_lease<'a>(&'a self, _held: &'a Lease, _for: Duration) -> StoreFuture<'a, bool> {
        self.renewals.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Ok(true) })
    }

    fn release_job<'a>(
        &'a self,
        _project: &'a str,
        held: &'a Lease,
        release: &'a Release,
    ) -> StoreFuture<'a, ()> {
        self.waiting.lock().unwrap().insert(
            held.job_id.clone(),
            tokio::time::Instant::now() + release.retry_after,
        );
        Box::pin(async { Ok(()) })
    }

    fn work_signal(&self, _kind: JobKind) -> StoreFuture<'_, u64> {
        let seen = self.signal.load(Ordering::SeqCst);
        Box::pin(async move { Ok(seen) })
    }

    fn work_queued(&self, _kind: JobKind, seen: u64) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            loop {
                let queued = self.queued.notified();
                tokio::pin!(queued);
                queued.as_mut().enable();
                if self.signal.load(Ordering::SeqCst) > seen {
                    return Ok(());
                }
                queued.await;
            }
        })
    }
}

struct Jobs(Arc<FakeQueue>);

impl JobRunner for Jobs {
    type Job = Lease;
    type Retry = Self;

    fn kind(&self) -> JobKind {
        JobKind::Episode
    }

    fn retryable(&self) -> &Self {
        self
    }

    fn lease_of(&self, job: &Lease) -> Option<Lease> {
        Some(job.clone())
    }

    fn claim<'a>(
        &'a self,
        owner: &'a str,
        _lease: Duration,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<Lease>, StoreError>> {
        let now = tokio::time::Instant::now();
        let mut waiting = self.0.waiting.lock().unwrap();
        let due: Vec<String> = waiting
            .iter()
            .filter(|(_, at)| **at <= now)
            .map(|(id, _)| id.clone())
            .take(limit)
            .collect();
        let mut attempts = self.0.attempts.lock().unwrap();
        let claimed: Vec<Lease> = due
            .into_iter()
            .map(|id| {
                waiting.remove(&id);
                let attempt = attempts.entry(id.clone()).or_default();
                *attempt += 1;
                Lease {
                    kind: JobKind::Episode,
                    job_id: id,
                    owner: owner.to_owned(),
                    attempt: *attempt,
                }
            })
            .collect();
        self.0.claims.lock().unwrap().push((limit, claimed.len()));
        Box::pin(async move { Ok(claimed) })
    }
}

impl Retryable for Jobs {
    type Job = Lease;
    type Done = ();

    fn store(&self) -> &dyn QueueStore {
        self.0.as_ref()
    }

    fn attempts<'a>(&self, job: &'a Lease) -> Attempts<'a> {
        Attempts {
            made: job.attempt,
            max: MAX_ATTEMPTS,
            last_error: Some("HTTP 503"),
        }
    }

    fn project<'a>(&self, _job: &'a Lease) -> &'a str {
        "p"
    }

    fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy {
            base: RETRY_AFTER,
            cap: RETRY_AFTER,
        }
    }

    fn attempt<'a>(&'a self, job: &'a Lease, _lease: &'a Lease) -> BoxFuture<'a, Outcome<()>> {
        Box::pin(async move {
            let script = self.0.scripts.lock().unwrap()[&job.job_id];
            self.0.ran.lock().unwrap().push(job.job_id.clone());
            let done = Outcome::Ended {
                written: Ok(()),
                failed: false,
            };
            match script {
                Script::TransientOnce if job.attempt == 1 => {
                    Outcome::Transient(Failure::new("HTTP 503"))
                }
                Script::TransientAlways => Outcome::Transient(Failure::new("HTTP 503")),
                Script::Permanent => Outcome::Failed(Failure::new("HTTP 400")),
                Script::Hold => {
                    self.0.release_held.notified().await;
                    done
                }
                _ => done,
            }
        })
    }

    fn record_failure<'a>(
        &'a self,
        job: &'a Lease,
        _lease: &'a Lease,
        failure: &'a Failure,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.0
            .failures
            .lock()
            .unwrap()
            .push((job.job_id.clone(), failure.reason.clone()));
        Box::pin(async { Ok(()) })
    }
}

/// The fake runner's attempt limit and backoff.
const MAX_ATTEMPTS: i64 = 3;
const RETRY_AFTER: Duration = Duration::from_millis(200);

fn config(concurrency: usize, prefetch: usize, poll: Duration) -> QueueConfig {
    QueueConfig {
        owner: "test".to_owned(),
        concurrency,
        prefetch,
        lease: Duration::from_millis(90),
        poll,
    }
}

/// Runs the loop in the background; returns its control and the task.
fn start(
    queue: &Arc<FakeQueue>,
    config: QueueConfig,
) -> (
    Arc<QueueControl>,
    tokio::task::JoinHandle<quarry_queue::QueueStats>,
) {
    let control = QueueControl::new();
    let jobs = Jobs(queue.clone());
    let running = control.clone();
    let task = tokio::spawn(async move {
        let stats = work(&jobs, &config, &running).await.unwrap();
        running.mark_stopped();
        stats
    });
    (control, task)
}

async fn within<T>(what: &str, future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), future)
        .await
        .unwrap_or_else(|_| panic!("not within 20 s: {what}"))
}

#[tokio::test]
async fn every_job_runs_once_in_batches_no_larger_than_the_room() {
    let queue = Arc::new(FakeQueue::default());
    for n in 0..50 {
        queue.add(&format!("job{n:02}"), Script::Complete);
    }
    let (control, task) = start(&queue, config(4, 3, Duration::from_millis(20)));
    within("the queue drained", control.wait_idle()).await;
    control.stop();
    let stats = within("the worker stopped", task).await.unwrap();
    let mut ran = queue.ran();
    ran.sort();
    let expected: Vec<String> = (0..50).map(|n| format!("job{n:02}")).collect();
    assert_eq!(ran, expected, "each job exactly once");
    assert_eq!((stats.completed, stats.finished()), (50, 50));
    let claims = queue.claims.lock().unwrap().clone();
    assert!(
        claims
            .iter()
            .all(|(limit, got)| *limit <= 7 && got <= limit),
        "{claims:?}"
    );
    assert!(
        claims.iter().any(|(_, got)| *got > 1),
        "claims take batches: {claims:?}"
    );
}

#[tokio::test]
async fn a_released_job_comes_back_after_its_backoff_and_idle_waits_for_it() {
    let queue = Arc::new(FakeQueue::default());
    queue.add("flaky", Script::TransientOnce);
    queue.add("steady", Script::Complete);
    let (control, task) = start(&queue, config(2, 0, Duration::from_secs(3600)));
    within("the retry ran and the queue drained", control.wait_idle()).await;
    let mut ran = queue.ran();
    ran.sort();
    assert_eq!(ran, ["flaky", "flaky", "steady"]);
    control.stop();
    let stats = within("the worker stopped", task).await.unwrap();
    assert_eq!((stats.completed, stats.retried), (2, 1));
}

#[tokio::test]
async fn a_running_job_keeps_its_lease_alive() {
    let queue = Arc::new(FakeQueue::default());
    queue.add("long", Script::Hold);
    let (control, task) = start(&queue, config(1, 0, Duration::from_secs(3600)));
    // The lease is 90 ms; the heartbeat renews it every 30 ms while the job runs.
    within("renewed three times", async {
        while queue.renewals.load(Ordering::SeqCst) < 3 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    queue.release_held.notify_one();
    within("the job ended", control.wait_idle()).await;
    control.stop();
    let stats = within("the worker stopped", task).await.unwrap();
    assert_eq!(stats.completed, 1);
}

#[tokio::test]
async fn work_queued_elsewhere_wakes_an_idle_worker_before_its_poll() {
    let queue = Arc::new(FakeQueue::default());
    // Polls once an hour: only the notification can bring the job in within the test.
    let (control, task) = start(&queue, config(2, 0, Duration::from_secs(3600)));
    within("idle at start", control.wait_idle()).await;
    queue.add("late", Script::Complete);
    queue.notify_queued();
    within("the late job ran", async {
        while queue.ran().is_empty() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    control.stop();
    let stats = within("the worker stopped", task).await.unwrap();
    assert_eq!(stats.completed, 1);
}

#[tokio::test]
async fn transient_failures_are_retried_until_the_attempts_run_out_then_recorded_as_the_failure() {
    let queue = Arc::new(FakeQueue::default());
    queue.add("doomed", Script::TransientAlways);
    queue.add("refused", Script::Permanent);
    let (control, task) = start(&queue, config(2, 0, Duration::from_secs(3600)));
    within("the retries ran and the queue drained", control.wait_idle()).await;
    control.stop();
    let stats = within("the worker stopped", task).await.unwrap();
    let mut ran = queue.ran();
    ran.sort();
    assert_eq!(ran, ["doomed", "doomed", "doomed", "refused"]);
    assert_eq!((stats.retried, stats.failed, stats.completed), (2, 2, 0));
    let mut failures = queue.failures();
    failures.sort();
    assert_eq!(
        failures,
        [
            (
                "doomed".to_owned(),
                "HTTP 503 (gave up after 3 attempts)".to_owned()
            ),
            ("refused".to_owned(), "HTTP 400".to_owned()),
        ]
    );
}

#[tokio::test]
async fn a_claim_past_the_attempt_limit_fails_the_job_without_running_it() {
    let queue = Arc::new(FakeQueue::default());
    queue.add("orphan", Script::Complete);
    // Its workers died on all three attempts: this claim is the fourth.
    queue
        .attempts
        .lock()
        .unwrap()
        .insert("orphan".to_owned(), MAX_ATTEMPTS);
    let (control, task) = start(&queue, config(1, 0, Duration::from_secs(3600)));
    within("the queue drained", control.wait_idle()).await;
    control.stop();
    let stats = within("the worker stopped", task).await.unwrap();
    assert!(queue.ran().is_empty(), "not run: {:?}", queue.ran());
    assert_eq!(stats.failed, 1);
    assert_eq!(
        queue.failures(),
        [(
            "orphan".to_owned(),
            "gave up after 3 attempts (the last: HTTP 503)".to_owned()
        )]
    );
}
