//! What one client connection is doing, as the listener needs to know it: idle between requests,
//! reading a request head, or busy with a request. The socket wrapper ([`Observed`]) sees the
//! bytes arrive and refuses an over-long request line with a JSON 414; the service wrapper
//! ([`Tracked`]) marks a connection busy from the request head until its response body ends.
//! The listener (`listener.rs`) times idle and head-reading connections out, and at its cap
//! evicts the oldest connection that is not busy.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, Response};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use quarry_core::ErrorCode;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;
use tokio::time::Instant;
use tower::ServiceExt;

use crate::error::ApiError;

/// Bytes of a refused request's rest read and discarded before closing, so the client sees the
/// 414 instead of a reset.
const DRAIN_LIMIT: usize = 64 * 1024;

/// A connection's state, shared by its socket wrapper, its service wrapper and the listener.
pub struct Activity {
    phase: Mutex<Phase>,
    /// Longest request line (method, URI, version) accepted, in bytes.
    max_request_line: usize,
    /// Signalled when the phase changes, so the listener re-reads the connection's deadline.
    pub changed: Notify,
    /// Signalled when the listener evicts the connection to make room for a new one.
    pub evicted: Notify,
    evicted_flag: AtomicBool,
}

#[derive(Debug, Clone, Copy)]
enum Phase {
    /// No request in flight and no byte of the next one yet, since `since`.
    Idle { since: Instant },
    /// The first byte of a request head arrived at `since`; `line` counts the request line's
    /// bytes until its end is seen.
    Head { since: Instant, line: Option<usize> },
    /// `requests` requests are in flight (their heads were read).
    Busy { requests: usize },
}

/// When the listener should close a connection that is not busy.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    /// From a request head's first byte to its end.
    pub header: Duration,
    /// With no request in flight and no byte of a next one.
    pub idle: Duration,
}

impl Activity {
    pub fn new(max_request_line: usize) -> Arc<Activity> {
        Arc::new(Activity {
            phase: Mutex::new(Phase::Idle {
                since: Instant::now(),
            }),
            max_request_line,
            changed: Notify::new(),
            evicted: Notify::new(),
            evicted_flag: AtomicBool::new(false),
        })
    }

    fn phase(&self) -> MutexGuard<'_, Phase> {
        // The phase is plain data; a panic elsewhere cannot leave it half-written.
        self.phase
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// True while a request is in flight (the connection is not evicted for room).
    pub fn is_busy(&self) -> bool {
        matches!(*self.phase(), Phase::Busy { .. })
    }

    /// True with no request in flight and no byte of a next one.
    pub fn is_idle(&self) -> bool {
        matches!(*self.phase(), Phase::Idle { .. })
    }

    /// When the connection times out if nothing changes; `None` while busy (a request in
    /// flight is bounded by the request deadline instead).
    pub fn deadline(&self, timeouts: Timeouts) -> Option<Instant> {
        match *self.phase() {
            Phase::Idle { since } => Some(since + timeouts.idle),
            Phase::Head { since, .. } => Some(since + timeouts.header),
            Phase::Busy { .. } => None,
        }
    }

    /// Asks the connection to close now (it keeps no request in flight).
    pub fn evict(&self) {
        self.evicted_flag.store(true, Ordering::SeqCst);
        self.evicted.notify_one();
    }

    pub fn was_evicted(&self) -> bool {
        self.evicted_flag.load(Ordering::SeqCst)
    }

    /// Bytes arrived from the client; false when they make the request line too long.
    fn on_read(&self, bytes: &[u8]) -> bool {
        if bytes.is_empty() {
            return true; // the end of the stream starts no request
        }
        let mut phase = self.phase();
        let (since, line) = match *phase {
            Phase::Busy { .. } => return true,
            Phase::Idle { .. } => (Instant::now(), Some(0)),
            Phase::Head { since, line } => (since, line),
        };
        // The request line's length so far, and whether it is still open after these bytes.
        let (length, line) = match line {
            None => (0, None),
            Some(read) => match bytes.iter().position(|&b| b == b'\n') {
                Some(end) => (read + end, None),
                None => (read + bytes.len(), Some(read + bytes.len())),
            },
        };
        let started = matches!(*phase, Phase::Idle { .. });
        *phase = Phase::Head { since, line };
        drop(phase);
        if started {
            self.changed.notify_one();
        }
        length <= self.max_request_line
    }

    fn begin_request(self: &Arc<Self>) -> RequestGuard {
        let mut phase = self.phase();
        *phase = match *phase {
            Phase::Busy { requests } => Phase::Busy {
                requests: requests + 1,
            },
            _ => Phase::Busy { requests: 1 },
        };
        drop(phase);
        self.changed.notify_one();
        RequestGuard(self.clone())
    }
}

/// A request in flight; the connection turns idle when the last one ends.
struct RequestGuard(Arc<Activity>);

