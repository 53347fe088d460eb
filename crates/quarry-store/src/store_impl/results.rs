//! Extraction results, their review, and the feedback tallies reviews keep.

use std::collections::{BTreeMap, BTreeSet};

use quarry_core::model::{
    Confidence, Entity, ExtractionResult, FeedbackSummary, NewResult, NewWorkflow, PlannedDelivery,
    ResultStatus, ReviewDecision,
};
use quarry_core::store::{Reviewed, StoreError};
use serde_json::{Map, Value};
use sqlx::types::Json;

use super::SqlStore;
use crate::clock::{new_id, now};
use crate::db::{Tx, query, query_as, query_scalar};
use crate::error::not_found;
use crate::rows::{EntityRow, ReasonCountRow, ResultRow, StatusCountRow, enum_text, parse_enum};
use crate::sql;

const TOP_REJECTION_REASONS: i64 = 5;

/// Changes to `feedback_counts`: (entity type, field, status, confidence) → delta.
type CountDeltas = BTreeMap<(String, String, String, String), i64>;

/// The result look-up and the write steps of `record_results` and `review_result`.
impl SqlStore {
    pub(super) async fn result(
        &self,
        project: &str,
        id: &str,
    ) -> Result<Option<ExtractionResult>, StoreError> {
        query_as::<ResultRow>(sql::RESULT_BY_ID)
            .bind(project)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
            .map(ExtractionResult::try_from)
            .transpose()
    }

    /// What `record_results` writes, inside the caller's transaction (a task's
    /// completion records its results in its own): lock, supersede, insert, tally.
    pub(super) async fn write_results(
        tx: &mut Tx,
        project: &str,
        results: &[NewResult],
        locked: &BTreeMap<&str, String>,
    ) -> Result<Vec<ExtractionResult>, StoreError> {
        let types = Self::lock_entities(tx, project, results, locked).await?;
        let mut deltas = CountDeltas::new();
        Self::supersede_previous(tx, project, results, &types, &mut deltas).await?;
        let stored = Self::insert_results(tx, project, results, &types, &mut deltas).await?;
        Self::apply_feedback_deltas(tx, project, deltas).await?;
        Ok(stored)
    }

