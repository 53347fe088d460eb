//! Workflow tasks: a run's fields on the durable, leased queue. Every write that changes a task's
//! state settles its run in the same transaction (`quarry_core::model::settle`), so dependents
//! are queued and the run's status follows without a second step a crash could skip.
//!
//! Writers of one run are serialised by locking the run's entity (`sql::LOCK_ENTITY`), the same
//! lock result writes take, right after the first write.

use std::collections::{BTreeMap, BTreeSet};

use quarry_core::model::{
    AttemptRecord, CascadeWrite, Entity, EntityType, ExtractionResult, ExtractionRun, FieldTask,
    JobKind, Lease, NewWorkflow, NodeState, Release, RunStatus, TaskCompletion, TaskEnd, TaskView,
    settle,
};
use quarry_core::store::prelude::*;
use quarry_core::store::{StoreError, StoreFuture};
use serde_json::Map;
use sqlx::types::Json;

use super::{SqlStore, insert_entity_as};
use crate::clock::{millis_between, new_id, now};
use crate::db::{Exec, Tx, query, query_as, query_scalar};
use crate::error::not_found;
use crate::rows::{EntityRow, EntityTypeRow, ResultRow, RunRow, TaskRow, enum_text};
use crate::sql;

/// Task helpers: inserting a workflow, fencing a lease, settling a run.
impl SqlStore {
    /// Inserts the run and its tasks (then settles it). The caller holds a transaction.
    pub(super) async fn insert_workflow(
        tx: &mut Tx,
        project: &str,
        workflow: &NewWorkflow,
    ) -> Result<ExtractionRun, StoreError> {
        let entity_type: Option<String> = query_scalar(sql::LOCK_ENTITY)
            .bind(project)
            .bind(&workflow.entity_id)
            .fetch_optional(&mut *tx)
            .await?;
        if entity_type.is_none() {
            return Err(not_found("entity", &workflow.entity_id));
        }
        let started_at = now();
        let run_id = new_id();
        let root = workflow
            .root_run_id
            .clone()
            .unwrap_or_else(|| run_id.clone());
        query(sql::INSERT_RUN)
            .bind(&run_id)
            .bind(project)
            .bind(&workflow.entity_id)
            .bind(enum_text(&workflow.scope))
            .bind(&workflow.triggered_by)
            .bind(workflow.fields_requested.as_ref().map(Json))
            .bind(enum_text(&RunStatus::Running))
            .bind(&started_at)
            .bind(workflow.instructions.as_ref().map(Json))
            .execute(&mut *tx)
            .await?;
        query(sql::SET_RUN_ROOT)
            .bind(project)
            .bind(&run_id)
            .bind(&root)
            .execute(&mut *tx)
            .await?;
        for task in &workflow.tasks {
            let at = now();
            query(sql::INSERT_TASK)
                .bind(new_id())
                .bind(project)
                .bind(&run_id)
                .bind(&root)
                .bind(&workflow.entity_id)
                .bind(&task.field_name)
                .bind(task.state.as_str())
                .bind(Json(&task.depends_on))
                .bind(task.gated)
                .bind(0_i64)
                .bind(workflow.max_attempts)
                .bind(&task.error)
                .bind(&task.feedback)
                .bind(workflow.depth)
                .bind(&workflow.triggered_by)
                .bind(None::<String>)
                .bind(None::<String>)
                .bind(&at)
                .bind(None::<String>)
                .bind(0_i64)
                .bind(0_i64)
                .bind(&at)
                .bind(&at)
                .bind(Json(Vec::<AttemptRecord>::new()))
                .bind(&task.instructions)
                .execute(&mut *tx)
                .await?;
        }
        Self::settle_run(tx, project, &run_id).await
    }

    /// The run's tasks, in a transaction or straight from the pool.
    pub(super) async fn tasks_of_run(
        exec: impl Into<Exec<'_>>,
        project: &str,
        run_id: &str,
    ) -> Result<Vec<FieldTask>, StoreError> {
        query_as::<TaskRow>(sql::TASKS_OF_RUN)
            .bind(project)
            .bind(run_id)
            .fetch_all(exec)
            .await?
            .into_iter()
            .map(FieldTask::try_from)
            .collect()
    }

