//! Extraction runs.

use quarry_core::model::{
    ExtractionResult, ExtractionRun, FeedbackSummary, NewResult, NewWorkflow, PlannedDelivery,
    ReviewDecision, RunScope, RunStatus,
};
use quarry_core::store::prelude::*;
use quarry_core::store::{Reviewed, StoreError, StoreFuture};
use sqlx::types::Json;

use super::{SqlStore, sql_limit};
use crate::clock::{millis_between, new_id, now};
use crate::db::{query, query_as};
use crate::error::not_found;
use crate::rows::{RunRow, enum_text};
use crate::sql;

/// The run look-up.
impl SqlStore {
    pub(super) async fn run(
        &self,
        project: &str,
        id: &str,
    ) -> Result<Option<ExtractionRun>, StoreError> {
        query_as::<RunRow>(sql::RUN_BY_ID)
            .bind(project)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
            .map(ExtractionRun::try_from)
            .transpose()
    }
}

/// The `RunStore`: runs here, results in `results.rs`.
impl RunStore for SqlStore {
    fn start_run<'a>(
        &'a self,
        project: &'a str,
        entity_id: &'a str,
        scope: RunScope,
        triggered_by: &'a str,
        fields: Option<&'a [String]>,
    ) -> StoreFuture<'a, ExtractionRun> {
        Box::pin(async move {
            let _writer = self.write_gate().await;
            self.require_entity(project, entity_id).await?;
            let run = ExtractionRun {
                id: new_id(),
                project_id: project.to_owned(),
                entity_id: entity_id.to_owned(),
                scope,
                triggered_by: triggered_by.to_owned(),
                fields_requested: fields.map(<[String]>::to_vec),
                status: RunStatus::Running,
                error: None,
                started_at: now(),
                finished_at: None,
                duration_ms: None,
                instructions: None,
            };
            query(sql::INSERT_RUN)
                .bind(&run.id)
                .bind(&run.project_id)
                .bind(&run.entity_id)
                .bind(enum_text(&run.scope))
                .bind(&run.triggered_by)
                .bind(run.fields_requested.as_ref().map(Json))
                .bind(enum_text(&run.status))
                .bind(&run.started_at)
                .bind(None::<Json<&quarry_core::model::RunInstructions>>)
                .execute(&self.pool)
                .await?;
            Ok(run)
        })
    }

    fn finish_run<'a>(
        &'a self,
        project: &'a str,
        run_id: &'a str,
        status: RunStatus,
        error: Option<&'a str>,
    ) -> StoreFuture<'a, ExtractionRun> {
        Box::pin(async move {
            let _writer = self.write_gate().await;
            let mut run = self
                .run(project, run_id)
                .await?
                .ok_or_else(|| not_found("run", run_id))?;
            let finished_at = now();
            run.duration_ms = millis_between(&run.started_at, &finished_at);
            run.status = status;
            run.error = error.map(str::to_owned);
            run.finished_at = Some(finished_at);
            query(sql::FINISH_RUN)
                .bind(project)
                .bind(run_id)
                .bind(enum_text(&run.status))
                .bind(&run.error)
                .bind(&run.finished_at)
                .bind(run.duration_ms)
                .execute(&self.pool)
                .await?;
            Ok(run)
        })
    }

    fn get_run<'a>(
        &'a self,
        project: &'a str,
        run_id: &'a str,
    ) -> StoreFuture<'a, Option<ExtractionRun>> {
        Box::pin(self.run(project, run_id))
    }

    fn list_runs<'a>(
        &'a self,
        project: &'a str,
        entity_id: &'a str,
        limit: usize,
    ) -> StoreFuture<'a, Vec<ExtractionRun>> {
        Box::pin(async move {
            query_as::<RunRow>(sql::RUNS_OF_ENTITY)
                .bind(project)
                .bind(entity_id)
                .bind(sql_limit(limit))
                .fetch_all(&self.pool)
                .await?
                .into_iter()
                .map(ExtractionRun::try_from)
                .collect()
        })
    }

    fn runs_page<'a>(
        &'a self,
        project: &'a str,
        entity_id: &'a str,
        before: Option<&'a str>,
        limit: usize,
    ) -> StoreFuture<'a, Vec<ExtractionRun>> {
        let Some(before) = before else {
            return self.list_runs(project, entity_id, limit);
        };
        Box::pin(async move {
            let cursor = query_as::<RunRow>(sql::RUN_BY_ID)
                .bind(project)
                .bind(before)
                .fetch_optional(&self.pool)
                .await?;
            if cursor.is_none() {
                return Err(not_found("run", before));
            }
            query_as::<RunRow>(sql::RUNS_OF_ENTITY_BEFORE)
                .bind(project)
                .bind(entity_id)
                .bind(before)
                .bind(sql_limit(limit))
                .fetch_all(&self.pool)
                .await?
                .into_iter()
                .map(ExtractionRun::try_from)
                .collect()
        })
    }

    fn record_results<'a>(
        &'a self,
        project: &'a str,
        results: &'a [NewResult],
    ) -> StoreFuture<'a, Vec<ExtractionResult>> {
        Box::pin(self.store_results(project, results))
    }

    fn get_result<'a>(
        &'a self,
        project: &'a str,
        id: &'a str,
    ) -> StoreFuture<'a, Option<ExtractionResult>> {
        Box::pin(self.result(project, id))
    }

    fn latest_results<'a>(
        &'a self,
        project: &'a str,
        entity_id: &'a str,
    ) -> StoreFuture<'a, Vec<ExtractionResult>> {
        Box::pin(self.current_results(project, entity_id))
    }

    fn field_history<'a>(
        &'a self,
        project: &'a str,
        entity_id: &'a str,
        field: &'a str,
    ) -> StoreFuture<'a, Vec<ExtractionResult>> {
        Box::pin(self.results_of_field(project, entity_id, field))
    }

    fn review_result_notifying<'a>(
        &'a self,
        project: &'a str,
        id: &'a str,
        decision: &'a ReviewDecision,
        reviewer: &'a str,
        rerun: Option<&'a NewWorkflow>,
        deliveries: &'a [PlannedDelivery],
        runs: &'a [NewWorkflow],
    ) -> StoreFuture<'a, Reviewed> {
        Box::pin(self.review(project, id, decision, reviewer, rerun, deliveries, runs))
    }

    fn feedback_summary<'a>(
        &'a self,
        project: &'a str,
        entity_type: &'a str,
        field: &'a str,
    ) -> StoreFuture<'a, FeedbackSummary> {
        Box::pin(self.feedback(project, entity_type, field))
    }
}
