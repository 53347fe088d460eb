//! `GET /metrics`: Prometheus's text format (`text.rs`). What it shows:
//!
//! - `quarry_http_requests_total{method,route,status}` and the
//!   `quarry_http_request_duration_seconds{method,route}` histogram, from this server's requests
//!   (`http.rs`; routes are templates);
//! - `quarry_queue_depth{queue,state}`: workflow tasks and graph episodes per state, read from
//!   the store at scrape time (the queues are shared by every process on the database, so any
//!   server shows the same numbers), and `quarry_database_up`;
//! - `quarry_extraction_slots`, `quarry_extraction_slots_in_use` and
//!   `quarry_extraction_budget_bytes_in_use`: this server's detector work (`work.rs`);
//! - `quarry_model_{requests,failures,retries,tokens}_total{provider,model,operation}`: every
//!   model call this process made (request handlers, the in-process workers, the retriever's
//!   embedder), from `quarry_llm::metrics`; `operation` is `chat` or `embeddings` (one
//!   embeddings request, a batch of texts), and embeddings have no completion tokens.
//!
//! Unauthenticated, like `/healthz`: labels name routes, states, providers and configured model
//! names, never a project, a key or anything a request carried. A server reachable by untrusted
//! clients should keep `/metrics` off its public path at the proxy, as it would `/readyz`.

mod http;
mod text;

use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use quarry_llm::metrics::{ModelCounts, Operation};

pub use http::HttpMetrics;
use http::LATENCY_BUCKETS;
use text::{Exposition, Kind};

use crate::AppState;

/// The response's content type.
pub const METRICS_CONTENT_TYPE: &str = text::CONTENT_TYPE;

/// `GET /metrics`: always 200; a store that cannot be read shows as `quarry_database_up 0`
/// without queue depths.
pub async fn serve(State(state): State<AppState>) -> Response {
    let mut out = Exposition::default();
    http_families(&mut out, &state.http_metrics);
    queue_families(&mut out, &state).await;
    work_families(&mut out, &state);
    model_families(&mut out);
    ([(CONTENT_TYPE, METRICS_CONTENT_TYPE)], out.finish()).into_response()
}

fn http_families(out: &mut Exposition, metrics: &HttpMetrics) {
    let observed = metrics.snapshot();
    out.family(
        "quarry_http_requests_total",
        Kind::Counter,
        "HTTP requests answered, by method, route template and status.",
    );
    for ((method, route, status), count) in &observed.requests {
        let status = status.to_string();
        let labels = [("method", *method), ("route", route), ("status", &status)];
        out.sample("quarry_http_requests_total", &labels, *count as f64);
    }
    let name = "quarry_http_request_duration_seconds";
    out.family(
        name,
        Kind::Histogram,
        "Time to answer an HTTP request (to the response head), by method and route template.",
    );
    for ((method, route), histogram) in &observed.latency {
        let mut cumulative = 0;
        for (bound, count) in LATENCY_BUCKETS.iter().zip(histogram.buckets) {
            cumulative += count;
            let le = bound.to_string();
            let labels = [("method", *method), ("route", route), ("le", &le)];
            out.sample(&format!("{name}_bucket"), &labels, cumulative as f64);
        }
        let labels = [("method", *method), ("route", route.as_str())];
        let with_inf = [labels[0], labels[1], ("le", "+Inf")];
        out.sample(&format!("{name}_bucket"), &with_inf, histogram.count as f64);
        out.sample(&format!("{name}_sum"), &labels, histogram.sum_seconds);
        out.sample(&format!("{name}_count"), &labels, histogram.count as f64);
    }
}

async fn queue_families(out: &mut Exposition, state: &AppState) {
    let Some(store) = &state.store else {
        return;
    };
    let depths = store.queue_depths().await;
    out.family(
        "quarry_database_up",
        Kind::Gauge,
        "1 when the database answered this scrape's queue query, else 0.",
    );
    out.sample(
        "quarry_database_up",
        &[],
        f64::from(u8::from(depths.is_ok())),
    );
    let depths = match depths {
        Ok(depths) => depths,
        Err(error) => {
            tracing::warn!(%error, "metrics: reading the queue depths failed");
            return;
        }
    };
    out.family(
        "quarry_queue_depth",
        Kind::Gauge,
        "Units on the durable queues by state, all projects: workflow field tasks (queue=tasks) and graph episodes (queue=episodes); running ones are leased.",
    );
    for (node, count) in &depths.tasks {
        let labels = [("queue", "tasks"), ("state", node.as_str())];
        out.sample("quarry_queue_depth", &labels, *count as f64);
    }
    for (status, count) in &depths.episodes {
        let labels = [("queue", "episodes"), ("state", status.as_str())];
        out.sample("quarry_queue_depth", &labels, *count as f64);
    }
}

