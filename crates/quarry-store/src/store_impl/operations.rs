//! What operators watch: the durable queues' depths per state (`/metrics`) and whether the
//! database's schema has every migration this build carries (`/readyz`).

use quarry_core::store::prelude::*;
use quarry_core::store::{QueueDepths, SchemaVersion, StoreFuture};

use super::SqlStore;
use crate::db::{query_as, query_scalar};
use crate::sql;

/// The `Store` methods of this area; `self.migrator()` is the backend's embedded migrations.
impl OperationsStore for SqlStore {
    fn queue_depths(&self) -> StoreFuture<'_, QueueDepths> {
        Box::pin(async move {
            let tasks: Vec<(String, i64)> = query_as(sql::TASK_QUEUE_DEPTHS)
                .fetch_all(&self.pool)
                .await?;
            let episodes: Vec<(String, i64)> = query_as(sql::EPISODE_QUEUE_DEPTHS)
                .fetch_all(&self.pool)
                .await?;
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
            let applied: Option<i64> = query_scalar(sql::SCHEMA_VERSION)
                .fetch_one(&self.pool)
                .await?;
            let latest = self
                .migrator()
                .iter()
                .map(|migration| migration.version)
                .max()
                .unwrap_or(0);
            Ok(SchemaVersion { applied, latest })
        })
    }
}
