//! Field tasks on the leased queue: the loop is `quarry_queue::work` (claims in batches, one
//! heartbeat for every held lease, wake-ups, retries with backoff); this file says how a field
//! task is claimed and attempted, and how its attempt ends under its lease.
//!
//! The same loop serves a background worker (`quarry worker`, the server's in-process worker)
//! and a command that waits for its own run (`quarry run`): the latter only claims tasks under
//! its run's root and stops when every run under it has settled.

use std::time::Duration;

use futures_util::future::BoxFuture;
use quarry_core::model::{FieldTask, JobKind, Lease, Release, RunStatus, TaskCompletion, TaskEnd};
use quarry_core::store::{QueueStore, StoreError};
use quarry_queue::{JobEnd, JobRunner, QueueConfig, QueueControl, QueueStats, backoff, recorded};

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

impl WorkerConfig {
    fn queue(&self) -> QueueConfig {
        QueueConfig {
            owner: self.owner.clone(),
            concurrency: self.concurrency,
            // A claim fills the free slots: a task waiting in one worker's hands is a task
            // another worker could be running.
            prefetch: 0,
            lease: self.lease,
            poll: self.poll,
        }
    }
}

/// Field tasks as a job kind of the queue, for one pipeline.
struct FieldTasks<'p> {
    pipeline: &'p Pipeline,
    config: &'p WorkerConfig,
    /// A bounded worker's (project, root run): only tasks under it, until it settles.
    root: Option<(&'p str, &'p str)>,
}

impl JobRunner for FieldTasks<'_> {
    type Job = FieldTask;

    fn kind(&self) -> JobKind {
        JobKind::FieldTask
    }

    fn store(&self) -> &dyn QueueStore {
        self.pipeline.store().as_ref()
    }

    fn lease_of(&self, task: &FieldTask) -> Option<Lease> {
        task.lease()
    }

    fn claim<'a>(
        &'a self,
        owner: &'a str,
        lease: Duration,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<FieldTask>, StoreError>> {
        self.pipeline
            .store()
            .claim_tasks(owner, lease, limit, self.root.map(|(_, root)| root))
    }

    fn run(&self, task: FieldTask) -> BoxFuture<'_, JobEnd> {
        Box::pin(self.pipeline.run_claimed(self.config, task))
    }

    fn finished(&self) -> Option<BoxFuture<'_, Result<bool, StoreError>>> {
        let (project, root) = self.root?;
        Some(Box::pin(async move {
            let runs = self.pipeline.store().runs_under_root(project, root).await?;
            Ok(runs.iter().all(|run| run.status != RunStatus::Running))
        }))
    }
}

impl Pipeline {
    /// Works the queue until `control` says stop (a background worker).
    pub async fn work(
        &self,
        config: &WorkerConfig,
        control: &QueueControl,
    ) -> Result<QueueStats, PipelineError> {
        let tasks = FieldTasks {
            pipeline: self,
            config,
            root: None,
        };
        Ok(quarry_queue::work(&tasks, &config.queue(), control).await?)
    }

    /// Works the tasks under `root_run_id` until every run under it has settled (waits for
    /// other workers' tasks too).
    pub async fn work_root(
        &self,
        config: &WorkerConfig,
        project: &str,
        root_run_id: &str,
    ) -> Result<QueueStats, PipelineError> {
        let tasks = FieldTasks {
            pipeline: self,
            config,
            root: Some((project, root_run_id)),
        };
        Ok(quarry_queue::work(&tasks, &config.queue(), &QueueControl::default()).await?)
    }

    /// One claimed task: attempt it, then write the end under its lease.
    async fn run_claimed(&self, config: &WorkerConfig, task: FieldTask) -> JobEnd {
        let store = self.store().as_ref();
        let Some(lease) = task.lease() else {
            return JobEnd::NotRecorded;
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
                true,
            );
        }
        match self.attempt_task(&task).await {
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
                let release = Release {
                    error,
                    retry_after: backoff(config.retry_base, task.attempts),
                    tokens_used,
                    duration_ms,
                };
                match store.release_job(&project, &lease, &release).await {
                    Ok(()) => JobEnd::Released {
                        retry_after: release.retry_after,
                    },
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

/// How a written end counts: failed or completed as `failed` says, when the write landed.
fn ended(written: Result<FieldTask, StoreError>, failed: bool) -> JobEnd {
    let end = if failed {
        JobEnd::Failed
    } else {
        JobEnd::Completed
    };
    recorded(JobKind::FieldTask, written, end)
}