    /// `record_results`, first: locks the results' entities in one order (no deadlock
    /// between batches) and returns each one's type; those in `locked` (with their
    /// type) this transaction holds already.
    pub(super) async fn lock_entities<'r>(
        tx: &mut Tx,
        project: &str,
        results: &'r [NewResult],
        locked: &BTreeMap<&str, String>,
    ) -> Result<BTreeMap<&'r str, String>, StoreError> {
        let entities: BTreeSet<&str> = results
            .iter()
            .map(|result| result.entity_id.as_str())
            .collect();
        let mut types = BTreeMap::new();
        for entity in entities {
            if let Some(entity_type) = locked.get(entity) {
                types.insert(entity, entity_type.clone());
                continue;
            }
            let entity_type: Option<String> = query_scalar(sql::LOCK_ENTITY)
                .bind(project)
                .bind(entity)
                .fetch_optional(&mut *tx)
                .await?;
            let Some(entity_type) = entity_type else {
                return Err(not_found("entity", entity));
            };
            types.insert(entity, entity_type);
        }
        Ok(types)
    }

    /// `record_results`, second: supersedes the current results of every (entity,
    /// field) written, taking them out of the tallies.
    pub(super) async fn supersede_previous(
        tx: &mut Tx,
        project: &str,
        results: &[NewResult],
        types: &BTreeMap<&str, String>,
        deltas: &mut CountDeltas,
    ) -> Result<(), StoreError> {
        let fields: BTreeSet<(&str, &str)> = results
            .iter()
            .map(|result| (result.entity_id.as_str(), result.field_name.as_str()))
            .collect();
        for (entity, field) in fields {
            let superseded = query_as::<StatusCountRow>(sql::SUPERSEDABLE_COUNTS)
                .bind(project)
                .bind(entity)
                .bind(field)
                .fetch_all(&mut *tx)
                .await?;
            for group in superseded {
                *deltas
                    .entry((
                        types[entity].clone(),
                        field.to_owned(),
                        group.status,
                        group.confidence,
                    ))
                    .or_default() -= group.n;
            }
            query(sql::SUPERSEDE_FIELD)
                .bind(project)
                .bind(entity)
                .bind(field)
                .execute(&mut *tx)
                .await?;
        }
        Ok(())
    }

    /// `record_results`, third: inserts the results, counting them into the tallies.
    pub(super) async fn insert_results(
        tx: &mut Tx,
        project: &str,
        results: &[NewResult],
        types: &BTreeMap<&str, String>,
        deltas: &mut CountDeltas,
    ) -> Result<Vec<ExtractionResult>, StoreError> {
        let mut stored = Vec::with_capacity(results.len());
        for result in results {
            let record = ExtractionResult {
                id: new_id(),
                run_id: result.run_id.clone(),
                project_id: project.to_owned(),
                entity_id: result.entity_id.clone(),
                field_name: result.field_name.clone(),
                value: result.value.clone(),
                sources: result.sources.clone(),
                confidence: result.confidence,
                agent_id: result.agent_id.clone(),
                status: result.status,
                rejection_reason: None,
                reviewed_by: None,
                reviewed_at: None,
                created_entity_ids: result.created_entity_ids.clone(),
                duration_ms: result.duration_ms,
                tokens_used: result.tokens_used,
                metadata: result.metadata.clone(),
                created_at: now(),
                workflow_node_run_id: result.workflow_node_run_id.clone(),
            };
            query(sql::INSERT_RESULT)
                .bind(&record.id)
                .bind(&record.run_id)
                .bind(&record.project_id)
                .bind(&record.entity_id)
                .bind(&record.field_name)
                .bind(Json(&record.value))
                .bind(Json(&record.sources))
                .bind(enum_text(&record.confidence))
                .bind(&record.agent_id)
                .bind(enum_text(&record.status))
                .bind(Json(&record.created_entity_ids))
                .bind(record.duration_ms)
                .bind(record.tokens_used)
                .bind(Json(&record.metadata))
                .bind(&record.created_at)
                .bind(&record.workflow_node_run_id)
                .execute(&mut *tx)
                .await?;
            if record.status != ResultStatus::Superseded {
                *deltas
                    .entry((
                        types[record.entity_id.as_str()].clone(),
                        record.field_name.clone(),
                        enum_text(&record.status),
                        enum_text(&record.confidence),
                    ))
                    .or_default() += 1;
            }
            stored.push(record);
        }
        Ok(stored)
    }

    /// The tallies, last in a write and in key order: one lock order across
    /// transactions.
    pub(super) async fn apply_feedback_deltas(
        tx: &mut Tx,
        project: &str,
        deltas: CountDeltas,
    ) -> Result<(), StoreError> {
        for ((entity_type, field, status, confidence), n) in deltas {
            if n == 0 {
                continue;
            }
            query(sql::ADD_FEEDBACK_COUNT)
                .bind(project)
                .bind(entity_type)
                .bind(field)
                .bind(status)
                .bind(confidence)
                .bind(n)
                .execute(&mut *tx)
                .await?;
        }
        Ok(())
    }

    /// `review_result`, first: locks the entity of result `id` (the entity first, as
    /// `record_results` does: one lock order) and returns its type, `None` when there
    /// is no such result.
    pub(super) async fn lock_entity_of_result(
        tx: &mut Tx,
        project: &str,
        id: &str,
    ) -> Result<Option<String>, StoreError> {
        query_scalar(sql::LOCK_ENTITY_OF_RESULT)
            .bind(project)
            .bind(id)
            .fetch_optional(&mut *tx)
            .await
    }

    /// `review_result`, second: moves result `id` from pending to `status`; `false`
    /// when it was not pending.
    pub(super) async fn mark_reviewed(
        tx: &mut Tx,
        project: &str,
        id: &str,
        status: &ResultStatus,
        reason: Option<&str>,
        reviewer: &str,
        at: &str,
    ) -> Result<bool, StoreError> {
        let reviewed = query(sql::REVIEW_PENDING_RESULT)
            .bind(project)
            .bind(id)
            .bind(enum_text(status))
            .bind(reason)
            .bind(reviewer)
            .bind(at)
            .execute(&mut *tx)
            .await?;
        Ok(reviewed > 0)
    }

    /// `review_result`, third: the review event of result `id`.
    pub(super) async fn record_review_event(
        tx: &mut Tx,
        project: &str,
        id: &str,
        decision: &ReviewDecision,
        reason: Option<&str>,
        reviewer: &str,
        at: &str,
    ) -> Result<(), StoreError> {
        let decision_name = match decision {
            ReviewDecision::Approve => "approve",
            ReviewDecision::Reject { .. } => "reject",
        };
        query(sql::INSERT_REVIEW_EVENT)
            .bind(new_id())
            .bind(project)
            .bind(id)
            .bind(decision_name)
            .bind(reason)
            .bind(reviewer)
            .bind(at)
            .execute(&mut *tx)
            .await?;
        Ok(())
    }

    /// `review_result`, fourth: the tallies of `result`, which went from pending to
    /// `status`, and the rejection reason.
    pub(super) async fn tally_review(
        tx: &mut Tx,
        project: &str,
        entity_type: &str,
        result: &ExtractionResult,
        status: &ResultStatus,
        reason: Option<&str>,
    ) -> Result<(), StoreError> {
        let confidence = enum_text(&result.confidence);
        let key = |status: &ResultStatus| {
            (
                entity_type.to_owned(),
                result.field_name.clone(),
                enum_text(status),
                confidence.clone(),
            )
        };
        let mut deltas = CountDeltas::new();
        deltas.insert(key(&ResultStatus::Pending), -1);
        deltas.insert(key(status), 1);
        Self::apply_feedback_deltas(&mut *tx, project, deltas).await?;
        if let Some(reason) = reason {
            query(sql::ADD_FEEDBACK_REASON)
                .bind(project)
                .bind(entity_type)
                .bind(&result.field_name)
                .bind(reason)
                .bind(1_i64)
                .execute(&mut *tx)
                .await?;
        }
        Ok(())
    }

    /// `review_result`, last: an approval ends the field's tasks that waited for a
    /// person (their runs settle, so dependents are queued); a rejection fails the task
    /// that waited on this very result.
    pub(super) async fn release_waiting_tasks(
        tx: &mut Tx,
        project: &str,
        result: &ExtractionResult,
        reason: Option<&str>,
        at: &str,
    ) -> Result<Vec<String>, StoreError> {
        let run_ids: Vec<String> = if result.status == ResultStatus::Approved {
            query_scalar(sql::APPROVE_WAITING_TASKS)
                .bind(project)
                .bind(&result.entity_id)
                .bind(&result.field_name)
                .bind(at)
                .fetch_all(&mut *tx)
                .await?
        } else {
            let why = match reason {
                Some(reason) => format!(
                    "rejected by {}: {reason}",
                    result.reviewed_by.as_deref().unwrap_or("a reviewer")
                ),
                None => format!(
                    "rejected by {}",
                    result.reviewed_by.as_deref().unwrap_or("a reviewer")
                ),
            };
            query_scalar(sql::REJECT_WAITING_TASKS)
                .bind(project)
                .bind(&result.entity_id)
                .bind(&result.field_name)
                .bind(&result.id)
                .bind(why)
                .bind(at)
                .fetch_all(&mut *tx)
                .await?
        };
        Self::settle_runs(tx, project, run_ids.clone()).await?;
        Ok(run_ids)
    }

    /// `review_result` of an approval, last: the approved value becomes the entity's
    /// field.
    pub(super) async fn promote_value(
        tx: &mut Tx,
        project: &str,
        result: &ExtractionResult,
        at: &str,
    ) -> Result<Entity, StoreError> {
        let mut promoted = query_as::<EntityRow>(sql::ENTITY_BY_ID)
            .bind(project)
            .bind(&result.entity_id)
            .fetch_optional(&mut *tx)
            .await?
            .map(Entity::from)
            .ok_or_else(|| not_found("entity", &result.entity_id))?;
        promoted
            .fields
            .insert(result.field_name.clone(), result.value.clone());
        promoted.updated_at = at.to_owned();
        query(sql::SET_ENTITY_FIELDS)
            .bind(project)
            .bind(&promoted.id)
            .bind(Json(&promoted.fields))
            .bind(&promoted.updated_at)
            .execute(&mut *tx)
            .await?;
        Ok(promoted)
    }
}