fn work_families(out: &mut Exposition, state: &AppState) {
    let usage = state.work.usage();
    out.family(
        "quarry_extraction_slots",
        Kind::Gauge,
        "Detector extractions this server runs at once (--max-extractions).",
    );
    out.sample("quarry_extraction_slots", &[], usage.slots as f64);
    out.family(
        "quarry_extraction_slots_in_use",
        Kind::Gauge,
        "Detector extractions running now.",
    );
    out.sample(
        "quarry_extraction_slots_in_use",
        &[],
        usage.slots_in_use as f64,
    );
    out.family(
        "quarry_extraction_budget_bytes_in_use",
        Kind::Gauge,
        "Bytes of input admitted for extraction now (queued or running), of --extraction-budget-bytes.",
    );
    let in_use = usage.budget_bytes_in_use as f64;
    out.sample("quarry_extraction_budget_bytes_in_use", &[], in_use);
}

/// A counter family of the model calls: name, help, and what it reads of the counts.
type ModelCounter = (&'static str, &'static str, fn(&ModelCounts) -> u64);

fn model_families(out: &mut Exposition) {
    let series = quarry_llm::metrics::snapshot();
    let counters: [ModelCounter; 3] = [
        (
            "quarry_model_requests_total",
            "Model calls that ended, by provider, model and operation (chat, or one embeddings \
             request).",
            |counts| counts.requests,
        ),
        (
            "quarry_model_failures_total",
            "Model calls that ended in an error (after the transport's retries).",
            |counts| counts.failures,
        ),
        (
            "quarry_model_retries_total",
            "HTTP attempts beyond a call's first (429, 5xx, connection errors).",
            |counts| counts.retries,
        ),
    ];
    for (name, help, read) in counters {
        out.family(name, Kind::Counter, help);
        for one in &series {
            let labels = [
                ("provider", one.provider.as_str()),
                ("model", &one.model),
                ("operation", one.operation.as_str()),
            ];
            out.sample(name, &labels, read(&one.counts) as f64);
        }
    }
    let name = "quarry_model_tokens_total";
    out.family(
        name,
        Kind::Counter,
        "Tokens the provider reported, by provider, model, operation and kind (prompt or \
         completion; embeddings have prompt tokens only).",
    );
    for one in &series {
        let kinds: &[(&str, u64)] = match one.operation {
            Operation::Chat => &[
                ("prompt", one.counts.prompt_tokens),
                ("completion", one.counts.completion_tokens),
            ],
            Operation::Embeddings => &[("prompt", one.counts.prompt_tokens)],
        };
        for (kind, tokens) in kinds {
            let labels = [
                ("provider", one.provider.as_str()),
                ("model", &one.model),
                ("operation", one.operation.as_str()),
                ("kind", kind),
            ];
            out.sample(name, &labels, *tokens as f64);
        }
    }
}

#[cfg(test)]
mod tests {
    use axum::Router;
    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use tower::ServiceExt;

    use crate::{ServerConfig, router};

    async fn get(
        app: &Router,
        uri: &str,
        request_id: Option<&str>,
    ) -> (StatusCode, String, String) {
        let mut request = Request::get(uri);
        if let Some(id) = request_id {
            request = request.header("x-request-id", id);
        }
        let response = app
            .clone()
            .oneshot(request.body(Body::empty()).unwrap())
            .await
            .unwrap();
        let status = response.status();
        let id = response.headers()["x-request-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let body = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        (status, id, String::from_utf8(body.to_vec()).unwrap())
    }

    #[tokio::test]
    async fn requests_are_counted_under_their_route_template_and_status() {
        let app = router(ServerConfig::default());
        // No database: the entity route answers 503, under its template, not the raw path.
        let (status, id, _) = get(&app, "/v1/entities/ent_secret", Some("trace-1")).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(id, "trace-1", "a sane client id is echoed");
        let (_, fresh, _) = get(&app, "/no/such/route", None).await;
        assert_eq!(fresh.len(), 32, "an id is made up when none is sent");

        let (status, _, text) = get(&app, "/metrics", None).await;
        assert_eq!(status, StatusCode::OK);
        assert!(
            text.contains("# TYPE quarry_http_requests_total counter\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "quarry_http_requests_total{method=\"GET\",route=\"/v1/entities/{id}\",status=\"503\"} 1\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "quarry_http_requests_total{method=\"GET\",route=\"unmatched\",status=\"404\"} 1\n"
            ),
            "{text}"
        );
        assert!(
            !text.contains("ent_secret"),
            "raw paths never become labels"
        );
        assert!(text.contains("# TYPE quarry_http_request_duration_seconds histogram\n"));
        assert!(
            text.contains(
                "quarry_http_request_duration_seconds_bucket{method=\"GET\",route=\"/v1/entities/{id}\",le=\"+Inf\"} 1\n"
            ),
            "{text}"
        );
        assert!(text.contains(
            "quarry_http_request_duration_seconds_count{method=\"GET\",route=\"/v1/entities/{id}\"} 1\n"
        ));
        assert!(
            text.contains("quarry_extraction_slots_in_use 0\n"),
            "{text}"
        );
        // Without a database there are no queues to show.
        assert!(!text.contains("quarry_queue_depth"), "{text}");
    }
}