impl Drop for RequestGuard {
    fn drop(&mut self) {
        let mut phase = self.0.phase();
        if let Phase::Busy { requests } = *phase {
            *phase = if requests > 1 {
                Phase::Busy {
                    requests: requests - 1,
                }
            } else {
                Phase::Idle {
                    since: Instant::now(),
                }
            };
        }
        drop(phase);
        self.0.changed.notify_one();
    }
}

/// The router, marking its connection busy from each request's head until the end of its
/// response body (or until the request is dropped).
#[derive(Clone)]
pub struct Tracked {
    pub router: Router,
    pub activity: Arc<Activity>,
}

impl hyper::service::Service<Request<Incoming>> for Tracked {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        let guard = self.activity.begin_request();
        let router = self.router.clone();
        Box::pin(async move {
            let response = router.oneshot(request.map(Body::new)).await?;
            Ok(response.map(|body| {
                Body::new(body.map_frame(move |frame| {
                    let _in_flight = &guard;
                    frame
                }))
            }))
        })
    }
}

/// The client socket, reporting reads to its [`Activity`]. A request line over the limit is
/// answered here with a JSON 414: the answer is written, the write side shut, the rest of the
/// request read and discarded (up to [`DRAIN_LIMIT`]), and the connection then fails.
pub struct Observed<S> {
    inner: S,
    activity: Arc<Activity>,
    refusal: Option<Refusal>,
}

enum Refusal {
    Writing { answer: Vec<u8>, written: usize },
    Draining { discarded: usize },
}

impl<S> Observed<S> {
    pub fn new(inner: S, activity: Arc<Activity>) -> Observed<S> {
        Observed {
            inner,
            activity,
            refusal: None,
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> Observed<S> {
    /// Writes the 414, shuts the write side and drains; ends in an error for hyper.
    fn poll_refuse(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            match self.refusal.as_mut() {
                None => return Poll::Ready(Ok(())),
                Some(Refusal::Writing { answer, written }) => {
                    while *written < answer.len() {
                        let n =
                            ready!(Pin::new(&mut self.inner).poll_write(cx, &answer[*written..]))?;
                        if n == 0 {
                            return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
                        }
                        *written += n;
                    }
                    ready!(Pin::new(&mut self.inner).poll_shutdown(cx))?;
                    self.refusal = Some(Refusal::Draining { discarded: 0 });
                }
                Some(Refusal::Draining { discarded }) => {
                    let mut scratch = [0u8; 8192];
                    let mut buf = ReadBuf::new(&mut scratch);
                    ready!(Pin::new(&mut self.inner).poll_read(cx, &mut buf))?;
                    *discarded += buf.filled().len();
                    if buf.filled().is_empty() || *discarded > DRAIN_LIMIT {
                        return Poll::Ready(Err(io::Error::new(
                            io::ErrorKind::InvalidData,
                            "request line too long",
                        )));
                    }
                }
            }
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for Observed<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.refusal.is_some() {
            return this.poll_refuse(cx);
        }
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        if this.activity.on_read(&buf.filled()[before..]) {
            return Poll::Ready(Ok(()));
        }
        // Hand hyper nothing of this request; answer it here instead.
        buf.set_filled(before);
        let answer = ApiError::new(
            ErrorCode::UriTooLong,
            format!(
                "the request line is longer than {} bytes; send long parameters in a POST body",
                this.activity.max_request_line
            ),
        );
        this.refusal = Some(Refusal::Writing {
            answer: answer.to_http1_bytes(),
            written: 0,
        });
        this.poll_refuse(cx)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Observed<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TIMEOUTS: Timeouts = Timeouts {
        header: Duration::from_secs(10),
        idle: Duration::from_secs(60),
    };

    #[tokio::test]
    async fn the_deadline_follows_the_phase() {
        let activity = Activity::new(100);
        let idle = activity.deadline(TIMEOUTS).unwrap();
        assert!(activity.on_read(b"GET / HT"));
        let head = activity.deadline(TIMEOUTS).unwrap();
        assert!(
            head < idle,
            "a started head gets the shorter header timeout"
        );
        let request = activity.begin_request();
        assert!(activity.is_busy() && activity.deadline(TIMEOUTS).is_none());
        drop(request);
        assert!(!activity.is_busy() && activity.deadline(TIMEOUTS).is_some());
    }

    #[tokio::test]
    async fn a_request_line_is_measured_across_reads_until_its_end() {
        let activity = Activity::new(10);
        assert!(activity.on_read(b"GET /abc"));
        assert!(!activity.on_read(b"defgh"), "13 bytes and no line end yet");

        let activity = Activity::new(10);
        assert!(
            !activity.on_read(b"GET /abcdefgh HTTP/1.1\r\n"),
            "ends in the same read"
        );

        let activity = Activity::new(20);
        assert!(activity.on_read(b"GET / HTTP/1.1\r\n"));
        assert!(
            activity.on_read(&[b'x'; 100]),
            "header lines are not request lines"
        );
    }
}
