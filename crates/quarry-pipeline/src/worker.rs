//! Field tasks on the leased queue: the loop is `quarry_queue::work` (claims in batches, one
//! heartbeat for every held lease, wake-ups, and the one retry policy: attempts, backoff, the
//! failure record); this file says how a field task is claimed and attempted, and how its
//! completion or failure is written under its lease.
//!
//! The same loop serves a background worker (`quarry worker`, the server's in-process worker)
//! and a command that waits for its own run (`quarry run`): the latter only claims tasks under
//! its run's root and stops when every run under it has settled.

use std::time::Duration;

use futures_util::future::BoxFuture;
use quarry_core::model::{FieldTask, JobKind, Lease, RunStatus, TaskCompletion, TaskEnd};
use quarry_core::store::{QueueStore, StoreError};
use quarry_queue::{
    Attempts, Failure, JobRunner, Outcome, QueueConfig, QueueControl, QueueStats, RetryPolicy,
    Retryable,
};

use crate::error::PipelineError;
use crate::run::{Pipeline, WorkerConfig};
use crate::task::Attempt;

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
    type Retry = Self;

    fn kind(&self) -> JobKind {
        JobKind::FieldTask
    }

    fn retryable(&self) -> &Self {
        self
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

    fn finished(&self) -> Option<BoxFuture<'_, Result<bool, StoreError>>> {
        let (project, root) = self.root?;
        Some(Box::pin(async move {
            let runs = self.pipeline.store().runs_under_root(project, root).await?;
            Ok(runs.iter().all(|run| run.status != RunStatus::Running))
        }))
    }
}

impl Retryable for FieldTasks<'_> {
    type Job = FieldTask;
    type Done = ();

    fn store(&self) -> &dyn QueueStore {
        self.pipeline.store().as_ref()
    }

    fn attempts<'a>(&self, task: &'a FieldTask) -> Attempts<'a> {
        Attempts {
            made: task.attempts,
            max: task.max_attempts,
            last_error: task.last_error.as_deref(),
        }
    }

    fn project<'a>(&self, task: &'a FieldTask) -> &'a str {
        &task.project_id
    }

    fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy::from_base(self.config.retry_base)
    }

    fn attempt<'a>(&'a self, task: &'a FieldTask, lease: &'a Lease) -> BoxFuture<'a, Outcome<()>> {
        Box::pin(self.pipeline.attempt_claimed(task, lease))
    }

    fn record_failure<'a>(
        &'a self,
        task: &'a FieldTask,
        lease: &'a Lease,
        failure: &'a Failure,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let completion = TaskCompletion::failed(
                failure.reason.clone(),
                failure.tokens_used,
                failure.duration_ms,
            );
            self.pipeline
                .store()
                .complete_task(&task.project_id, lease, &completion)
                .await
                .map(drop)
        })
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

    /// One attempt at a claimed task: a completion is written under its lease; a failure is
    /// reported for the queue's retry policy.
    async fn attempt_claimed(&self, task: &FieldTask, lease: &Lease) -> Outcome<()> {
        match self.attempt_task(task).await {
            Ok(Attempt::Complete(completion)) => {
                let failed = matches!(completion.end, TaskEnd::Failed { .. });
                let written = self
                    .store()
                    .complete_task(&task.project_id, lease, &completion)
                    .await;
                if let Ok(task) = &written {
                    self.index_cascaded(task).await;
                }
                Outcome::Ended {
                    written: written.map(drop),
                    failed,
                }
            }
            Ok(Attempt::Transient {
                error,
                tokens_used,
                duration_ms,
            }) => Outcome::Transient(Failure {
                reason: error,
                tokens_used,
                duration_ms,
                status: None,
            }),
            // The store or the entity type failed under us (not the model): fail the task with
            // the reason; a person can retry it.
            Err(error) => Outcome::Failed(Failure::new(error.to_string())),
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
