//! The accept loop: HTTP/1.1 connections served by hyper, with the limits a server facing hostile
//! clients needs.
//!
//! - A request head must arrive within the header timeout of its first byte, and a connection
//!   with no request in flight is closed after the idle timeout (slowloris and forgotten
//!   keep-alive connections end; a request in flight is bounded by the request deadline).
//! - At most `max_connections` are open. At the cap a new connection evicts the oldest one with
//!   no request in flight (a slow or idle client), so a client that sends its request promptly is
//!   served however many slow connections are open; when every connection has a request in
//!   flight, the new one is closed at once.
//! - On shutdown the listener stops accepting, idle connections close, requests in flight get
//!   the grace period to finish, and the connections still open after it are closed (their
//!   handlers dropped).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};
use tokio::time::Instant;

use crate::connection::{Activity, Observed, Timeouts, Tracked};

/// How connections are limited; `quarry serve` exposes each as a flag.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// Time from a request head's first byte to its end.
    pub header_timeout: Duration,
    /// Time a connection may stay open with no request in flight.
    pub idle_timeout: Duration,
    /// Connections open at once.
    pub max_connections: usize,
    /// Time requests in flight get to finish after a shutdown signal.
    pub shutdown_grace: Duration,
    /// Longest request line (method, URI and version), in bytes; longer ones get a JSON 414.
    pub max_request_line_bytes: usize,
}

/// Default connection cap: half of a 20,000 file-descriptor limit, leaving the rest for the
/// database, index files and the sockets of connections being refused or closed.
pub const DEFAULT_MAX_CONNECTIONS: usize = 10_000;

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_connections: DEFAULT_MAX_CONNECTIONS,
            shutdown_grace: Duration::from_secs(5),
            max_request_line_bytes: 8 * 1024,
        }
    }
}

/// The open connections, oldest first (ids only grow).
struct Registry {
    open: Mutex<BTreeMap<u64, Arc<Activity>>>,
    emptied: Notify,
}

impl Registry {
    fn open(&self) -> MutexGuard<'_, BTreeMap<u64, Arc<Activity>>> {
        self.open
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Registers a new connection, evicting the oldest one with no request in flight when at
    /// `cap`; false when every open connection is busy.
    fn admit(&self, id: u64, activity: Arc<Activity>, cap: usize) -> bool {
        let mut open = self.open();
        if open.len() >= cap {
            let Some(oldest) = open
                .iter()
                .find(|(_, activity)| !activity.is_busy())
                .map(|(&id, _)| id)
            else {
                return false;
            };
            if let Some(evicted) = open.remove(&oldest) {
                evicted.evict();
            }
        }
        open.insert(id, activity);
        true
    }

    fn remove(&self, id: u64) {
        let mut open = self.open();
        open.remove(&id);
        if open.is_empty() {
            self.emptied.notify_waiters();
        }
    }

    async fn wait_empty(&self) {
        loop {
            let emptied = self.emptied.notified();
            if self.open().is_empty() {
                return;
            }
            emptied.await;
        }
    }

    fn evict_all(&self) {
        for activity in std::mem::take(&mut *self.open()).into_values() {
            activity.evict();
        }
    }
}

/// Serves `router` on `listener` until `shutdown` completes, then drains as described in the
/// module documentation and returns.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()>,
) {
    let registry = Arc::new(Registry {
        open: Mutex::new(BTreeMap::new()),
        emptied: Notify::new(),
    });
    let (draining, drain) = watch::channel(false);
    let mut http = http1::Builder::new();
    http.keep_alive(true).header_read_timeout(None);
    let mut next_id = 0u64;
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => stream,
                Err(error) => {
                    // Out of file descriptors or similar: give closing connections a moment.
                    tracing::warn!(%error, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        next_id += 1;
        let activity = Activity::new(limits.max_request_line_bytes);
        if !registry.admit(next_id, activity.clone(), limits.max_connections.max(1)) {
            tracing::warn!(
                cap = limits.max_connections,
                "connection cap reached with every connection busy; closing a new connection"
            );
            drop(stream);
            continue;
        }
        let _ = stream.set_nodelay(true);
        tokio::spawn(serve_connection(
            ConnectionTask {
                id: next_id,
                stream,
                activity,
                router: router.clone(),
                registry: registry.clone(),
                drain: drain.clone(),
                timeouts: Timeouts {
                    header: limits.header_timeout,
                    idle: limits.idle_timeout,
                },
            },
            http.clone(),
        ));
    }
    drop(listener);
    let _ = draining.send(true);
    if tokio::time::timeout(limits.shutdown_grace, registry.wait_empty())
        .await
        .is_err()
    {
        tracing::warn!(
            grace = ?limits.shutdown_grace,
            "requests still in flight after the shutdown grace period; abandoning them"
        );
        registry.evict_all();
    }
}

struct ConnectionTask {
    id: u64,
    stream: TcpStream,
    activity: Arc<Activity>,
    router: Router,
    registry: Arc<Registry>,
    drain: watch::Receiver<bool>,
    timeouts: Timeouts,
}

/// One connection, until it ends, times out, is evicted, or drains at shutdown.
async fn serve_connection(task: ConnectionTask, http: http1::Builder) {
    let ConnectionTask {
        id,
        stream,
        activity,
        router,
        registry,
        mut drain,
        timeouts,
    } = task;
    let io = TokioIo::new(Observed::new(stream, activity.clone()));
    let service = Tracked {
        router,
        activity: activity.clone(),
    };
    let connection = http.serve_connection(io, service);
    tokio::pin!(connection);
    let mut draining = false;
    loop {
        if activity.was_evicted() {
            break;
        }
        // Far enough never to fire: a busy connection waits for its phase to change.
        let deadline = activity
            .deadline(timeouts)
            .unwrap_or_else(|| Instant::now() + Duration::from_secs(86_400));
        tokio::select! {
            _ = connection.as_mut() => break,
            () = activity.evicted.notified() => break,
            () = activity.changed.notified() => {}
            () = tokio::time::sleep_until(deadline) => {
                if activity.deadline(timeouts).is_some_and(|due| due <= Instant::now()) {
                    break;
                }
            }
            _ = drain.changed(), if !draining => {
                // Idle connections close now; a request in flight or a head being read may
                // finish, answered with `Connection: close`.
                if activity.is_idle() {
                    break;
                }
                draining = true;
                connection.as_mut().graceful_shutdown();
            }
        }
    }
    registry.remove(id);
}
