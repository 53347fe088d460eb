//! What operators watch: the durable queues' depths per state (`/metrics`) and whether the
//! database's schema has every migration this build carries (`/readyz`).

/// The `Store` methods of this area; `Self::migrator()` is the backend's embedded migrations.
macro_rules! operations_methods {
    () => {
        fn queue_depths(&self) -> StoreFuture<'_, QueueDepths> {
            Box::pin(async move {
                let tasks: Vec<(String, i64)> = sqlx::query_as(sql::TASK_QUEUE_DEPTHS)
                    .fetch_all(&self.pool)
                    .await
                    .map_err(backend)?;
                let episodes: Vec<(String, i64)> = sqlx::query_as(sql::EPISODE_QUEUE_DEPTHS)
                    .fetch_all(&self.pool)
                    .await
                    .map_err(backend)?;
                let count_of = |rows: &[(String, i64)], state: &str| {
                    rows.iter()
                        .find(|(name, _)| name == state)
                        .map_or(0, |(_, n)| u64::try_from(*n).unwrap_or(0))
                };
                Ok(QueueDepths {
                    tasks: QueueDepths::TASK_STATES
                        .into_iter()
                        .map(|state| (state, count_of(&tasks, state.as_str())))
                        .collect(),
                    episodes: QueueDepths::EPISODE_STATES
                        .into_iter()
                        .map(|state| (state, count_of(&episodes, state.as_str())))
                        .collect(),
                })
            })
        }

        fn schema_version(&self) -> StoreFuture<'_, SchemaVersion> {
            Box::pin(async move {
                let applied: Option<i64> = sqlx::query_scalar(sql::SCHEMA_VERSION)
                    .fetch_one(&self.pool)
                    .await
                    .map_err(backend)?;
                let latest = Self::migrator()
                    .iter()
                    .map(|migration| migration.version)
                    .max()
                    .unwrap_or(0);
                Ok(SchemaVersion { applied, latest })
            })
        }
    };
}
pub(crate) use operations_methods;
