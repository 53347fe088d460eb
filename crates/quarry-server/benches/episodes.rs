//! `cargo bench -p quarry-server --bench episodes`: `POST /v1/episodes` latency and throughput
//! while the graph worker extracts in the background, through the real server on loopback, the
//! real store and the real OpenAI-compatible client against `quarry-testkit`'s scripted model
//! server (zero added latency). Prints: episodes accepted per second by closed-loop clients
//! (saturation) with their latency; the latency of POSTs at a steady 200/s while the worker works
//! through the backlog; and the background extractions per second over the whole run (first POST
//! to an empty queue). SQLite in a temp file; PostgreSQL too when `QUARRY_TEST_POSTGRES_URL` is
//! set. Goal: p99 < 20 ms.

mod support;

use support::{ms, percentile, store_key};

use std::sync::Arc;
use std::time::{Duration, Instant};

use quarry_core::store::Store;
use quarry_graph::{GraphConfig, GraphExtractor, GraphWorker};
use quarry_llm::{ModelSpec, ProviderSettings, build_client};
use quarry_server::{ServerConfig, router};
use quarry_testkit::{Reply, ScriptedServer};
use serde_json::json;

/// Episodes posted by closed-loop clients (throughput), then at a steady rate (latency).
const SATURATED: usize = 3000;
const PACED: usize = 2000;
const PACED_RATE: f64 = 200.0;
/// Clients posting at once in the saturation part.
const CLIENTS: usize = 8;

const PEOPLE: &[&str] = &[
    "Alice Abbott",
    "Bruno Becker",
    "Chen Costa",
    "Dana Dubois",
    "Elif Eriksen",
    "Farid Fischer",
    "Greta Garcia",
    "Hiro Haddad",
    "Ines Ivanova",
    "Jonas Jensen",
];
const ORGS: &[&str] = &["Acme Corp", "Globex", "Initech", "Umbrella", "Hooli"];
const TECH: &[&str] = &["Rust", "Tokio", "SQLite", "PostgreSQL", "Tantivy"];

fn model_reply(n: usize) -> Reply {
    let person = format!("{} {n}", PEOPLE[n % PEOPLE.len()]);
    let org = ORGS[n % ORGS.len()];
    let tech = TECH[(n / 3) % TECH.len()];
    Reply::content(
        json!({
            "entities": [
                {"name": person, "type": "person", "notes": "Engineer."},
                {"name": org, "type": "organization", "notes": null},
                {"name": tech, "type": "technology", "notes": null}
            ],
            "relationships": [
                {"from": person, "fromType": "person", "to": org, "toType": "organization", "label": "works_at"},
                {"from": person, "fromType": "person", "to": tech, "toType": "technology", "label": "uses"}
            ]
        })
        .to_string(),
    )
}

