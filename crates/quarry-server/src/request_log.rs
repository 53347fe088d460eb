//! One log line per request, at its answer: request id, method, route, status, latency and,
//! when the caller was authenticated, its project (target `quarry::request`, level INFO; `quarry
//! serve --log-format json` writes each as a JSON line). The same observation feeds the HTTP
//! metrics ([`crate::metrics::HttpMetrics`]).
//!
//! The request id is the client's `X-Request-Id` when it is a sane token (1–128 characters of
//! letters, digits and `-_.:`), else a fresh random one; it is echoed in the response's
//! `X-Request-Id` and carried by a `request` span around the handler, so whatever the handler
//! logs names it too. The route is the matched route's template (`/v1/entities/{id}`), never the
//! raw path, so ids and user text stay out of logs and metric labels; a request no route matched
//! is `unmatched`.
//!
//! How the project gets here: this layer puts an empty [`RequestProject`] slot in the request's
//! extensions, and authentication (`auth.rs`'s `Caller`, `/mcp`'s key check) fills it. The
//! latency is measured to the response head (a streamed body, e.g. `/v1/chat`'s events, may
//! flow on after it).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderName, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument;

use crate::AppState;

/// The request id header, read from the client and written on every response.
pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The route label of a request no route matched.
pub const UNMATCHED: &str = "unmatched";

/// Longest client-chosen request id kept.
const MAX_REQUEST_ID: usize = 128;

/// The project of the request's authenticated caller, once authentication knows it (see the
/// module's notes); empty for anonymous routes and refused credentials.
#[derive(Debug, Clone, Default)]
pub struct RequestProject(Arc<OnceLock<String>>);

impl RequestProject {
    /// Records the caller's project in the request's slot, if the request has one (requests
    /// that did not pass this layer, e.g. in unit tests, have none).
    pub fn record(extensions: &axum::http::Extensions, project: &str) {
        if let Some(slot) = extensions.get::<RequestProject>() {
            let _ = slot.0.set(project.to_owned());
        }
    }

    fn get(&self) -> Option<&str> {
        self.0.get().map(String::as_str)
    }
}

/// The middleware: id, span, timing, then the log line and the HTTP metrics.
pub async fn observe(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let started = Instant::now();
    let id = request_id(request.headers().get(&REQUEST_ID));
    let method = request.method().clone();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| UNMATCHED.to_owned(), |path| path.as_str().to_owned());
    let project = RequestProject::default();
    request.extensions_mut().insert(project.clone());

    let span = tracing::info_span!("request", request_id = %id);
    let mut response = next.run(request).instrument(span).await;
    let latency = started.elapsed();
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(REQUEST_ID, value);
    }
    let status = response.status().as_u16();
    log_completion(&id, &method, &route, status, latency, project.get());
    state
        .http_metrics
        .record(method_label(&method), &route, status, latency);
    response
}

fn log_completion(
    id: &str,
    method: &Method,
    route: &str,
    status: u16,
    latency: Duration,
    project: Option<&str>,
) {
    tracing::info!(
        target: "quarry::request",
        request_id = id,
        method = method.as_str(),
        route,
        status,
        latency_ms = (latency.as_secs_f64() * 1e6).round() / 1e3,
        project,
        "request"
    );
}

/// The client's id when it is a sane token, else a fresh one (32 hex digits).
fn request_id(sent: Option<&HeaderValue>) -> String {
    let sane = |id: &&str| {
        (1..=MAX_REQUEST_ID).contains(&id.len())
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
    };
    match sent.and_then(|value| value.to_str().ok()).filter(sane) {
        Some(id) => id.to_owned(),
        None => fresh_id(),
    }
}

/// 32 hex digits: this process's random prefix and a count of ids it made. Unique across
/// processes and restarts without a system call per request (a request id is for finding a
/// request in the logs, not a secret).
fn fresh_id() -> String {
    static PREFIX: OnceLock<u64> = OnceLock::new();
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let prefix = *PREFIX.get_or_init(|| {
        let mut bytes = [0u8; 8];
        if getrandom::fill(&mut bytes).is_err() {
            // No random source: the start time still tells processes apart.
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                .as_nanos();
            bytes = (nanos as u64).to_le_bytes();
        }
        u64::from_le_bytes(bytes)
    });
    format!(
        "{prefix:016x}{:016x}",
        COUNT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The method as a metric label: the standard ones by name, anything else `other` (a client
/// may send any token as a method; labels must stay few).
pub fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sane_client_ids_are_kept_and_others_replaced() {
        let kept = request_id(Some(&HeaderValue::from_static("abc-123_x.y:z")));
        assert_eq!(kept, "abc-123_x.y:z");
        for bad in ["", "has space", "quote\"d", &"x".repeat(129)] {
            let id = request_id(Some(&HeaderValue::from_str(bad).unwrap()));
            assert_ne!(id, bad);
            assert_eq!(id.len(), 32, "{bad:?} → {id}");
            assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
        }
        assert_ne!(request_id(None), request_id(None), "fresh ids differ");
    }
}
