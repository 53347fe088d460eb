//! Wake-ups across processes on PostgreSQL. Migration 0011's triggers send `NOTIFY quarry_work`
//! with a job kind whenever a job becomes claimable (inserted or set back to waiting); the
//! notification is delivered when that transaction commits. One `LISTEN` connection per store
//! counts them per kind, and a worker that read the count before its claim wakes as soon as it
//! moves — instead of at its next poll. Polling stays as the fallback for what no notification
//! announces (a backoff ending, a lease expiring) and for notifications lost while the listening
//! connection was down (a reconnect counts as a notification of every kind).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use quarry_core::model::JobKind;
use quarry_core::store::StoreError;
use sqlx::postgres::{PgListener, PgPool};
use tokio::sync::{Notify, OnceCell};
use tokio::task::JoinHandle;

use crate::error::backend;

/// The channel migration 0011's triggers notify.
const CHANNEL: &str = "quarry_work";

/// How long the listener waits before reconnecting after an error.
const RECONNECT_AFTER: Duration = Duration::from_secs(1);

#[derive(Default)]
pub(crate) struct WorkFeed {
    /// Notifications heard, per kind (`JobKind::ALL` order).
    heard: [AtomicU64; JobKind::ALL.len()],
    changed: Notify,
    listening: OnceCell<()>,
    listener: Mutex<Option<JoinHandle<()>>>,
}

fn slot(kind: JobKind) -> usize {
    JobKind::ALL
        .iter()
        .position(|k| *k == kind)
        .unwrap_or_default()
}

impl WorkFeed {
    /// The count for `kind`, after making sure this store listens (the first call connects and
    /// subscribes before it returns, so a claim made after it misses no later notification).
    pub(crate) async fn signal(
        self: &Arc<Self>,
        pool: &PgPool,
        kind: JobKind,
    ) -> Result<u64, StoreError> {
        self.listening.get_or_try_init(|| self.listen(pool)).await?;
        Ok(self.heard[slot(kind)].load(Ordering::SeqCst))
    }

    /// Resolves once the count for `kind` has passed `seen`.
    pub(crate) async fn queued(&self, kind: JobKind, seen: u64) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            // Registered before the check: a notification between the two is not missed.
            changed.as_mut().enable();
            if self.heard[slot(kind)].load(Ordering::SeqCst) > seen {
                return;
            }
            changed.await;
        }
    }

    fn hear(&self, kinds: &[JobKind]) {
        for kind in kinds {
            self.heard[slot(*kind)].fetch_add(1, Ordering::SeqCst);
        }
        self.changed.notify_waiters();
    }

    async fn listen(self: &Arc<Self>, pool: &PgPool) -> Result<(), StoreError> {
        let mut listener = PgListener::connect_with(pool).await.map_err(backend)?;
        listener.listen(CHANNEL).await.map_err(backend)?;
        // The task holds the feed weakly: it ends once the store is dropped.
        let feed = Arc::downgrade(self);
        let task = tokio::spawn(relay(listener, feed));
        *self
            .listener
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(task);
        Ok(())
    }
}

impl Drop for WorkFeed {
    fn drop(&mut self) {
        let task = self
            .listener
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        if let Some(task) = task {
            task.abort();
        }
    }
}

/// Counts the notifications until the feed is dropped.
async fn relay(mut listener: PgListener, feed: Weak<WorkFeed>) {
    loop {
        let received = listener.try_recv().await;
        let Some(alive) = feed.upgrade() else {
            return;
        };
        match received {
            // A payload this version does not know (a newer process's kind) wakes nobody.
            Ok(Some(notification)) => {
                if let Some(kind) = JobKind::parse(notification.payload()) {
                    alive.hear(&[kind]);
                }
            }
            // The connection dropped and came back: what was sent meanwhile is lost.
            Ok(None) => alive.hear(&JobKind::ALL),
            // The next call reconnects; what is sent until then is lost, so everyone looks.
            Err(_) => {
                alive.hear(&JobKind::ALL);
                drop(alive);
                tokio::time::sleep(RECONNECT_AFTER).await;
            }
        }
    }
}
