//! The leased queue, once for every job kind (`quarry_core::model::queue`): the take, the
//! heartbeat, the fence every fenced transaction writes first, the release for a retry, and the
//! wake-ups other processes send. Each kind's statements are `sql::QueueSql`; what differs per
//! kind is only what its completion writes (`tasks.rs`, `graph.rs`), and per dialect only the take
//! (`sql::queue_sql`).

use quarry_core::model::{JobKind, Lease, Release};
use quarry_core::store::{QueueStore, StoreError, StoreFuture};

use super::{SqlStore, sql_limit};
use crate::clock::now;
use crate::db::{Record, Tx, query, query_as, query_scalar};
use crate::error::not_found;
use crate::sql::queue_sql;

/// The queue's private steps.
impl SqlStore {
    /// Takes up to `limit` jobs of `kind` under `owner` until now + `lease`, within
    /// `scope` (see each kind's `sql::QueueSql`), oldest first.
    pub(super) async fn claim_jobs<R: Record>(
        &self,
        kind: JobKind,
        (owner, lease): (&str, std::time::Duration),
        limit: usize,
        scope: Option<&str>,
    ) -> Result<Vec<R>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let _writer = self.write_gate().await;
        // One statement: the take is atomic without a transaction.
        query_as::<R>(queue_sql(kind, self.dialect()).claim)
            .bind(now())
            .bind(owner)
            .bind(crate::clock::after(lease))
            .bind(scope)
            .bind(sql_limit(limit))
            .fetch_all(&self.pool)
            .await
    }

    /// The first write of every fenced transaction: the job is still running under
    /// exactly this lease, else nothing may be written.
    pub(super) async fn fence(tx: &mut Tx, project: &str, held: &Lease) -> Result<(), StoreError> {
        let fenced = query(queue_sql(held.kind, tx.dialect()).fence)
            .bind(now())
            .bind(project)
            .bind(&held.job_id)
            .bind(&held.owner)
            .bind(held.attempt)
            .execute(&mut *tx)
            .await?;
        if fenced == 0 {
            return Err(Self::lease_error(tx, project, held).await);
        }
        Ok(())
    }

    /// [`fence`](Self::fence), returning the job's row as it is after the fence.
    pub(super) async fn fence_row<R: Record>(
        tx: &mut Tx,
        project: &str,
        held: &Lease,
    ) -> Result<R, StoreError> {
        let fenced = query_as::<R>(queue_sql(held.kind, tx.dialect()).fence)
            .bind(now())
            .bind(project)
            .bind(&held.job_id)
            .bind(&held.owner)
            .bind(held.attempt)
            .fetch_optional(&mut *tx)
            .await?;
        match fenced {
            Some(row) => Ok(row),
            None => Err(Self::lease_error(tx, project, held).await),
        }
    }

    /// Why a fenced write changed nothing: no such job (`NotFound`), or `held` is no
    /// longer its lease (`LeaseLost`).
    pub(super) async fn lease_error(tx: &mut Tx, project: &str, held: &Lease) -> StoreError {
        let state: Option<String> = match query_scalar(queue_sql(held.kind, tx.dialect()).state_of)
            .bind(project)
            .bind(&held.job_id)
            .fetch_optional(&mut *tx)
            .await
        {
            Ok(state) => state,
            Err(error) => return error,
        };
        let what = held.kind.noun();
        match state {
            None => not_found(what, &held.job_id),
            Some(state) => StoreError::LeaseLost(format!(
                "{what} '{}' is no longer held by {} (attempt {}); it is {state}: its \
                 lease expired and it was taken over, or it ended",
                held.job_id, held.owner, held.attempt
            )),
        }
    }
}

/// The `Store` methods every job kind shares.
impl QueueStore for SqlStore {
    fn renew_lease<'a>(
        &'a self,
        held: &'a Lease,
        lease_for: std::time::Duration,
    ) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let _writer = self.write_gate().await;
            let renewed = query(queue_sql(held.kind, self.dialect()).renew)
                .bind(crate::clock::after(lease_for))
                .bind(&held.job_id)
                .bind(&held.owner)
                .bind(held.attempt)
                .execute(&self.pool)
                .await?;
            Ok(renewed == 1)
        })
    }

    fn release_job<'a>(
        &'a self,
        project: &'a str,
        held: &'a Lease,
        release: &'a Release,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let _writer = self.write_gate().await;
            let mut tx = self.pool.begin().await?;
            let released = query(queue_sql(held.kind, self.dialect()).release)
                .bind(now())
                .bind(project)
                .bind(&held.job_id)
                .bind(&held.owner)
                .bind(held.attempt)
                .bind(&release.error)
                .bind(crate::clock::after(release.retry_after))
                .execute(&mut tx)
                .await?;
            if released == 0 {
                return Err(Self::lease_error(&mut tx, project, held).await);
            }
            if held.kind == JobKind::FieldTask {
                Self::add_attempt_cost(&mut tx, project, held, release).await?;
            }
            tx.commit().await?;
            Ok(())
        })
    }

    /// PostgreSQL: other processes' wake-ups (`LISTEN`, started by the first call). SQLite has
    /// no notifications: one process writes and wakes its own workers.
    fn work_signal(&self, kind: JobKind) -> StoreFuture<'_, u64> {
        Box::pin(async move {
            match &self.postgres {
                Some(pg) => pg.work_signal(kind).await,
                None => Ok(0),
            }
        })
    }

    fn work_queued(&self, kind: JobKind, seen: u64) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            match &self.postgres {
                Some(pg) => {
                    pg.work_queued(kind, seen).await;
                    Ok(())
                }
                None => std::future::pending().await,
            }
        })
    }
}
