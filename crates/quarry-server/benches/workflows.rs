//! `cargo bench -p quarry-server --bench workflows`: `POST /v1/workflows/{entity_id}` accept
//! latency (the 202 with the queued run) while 4 workers work the task queue, through the real
//! router on loopback and the real store. The workers are `Pipeline::work` loops on tokio tasks
//! (distinct owners, concurrency 4 each) whose model answers every field with a grounded
//! `submit_value` after 200 ms (in process, no HTTP). A backlog of 100 runs is queued first so the
//! workers are busy from the first POST; then 300 POSTs leave at a steady 20/s (open loop: each on
//! schedule however slow the one before was), 3 fields each — 60 fields/s against the workers'
//! 80 fields/s ceiling (4 × 4 / 0.2 s), so they stay busy throughout. Twice per backend: the
//! workers share the server's store handle (one `quarry serve` process with in-process
//! workers), then each opens its own (as separate `quarry worker` processes would; on SQLite they
//! then meet in the file lock rather than the server's in-process write queue).
//! SQLite in a temp file; PostgreSQL too when `QUARRY_TEST_POSTGRES_URL` is set — point it at a
//! database of its own (the workers claim any queued task in it), e.g. `psql
//! "$(scripts/postgres.sh)" -c 'CREATE DATABASE quarry_bench'` and the URL with `/quarry_bench`.
//! Goal: p99 < 20 ms.

mod support;

use support::{NoDocuments, install_tls_provider, ms, percentile, store_key};

use std::sync::Arc;
use std::time::{Duration, Instant};

use quarry_core::model::{NewEntity, RunStatus};
use quarry_core::store::Store;
use quarry_llm::{
    BoxFuture, ChatRequest, ChatResponse, LlmClient, LlmError, TokenSink, ToolCall, Usage,
};
use quarry_pipeline::{
    AgentRegistry, Pipeline, PipelineConfig, QueueControl, ResolvedAgent, WorkerConfig,
    load_entity_types,
};
use quarry_server::{ServerConfig, router};
use serde_json::json;

const WORKERS: usize = 4;
const CONCURRENCY: usize = 4;
const LATENCY: Duration = Duration::from_millis(200);
/// Runs queued before the first POST, so the workers are busy from the start.
const BACKLOG: usize = 100;
const POSTS: usize = 300;
const RATE: f64 = 20.0;

const TYPES: &str = r#"
slug: ticket
fields:
  - {name: a}
  - {name: b}
  - {name: c}
"#;
const FIELDS: usize = 3;

/// Submits the entity's title (which the prompt shows, so it grounds) after `LATENCY`.
struct TitleModel;

fn entity_title(request: &ChatRequest) -> String {
    let system = request.messages[0].content.as_deref().unwrap_or_default();
    system
        .split("Entity: \"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_default()
        .to_owned()
}

impl LlmClient for TitleModel {
    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            tokio::time::sleep(LATENCY).await;
            let arguments =
                json!({"value": entity_title(request), "confidence": "high"}).to_string();
            Ok(ChatResponse {
                content: None,
                tool_calls: vec![ToolCall {
                    id: "call_1".to_owned(),
                    name: "submit_value".to_owned(),
                    arguments,
                }],
                finish_reason: Some("tool_calls".to_owned()),
                usage: Usage {
                    prompt_tokens: 300,
                    completion_tokens: 20,
                    ..Usage::default()
                },
                latency: LATENCY,
                attempts: 1,
            })
        })
    }

    fn chat_stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        _: TokenSink<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        self.chat(request)
    }

    fn describe(&self) -> String {
        "bench:title".to_owned()
    }
}

struct OneModel(Arc<TitleModel>);

impl AgentRegistry for OneModel {
    fn resolve(&self, _: &str) -> Option<ResolvedAgent> {
        Some(ResolvedAgent {
            client: self.0.clone(),
            model: "bench".to_owned(),
        })
    }
}

fn pipeline(store: Arc<dyn Store>) -> Arc<Pipeline> {
    Arc::new(Pipeline::new(
        store,
        Arc::new(NoDocuments),
        Arc::new(OneModel(Arc::new(TitleModel))),
        PipelineConfig {
            default_agent: Some("bench".to_owned()),
            ..PipelineConfig::default()
        },
    ))
}