    pub(super) async fn task_by_id(
        tx: &mut Tx,
        project: &str,
        id: &str,
    ) -> Result<FieldTask, StoreError> {
        let row = query_as::<TaskRow>(sql::TASK_BY_ID)
            .bind(project)
            .bind(id)
            .fetch_one(&mut *tx)
            .await?;
        FieldTask::try_from(row)
    }

    /// Ends the attempt `held` of `task` in `state` (the lease released), with what it
    /// cost added and the attempt appended to the log; `available_at` is when a queued
    /// task may be claimed again.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn end_attempt(
        tx: &mut Tx,
        task: &FieldTask,
        held: &Lease,
        (state, outcome): (NodeState, &str),
        error: Option<&str>,
        result_id: Option<&str>,
        (tokens_used, duration_ms): (i64, i64),
        available_at: &str,
    ) -> Result<FieldTask, StoreError> {
        let at = now();
        let log = AttemptRecord::append(
            &task.attempt_log,
            held,
            outcome,
            error,
            tokens_used,
            duration_ms,
            &at,
        );
        query_as::<TaskRow>(sql::END_TASK)
            .bind(&task.id)
            .bind(state.as_str())
            .bind(error)
            .bind(result_id)
            .bind(tokens_used)
            .bind(duration_ms)
            .bind(available_at)
            .bind(&at)
            .bind(Json(log))
            .fetch_one(&mut *tx)
            .await
            .and_then(FieldTask::try_from)
    }

    /// The entity's required fields (its type's `required: true`) with no value: none
    /// on the entity, and no current result (pending or approved) holding one. An empty
    /// string or list is no value.
    pub(super) async fn missing_required(
        tx: &mut Tx,
        project: &str,
        entity_id: &str,
    ) -> Result<Vec<String>, StoreError> {
        let Some(entity) = query_as::<EntityRow>(sql::ENTITY_BY_ID)
            .bind(project)
            .bind(entity_id)
            .fetch_optional(&mut *tx)
            .await?
            .map(Entity::from)
        else {
            return Ok(Vec::new());
        };
        let entity_type = query_as::<EntityTypeRow>(sql::ENTITY_TYPE_BY_SLUG)
            .bind(project)
            .bind(&entity.entity_type)
            .fetch_optional(&mut *tx)
            .await?
            .map(EntityType::from);
        let Some(entity_type) = entity_type else {
            return Ok(Vec::new());
        };
        if !entity_type.fields.iter().any(|field| field.required) {
            return Ok(Vec::new());
        }
        let current: Vec<ExtractionResult> = query_as::<ResultRow>(sql::CURRENT_RESULTS)
            .bind(project)
            .bind(entity_id)
            .fetch_all(&mut *tx)
            .await?
            .into_iter()
            .map(ExtractionResult::try_from)
            .collect::<Result<_, _>>()?;
        Ok(entity_type.missing_required(&entity.fields, &current))
    }

    /// Applies [`settle`] to the run: pending tasks move on, the run's status (and, once
    /// nothing can move, its end time) follows its tasks.
    pub(super) async fn settle_run(
        tx: &mut Tx,
        project: &str,
        run_id: &str,
    ) -> Result<ExtractionRun, StoreError> {
        let run = query_as::<RunRow>(sql::RUN_BY_ID)
            .bind(project)
            .bind(run_id)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or_else(|| not_found("run", run_id))?;
        let mut run = ExtractionRun::try_from(run)?;
        let tasks = Self::tasks_of_run(&mut *tx, project, run_id).await?;
        let views: Vec<TaskView<'_>> = tasks.iter().map(FieldTask::view).collect();
        let mut settled = settle(&views);
        if settled.run_status == RunStatus::Completed {
            let missing = Self::missing_required(tx, project, &run.entity_id).await?;
            if !missing.is_empty() {
                // Nothing extracted at all: failed; else some fields came, not all.
                let extracted = tasks.iter().any(|t| t.state == NodeState::Done);
                settled.run_status = if extracted {
                    RunStatus::Partial
                } else {
                    RunStatus::Failed
                };
                settled.run_error = Some(format!(
                    "required field{} without a value: {}",
                    if missing.len() == 1 { "" } else { "s" },
                    missing.join(", ")
                ));
            }
        }
        let at = now();
        for transition in &settled.transitions {
            query(sql::SET_TASK_STATE)
                .bind(&tasks[transition.index].id)
                .bind(transition.state.as_str())
                .bind(&transition.error)
                .bind(&at)
                .execute(&mut *tx)
                .await?;
        }
        if run.status != settled.run_status || run.error != settled.run_error {
            run.status = settled.run_status;
            run.error = settled.run_error;
            if run.status == RunStatus::Running {
                run.finished_at = None;
                run.duration_ms = None;
            } else {
                run.duration_ms = millis_between(&run.started_at, &at);
                run.finished_at = Some(at);
            }
            query(sql::FINISH_RUN)
                .bind(project)
                .bind(run_id)
                .bind(enum_text(&run.status))
                .bind(&run.error)
                .bind(&run.finished_at)
                .bind(run.duration_ms)
                .execute(&mut *tx)
                .await?;
        }
        Ok(run)
    }

    /// Finds or creates each entity of `cascade`, links it to the parent (a relation
    /// mentioned once more) and queues the follow-up run of each created one; returns
    /// the created entities' ids. The caller holds the fenced transaction.
    pub(super) async fn write_cascade(
        tx: &mut Tx,
        project: &str,
        cascade: &CascadeWrite,
    ) -> Result<Vec<String>, StoreError> {
        let mut created = Vec::new();
        for item in &cascade.items {
            let existing = query_as::<EntityRow>(sql::ENTITY_BY_TITLE)
                .bind(project)
                .bind(&cascade.entity_type)
                .bind(&item.title)
                .fetch_optional(&mut *tx)
                .await?;
            let id = match existing {
                Some(row) => Entity::from(row).id,
                None => {
                    let at = now();
                    let entity = Entity {
                        id: new_id(),
                        project_id: project.to_owned(),
                        entity_type: cascade.entity_type.clone(),
                        title: item.title.clone(),
                        parent_id: Some(cascade.parent_id.clone()),
                        fields: Map::new(),
                        metadata: item.metadata.clone(),
                        created_at: at.clone(),
                        updated_at: at,
                        mention_count: 0,
                        notes: None,
                        last_seen_at: None,
                    };
                    let inserted = insert_entity_as(sql::INSERT_CASCADE_ENTITY, &entity)
                        .execute(&mut *tx)
                        .await?;
                    match inserted {
                        1 => {
                            created.push(entity.id.clone());
                            entity.id
                        }
                        // Another process's cascade created it since the look-up.
                        _ => {
                            query_scalar(sql::ENTITY_BY_CASCADE_KEY)
                                .bind(project)
                                .bind(&cascade.entity_type)
                                .bind(&item.title)
                                .fetch_one(&mut *tx)
                                .await?
                        }
                    }
                }
            };
            query(sql::UPSERT_RELATION)
                .bind(new_id())
                .bind(project)
                .bind(&cascade.parent_id)
                .bind(&id)
                .bind(&cascade.label)
                .bind(now())
                .bind(None::<&str>)
                .execute(&mut *tx)
                .await?;
        }
        if let Some(template) = &cascade.follow_up {
            for id in &created {
                let follow_up = NewWorkflow {
                    entity_id: id.clone(),
                    ..template.clone()
                };
                Self::insert_workflow(tx, project, &follow_up).await?;
            }
        }
        Ok(created)
    }

    /// The fence of a task's completion (returning the task), then its entity locked:
    /// result writes and settles of one entity queue behind that lock. Returns the task
    /// and its entity's type.
    pub(super) async fn fence_task(
        tx: &mut Tx,
        project: &str,
        held: &Lease,
    ) -> Result<(FieldTask, String), StoreError> {
        let task = FieldTask::try_from(Self::fence_row::<TaskRow>(tx, project, held).await?)?;
        let entity_type: Option<String> = query_scalar(sql::LOCK_ENTITY)
            .bind(project)
            .bind(&task.entity_id)
            .fetch_optional(&mut *tx)
            .await?;
        let entity_type = entity_type.ok_or_else(|| not_found("entity", &task.entity_id))?;
        Ok((task, entity_type))
    }

    /// A released task's attempt: its cost added, the attempt appended to its log.
    pub(super) async fn add_attempt_cost(
        tx: &mut Tx,
        project: &str,
        held: &Lease,
        release: &Release,
    ) -> Result<(), StoreError> {
        let task = Self::task_by_id(tx, project, &held.job_id).await?;
        let log = AttemptRecord::append(
            &task.attempt_log,
            held,
            "retry",
            Some(&release.error),
            release.tokens_used,
            release.duration_ms,
            &now(),
        );
        query(sql::ADD_TASK_ATTEMPT_COST)
            .bind(&task.id)
            .bind(release.tokens_used)
            .bind(release.duration_ms)
            .bind(Json(log))
            .execute(&mut *tx)
            .await?;
        Ok(())
    }

    /// Settles each of `run_ids` once (duplicates are settled once), after a write that
    /// changed some of their tasks (an approval, a rejection, a retry).
    pub(super) async fn settle_runs(
        tx: &mut Tx,
        project: &str,
        run_ids: Vec<String>,
    ) -> Result<(), StoreError> {
        let distinct: BTreeSet<String> = run_ids.into_iter().collect();
        for run_id in distinct {
            Self::settle_run(tx, project, &run_id).await?;
        }
        Ok(())
    }
}

