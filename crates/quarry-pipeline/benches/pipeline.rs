//! The entity pipeline's own throughput, apart from the model's:
//! 1. 1,000 entities × 10 fields in 4 dependency layers with a model that answers at once, on
//!    SQLite and (when `QUARRY_TEST_POSTGRES_URL` is set) PostgreSQL: fields/s and persisted
//!    results/s;
//! 2. one entity with 200 ms model latency: wall time against the critical path
//!    (layers × latency);
//! 3. durable work spread over workers: 300·N entities × 3 independent fields queued with
//!    `Pipeline::start`, then N = 1, 2, 4, 8 independent workers (`Pipeline::work`, each its own
//!    `Pipeline`, owner and store handle, as separate `quarry worker` processes would; on SQLite
//!    they then meet in SQLite's file lock and busy handler) × concurrency 32 at 200 ms model
//!    latency until every run settled: fields/s against the model-bound ideal N·32 / 0.2 s. Then
//!    4 × 32 "shared": one store handle, as a server's in-process workers (on SQLite one
//!    in-process write queue). `--only claims`: 4 × 32 with a model that answers at once —
//!    the queue's own ceiling (claims, completions and settling per second);
//! 4. a worker's death: a task claimed with `Store::claim_tasks(owner = "dead", lease = L)` and
//!    never completed while a live worker runs (poll 250 ms, 200 ms model): time from the claim
//!    to the task done by the live worker, for L = 2 s (3 trials) and the default 30 s. Expected
//!    ≈ L + up to one poll + one redo (200 ms model + the write).
//!
//! Run: `cargo bench -p quarry-pipeline --bench pipeline` (`-- --quick` for 200 entities in part
//! 1 and no 30 s lease in part 4; `-- --only workers` or `--only takeover` (or `claims`,
//! `throughput`, `latency`) for one part). PostgreSQL parts need `QUARRY_TEST_POSTGRES_URL` pointing at a
//! database of its own: the workers claim any queued task in it (e.g. `psql
//! "$(scripts/postgres.sh)" -c 'CREATE DATABASE quarry_bench'` and the URL with
//! `/quarry_bench`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use quarry_core::model::{NewEntity, NodeState, RunStatus};
use quarry_core::store::Store;
use quarry_index::Library;
use quarry_llm::{
    BoxFuture, ChatRequest, ChatResponse, LlmClient, LlmError, TokenSink, ToolCall, Usage,
};
use quarry_pipeline::{
    AgentRegistry, Pipeline, PipelineConfig, QueueControl, QueueStats, ResolvedAgent, WorkerConfig,
    load_entity_types,
};
use serde_json::json;

/// 10 fields in 4 layers: f0–f3, then f4–f6 (on f0), f7–f8 (on f4), f9 (on f7).
const TYPES: &str = r#"
slug: account
fields:
  - {name: f0}
  - {name: f1}
  - {name: f2}
  - {name: f3}
  - {name: f4, depends_on: [f0]}
  - {name: f5, depends_on: [f0]}
  - {name: f6, depends_on: [f1]}
  - {name: f7, depends_on: [f4]}
  - {name: f8, depends_on: [f4]}
  - {name: f9, depends_on: [f7]}
"#;
const LAYERS: u32 = 4;

/// Three independent fields: the workers part's runs (every task can run at once).
const TICKET_TYPE: &str = r#"
slug: ticket
fields:
  - {name: a}
  - {name: b}
  - {name: c}
"#;
const TICKET_FIELDS: usize = 3;

/// Submits the entity's title (which the prompt shows, so it grounds) after `latency`.
struct TitleModel {
    latency: Duration,
}

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
            if !self.latency.is_zero() {
                tokio::time::sleep(self.latency).await;
            }
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
                latency: self.latency,
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

fn pipeline(store: Arc<dyn Store>, latency: Duration) -> Arc<Pipeline> {
    let config = PipelineConfig {
        default_agent: Some("bench".to_owned()),
        ..PipelineConfig::default()
    };
    let retriever = Arc::new(Library::hashing().expect("an in-memory index"));
    Arc::new(Pipeline::new(
        store,
        retriever,
        Arc::new(OneModel(Arc::new(TitleModel { latency }))),
        config,
    ))
}