async fn measure(label: &str, url: &str, own_handles: bool) {
    let store = quarry_store::open(url).await.expect("the store opens");
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let project = store
        .ensure_project(&format!("bench-workflows-{}-{nanos}", std::process::id()))
        .await
        .expect("project");
    for entity_type in load_entity_types(TYPES).expect("the bench type is valid") {
        store
            .put_entity_type(&project, &entity_type)
            .await
            .expect("the type is stored");
    }
    let mut ids = Vec::with_capacity(BACKLOG + POSTS);
    for i in 0..BACKLOG + POSTS {
        let entity = NewEntity {
            entity_type: "ticket".to_owned(),
            title: format!("Ticket {i:05}"),
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
    let key = store_key(
        store.as_ref(),
        &project,
        &["extraction:trigger", "entities:read"],
    )
    .await;

    let server_pipeline = pipeline(store.clone());
    let mut runs = Vec::with_capacity(BACKLOG + POSTS);
    for id in &ids[..BACKLOG] {
        let (run, _) = server_pipeline
            .start(&project, id, None, "bench")
            .await
            .expect("the backlog is queued");
        runs.push(run.id);
    }

    // The workers: the first is the server's own (woken by its POSTs), the others poll.
    let mut workers = Vec::with_capacity(WORKERS);
    for w in 0..WORKERS {
        let working = if own_handles {
            pipeline(quarry_store::open(url).await.expect("the store opens"))
        } else {
            server_pipeline.clone()
        };
        let signal = QueueControl::new();
        let config = WorkerConfig {
            owner: format!("bench-worker-{w}"),
            concurrency: CONCURRENCY,
            ..WorkerConfig::default()
        };
        let stop = signal.clone();
        workers.push((
            signal.clone(),
            tokio::spawn(async move { working.work(&config, &stop).await }),
        ));
    }
    let app = router(ServerConfig {
        store: Some(store.clone()),
        pipeline: Some(server_pipeline),
        task_worker: Some(workers[0].0.clone()),
        ..ServerConfig::default()
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, app).await });

    let http = reqwest::Client::new();
    let post = |id: String| {
        let (http, secret) = (http.clone(), key.secret.clone());
        let url = format!("http://{addr}/v1/workflows/{id}");
        async move {
            let sent = Instant::now();
            let response = http
                .post(&url)
                .bearer_auth(&secret)
                .send()
                .await
                .expect("the server answers");
            assert_eq!(response.status().as_u16(), 202);
            let body: serde_json::Value = response.json().await.expect("a JSON body");
            let latency = sent.elapsed();
            let run = body["run"]["id"].as_str().expect("the run").to_owned();
            (latency, run)
        }
    };
    // One warm-up request (connection, first statements), not counted.
    let (_, warm_run) = post(ids[BACKLOG].clone()).await;
    runs.push(warm_run);

    let started = Instant::now();
    let mut requests = tokio::task::JoinSet::new();
    let mut ticker = tokio::time::interval(Duration::from_secs_f64(1.0 / RATE));
    for id in &ids[BACKLOG + 1..] {
        ticker.tick().await;
        requests.spawn(post(id.clone()));
    }
    let mut latencies = Vec::with_capacity(POSTS);
    while let Some(done) = requests.join_next().await {
        let (latency, run) = done.expect("a request task");
        latencies.push(latency);
        runs.push(run);
    }
    let posted = started.elapsed();
    let mut still_running = 0;
    for run_id in &runs {
        let run = store
            .get_run(&project, run_id)
            .await
            .expect("readable")
            .expect("the run");
        still_running += usize::from(run.status == RunStatus::Running);
    }
    // Let the workers finish, then stop them.
    for run_id in &runs {
        loop {
            let run = store
                .get_run(&project, run_id)
                .await
                .expect("readable")
                .expect("the run");
            if run.status != RunStatus::Running {
                assert_eq!(run.status, RunStatus::Completed, "every run completes");
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let drained = started.elapsed();
    let mut completed = 0;
    for (signal, _) in &workers {
        signal.stop();
    }
    for (_, worker) in workers {
        let stats = worker
            .await
            .expect("a worker task")
            .expect("the worker ends");
        assert_eq!(stats.failed, 0, "no field failed");
        completed += stats.completed;
    }
    latencies.sort();
    let sent = latencies.len();
    println!(
        "{label}, {WORKERS} workers × {CONCURRENCY} ({}), 200 ms model: {sent} POSTs at \
         {RATE:.0}/s over {:.1} s: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms; {still_running} \
         of {} runs still running after the last POST{}; all {completed} fields done after {:.1} \
         s = {:.1} fields/s",
        if own_handles {
            "own store handles"
        } else {
            "sharing the server's store handle"
        },
        posted.as_secs_f64(),
        ms(percentile(&latencies, 0.50)),
        ms(percentile(&latencies, 0.99)),
        ms(latencies.last().copied().unwrap_or_default()),
        runs.len(),
        if still_running == 0 {
            " (WARNING: the workers ran dry)"
        } else {
            ""
        },
        drained.as_secs_f64(),
        completed as f64 / drained.as_secs_f64(),
    );
    assert_eq!(completed as usize, runs.len() * FIELDS);
}

fn main() {
    install_tls_provider();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let path =
            std::env::temp_dir().join(format!("quarry-workflows-bench-{}.db", std::process::id()));
        let sqlite = path.to_str().expect("utf-8 path").to_owned();
        measure("SQLite", &sqlite, false).await;
        measure("SQLite", &sqlite, true).await;
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
        match std::env::var("QUARRY_TEST_POSTGRES_URL") {
            Ok(url) if !url.is_empty() => {
                measure("PostgreSQL", &url, false).await;
                measure("PostgreSQL", &url, true).await;
            }
            _ => println!(
                "PostgreSQL: skipped (set QUARRY_TEST_POSTGRES_URL, e.g. from scripts/postgres.sh)"
            ),
        }
    });
}
