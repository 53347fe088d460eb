//! `cargo bench -p quarry-graph --bench graph`: background conversation-graph extraction
//! throughput. N episodes are queued first, then one worker drains the queue with a zero-latency
//! in-process model answering a reference-shaped JSON (four entities, three relationships,
//! varying per episode over a pool of a few hundred names, so resolution, upserts and new
//! inserts all happen). What is measured is the engine and the store: claim, known-entities
//! read, prompt, parse, resolve, one transaction for the graph and the episode's end. Also the
//! no-model ingest path.
//!
//! SQLite in a temp file always; PostgreSQL when `QUARRY_TEST_POSTGRES_URL` is set (e.g. from
//! `scripts/postgres.sh`). Prints figures; the goal is >= 500 extractions/s on SQLite.
//! `QUARRY_BENCH_CONCURRENCY=n` changes the worker's concurrency (default 8);
//! `QUARRY_BENCH_BREAKDOWN=1` prints sequential per-call latencies instead.

use std::sync::Arc;
use std::time::{Duration, Instant};

use quarry_core::model::{ExtractedEntity, ExtractedRelationship, GraphExtraction, NewEpisode};
use quarry_core::store::Store;
use quarry_graph::{AttemptEnd, GraphConfig, GraphExtractor, GraphWorker};
use quarry_llm::{BoxFuture, ChatRequest, ChatResponse, LlmClient, LlmError, TokenSink, Usage};
use serde_json::json;

const N: usize = 5000;

const FIRST: &[&str] = &[
    "Alice", "Bruno", "Chen", "Dana", "Elif", "Farid", "Greta", "Hiro", "Ines", "Jonas", "Kemal",
    "Lena", "Mateo", "Nadia", "Oscar", "Priya", "Quinn", "Rosa", "Sven", "Tariq",
];
const LAST: &[&str] = &[
    "Abbott", "Becker", "Costa", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad", "Ivanova",
    "Jensen", "Kowalski", "Larsen", "Moreau", "Novak", "Okafor", "Petrov", "Quint", "Rossi",
    "Schmidt", "Tanaka", "Urban", "Vogel", "Weber", "Xu", "Yilmaz",
];
const TECH: &[&str] = &[
    "Rust",
    "Tokio",
    "SQLite",
    "PostgreSQL",
    "Tantivy",
    "Kubernetes",
    "Python",
    "TypeScript",
];
const ORGS: &[&str] = &[
    "Acme Corp",
    "Globex",
    "Initech",
    "Umbrella",
    "Hooli",
    "Stark Industries",
    "Wayne Enterprises",
    "Cyberdyne",
    "Soylent",
    "Tyrell",
    "Wonka Industries",
    "Vandelay Industries",
];
const PROJECTS: &[&str] = &[
    "Atlas",
    "Borealis",
    "Cascade",
    "Dynamo",
    "Ember",
    "Falcon",
    "Granite",
    "Horizon",
    "Ion",
    "Juniper",
    "Keystone",
    "Lighthouse",
    "Monsoon",
    "Nimbus",
    "Orchid",
    "Pinnacle",
];

/// The graph of episode `n`.
fn graph_of(n: usize) -> GraphExtraction {
    let person = format!("{} {}", FIRST[n % FIRST.len()], LAST[(n / 7) % LAST.len()]);
    let project = format!("Project {}", PROJECTS[(n / 3) % PROJECTS.len()]);
    let tech = TECH[n % TECH.len()].to_owned();
    let org = ORGS[(n / 5) % ORGS.len()].to_owned();
    let entity = |name: &str, t: &str, notes: Option<String>| ExtractedEntity {
        name: name.to_owned(),
        entity_type: t.to_owned(),
        notes,
    };
    let relationship =
        |from: &str, ft: &str, to: &str, tt: &str, label: &str| ExtractedRelationship {
            from: from.to_owned(),
            from_type: ft.to_owned(),
            to: to.to_owned(),
            to_type: tt.to_owned(),
            label: label.to_owned(),
            notes: None,
        };
    GraphExtraction {
        entities: vec![
            entity(&person, "person", Some(format!("Mentioned in turn {n}."))),
            entity(&project, "project", None),
            entity(&tech, "technology", None),
            entity(
                &org,
                "organization",
                n.is_multiple_of(10).then(|| "A company.".to_owned()),
            ),
        ],
        relationships: vec![
            relationship(&person, "person", &project, "project", "works_on"),
            relationship(&project, "project", &tech, "technology", "uses"),
            relationship(&person, "person", &org, "organization", "works for"),
        ],
    }
}

/// A model that answers at once with the graph of the episode named in the prompt.
struct InstantModel;

impl InstantModel {
    fn answer(request: &ChatRequest) -> ChatResponse {
        let user = request
            .messages
            .last()
            .and_then(|m| m.content.as_deref())
            .unwrap_or_default();
        let n = user
            .split("User: Turn ")
            .nth(1)
            .and_then(|rest| rest.split(':').next())
            .and_then(|digits| digits.parse().ok())
            .unwrap_or(0);
        let graph = graph_of(n);
        let content = json!({
            "entities": graph.entities.iter().map(|e| json!({
                "name": e.name, "type": e.entity_type, "notes": e.notes
            })).collect::<Vec<_>>(),
            "relationships": graph.relationships.iter().map(|r| json!({
                "from": r.from, "fromType": r.from_type, "to": r.to, "toType": r.to_type,
                "label": r.label, "notes": null
            })).collect::<Vec<_>>(),
        })
        .to_string();
        ChatResponse {
            content: Some(content),
            tool_calls: Vec::new(),
            finish_reason: Some("stop".to_owned()),
            usage: Usage::default(),
            latency: Duration::ZERO,
            attempts: 1,
        }
    }
}