async fn prepare(
    store: &Arc<dyn Store>,
    project_name: &str,
    entities: usize,
) -> (String, Vec<String>) {
    prepare_typed(store, project_name, TYPES, "account", entities).await
}

async fn prepare_typed(
    store: &Arc<dyn Store>,
    project_name: &str,
    types: &str,
    slug: &str,
    entities: usize,
) -> (String, Vec<String>) {
    let project = store.ensure_project(project_name).await.expect("a project");
    for entity_type in load_entity_types(types).expect("the bench type is valid") {
        store
            .put_entity_type(&project, &entity_type)
            .await
            .expect("the type is stored");
    }
    let mut ids = Vec::with_capacity(entities);
    for i in 0..entities {
        let entity = NewEntity {
            entity_type: slug.to_owned(),
            title: format!("Account {i:05}"),
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
    (project, ids)
}

/// Runs every entity, `concurrency` at a time; returns the wall time.
async fn run_all(
    pipeline: Arc<Pipeline>,
    project: &str,
    ids: &[String],
    concurrency: usize,
) -> Duration {
    let started = Instant::now();
    let semaphore = Arc::new(tokio::sync::Semaphore::new(concurrency));
    let mut tasks = Vec::new();
    for id in ids {
        let permit = semaphore.clone().acquire_owned().await.expect("open");
        let (pipeline, project, id) = (pipeline.clone(), project.to_owned(), id.clone());
        tasks.push(tokio::spawn(async move {
            let report = pipeline
                .run(&project, &id, None, "bench")
                .await
                .expect("the run succeeds");
            assert_eq!(report.fields.len(), 10, "every field ran");
            drop(permit);
        }));
    }
    for task in tasks {
        task.await.expect("the task finishes");
    }
    started.elapsed()
}

async fn throughput(name: &str, url: &str, entities: usize) {
    let store = quarry_store::open(url).await.expect("the store opens");
    let project_name = format!("bench-{}", std::process::id());
    let (project, ids) = prepare(&store, &project_name, entities).await;
    let elapsed = run_all(pipeline(store.clone(), Duration::ZERO), &project, &ids, 16).await;
    let fields = entities * 10;
    let persisted = store
        .latest_results(&project, &ids[0])
        .await
        .expect("results")
        .len();
    assert_eq!(persisted, 10);
    println!(
        "{name}: {entities} entities × 10 fields in {LAYERS} layers, zero-latency model: {:.2} s, {:.0} fields/s = {:.0} persisted results/s",
        elapsed.as_secs_f64(),
        fields as f64 / elapsed.as_secs_f64(),
        fields as f64 / elapsed.as_secs_f64()
    );
}

/// A project name no earlier run of this bench used (PostgreSQL keeps them).
fn fresh_project(part: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("bench-{part}-{}-{nanos}", std::process::id())
}

/// Whether the workers share the bench's store handle or each open the database themselves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Handles {
    Shared,
    Own,
}

/// Waits until every run in `runs` has settled (checked in order, so one read per poll while
/// the first unsettled one runs); returns how many ended `done`.
async fn wait_settled(store: &Arc<dyn Store>, project: &str, runs: &[String]) -> usize {
    let mut done = 0;
    for run_id in runs {
        loop {
            let run = store
                .get_run(project, run_id)
                .await
                .expect("the run is readable")
                .expect("the run exists");
            if run.status != RunStatus::Running {
                done += usize::from(run.status == RunStatus::Completed);
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    done
}

/// `workers` independent workers, `concurrency` each, work `entities` × 3 queued fields at
/// `latency` per model call.
async fn spread(
    name: &str,
    url: &str,
    entities: usize,
    workers: usize,
    concurrency: usize,
    handles: Handles,
    latency: Duration,
) {
    let store = quarry_store::open(url).await.expect("the store opens");
    let (project, ids) = prepare_typed(
        &store,
        &fresh_project("workers"),
        TICKET_TYPE,
        "ticket",
        entities,
    )
    .await;
    let queuer = pipeline(store.clone(), latency);
    let queueing = Instant::now();
    let mut runs = Vec::with_capacity(ids.len());
    for id in &ids {
        let (run, tasks) = queuer
            .start(&project, id, None, "bench")
            .await
            .expect("the run is queued");
        assert_eq!(tasks.len(), TICKET_FIELDS);
        runs.push(run.id);
    }
    let queued = queueing.elapsed();

    let started = Instant::now();
    let mut running = Vec::with_capacity(workers);
    for w in 0..workers {
        let worker_store = match handles {
            Handles::Shared => store.clone(),
            Handles::Own => quarry_store::open(url).await.expect("the store opens"),
        };
        let worker = pipeline(worker_store, latency);
        let signal = QueueControl::new();
        let config = WorkerConfig {
            owner: format!("bench-worker-{w}"),
            concurrency,
            ..WorkerConfig::default()
        };
        let stop = signal.clone();
        running.push((
            stop,
            tokio::spawn(async move { worker.work(&config, &signal).await }),
        ));
    }
    let done = wait_settled(&store, &project, &runs).await;
    let elapsed = started.elapsed();
    let mut total = QueueStats::default();
    let mut per_worker = Vec::with_capacity(workers);
    for (signal, _) in &running {
        signal.stop();
    }
    for (_, task) in running {
        let stats = task
            .await
            .expect("the worker task")
            .expect("the worker ends cleanly");
        per_worker.push(stats.completed.to_string());
        total.completed += stats.completed;
        total.failed += stats.failed;
        total.retried += stats.retried;
        total.lease_lost += stats.lease_lost;
    }
    let fields = entities * TICKET_FIELDS;
    let rate = fields as f64 / elapsed.as_secs_f64();
    let versus_ideal = if latency.is_zero() {
        "a model that answers at once".to_owned()
    } else {
        let ideal = (workers * concurrency) as f64 / latency.as_secs_f64();
        format!("ideal {ideal:.0}/s ({:.0} %)", rate / ideal * 100.0)
    };
    println!(
        "{name}: {workers} worker(s) × concurrency {concurrency}, {} store handle{}: {fields} \
         fields ({entities} runs × {TICKET_FIELDS}) in {:.2} s = {rate:.1} fields/s vs \
         {versus_ideal}; per worker {}; {done} runs completed, {} failed, {} retried, {} \
         lease lost (queued in {:.2} s)",
        if handles == Handles::Shared {
            "shared"
        } else {
            "own"
        },
        if handles == Handles::Shared { "" } else { "s" },
        elapsed.as_secs_f64(),
        per_worker.join("/"),
        total.failed,
        total.retried,
        total.lease_lost,
        queued.as_secs_f64(),
    );
    assert_eq!(done, entities, "every run ended done");
}

/// A worker dies holding a task: claimed under `lease` by "dead" and never completed, while a
/// live worker runs. Returns the time from the claim to that task's completion elsewhere.
async fn takeover(url: &str, lease: Duration, latency: Duration) -> Duration {
    let store = quarry_store::open(url).await.expect("the store opens");
    let (project, ids) =
        prepare_typed(&store, &fresh_project("takeover"), TICKET_TYPE, "ticket", 1).await;
    let live = pipeline(store.clone(), latency);
    let (run, _) = live
        .start(&project, &ids[0], None, "bench")
        .await
        .expect("the run is queued");
    let claimed_at = Instant::now();
    let claimed = store
        .claim_tasks("dead", lease, 1, Some(&run.id))
        .await
        .expect("the dead worker claims");
    assert_eq!(claimed.len(), 1, "the dead worker holds one task");
    let orphan = claimed[0].id.clone();

    let signal = QueueControl::new();
    let stop = signal.clone();
    let config = WorkerConfig {
        owner: "bench-live".to_owned(),
        concurrency: 4,
        ..WorkerConfig::default()
    };
    let worker = tokio::spawn(async move { live.work(&config, &signal).await });
    let (elapsed, task) = loop {
        let task = store
            .get_task(&project, &orphan)
            .await
            .expect("the task is readable")
            .expect("the task exists");
        if task.state == NodeState::Done {
            break (claimed_at.elapsed(), task);
        }
        assert!(
            claimed_at.elapsed() < lease + Duration::from_secs(30),
            "the orphaned task was never taken over"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    assert_eq!(task.attempts, 2, "one dead claim, one redo");
    assert_eq!(
        wait_settled(&store, &project, std::slice::from_ref(&run.id)).await,
        1
    );
    stop.stop();
    worker
        .await
        .expect("the worker task")
        .expect("the worker ends cleanly");
    elapsed
}

async fn takeovers(name: &str, url: &str, leases: &[(Duration, usize)], latency: Duration) {
    let poll = WorkerConfig::default().poll;
    for &(lease, trials) in leases {
        let mut times = Vec::with_capacity(trials);
        for _ in 0..trials {
            times.push(takeover(url, lease, latency).await);
        }
        times.sort();
        let shown: Vec<String> = times
            .iter()
            .map(|t| format!("{:.3}", t.as_secs_f64()))
            .collect();
        let median = times[times.len() / 2];
        println!(
            "{name}: worker death, lease {:.0} s: claim → done elsewhere in {} s (median {:.3} s \
             = lease + {:.0} ms; expected lease + 0–{} ms poll + {} ms model + the write)",
            lease.as_secs_f64(),
            shown.join(", "),
            median.as_secs_f64(),
            (median.as_secs_f64() - lease.as_secs_f64()) * 1e3,
            poll.as_millis(),
            latency.as_millis(),
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|arg| arg == "--quick");
    let only = args
        .iter()
        .position(|arg| arg == "--only")
        .and_then(|i| args.get(i + 1).cloned());
    let part = |name: &str| only.as_deref().is_none_or(|only| only == name);
    let entities = if quick { 200 } else { 1_000 };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let dir = std::env::temp_dir().join(format!("quarry-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let sqlite = dir.join("bench.db").display().to_string();
    let postgres = std::env::var("QUARRY_TEST_POSTGRES_URL")
        .ok()
        .filter(|url| !url.is_empty());
    let mut backends = vec![("SQLite", sqlite.clone())];
    match &postgres {
        Some(url) => backends.push(("PostgreSQL", url.clone())),
        None => println!(
            "PostgreSQL: skipped (set QUARRY_TEST_POSTGRES_URL, e.g. from scripts/postgres.sh)"
        ),
    }
    if part("throughput") {
        for (name, url) in &backends {
            runtime.block_on(throughput(name, url, entities));
        }
    }

    let latency = Duration::from_millis(200);
    if part("latency") {
        runtime.block_on(async {
            let store = quarry_store::open(&sqlite).await.expect("the store opens");
            let (project, ids) = prepare(&store, "latency", 1).await;
            let elapsed = run_all(pipeline(store, latency), &project, &ids, 1).await;
            let critical = latency * LAYERS;
            println!(
                "one entity, 200 ms model latency: {:.3} s wall vs {:.3} s critical path ({LAYERS} layers × 200 ms): {:+.1} %",
                elapsed.as_secs_f64(),
                critical.as_secs_f64(),
                (elapsed.as_secs_f64() / critical.as_secs_f64() - 1.0) * 100.0
            );
        });
    }
    if part("workers") {
        for (name, url) in &backends {
            // (entities, workers, concurrency, handles): 1, 2, 4 and 8 separate workers × 32
            // (as `quarry worker` processes: each its own store handle), about 5 s of ideal work
            // each; then 4 × 32 sharing one handle (a server's in-process workers).
            for (entities, workers, concurrency, handles) in [
                (300, 1, 32, Handles::Own),
                (600, 2, 32, Handles::Own),
                (1_200, 4, 32, Handles::Own),
                (2_400, 8, 32, Handles::Own),
                (1_200, 4, 32, Handles::Shared),
            ] {
                runtime.block_on(spread(
                    name,
                    url,
                    entities,
                    workers,
                    concurrency,
                    handles,
                    latency,
                ));
            }
        }
    }
    if part("claims") {
        // The queue alone: a model that answers at once, so claims, completions and settling
        // are all there is. 4 separate workers × 32.
        for (name, url) in &backends {
            runtime.block_on(spread(
                name,
                url,
                2_000,
                4,
                32,
                Handles::Own,
                Duration::ZERO,
            ));
        }
    }
    if part("takeover") {
        let mut leases = vec![(Duration::from_secs(2), 3)];
        if !quick {
            leases.push((WorkerConfig::default().lease, 1));
        }
        for (name, url) in &backends {
            runtime.block_on(takeovers(name, url, &leases, latency));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