/// The `Store` methods of workflow tasks.
impl WorkflowStore for SqlStore {
    fn create_workflow<'a>(
        &'a self,
        project: &'a str,
        workflow: &'a NewWorkflow,
    ) -> StoreFuture<'a, (ExtractionRun, Vec<FieldTask>)> {
        Box::pin(async move {
            let _writer = self.write_gate().await;
            let mut tx = self.pool.begin().await?;
            let run = Self::insert_workflow(&mut tx, project, workflow).await?;
            let tasks = Self::tasks_of_run(&mut tx, project, &run.id).await?;
            tx.commit().await?;
            Ok((run, tasks))
        })
    }

    fn claim_tasks<'a>(
        &'a self,
        owner: &'a str,
        lease: std::time::Duration,
        limit: usize,
        root_run_id: Option<&'a str>,
    ) -> StoreFuture<'a, Vec<FieldTask>> {
        Box::pin(async move {
            let rows: Vec<TaskRow> = self
                .claim_jobs(JobKind::FieldTask, (owner, lease), limit, root_run_id)
                .await?;
            let mut claimed = rows
                .into_iter()
                .map(FieldTask::try_from)
                .collect::<Result<Vec<_>, _>>()?;
            // RETURNING promises no order: by availability.
            claimed.sort_by(|a, b| (&a.available_at, &a.id).cmp(&(&b.available_at, &b.id)));
            Ok(claimed)
        })
    }

    fn complete_task<'a>(
        &'a self,
        project: &'a str,
        held: &'a Lease,
        completion: &'a TaskCompletion,
    ) -> StoreFuture<'a, FieldTask> {
        Box::pin(async move {
            let _writer = self.write_gate().await;
            let mut tx = self.pool.begin().await?;
            let (task, entity_type) = Self::fence_task(&mut tx, project, held).await?;
            // The cascade commits with the completion, or not at all: a worker whose lease
            // was taken over has failed the fence above and writes nothing.
            let mut results = std::borrow::Cow::Borrowed(&completion.results);
            if let (TaskEnd::Extracted { winner }, Some(cascade)) =
                (&completion.end, &completion.cascade)
            {
                let created = Self::write_cascade(&mut tx, project, cascade).await?;
                if let Some(result) = results.to_mut().get_mut(*winner) {
                    result.created_entity_ids = created;
                }
            }
            let locked = BTreeMap::from([(task.entity_id.as_str(), entity_type)]);
            let stored = Self::write_results(&mut tx, project, &results, &locked).await?;
            let (state, error, result_id) = match &completion.end {
                TaskEnd::Extracted { winner } => {
                    let result = stored.get(*winner).ok_or_else(|| {
                        StoreError::Conflict(format!(
                            "the winning result {winner} is not among the {} recorded",
                            stored.len()
                        ))
                    })?;
                    Self::insert_deliveries(&mut tx, project, result, &completion.deliveries)
                        .await?;
                    for run in &completion.runs {
                        Self::insert_workflow(&mut tx, project, run).await?;
                    }
                    let state = if task.gated {
                        NodeState::WaitingHuman
                    } else {
                        NodeState::Done
                    };
                    (state, None, Some(result.id.clone()))
                }
                TaskEnd::Failed { reason } => (NodeState::Failed, Some(reason.clone()), None),
            };
            let ended = Self::end_attempt(
                &mut tx,
                &task,
                held,
                (state, state.as_str()),
                error.as_deref(),
                result_id.as_deref(),
                (completion.tokens_used, completion.duration_ms),
                &task.available_at,
            )
            .await?;
            // Settling moves only tasks still waiting on others: not this one.
            Self::settle_run(&mut tx, project, &task.run_id).await?;
            tx.commit().await?;
            Ok(ended)
        })
    }

    fn get_task<'a>(&'a self, project: &'a str, id: &'a str) -> StoreFuture<'a, Option<FieldTask>> {
        Box::pin(async move {
            query_as::<TaskRow>(sql::TASK_BY_ID)
                .bind(project)
                .bind(id)
                .fetch_optional(&self.pool)
                .await?
                .map(FieldTask::try_from)
                .transpose()
        })
    }

    fn run_tasks<'a>(
        &'a self,
        project: &'a str,
        run_id: &'a str,
    ) -> StoreFuture<'a, Vec<FieldTask>> {
        Box::pin(async move { Self::tasks_of_run(&self.pool, project, run_id).await })
    }

    fn runs_under_root<'a>(
        &'a self,
        project: &'a str,
        root_run_id: &'a str,
    ) -> StoreFuture<'a, Vec<ExtractionRun>> {
        Box::pin(async move {
            query_as::<RunRow>(sql::RUNS_UNDER_ROOT)
                .bind(project)
                .bind(root_run_id)
                .fetch_all(&self.pool)
                .await?
                .into_iter()
                .map(ExtractionRun::try_from)
                .collect()
        })
    }

    fn retry_tasks<'a>(
        &'a self,
        project: &'a str,
        entity_id: &'a str,
        fields: Option<&'a [String]>,
    ) -> StoreFuture<'a, Vec<FieldTask>> {
        Box::pin(async move {
            let _writer = self.write_gate().await;
            let mut tx = self.pool.begin().await?;
            let locked: Option<String> = query_scalar(sql::LOCK_ENTITY)
                .bind(project)
                .bind(entity_id)
                .fetch_optional(&mut tx)
                .await?;
            if locked.is_none() {
                return Err(not_found("entity", entity_id));
            }
            let all: Vec<FieldTask> = query_as::<TaskRow>(sql::TASKS_OF_ENTITY)
                .bind(project)
                .bind(entity_id)
                .fetch_all(&mut tx)
                .await?
                .into_iter()
                .map(FieldTask::try_from)
                .collect::<Result<_, _>>()?;
            let mut latest: Vec<&FieldTask> = Vec::new();
            for task in &all {
                if !latest.iter().any(|t| t.field_name == task.field_name) {
                    latest.push(task);
                }
            }
            let chosen: Vec<&FieldTask> = latest
                .into_iter()
                .filter(|t| fields.is_none_or(|names| names.contains(&t.field_name)))
                .filter(|t| matches!(t.state, NodeState::Failed | NodeState::Blocked))
                .collect();
            let at = now();
            for task in &chosen {
                let state = if task.state == NodeState::Failed || task.depends_on.is_empty() {
                    NodeState::Queued
                } else {
                    NodeState::Pending
                };
                query(sql::RESET_TASK)
                    .bind(&task.id)
                    .bind(state.as_str())
                    .bind(&at)
                    .bind(Json(AttemptRecord::retried(&task.attempt_log, &at)))
                    .execute(&mut tx)
                    .await?;
            }
            Self::settle_runs(
                &mut tx,
                project,
                chosen.iter().map(|t| t.run_id.clone()).collect(),
            )
            .await?;
            let mut restarted = Vec::with_capacity(chosen.len());
            for task in &chosen {
                restarted.push(Self::task_by_id(&mut tx, project, &task.id).await?);
            }
            tx.commit().await?;
            Ok(restarted)
        })
    }
}
