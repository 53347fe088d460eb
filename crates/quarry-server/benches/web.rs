//! `cargo bench -p quarry-server --bench web`: the web app's first loads and review round trips
//! at 10,000 entities and 100,000 results, through the real router on loopback and the real
//! store (no model).
//!
//! Setup, through the store API in batches: one entity type of 8 fields, 10,000 entities, and per
//! entity 10 results (8 current — about half pending, a third approved, the rest rejected — and
//! 2 superseded older values), 100,000 in all; every tenth entity also has a workflow run whose
//! tasks are queued. Then, each measured from the request leaving to the body read (so the time
//! includes loopback HTTP, the key check and JSON):
//! - the first page of the review queue (`GET /v1/review-queue?type=company&limit=50`),
//! - the first page of the entity list (`GET /v1/entity-types/company/entities?limit=50`),
//! - an entity page (`GET /v1/entities/{id}/overview`, a different entity each time),
//! - an approve and a reject without a reason (`PATCH /v1/extraction/results/{id}`, a different
//!   pending result each time).
//!
//! Each is reported as the very first request after the server started (cold statement caches)
//! and the p50 / p99 / max of 100 more. Goals: first loads < 300 ms, approve/reject < 100 ms.
//! SQLite in a temp file; PostgreSQL too when `QUARRY_TEST_POSTGRES_URL` is set (a project of its
//! own in that database, e.g. from `scripts/postgres.sh`).

mod support;

use support::{NoDocuments, install_tls_provider, ms, percentile, store_key};

use std::sync::Arc;
use std::time::{Duration, Instant};

use quarry_core::model::{
    Confidence, NewEntity, NewFieldTask, NewResult, NewWorkflow, NodeState, ResultStatus, RunScope,
    SourceRef,
};
use quarry_core::store::Store;
use quarry_pipeline::{AgentRegistry, Pipeline, PipelineConfig, ResolvedAgent, load_entity_types};
use quarry_server::{ServerConfig, router};
use serde_json::{Map, Value, json};

const ENTITIES: usize = 10_000;
const FIELDS: [&str; 8] = [
    "ceo",
    "cfo",
    "revenue",
    "founded",
    "country",
    "sector",
    "employees",
    "website",
];
/// Older values per entity, superseded by the current ones.
const SUPERSEDED: usize = 2;
/// Entities per `record_results` call.
const BATCH: usize = 100;
const REPEATS: usize = 100;

const TYPES: &str = r#"
slug: company
fields:
  - {name: ceo}
  - {name: cfo}
  - {name: revenue}
  - {name: founded}
  - {name: country}
  - {name: sector}
  - {name: employees}
  - {name: website}
"#;

/// Review needs no model: no agent resolves.
struct NoModels;

impl AgentRegistry for NoModels {
    fn resolve(&self, _: &str) -> Option<ResolvedAgent> {
        None
    }
}

fn result(entity_id: &str, field: &str, n: usize, status: ResultStatus) -> NewResult {
    let mut metadata = Map::new();
    metadata.insert("agreement".to_owned(), json!(0.5 + (n % 5) as f64 / 10.0));
    NewResult {
        run_id: None,
        entity_id: entity_id.to_owned(),
        field_name: field.to_owned(),
        value: json!(format!("{field} value {n}")),
        sources: vec![SourceRef::Url {
            url: format!("https://example.com/{n}"),
        }],
        confidence: [Confidence::High, Confidence::Medium, Confidence::Low][n % 3],
        agent_id: "bench-model".to_owned(),
        status,
        created_entity_ids: Vec::new(),
        duration_ms: 120,
        tokens_used: 300,
        metadata,
        workflow_node_run_id: None,
    }
}

