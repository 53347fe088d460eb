//! Working the task queue: claim under a lease, keep the lease alive with a heartbeat while the
//! field runs, then complete (or release for a retry) fenced by that lease.
//!
//! The same loop serves a background worker (`quarry worker`, the server's in-process worker)
//! and a command that waits for its own run (`quarry run`): the latter only claims tasks under
//! its run's root and stops when every run under it has settled.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use quarry_core::model::{FieldTask, RunStatus, TaskCompletion, TaskEnd};
use quarry_core::store::StoreError;
use tokio::sync::Notify;

use crate::run::{Pipeline, PipelineError};
use crate::task::Attempt;

/// How a worker claims and retries.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// Who holds the leases: process id, host and start time (the CLI builds it).
    pub owner: String,
    /// Tasks in flight at once.
    pub concurrency: usize,
    /// How long a claim lasts without a heartbeat; renewed every third of it.
    pub lease: Duration,
    /// How often an idle worker looks at the queue when nobody wakes it (other processes).
    pub poll: Duration,
    /// First retry delay after a transient failure; doubled per attempt, capped at a minute,
    /// with ±20 % jitter.
    pub retry_base: Duration,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        WorkerConfig {
            owner: "quarry".to_owned(),
            concurrency: 8,
            lease: Duration::from_secs(30),
            poll: Duration::from_millis(250),
            retry_base: Duration::from_secs(1),
        }
    }
}

/// What a worker did (counted since it started).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct WorkerStats {
    pub completed: u64,
    pub failed: u64,
    pub retried: u64,
    /// Completions refused because the lease had been taken over.
    pub lease_lost: u64,
}

/// Stops a background worker (after the tasks in flight end) and wakes it early.
#[derive(Debug, Default)]
pub struct WorkerSignal {
    stop: AtomicBool,
    wake: Notify,
}

impl WorkerSignal {
    pub fn new() -> Arc<WorkerSignal> {
        Arc::new(WorkerSignal::default())
    }

    /// New work was queued in this process: look at the queue now.
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.wake.notify_one();
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }
}

impl Pipeline {
    /// Works the queue until `signal` says stop (a background worker).
    pub async fn work(
        &self,
        config: &WorkerConfig,
        signal: &WorkerSignal,
    ) -> Result<WorkerStats, PipelineError> {
        self.work_loop(config, None, Some(signal)).await
    }

    /// Works the tasks under `root_run_id` until every run under it has settled (waits for
    /// other workers' tasks too).
    pub async fn work_root(
        &self,
        config: &WorkerConfig,
        project: &str,
        root_run_id: &str,
    ) -> Result<WorkerStats, PipelineError> {
        self.work_loop(config, Some((project, root_run_id)), None)
            .await
    }