impl LlmClient for InstantModel {
    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move { Ok(InstantModel::answer(request)) })
    }

    fn chat_stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        _on_token: TokenSink<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move { Ok(InstantModel::answer(request)) })
    }

    fn describe(&self) -> String {
        "bench:instant".to_owned()
    }
}

fn episode(n: usize, ingest: bool) -> NewEpisode {
    NewEpisode {
        user_message: format!("Turn {n}: who works on what these days?"),
        assistant_response: "Here is what I remember about the team and its projects.".to_owned(),
        ingest: ingest.then(|| graph_of(n)),
    }
}

async fn drain(store: Arc<dyn Store>, label: &str, with_model: bool) {
    let project = store
        .ensure_project(&format!(
            "bench-graph-{}-{}",
            std::process::id(),
            if with_model { "model" } else { "ingest" }
        ))
        .await
        .expect("project");
    let started = Instant::now();
    for n in 0..N {
        store
            .add_episode(&project, &episode(n, !with_model))
            .await
            .expect("episode queued");
    }
    let queued = started.elapsed();
    let client: Option<Arc<dyn LlmClient>> = with_model.then(|| Arc::new(InstantModel) as _);
    let extractor = Arc::new(GraphExtractor::new(
        store.clone(),
        client,
        GraphConfig {
            concurrency: std::env::var("QUARRY_BENCH_CONCURRENCY")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(8),
            ..GraphConfig::default()
        },
    ));
    let started = Instant::now();
    let worker = GraphWorker::start(extractor);
    worker.wait_idle().await;
    let elapsed = started.elapsed();
    let stats = worker.stats();
    worker.shutdown().await;
    let entities = store
        .list_entities(&project, None, usize::MAX)
        .await
        .expect("entities");
    let path = if with_model {
        "model (instant)"
    } else {
        "ingest (no model)"
    };
    println!(
        "{label:<10} {path:<18} {finished} episodes in {secs:.2} s = {rate:>6.0} extractions/s \
         ({failed} failed; queueing {queue_rate:.0} episodes/s; {entities} entities)",
        finished = stats.finished(),
        secs = elapsed.as_secs_f64(),
        rate = stats.finished() as f64 / elapsed.as_secs_f64(),
        failed = stats.failed,
        queue_rate = N as f64 / queued.as_secs_f64(),
        entities = entities.len(),
    );
}

/// Sequential per-call latencies (set `QUARRY_BENCH_BREAKDOWN=1`): where an episode's time goes.
async fn breakdown(store: Arc<dyn Store>) {
    let project = store
        .ensure_project("bench-breakdown")
        .await
        .expect("project");
    let extractor = GraphExtractor::new(store.clone(), None, GraphConfig::default());
    let rounds = 300;
    for n in 0..rounds {
        store
            .add_episode(&project, &episode(n, true))
            .await
            .expect("episode queued");
    }
    let mut spent = [Duration::ZERO; 3];
    let types = GraphConfig::default().types;
    for _ in 0..rounds {
        let t = Instant::now();
        let claimed = store
            .claim_episodes("bench", Duration::from_secs(30), 1, true)
            .await
            .expect("claim");
        spent[0] += t.elapsed();
        let episode = &claimed[0];
        let t = Instant::now();
        store
            .recent_entities(&project, &types, 20)
            .await
            .expect("recent");
        spent[1] += t.elapsed();
        let t = Instant::now();
        let ended = extractor.process_and_finish(episode).await;
        assert!(matches!(ended, AttemptEnd::Done(_)), "{ended:?}");
        spent[2] += t.elapsed();
    }
    for (name, d) in ["claim(1)", "recent_entities", "resolve+complete_episode"]
        .iter()
        .zip(spent)
    {
        println!(
            "  {name:<26} {:>8.3} ms per episode",
            d.as_secs_f64() * 1000.0 / rounds as f64
        );
    }
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    if std::env::var("QUARRY_BENCH_BREAKDOWN").is_ok() {
        let dir = std::env::temp_dir().join(format!("quarry-bench-bd-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let db = dir.join("breakdown.db");
        println!("SQLite breakdown:");
        breakdown(
            quarry_store::open(db.to_str().expect("utf-8"))
                .await
                .expect("store"),
        )
        .await;
        let _ = std::fs::remove_dir_all(&dir);
        if let Ok(url) = std::env::var("QUARRY_TEST_POSTGRES_URL") {
            println!("PostgreSQL breakdown:");
            breakdown(quarry_store::open(&url).await.expect("store")).await;
        }
        return;
    }
    println!("graph extraction: {N} queued episodes, one worker, default config");
    let dir = std::env::temp_dir().join(format!("quarry-bench-graph-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    for with_model in [true, false] {
        let db = dir.join(format!("graph-{with_model}.db"));
        let store = quarry_store::open(db.to_str().expect("utf-8 path"))
            .await
            .expect("the store opens");
        drain(store, "SQLite", with_model).await;
    }
    let _ = std::fs::remove_dir_all(&dir);
    match std::env::var("QUARRY_TEST_POSTGRES_URL") {
        Ok(url) => {
            for with_model in [true, false] {
                let store = quarry_store::open(&url).await.expect("the store opens");
                drain(store, "PostgreSQL", with_model).await;
            }
        }
        Err(_) => println!(
            "PostgreSQL: skipped (set QUARRY_TEST_POSTGRES_URL, e.g. from scripts/postgres.sh)"
        ),
    }
}