/// The store seeded as the module comment says; returns (project, entity ids).
async fn seed(store: &Arc<dyn Store>, label: &str) -> (String, Vec<String>) {
    let started = Instant::now();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let project = store
        .ensure_project(&format!("bench-web-{}-{nanos}", std::process::id()))
        .await
        .expect("project");
    for entity_type in load_entity_types(TYPES).expect("the bench type is valid") {
        store
            .put_entity_type(&project, &entity_type)
            .await
            .expect("the type is stored");
    }
    let mut ids = Vec::with_capacity(ENTITIES);
    for i in 0..ENTITIES {
        let entity = NewEntity {
            entity_type: "company".to_owned(),
            title: format!("Company {:05}", (i * 7919) % ENTITIES),
            ..NewEntity::default()
        };
        ids.push(
            store
                .create_entity(&project, &entity)
                .await
                .expect("an entity")
                .id,
        );
    }
    let mut n = 0;
    let mut results = 0;
    for batch in ids.chunks(BATCH) {
        let mut rows = Vec::with_capacity(batch.len() * (FIELDS.len() + SUPERSEDED));
        for id in batch {
            for field in &FIELDS[..SUPERSEDED] {
                rows.push(result(id, field, n, ResultStatus::Superseded));
                n += 1;
            }
            for field in FIELDS {
                let status = match n % 20 {
                    0..=9 => ResultStatus::Pending,
                    10..=16 => ResultStatus::Approved,
                    _ => ResultStatus::Rejected,
                };
                rows.push(result(id, field, n, status));
                n += 1;
            }
        }
        results += rows.len();
        store
            .record_results(&project, &rows)
            .await
            .expect("results stored");
    }
    for id in ids.iter().step_by(10) {
        let workflow = NewWorkflow {
            entity_id: id.clone(),
            scope: RunScope::Full,
            triggered_by: "bench".to_owned(),
            fields_requested: None,
            root_run_id: None,
            depth: 0,
            max_attempts: 3,
            instructions: None,
            tasks: FIELDS
                .iter()
                .map(|field| NewFieldTask {
                    field_name: (*field).to_owned(),
                    state: NodeState::Queued,
                    depends_on: Vec::new(),
                    gated: false,
                    feedback: None,
                    error: None,
                    instructions: None,
                })
                .collect(),
        };
        store
            .create_workflow(&project, &workflow)
            .await
            .expect("a workflow");
    }
    println!(
        "{label}: seeded {ENTITIES} entities, {results} results and {} runs in {:.1} s",
        ENTITIES / 10,
        started.elapsed().as_secs_f64()
    );
    (project, ids)
}

struct Timings {
    first: Duration,
    rest: Vec<Duration>,
}

impl Timings {
    fn report(mut self, what: &str, goal_ms: f64) {
        self.rest.sort();
        let worst = ms(self.first).max(ms(*self.rest.last().expect("timings")));
        println!(
            "  {what:<44} first {:>7.2} ms, then p50 {:>6.2} ms, p99 {:>6.2} ms, max {:>6.2} ms \
             (goal < {goal_ms:.0} ms: {})",
            ms(self.first),
            ms(percentile(&self.rest, 0.50)),
            ms(percentile(&self.rest, 0.99)),
            ms(*self.rest.last().expect("timings")),
            if worst < goal_ms { "met" } else { "MISSED" }
        );
    }
}

