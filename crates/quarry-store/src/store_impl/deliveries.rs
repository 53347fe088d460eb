//! Webhook deliveries (`DeliveryStore`): written with the event that fires them, delivered as
//! jobs of the leased queue (kind `delivery`).

use quarry_core::model::{Delivery, ExtractionResult, JobKind, Lease, PlannedDelivery};
use quarry_core::store::prelude::*;
use quarry_core::store::{StoreError, StoreFuture};
use sqlx::types::Json;

use super::{SqlStore, sql_limit};
use crate::clock::{new_id, now};
use crate::db::{Tx, query, query_as, query_scalar};
use crate::rows::DeliveryRow;
use crate::sql;

/// The most attempts a delivery gets before it is `dead` (with the worker's default backoff,
/// 30 s doubled up to an hour, about nine hours of tries).
pub(crate) const DELIVERY_ATTEMPTS: i64 = 15;

/// The private step: queue the deliveries of an event in the caller's transaction.
impl SqlStore {
    /// Queues `planned` for `result` (the body carries the result as it is now).
    pub(super) async fn insert_deliveries(
        tx: &mut Tx,
        project: &str,
        result: &ExtractionResult,
        planned: &[PlannedDelivery],
    ) -> Result<(), StoreError> {
        for delivery in planned {
            let id = new_id();
            let body = serde_json::json!({
                "event": delivery.event.as_str(),
                "delivery_id": id,
                "project_id": project,
                "entity_id": result.entity_id,
                "field": result.field_name,
                "result": result,
            });
            query(sql::INSERT_DELIVERY)
                .bind(&id)
                .bind(project)
                .bind(delivery.event.as_str())
                .bind(&result.entity_id)
                .bind(&result.field_name)
                .bind(&result.id)
                .bind(&delivery.url)
                .bind(Json(&body))
                .bind(crate::store_impl::deliveries::DELIVERY_ATTEMPTS)
                .bind(now())
                .execute(&mut *tx)
                .await?;
        }
        Ok(())
    }
}

/// The `DeliveryStore` methods.
impl DeliveryStore for SqlStore {
    fn claim_deliveries<'a>(
        &'a self,
        owner: &'a str,
        lease: std::time::Duration,
        limit: usize,
        busy_projects: &'a [String],
    ) -> StoreFuture<'a, Vec<Delivery>> {
        Box::pin(async move {
            // The scope is the busy projects as `,a,b,` (project ids are UUIDs: no commas,
            // no LIKE wildcards).
            let busy =
                (!busy_projects.is_empty()).then(|| format!(",{},", busy_projects.join(",")));
            let rows: Vec<DeliveryRow> = self
                .claim_jobs(JobKind::Delivery, (owner, lease), limit, busy.as_deref())
                .await?;
            let mut claimed = rows
                .into_iter()
                .map(Delivery::try_from)
                .collect::<Result<Vec<_>, _>>()?;
            claimed.sort_by(|a, b| (&a.created_at, &a.id).cmp(&(&b.created_at, &b.id)));
            Ok(claimed)
        })
    }

    fn finish_delivery<'a>(
        &'a self,
        project: &'a str,
        held: &'a Lease,
        done: bool,
        response_status: Option<i64>,
        error: Option<&'a str>,
    ) -> StoreFuture<'a, Delivery> {
        Box::pin(async move {
            let _writer = self.write_gate().await;
            let mut tx = self.pool.begin().await?;
            Self::fence(&mut tx, project, held).await?;
            let state = if done { "done" } else { "dead" };
            let row = query_as::<DeliveryRow>(sql::END_DELIVERY)
                .bind(project)
                .bind(&held.job_id)
                .bind(state)
                .bind(error)
                .bind(response_status)
                .bind(now())
                .fetch_one(&mut tx)
                .await?;
            tx.commit().await?;
            Delivery::try_from(row)
        })
    }

    fn list_deliveries<'a>(
        &'a self,
        project: &'a str,
        limit: usize,
    ) -> StoreFuture<'a, Vec<Delivery>> {
        Box::pin(async move {
            query_as::<DeliveryRow>(sql::DELIVERIES)
                .bind(project)
                .bind(sql_limit(limit))
                .fetch_all(&self.pool)
                .await?
                .into_iter()
                .map(Delivery::try_from)
                .collect()
        })
    }

    fn redeliver<'a>(
        &'a self,
        project: &'a str,
        id: &'a str,
        more_attempts: i64,
    ) -> StoreFuture<'a, Delivery> {
        Box::pin(async move {
            let _writer = self.write_gate().await;
            let requeued = query_as::<DeliveryRow>(sql::REDELIVER)
                .bind(project)
                .bind(id)
                .bind(more_attempts.max(1))
                .bind(now())
                .fetch_optional(&self.pool)
                .await?;
            if let Some(row) = requeued {
                return Delivery::try_from(row);
            }
            let state: Option<String> =
                query_scalar(sql::queue_sql(JobKind::Delivery, self.dialect()).state_of)
                    .bind(project)
                    .bind(id)
                    .fetch_optional(&self.pool)
                    .await?;
            Err(match state {
                None => StoreError::NotFound {
                    what: "delivery",
                    id: id.to_owned(),
                },
                Some(state) => StoreError::Conflict(format!(
                    "delivery '{id}' is {state}; only a dead or done delivery is redelivered"
                )),
            })
        })
    }
}
