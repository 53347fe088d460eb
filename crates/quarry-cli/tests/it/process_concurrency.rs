//! `--concurrency` holds for the process: a `quarry worker --concurrency 1` working field tasks and
//! episodes on one model at once never has more than one call to it in flight, because the
//! pipeline, the graph extractor and the schema agent share one client per model.

use crate::common;

use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Sandbox, quarry, quarry_on};
use quarry_core::model::{EpisodeStatus, RunStatus};
use quarry_core::store::Store;
use quarry_testkit::{Reply, Scripted};
use serde_json::{Value, json};

const MODEL: &str = "openai-compatible:m";

const TYPES: &str = r#"
entity_types:
  - slug: company
    fields:
      - {name: ceo, agent: "openai-compatible:m", sources: [linked-documents]}
"#;

/// Graph prompts get a graph; field agents search, then submit.
fn respond(body: &Value) -> Scripted {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let text: String = messages
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    let reply = if text.contains("--- CONVERSATION ---") {
        Reply::content(
            json!({"entities": [{"name": "Acme Corp", "type": "organization"}],
            "relationships": []})
            .to_string(),
        )
    } else if messages.iter().any(|m| m["role"] == "tool") {
        Reply::tool_call(
            "submit_value",
            json!({"value": "Jane Doe", "confidence": "high"}).to_string(),
        )
    } else {
        Reply::tool_call("search_documents", json!({"query": "CEO"}).to_string())
    };
    reply.after(Duration::from_millis(150))
}

#[test]
fn a_worker_keeps_one_model_call_in_flight_at_concurrency_one() {
    let sandbox = Sandbox::new("process-concurrency");
    sandbox.model.respond_with(respond);
    let db = sandbox.dir.join("quarry.db").display().to_string();
    let types = sandbox.dir.join("quarry.yaml");
    std::fs::write(&types, TYPES).unwrap();
    quarry_on(&db, &["type", "load", types.to_str().unwrap()]);
    let note = sandbox.dir.join("note.txt");
    std::fs::write(&note, "The CEO is Jane Doe.").unwrap();
    let mut entities = Vec::new();
    for i in 0..3 {
        let title = format!("Company {i}");
        let id = quarry_on(
            &db,
            &["entity", "add", "--type", "company", "--title", &title],
        )
        .trim()
        .to_owned();
        quarry_on(
            &db,
            &["doc", "add", note.to_str().unwrap(), "--entity", &id],
        );
        quarry_on(&db, &["run", &id, "--no-wait"]);
        entities.push(id);
    }
    for i in 0..3 {
        let user = format!("Person {i} joined Acme Corp");
        quarry_on(
            &db,
            &[
                "episode",
                "add",
                "--user",
                &user,
                "--assistant",
                "Great!",
                "--no-wait",
            ],
        );
    }

    let mut worker = quarry()
        .args(["worker", "--db", &db, "--model", MODEL])
        .args([
            "--base-url",
            &sandbox.model.base_url(),
            "--concurrency",
            "1",
        ])
        .env_remove("QUARRY_DB")
        .env_remove("QUARRY_PROJECT")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("quarry worker starts");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let store: Arc<dyn Store> = runtime.block_on(quarry_store::open(&db)).unwrap();
    let project = runtime.block_on(store.ensure_project("default")).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let runs_done = entities.iter().all(|id| {
            runtime
                .block_on(store.list_runs(&project, id, 1))
                .unwrap()
                .first()
                .is_some_and(|run| run.status == RunStatus::Completed)
        });
        let episodes = runtime
            .block_on(store.episode_page(&project, None, 10, 0))
            .unwrap()
            .items;
        let episodes_done = episodes.len() == 3
            && episodes
                .iter()
                .all(|episode| episode.status == EpisodeStatus::Done);
        if runs_done && episodes_done {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the worker did not finish the work"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = worker.kill();
    let _ = worker.wait();
    assert!(
        sandbox.model.request_count() >= 9,
        "tasks and episodes reached the model"
    );
    assert_eq!(
        sandbox.model.max_concurrent(),
        1,
        "one model call in flight for the whole process"
    );
}