/// The results steps of the `RunStore` (`runs.rs`).
impl SqlStore {
    pub(super) async fn store_results(
        &self,
        project: &str,
        results: &[NewResult],
    ) -> Result<Vec<ExtractionResult>, StoreError> {
        let _writer = self.write_gate().await;
        let mut tx = self.pool.begin().await?;
        let stored = Self::write_results(&mut tx, project, results, &BTreeMap::new()).await?;
        tx.commit().await?;
        Ok(stored)
    }

    pub(super) async fn current_results(
        &self,
        project: &str,
        entity_id: &str,
    ) -> Result<Vec<ExtractionResult>, StoreError> {
        let rows = query_as::<ResultRow>(sql::CURRENT_RESULTS)
            .bind(project)
            .bind(entity_id)
            .fetch_all(&self.pool)
            .await?;
        let mut latest: Vec<ExtractionResult> = Vec::new();
        for row in rows {
            let result = ExtractionResult::try_from(row)?;
            // Rows come newest first within each field: keep the first of each.
            if latest
                .last()
                .is_none_or(|kept| kept.field_name != result.field_name)
            {
                latest.push(result);
            }
        }
        Ok(latest)
    }

    pub(super) async fn results_of_field(
        &self,
        project: &str,
        entity_id: &str,
        field: &str,
    ) -> Result<Vec<ExtractionResult>, StoreError> {
        query_as::<ResultRow>(sql::FIELD_HISTORY)
            .bind(project)
            .bind(entity_id)
            .bind(field)
            .fetch_all(&self.pool)
            .await?
            .into_iter()
            .map(ExtractionResult::try_from)
            .collect()
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) async fn review(
        &self,
        project: &str,
        id: &str,
        decision: &ReviewDecision,
        reviewer: &str,
        rerun: Option<&NewWorkflow>,
        deliveries: &[PlannedDelivery],
        runs: &[NewWorkflow],
    ) -> Result<Reviewed, StoreError> {
        let _writer = self.write_gate().await;
        let (status, reason) = match decision {
            ReviewDecision::Approve => (ResultStatus::Approved, None),
            ReviewDecision::Reject { reason } => (ResultStatus::Rejected, reason.as_deref()),
        };
        let at = now();
        let mut tx = self.pool.begin().await?;
        let Some(entity_type) = Self::lock_entity_of_result(&mut tx, project, id).await? else {
            return Err(not_found("result", id));
        };
        if !Self::mark_reviewed(&mut tx, project, id, &status, reason, reviewer, &at).await? {
            tx.rollback().await?;
            return match self.result(project, id).await? {
                None => Err(not_found("result", id)),
                Some(result) => Err(StoreError::InvalidState(format!(
                    "result '{id}' is {}; only pending results can be reviewed",
                    enum_text(&result.status)
                ))),
            };
        }
        Self::record_review_event(&mut tx, project, id, decision, reason, reviewer, &at).await?;
        let result = query_as::<ResultRow>(sql::RESULT_BY_ID)
            .bind(project)
            .bind(id)
            .fetch_one(&mut tx)
            .await?;
        let result = ExtractionResult::try_from(result)?;
        Self::tally_review(&mut tx, project, &entity_type, &result, &status, reason).await?;
        let entity = if status == ResultStatus::Approved {
            Some(Self::promote_value(&mut tx, project, &result, &at).await?)
        } else {
            None
        };
        let resumed = Self::release_waiting_tasks(&mut tx, project, &result, reason, &at).await?;
        let rerun = match rerun {
            Some(workflow) => Some(Self::insert_workflow(&mut tx, project, workflow).await?),
            None => None,
        };
        Self::insert_deliveries(&mut tx, project, &result, deliveries).await?;
        for run in runs {
            Self::insert_workflow(&mut tx, project, run).await?;
        }
        tx.commit().await?;
        Ok(Reviewed {
            result,
            entity,
            rerun,
            resumed,
        })
    }