async fn measure(label: &str, store: Arc<dyn Store>) {
    let model = ScriptedServer::start();
    for n in 0..SATURATED + PACED {
        model.push(model_reply(n));
    }
    let project = store.ensure_project("bench").await.expect("project");
    let key = store_key(
        store.as_ref(),
        &project,
        &["documents:write", "entities:read"],
    )
    .await;
    let spec = ModelSpec::parse("openai-compatible:bench").expect("model spec");
    let client = build_client(
        &spec,
        ProviderSettings {
            base_url: Some(model.base_url()),
            ..ProviderSettings::default()
        },
    )
    .expect("client");
    let extractor = Arc::new(GraphExtractor::new(
        store.clone(),
        Some(client),
        GraphConfig {
            model: spec.model.clone(),
            ..GraphConfig::default()
        },
    ));
    let worker = Arc::new(GraphWorker::start(extractor));
    let app = router(ServerConfig {
        store: Some(store.clone()),
        graph_worker: Some(worker.clone()),
        ..ServerConfig::default()
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, app).await });

    let http = reqwest::Client::new();
    let url = format!("http://{addr}/v1/episodes");
    let post = move |http: reqwest::Client, url: String, secret: String, n: usize| async move {
        let body = json!({
            "user_message": format!("Episode {n}: who works where?"),
            "assistant_response": format!("Person {n} works at an organization and uses a tool."),
        });
        let sent = Instant::now();
        let response = http
            .post(&url)
            .bearer_auth(&secret)
            .json(&body)
            .send()
            .await
            .expect("the server answers");
        assert_eq!(response.status().as_u16(), 202);
        let _ = response.bytes().await;
        sent.elapsed()
    };
    let started = Instant::now();

    // 1. Saturation: closed-loop clients posting as fast as answers come.
    let mut clients = tokio::task::JoinSet::new();
    for client in 0..CLIENTS {
        let (http, url, secret) = (http.clone(), url.clone(), key.secret.clone());
        clients.spawn(async move {
            let mut latencies = Vec::new();
            for n in (client..SATURATED).step_by(CLIENTS) {
                latencies.push(post(http.clone(), url.clone(), secret.clone(), n).await);
            }
            latencies
        });
    }
    let mut saturated = Vec::with_capacity(SATURATED);
    while let Some(done) = clients.join_next().await {
        saturated.extend(done.expect("a client task"));
    }
    let posted = started.elapsed();
    let backlog = SATURATED as u64 - worker.stats().finished().min(SATURATED as u64);

    // 2. A steady rate (open loop: each request leaves on schedule, however slow the one before
    // was) while the worker works through the backlog of part 1.
    let mut requests = tokio::task::JoinSet::new();
    let mut ticker = tokio::time::interval(Duration::from_secs_f64(1.0 / PACED_RATE));
    for n in SATURATED..SATURATED + PACED {
        ticker.tick().await;
        requests.spawn(post(http.clone(), url.clone(), key.secret.clone(), n));
    }
    let mut paced = Vec::with_capacity(PACED);
    while let Some(done) = requests.join_next().await {
        paced.push(done.expect("a request task"));
    }
    let extracting = worker.stats().finished() < (SATURATED + PACED) as u64;
    worker.wait_idle().await;
    let drained = started.elapsed();
    let stats = worker.stats();
    saturated.sort();
    paced.sort();
    println!(
        "{label}: saturated by {CLIENTS} clients: {SATURATED} episodes in {:.2} s = {:.0} \
         accepted/s, POST p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms ({backlog} left queued)",
        posted.as_secs_f64(),
        SATURATED as f64 / posted.as_secs_f64(),
        ms(percentile(&saturated, 0.50)),
        ms(percentile(&saturated, 0.99)),
        ms(saturated.last().copied().unwrap_or_default()),
    );
    println!(
        "{label}: steady {PACED_RATE:.0} episodes/s while extraction runs{}: POST p50 {:.2} ms, \
         p99 {:.2} ms, max {:.2} ms",
        if extracting {
            ""
        } else {
            " (WARNING: the backlog ran out first)"
        },
        ms(percentile(&paced, 0.50)),
        ms(percentile(&paced, 0.99)),
        ms(paced.last().copied().unwrap_or_default()),
    );
    println!(
        "{label}: all {} extracted ({} failed) after {:.2} s = {:.0} background extractions/s \
         (model over loopback HTTP)",
        stats.finished(),
        stats.failed,
        drained.as_secs_f64(),
        stats.finished() as f64 / drained.as_secs_f64(),
    );
    assert!(
        stats.finished() as usize >= SATURATED + PACED,
        "every episode extracted"
    );
    assert_eq!(stats.failed, 0, "no extraction failed");
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let path =
            std::env::temp_dir().join(format!("quarry-episodes-bench-{}.db", std::process::id()));
        let store = quarry_store::open(path.to_str().expect("utf-8 path"))
            .await
            .expect("sqlite store");
        measure("SQLite", store).await;
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
        if let Ok(base) = std::env::var("QUARRY_TEST_POSTGRES_URL") {
            let store = quarry_store::open(&base).await.expect("postgres store");
            measure("PostgreSQL", store).await;
        } else {
            println!(
                "PostgreSQL: skipped (set QUARRY_TEST_POSTGRES_URL, e.g. from scripts/postgres.sh)"
            );
        }
    });
}
