//! The leased queue, once for every job kind (`quarry_core::model::queue`): the take, the
//! heartbeat, the fence every fenced transaction writes first, the release for a retry, and the
//! wake-ups other processes send. Each kind's statements are `sql::QueueSql`; what differs per
//! kind is only what its completion writes (`tasks.rs`, `graph.rs`).

/// The queue's private steps. `$field_tasks` and `$episodes` are the backend's statements.
macro_rules! queue_items {
    ($store:ty, $db:ty, $field_tasks:expr, $episodes:expr, $deliveries:expr) => {
        impl $store {
            fn queue_sql(kind: JobKind) -> &'static sql::QueueSql {
                match kind {
                    JobKind::FieldTask => &$field_tasks,
                    JobKind::Episode => &$episodes,
                    JobKind::Delivery => &$deliveries,
                }
            }

            /// Takes up to `limit` jobs of `kind` under `owner` until now + `lease`, within
            /// `scope` (see each kind's `sql::QueueSql`), oldest first.
            async fn claim_jobs<R>(
                &self,
                kind: JobKind,
                (owner, lease): (&str, std::time::Duration),
                limit: usize,
                scope: Option<&str>,
            ) -> Result<Vec<R>, StoreError>
            where
                R: for<'r> sqlx::FromRow<'r, <$db as sqlx::Database>::Row> + Send + Unpin,
            {
                if limit == 0 {
                    return Ok(Vec::new());
                }
                let _writer = self.write_gate().await;
                // One statement: the take is atomic without a transaction.
                sqlx::query_as::<$db, R>(Self::queue_sql(kind).claim)
                    .bind(now())
                    .bind(owner)
                    .bind($crate::clock::after(lease))
                    .bind(scope)
                    .bind(sql_limit(limit))
                    .fetch_all(&self.pool)
                    .await
                    .map_err(backend)
            }

            /// The first write of every fenced transaction: the job is still running under
            /// exactly this lease, else nothing may be written.
            async fn fence(
                tx: &mut Connection,
                project: &str,
                held: &Lease,
            ) -> Result<(), StoreError> {
                let fenced = sqlx::query(Self::queue_sql(held.kind).fence)
                    .bind(now())
                    .bind(project)
                    .bind(&held.job_id)
                    .bind(&held.owner)
                    .bind(held.attempt)
                    .execute(&mut *tx)
                    .await
                    .map_err(backend)?;
                if fenced.rows_affected() == 0 {
                    return Err(Self::lease_error(tx, project, held).await);
                }
                Ok(())
            }

            /// [`fence`](Self::fence), returning the job's row as it is after the fence.
            async fn fence_row<R>(
                tx: &mut Connection,
                project: &str,
                held: &Lease,
            ) -> Result<R, StoreError>
            where
                R: for<'r> sqlx::FromRow<'r, <$db as sqlx::Database>::Row> + Send + Unpin,
            {
                let fenced = sqlx::query_as::<$db, R>(Self::queue_sql(held.kind).fence)
                    .bind(now())
                    .bind(project)
                    .bind(&held.job_id)
                    .bind(&held.owner)
                    .bind(held.attempt)
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err(backend)?;
                match fenced {
                    Some(row) => Ok(row),
                    None => Err(Self::lease_error(tx, project, held).await),
                }
            }

            /// Why a fenced write changed nothing: no such job (`NotFound`), or `held` is no
            /// longer its lease (`LeaseLost`).
            async fn lease_error(conn: &mut Connection, project: &str, held: &Lease) -> StoreError {
                let state: Option<String> =
                    match sqlx::query_scalar(Self::queue_sql(held.kind).state_of)
                        .bind(project)
                        .bind(&held.job_id)
                        .fetch_optional(&mut *conn)
                        .await
                    {
                        Ok(state) => state,
                        Err(error) => return backend(error),
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
    };
}
pub(crate) use queue_items;

/// The `Store` methods every job kind shares.
macro_rules! queue_methods {
    () => {
        fn renew_lease<'a>(
            &'a self,
            held: &'a Lease,
            lease_for: std::time::Duration,
        ) -> StoreFuture<'a, bool> {
            Box::pin(async move {
                let _writer = self.write_gate().await;
                let renewed = sqlx::query(Self::queue_sql(held.kind).renew)
                    .bind($crate::clock::after(lease_for))
                    .bind(&held.job_id)
                    .bind(&held.owner)
                    .bind(held.attempt)
                    .execute(&self.pool)
                    .await
                    .map_err(backend)?;
                Ok(renewed.rows_affected() == 1)
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
                let mut tx = self.pool.begin().await.map_err(backend)?;
                let released = sqlx::query(Self::queue_sql(held.kind).release)
                    .bind(now())
                    .bind(project)
                    .bind(&held.job_id)
                    .bind(&held.owner)
                    .bind(held.attempt)
                    .bind(&release.error)
                    .bind($crate::clock::after(release.retry_after))
                    .execute(&mut *tx)
                    .await
                    .map_err(backend)?;
                if released.rows_affected() == 0 {
                    return Err(Self::lease_error(&mut tx, project, held).await);
                }
                if held.kind == JobKind::FieldTask {
                    Self::add_attempt_cost(&mut tx, project, held, release).await?;
                }
                tx.commit().await.map_err(backend)?;
                Ok(())
            })
        }

        fn work_signal(&self, kind: JobKind) -> StoreFuture<'_, u64> {
            Box::pin(self.native_work_signal(kind))
        }

        fn work_queued(&self, kind: JobKind, seen: u64) -> StoreFuture<'_, ()> {
            Box::pin(self.native_work_queued(kind, seen))
        }
    };
}
pub(crate) use queue_methods;
