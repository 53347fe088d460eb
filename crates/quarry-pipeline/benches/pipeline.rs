//! The entity pipeline's own throughput, apart from the model's:
//! 1. 1,000 entities × 10 fields in 4 dependency layers with a model that answers at once, on
//!    SQLite and (when `QUARRY_TEST_POSTGRES_URL` is set) PostgreSQL: fields/s and persisted
//!    results/s;
//! 2. one entity with 200 ms model latency: wall time against the critical path
//!    (layers × latency).
//!
//! Run: `cargo bench -p quarry-pipeline --bench pipeline` (`-- --quick` for 200 entities).

use std::sync::Arc;
use std::time::{Duration, Instant};

use quarry_core::model::NewEntity;
use quarry_core::store::Store;
use quarry_index::Library;
use quarry_llm::{
    BoxFuture, ChatRequest, ChatResponse, LlmClient, LlmError, TokenSink, ToolCall, Usage,
};
use quarry_pipeline::{AgentRegistry, Pipeline, PipelineConfig, ResolvedAgent, load_entity_types};
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
    let project = store.ensure_project(project_name).await.expect("a project");
    for entity_type in load_entity_types(TYPES).expect("the bench type is valid") {
        store
            .put_entity_type(&project, &entity_type)
            .await
            .expect("the type is stored");
    }
    let mut ids = Vec::with_capacity(entities);
    for i in 0..entities {
        let entity = NewEntity {
            entity_type: "account".to_owned(),
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

fn main() {
    let quick = std::env::args().any(|arg| arg == "--quick");
    let entities = if quick { 200 } else { 1_000 };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let dir = std::env::temp_dir().join(format!("quarry-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let sqlite = dir.join("bench.db").display().to_string();
    runtime.block_on(throughput("SQLite", &sqlite, entities));
    match std::env::var("QUARRY_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => runtime.block_on(throughput("PostgreSQL", &url, entities)),
        _ => println!(
            "PostgreSQL: skipped (set QUARRY_TEST_POSTGRES_URL, e.g. from scripts/postgres.sh)"
        ),
    }

    let latency = Duration::from_millis(200);
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
    let _ = std::fs::remove_dir_all(&dir);
}
