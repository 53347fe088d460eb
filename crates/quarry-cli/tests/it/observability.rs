//! What an operator sees of a running `quarry serve`: one JSON log line per request
//! (`--log-format json`), `GET /metrics` in Prometheus's text format (requests per route
//! template, latency histograms, queue depths from the database, model calls, retries and
//! tokens), and `/readyz` naming the schema version.

use crate::common;

use std::io::BufRead;
use std::net::SocketAddr;
use std::process::Child;
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use common::{Sandbox, header, http_request, spawn_serve, sse_events};
use quarry_testkit::Reply;
use serde_json::{Value, json};

/// A bound on waiting for a log line: a hang detector, never a timing assertion.
const HANG: Duration = Duration::from_secs(60);

const TYPES: &str = r#"
entity_types:
  - slug: company
    name: Company
    fields:
      - {name: ceo, instructions: "The chief executive's full name"}
"#;

/// `quarry serve` whose stderr lines arrive on a channel.
struct LoggingServer {
    child: Child,
    addr: SocketAddr,
    lines: Receiver<String>,
}

impl LoggingServer {
    fn start(args: &[&str]) -> LoggingServer {
        let (child, addr, stderr) = spawn_serve(args, |command| {
            command
                .env_remove("QUARRY_LOG")
                .env_remove("QUARRY_LOG_FORMAT");
        });
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        LoggingServer { child, addr, lines }
    }

    /// Sends one request; answers (status, head, body).
    fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, String, String) {
        http_request(self.addr, method, path, headers, body.as_bytes())
    }

    /// The JSON log lines up to and including the request log line of `request_id`.
    fn lines_until_request(&self, request_id: &str) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let line = self
                .lines
                .recv_timeout(HANG)
                .unwrap_or_else(|_| panic!("no log line for {request_id}; saw {seen:#?}"));
            let json: Value = serde_json::from_str(&line)
                .unwrap_or_else(|error| panic!("not a JSON line ({error}): {line}"));
            let done = json["message"] == "request" && json["request_id"] == request_id;
            seen.push(json);
            if done {
                return seen;
            }
        }
    }

    fn metrics(&self) -> String {
        let (status, head, body) = self.request("GET", "/metrics", &[], "");
        assert_eq!(status, 200, "{body}");
        assert!(
            head.to_ascii_lowercase()
                .contains("content-type: text/plain; version=0.0.4"),
            "{head}"
        );
        body
    }
}

impl Drop for LoggingServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The value of the sample `series` (name and labels exactly as rendered), if present.
fn sample(metrics: &str, series: &str) -> Option<f64> {
    metrics.lines().find_map(|line| {
        let value = line.strip_prefix(series)?.strip_prefix(' ')?;
        value.parse().ok()
    })
}

fn key(sandbox: &Sandbox) -> String {
    sandbox
        .quarry_ok(&[
            "key",
            "create",
            "--name",
            "operator",
            "--scopes",
            &quarry_server::keys::SCOPES.join(","),
        ])
        .trim()
        .to_owned()
}

#[test]
fn every_request_logs_one_json_line_with_its_route_status_latency_and_project() {
    let sandbox = Sandbox::new("observability-log");
    let key = key(&sandbox);
    let server =
        LoggingServer::start(&["--db", &sandbox.db(), "--no-worker", "--log-format", "json"]);
    let bearer = format!("Bearer {key}");
    let (status, head, body) = server.request(
        "GET",
        "/v1/entities/ent_missing",
        &[("Authorization", &bearer), ("X-Request-Id", "probe-1")],
        "",
    );
    assert_eq!(status, 404, "{body}");
    assert_eq!(header(&head, "x-request-id"), Some("probe-1"));
    // A second request, anonymous, with no id of its own: one is made up and echoed.
    let (status, head, _) = server.request("GET", "/healthz", &[], "");
    assert_eq!(status, 200);
    let made_up = header(&head, "x-request-id")
        .expect("an id is echoed")
        .to_owned();
    assert_eq!(made_up.len(), 32, "{made_up}");

    let mut lines = server.lines_until_request("probe-1");
    lines.extend(server.lines_until_request(&made_up));
    let of = |id: &str| -> Vec<&Value> {
        lines
            .iter()
            .filter(|line| line["message"] == "request" && line["request_id"] == id)
            .collect()
    };
    let probe = of("probe-1");
    assert_eq!(probe.len(), 1, "one line per request: {lines:#?}");
    let probe = probe[0];
    assert_eq!(probe["level"], "INFO");
    assert_eq!(probe["target"], "quarry::request");
    assert_eq!(probe["method"], "GET");
    assert_eq!(
        probe["route"], "/v1/entities/{id}",
        "the template, not the path"
    );
    assert_eq!(probe["status"], 404);
    assert!(
        probe["latency_ms"].as_f64().is_some_and(|ms| ms >= 0.0),
        "{probe}"
    );
    let project = probe["project"]
        .as_str()
        .expect("an authenticated caller's project");
    assert!(!project.is_empty());
    assert!(!probe.to_string().contains("ent_missing"), "{probe}");

    let health = of(&made_up);
    assert_eq!(health.len(), 1, "{lines:#?}");
    assert_eq!(health[0]["route"], "/healthz");
    assert_eq!(health[0]["status"], 200);
    assert!(
        health[0].get("project").is_none(),
        "anonymous: {}",
        health[0]
    );
}