    async fn work_loop(
        &self,
        config: &WorkerConfig,
        root: Option<(&str, &str)>,
        signal: Option<&WorkerSignal>,
    ) -> Result<WorkerStats, PipelineError> {
        let store = self.store().as_ref();
        let concurrency = config.concurrency.max(1);
        let mut stats = WorkerStats::default();
        let mut in_flight = FuturesUnordered::new();
        loop {
            let stopping = signal.is_some_and(WorkerSignal::stopped);
            if stopping && in_flight.is_empty() {
                return Ok(stats);
            }
            let free = concurrency - in_flight.len();
            let mut claimed_any = false;
            if free > 0 && !stopping {
                // The tasks in flight keep running while the claim waits: one of them may hold
                // the store's write queue (SQLite), which the claim needs too.
                let claim = store.claim_tasks(&config.owner, config.lease, free, root.map(|r| r.1));
                tokio::pin!(claim);
                let claimed = loop {
                    tokio::select! {
                        claimed = &mut claim => break claimed,
                        Some(done) = in_flight.next(), if !in_flight.is_empty() => {
                            stats.count(done);
                        }
                    }
                };
                let claimed = match claimed {
                    Ok(claimed) => claimed,
                    // A background worker outlives a database hiccup; a waiting command does not.
                    Err(error) if signal.is_some() => {
                        tracing::warn!(%error, "claiming tasks failed; retrying");
                        Vec::new()
                    }
                    Err(error) => return Err(error.into()),
                };
                claimed_any = !claimed.is_empty();
                for task in claimed {
                    in_flight.push(self.run_claimed(config, task));
                }
            }
            if in_flight.is_empty()
                && let Some((project, root_run_id)) = root
                && settled(self, project, root_run_id).await?
            {
                return Ok(stats);
            }
            if claimed_any && in_flight.len() < concurrency {
                continue;
            }
            let idle = tokio::time::sleep(config.poll);
            let woken = async {
                match signal {
                    Some(signal) => signal.wake.notified().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                Some(done) = in_flight.next(), if !in_flight.is_empty() => {
                    stats.count(done);
                }
                () = idle => {}
                () = woken => {}
            }
        }
    }

    /// One claimed task: attempt it while a heartbeat renews the lease, then write the end.
    async fn run_claimed(&self, config: &WorkerConfig, task: FieldTask) -> Ended {
        let store = self.store().as_ref();
        let Some(lease) = task.lease() else {
            return Ended::Failed;
        };
        let project = task.project_id.clone();
        if task.attempts > task.max_attempts {
            let completion = TaskCompletion::failed(
                format!(
                    "gave up after {} attempts (the last: {})",
                    task.max_attempts,
                    task.last_error.as_deref().unwrap_or("its worker stopped")
                ),
                0,
                0,
            );
            return ended(
                store.complete_task(&project, &lease, &completion).await,
                false,
            );
        }
        let attempt = self.attempt_task(&task);
        tokio::pin!(attempt);
        let beat = config.lease / 3;
        let outcome = loop {
            tokio::select! {
                outcome = &mut attempt => break outcome,
                () = tokio::time::sleep(beat) => {
                    match store.renew_task_lease(&lease, config.lease).await {
                        Ok(true) => {}
                        Ok(false) => tracing::warn!(task = %task.id, "lease taken over while running"),
                        Err(error) => tracing::warn!(task = %task.id, %error, "heartbeat failed"),
                    }
                }
            }
        };
        match outcome {
            Ok(Attempt::Complete(completion)) => {
                let failed = matches!(completion.end, TaskEnd::Failed { .. });
                let written = store.complete_task(&project, &lease, &completion).await;
                if let Ok(task) = &written {
                    self.index_cascaded(task).await;
                }
                ended(written, failed)
            }
            Ok(Attempt::Transient {
                error,
                tokens_used,
                duration_ms,
            }) if task.attempts < task.max_attempts => {
                let delay = backoff(config.retry_base, task.attempts);
                match store
                    .release_task(&project, &lease, &error, delay, tokens_used, duration_ms)
                    .await
                {
                    Ok(_) => Ended::Retried,
                    Err(error) => ended(Err(error), false),
                }
            }
            Ok(Attempt::Transient {
                error,
                tokens_used,
                duration_ms,
            }) => {
                let completion = TaskCompletion::failed(
                    format!("{error} (gave up after {} attempts)", task.attempts),
                    tokens_used,
                    duration_ms,
                );
                ended(
                    store.complete_task(&project, &lease, &completion).await,
                    true,
                )
            }
            Err(error) => {
                // The store or the entity type failed under us (not the model): fail the task
                // with the reason; a person can retry it.
                let completion = TaskCompletion::failed(error.to_string(), 0, 0);
                ended(
                    store.complete_task(&project, &lease, &completion).await,
                    true,
                )
            }
        }
    }
}

impl Pipeline {
    /// Makes the entities a completed task's cascade created searchable by meaning at once. A
    /// failure here does not undo the task: the next index rebuild reads them from the store.
    async fn index_cascaded(&self, task: &FieldTask) {
        let Some(result_id) = &task.result_id else {
            return;
        };
        let store = self.store().as_ref();
        let created = match store.get_result(&task.project_id, result_id).await {
            Ok(Some(result)) if !result.created_entity_ids.is_empty() => result.created_entity_ids,
            _ => return,
        };
        if let Ok(entities) = store.get_entities(&task.project_id, &created).await {
            for entity in &entities {
                let _ = self.retriever().index_entity(entity);
            }
        }
    }
}

/// How a claimed task ended, for the stats.
enum Ended {
    Completed,
    Failed,
    Retried,
    LeaseLost,
}

fn ended(written: Result<FieldTask, StoreError>, failed: bool) -> Ended {
    match written {
        Ok(_) if failed => Ended::Failed,
        Ok(_) => Ended::Completed,
        Err(StoreError::LeaseLost(message)) => {
            tracing::warn!(%message, "completion refused: the lease was taken over");
            Ended::LeaseLost
        }
        Err(error) => {
            // The lease stays until it expires; another worker then redoes the task.
            tracing::warn!(%error, "could not record a task's end");
            Ended::Failed
        }
    }
}

impl WorkerStats {
    fn count(&mut self, ended: Ended) {
        match ended {
            Ended::Completed => self.completed += 1,
            Ended::Failed => self.failed += 1,
            Ended::Retried => self.retried += 1,
            Ended::LeaseLost => self.lease_lost += 1,
        }
    }
}

/// Whether every run under the root has stopped moving (done, failed, partial or waiting for a
/// person).
async fn settled(pipeline: &Pipeline, project: &str, root: &str) -> Result<bool, PipelineError> {
    let runs = pipeline.store().runs_under_root(project, root).await?;
    Ok(runs.iter().all(|run| run.status != RunStatus::Running))
}

/// `base · 2^(attempt-1)`, at most a minute, ±20 % jitter so retries of many tasks spread out.
pub fn backoff(base: Duration, attempt: i64) -> Duration {
    let exponent = u32::try_from(attempt.saturating_sub(1).clamp(0, 16)).unwrap_or(16);
    let delay = base
        .saturating_mul(2_u32.saturating_pow(exponent))
        .min(Duration::from_secs(60));
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    // A factor in [0.8, 1.2) from the clock's low bits: enough to spread, no generator needed.
    let factor = 0.8 + f64::from(nanos % 1000) / 2500.0;
    delay.mul_f64(factor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_is_capped_and_jittered() {
        let base = Duration::from_secs(1);
        for attempt in 1..=10_i64 {
            let nominal = Duration::from_secs(1 << (attempt - 1)).min(Duration::from_secs(60));
            let delay = backoff(base, attempt);
            assert!(delay >= nominal.mul_f64(0.8), "{attempt}: {delay:?}");
            assert!(delay < nominal.mul_f64(1.2), "{attempt}: {delay:?}");
        }
    }
}