async fn measure(label: &str, url: &str) {
    let store = quarry_store::open(url).await.expect("the store opens");
    let (project, ids) = seed(&store, label).await;
    let key = store_key(
        store.as_ref(),
        &project,
        &["entities:read", "extraction:review"],
    )
    .await;
    let pipeline = Arc::new(Pipeline::new(
        store.clone(),
        Arc::new(NoDocuments),
        Arc::new(NoModels),
        PipelineConfig::default(),
    ));
    let app = router(ServerConfig {
        store: Some(store.clone()),
        pipeline: Some(pipeline),
        ..ServerConfig::default()
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, app).await });

    let http = reqwest::Client::new();
    let call = |method: reqwest::Method, path: String, body: Option<Value>| {
        let (http, secret) = (http.clone(), key.secret.clone());
        async move {
            let sent = Instant::now();
            let mut request = http
                .request(method, format!("http://{addr}{path}"))
                .bearer_auth(&secret);
            if let Some(body) = body {
                request = request.json(&body);
            }
            let response = request.send().await.expect("the server answers");
            let status = response.status().as_u16();
            let body: Value = response.json().await.expect("a JSON body");
            let took = sent.elapsed();
            assert_eq!(status, 200, "{path}: {body}");
            (took, body)
        }
    };
    let get = |path: String| call(reqwest::Method::GET, path, None);

    println!("{label}, {ENTITIES} entities, 100,000 results, loopback HTTP:");
    // The review queue, cold first.
    let queue_path = "/v1/review-queue?type=company&limit=50".to_owned();
    let (first, queue) = get(queue_path.clone()).await;
    assert_eq!(queue["items"].as_array().map(Vec::len), Some(50));
    let mut rest = Vec::with_capacity(REPEATS);
    for _ in 0..REPEATS {
        rest.push(get(queue_path.clone()).await.0);
    }
    println!("  (review queue total: {} pending)", queue["total"]);
    Timings { first, rest }.report("review queue, first page of 50", 300.0);

    let list_path = "/v1/entity-types/company/entities?limit=50".to_owned();
    let (first, list) = get(list_path.clone()).await;
    assert_eq!(list["entities"].as_array().map(Vec::len), Some(50));
    let mut rest = Vec::with_capacity(REPEATS);
    for _ in 0..REPEATS {
        rest.push(get(list_path.clone()).await.0);
    }
    Timings { first, rest }.report("entity list, first page of 50", 300.0);

    let overview = |i: usize| {
        get(format!(
            "/v1/entities/{}/overview",
            ids[(i * 97) % ids.len()]
        ))
    };
    let (first, page) = overview(0).await;
    assert_eq!(page["fields"].as_array().map(Vec::len), Some(FIELDS.len()));
    let mut rest = Vec::with_capacity(REPEATS);
    for i in 1..=REPEATS {
        rest.push(overview(i).await.0);
    }
    Timings { first, rest }.report("entity page (overview)", 300.0);

    // Approve and reject round trips on pending results the queue shows (two pages of 200).
    let mut pending: Vec<String> = Vec::new();
    for offset in [0, 200] {
        let (_, page) = get(format!(
            "/v1/review-queue?type=company&limit=200&offset={offset}"
        ))
        .await;
        pending.extend(
            page["items"]
                .as_array()
                .expect("items")
                .iter()
                .map(|item| item["result"]["id"].as_str().expect("an id").to_owned()),
        );
    }
    assert!(pending.len() > 2 * (REPEATS + 1), "enough pending results");
    let review = |id: &str, action: Value| {
        call(
            reqwest::Method::PATCH,
            format!("/v1/extraction/results/{id}"),
            Some(action),
        )
    };
    for (what, action) in [
        ("approve", json!({"action": "approve"})),
        ("reject (no reason)", json!({"action": "reject"})),
    ] {
        let offset = if what == "approve" { 0 } else { REPEATS + 1 };
        let mut timings = Vec::with_capacity(REPEATS + 1);
        for id in &pending[offset..offset + REPEATS + 1] {
            let (took, body) = review(id, action.clone()).await;
            assert_ne!(body["result"]["status"], "pending");
            timings.push(took);
        }
        let first = timings.remove(0);
        Timings {
            first,
            rest: timings,
        }
        .report(&format!("{what} round trip"), 100.0);
    }
}

fn main() {
    install_tls_provider();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let path = std::env::temp_dir().join(format!("quarry-web-bench-{}.db", std::process::id()));
        let sqlite = path.to_str().expect("utf-8 path").to_owned();
        measure("SQLite", &sqlite).await;
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
        match std::env::var("QUARRY_TEST_POSTGRES_URL") {
            Ok(url) if !url.is_empty() => measure("PostgreSQL", &url).await,
            _ => println!(
                "PostgreSQL: skipped (set QUARRY_TEST_POSTGRES_URL, e.g. from scripts/postgres.sh)"
            ),
        }
    });
}