#[test]
fn metrics_count_routes_queues_and_model_calls_with_their_retries_and_tokens() {
    let sandbox = Sandbox::new("observability-metrics");
    let key = key(&sandbox);
    sandbox.load_types(TYPES);
    let entity = sandbox.add_entity("company", "Acme");
    // The chat's one model call fails once with a 503 and is retried.
    sandbox
        .model
        .push(Reply::status(503, "{\"error\": \"overloaded\"}"));
    sandbox
        .model
        .push(Reply::tool_call("submit", r#"{"vendor": "Acme", "total": 12}"#).with_usage(40, 7));
    let server = LoggingServer::start(&[
        "--db",
        &sandbox.db(),
        "--no-worker",
        "--model",
        "openai-compatible:metrics-model",
        "--base-url",
        &sandbox.model.base_url(),
        "--retries",
        "1",
        // Search embeds through the same scripted server (its `/v1/embeddings`).
        "--embedder",
        "openai-compatible:metrics-embedder",
    ]);
    let bearer = format!("Bearer {key}");
    let auth = [("Authorization", bearer.as_str())];
    let json_auth = [
        ("Authorization", bearer.as_str()),
        ("Content-Type", "application/json"),
    ];

    // Queued work with no worker in this process: a workflow's task and an episode.
    let (status, _, body) =
        server.request("POST", &format!("/v1/workflows/{entity}"), &json_auth, "");
    assert_eq!(status, 202, "{body}");
    let episode = json!({"user_message": "I moved to Lisbon", "assistant_response": "Noted."});
    let (status, _, body) =
        server.request("POST", "/v1/episodes", &json_auth, &episode.to_string());
    assert_eq!(status, 202, "{body}");
    for _ in 0..2 {
        let (status, _, _) = server.request("GET", "/v1/entities/ent_missing", &auth, "");
        assert_eq!(status, 404);
    }
    let chat = json!({
        "message": "Invoice from Acme, total 12.",
        "schema": {"type": "object", "required": ["vendor", "total"],
                   "properties": {"vendor": {"type": "string"}, "total": {"type": "number"}}}
    });
    let (status, _, body) = server.request("POST", "/v1/chat", &json_auth, &chat.to_string());
    assert_eq!(status, 200, "{body}");
    let events = sse_events(&body);
    assert!(
        events.iter().any(|(name, _)| name == "result"),
        "{events:?}"
    );

    // A search by meaning embeds its query: an embeddings call.
    let (status, _, body) = server.request("GET", "/v1/graph/entities?q=invoices", &auth, "");
    assert_eq!(status, 200, "{body}");

    let metrics = server.metrics();
    let route = |method: &str, route: &str, status: u16| {
        format!(
            "quarry_http_requests_total{{method=\"{method}\",route=\"{route}\",status=\"{status}\"}}"
        )
    };
    assert_eq!(
        sample(&metrics, &route("GET", "/v1/entities/{id}", 404)),
        Some(2.0),
        "{metrics}"
    );
    assert_eq!(
        sample(&metrics, &route("POST", "/v1/episodes", 202)),
        Some(1.0),
        "{metrics}"
    );
    assert_eq!(
        sample(&metrics, &route("POST", "/v1/workflows/{entity_id}", 202)),
        Some(1.0),
        "{metrics}"
    );
    assert!(!metrics.contains("ent_missing") && !metrics.contains(&entity));
    let histogram = "quarry_http_request_duration_seconds";
    let labels = "method=\"GET\",route=\"/v1/entities/{id}\"";
    assert_eq!(
        sample(
            &metrics,
            &format!("{histogram}_bucket{{{labels},le=\"+Inf\"}}")
        ),
        Some(2.0),
        "{metrics}"
    );
    assert_eq!(
        sample(&metrics, &format!("{histogram}_count{{{labels}}}")),
        Some(2.0)
    );
    assert!(sample(&metrics, &format!("{histogram}_sum{{{labels}}}")).is_some());

    let depth = |queue: &str, state: &str| {
        sample(
            &metrics,
            &format!("quarry_queue_depth{{queue=\"{queue}\",state=\"{state}\"}}"),
        )
    };
    assert_eq!(depth("tasks", "queued"), Some(1.0), "{metrics}");
    assert_eq!(depth("tasks", "running"), Some(0.0), "{metrics}");
    assert_eq!(depth("episodes", "pending"), Some(1.0), "{metrics}");
    assert_eq!(sample(&metrics, "quarry_database_up"), Some(1.0));

    let model = "provider=\"openai-compatible\",model=\"metrics-model\",operation=\"chat\"";
    let counter = |name: &str| sample(&metrics, &format!("{name}{{{model}}}"));
    assert_eq!(
        counter("quarry_model_requests_total"),
        Some(1.0),
        "{metrics}"
    );
    assert_eq!(
        counter("quarry_model_retries_total"),
        Some(1.0),
        "{metrics}"
    );
    assert_eq!(
        counter("quarry_model_failures_total"),
        Some(0.0),
        "{metrics}"
    );
    let tokens = |kind: &str| {
        sample(
            &metrics,
            &format!("quarry_model_tokens_total{{{model},kind=\"{kind}\"}}"),
        )
    };
    assert_eq!(tokens("prompt"), Some(40.0), "{metrics}");
    assert_eq!(tokens("completion"), Some(7.0), "{metrics}");

    // Embedding calls are counted apart from chat (the entity and the query, at least).
    let embedder =
        "provider=\"openai-compatible\",model=\"metrics-embedder\",operation=\"embeddings\"";
    let embeddings = |name: &str| sample(&metrics, &format!("{name}{{{embedder}}}"));
    assert!(
        embeddings("quarry_model_requests_total").is_some_and(|calls| calls >= 1.0),
        "{metrics}"
    );
    assert_eq!(
        embeddings("quarry_model_failures_total"),
        Some(0.0),
        "{metrics}"
    );
    let embedded = format!("quarry_model_tokens_total{{{embedder},kind=\"prompt\"}}");
    assert!(
        sample(&metrics, &embedded).is_some_and(|tokens| tokens >= 1.0),
        "{metrics}"
    );
    assert!(
        !metrics.contains(&format!("{{{embedder},kind=\"completion\"}}")),
        "embeddings have no completion tokens: {metrics}"
    );

    // /readyz: the database answers and has every migration.
    let (status, _, body) = server.request("GET", "/readyz", &[], "");
    assert_eq!(status, 200, "{body}");
    let ready: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(ready["database"], "reachable");
    assert!(
        ready["schema_version"].as_i64().is_some_and(|v| v >= 8),
        "{ready}"
    );
}

#[test]
fn readyz_refuses_traffic_while_the_database_lacks_a_migration() {
    let sandbox = Sandbox::new("observability-readyz");
    let server = LoggingServer::start(&["--db", &sandbox.db(), "--no-worker"]);
    let (status, _, body) = server.request("GET", "/readyz", &[], "");
    assert_eq!(status, 200, "{body}");
    // Another process rolls the database back past this build's newest migration (Python's
    // sqlite3 stands in for it; the server keeps its connections open meanwhile).
    let rolled_back = std::process::Command::new("python3")
        .args([
            "-c",
            "import sqlite3, sys\n\
             db = sqlite3.connect(sys.argv[1])\n\
             db.execute('DELETE FROM _sqlx_migrations WHERE version = \
             (SELECT max(version) FROM _sqlx_migrations)')\n\
             db.commit()",
            &sandbox.db(),
        ])
        .status()
        .expect("python3 runs");
    assert!(rolled_back.success(), "the newest migration row is deleted");
    let (status, head, body) = server.request("GET", "/readyz", &[], "");
    assert_eq!(status, 500, "{body}");
    assert!(
        header(&head, "content-type").is_some_and(|value| value.starts_with("application/json")),
        "{head}"
    );
    let error: Value = serde_json::from_str(&body).expect("the one error shape");
    assert_eq!(error["error"], "StorageError", "{error}");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|message| message.contains("migration")),
        "{error}"
    );
    // The liveness check is unaffected: the process still serves.
    let (status, _, _) = server.request("GET", "/healthz", &[], "");
    assert_eq!(status, 200);
}