    pub(super) async fn feedback(
        &self,
        project: &str,
        entity_type: &str,
        field: &str,
    ) -> Result<FeedbackSummary, StoreError> {
        let groups = query_as::<StatusCountRow>(sql::FEEDBACK_COUNTS)
            .bind(project)
            .bind(entity_type)
            .bind(field)
            .fetch_all(&self.pool)
            .await?;
        let reasons = query_as::<ReasonCountRow>(sql::FEEDBACK_REASONS)
            .bind(project)
            .bind(entity_type)
            .bind(field)
            .bind(TOP_REJECTION_REASONS)
            .fetch_all(&self.pool)
            .await?;
        // Per confidence level: (approved, rejected).
        let levels = [Confidence::High, Confidence::Medium, Confidence::Low];
        let mut by_level = [(0_i64, 0_i64); 3];
        let (mut total, mut approved, mut rejected) = (0, 0, 0);
        for group in groups {
            let status: ResultStatus = parse_enum("extraction_results.status", &group.status)?;
            let confidence: Confidence =
                parse_enum("extraction_results.confidence", &group.confidence)?;
            let level = levels.iter().position(|l| *l == confidence).unwrap_or(0);
            total += group.n;
            match status {
                ResultStatus::Approved => {
                    approved += group.n;
                    by_level[level].0 += group.n;
                }
                ResultStatus::Rejected => {
                    rejected += group.n;
                    by_level[level].1 += group.n;
                }
                ResultStatus::Pending | ResultStatus::Superseded => {}
            }
        }
        let rate = |approved: i64, rejected: i64| {
            (approved + rejected > 0).then(|| approved as f64 / (approved + rejected) as f64)
        };
        let mut approval_rate_by_confidence = Map::new();
        for (level, (approved, rejected)) in levels.iter().zip(by_level) {
            if let Some(rate) = rate(approved, rejected) {
                approval_rate_by_confidence.insert(enum_text(level), Value::from(rate));
            }
        }
        Ok(FeedbackSummary {
            entity_type: entity_type.to_owned(),
            field_name: field.to_owned(),
            total,
            approved,
            rejected,
            approval_rate: rate(approved, rejected),
            common_rejection_reasons: reasons.into_iter().map(|r| (r.reason, r.n)).collect(),
            approval_rate_by_confidence,
        })
    }
}
