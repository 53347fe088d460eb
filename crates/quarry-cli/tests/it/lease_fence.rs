//! A worker that loses its lease writes nothing, with real processes: worker A claims a field
//! whose value cascades into two entities and is stopped (SIGSTOP) while its model call is in
//! flight; its lease expires, worker B takes the task over and completes it, creating the two
//! subsidiaries; then A resumes and finishes its attempt. A's completion is refused, and with it
//! its cascade: each subsidiary exists once, each relation is mentioned once, the field has one
//! result. On one SQLite file, and on PostgreSQL when `QUARRY_TEST_POSTGRES_URL` is set
//! (required in CI).

use crate::common;

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Sandbox, quarry, quarry_on};
use quarry_core::model::RunStatus;
use quarry_core::store::Store;
use quarry_testkit::postgres::TestDatabase;
use quarry_testkit::{Reply, Scripted};
use serde_json::{Value, json};

const TYPES: &str = r#"
entity_types:
  - slug: company
    fields:
      - {name: subsidiaries, type: list, agent: "openai-compatible:m-subs",
         sources: [linked-documents],
         connection: {entity_type: subsidiary, cascade: {enabled: true}}}
  - slug: subsidiary
    fields: []
"#;

const LEASE_SECS: &str = "2";

/// Field agents search, then submit the two subsidiaries the passage names.
fn respond(body: &Value) -> Scripted {
    let searched = body["messages"]
        .as_array()
        .is_some_and(|messages| messages.iter().any(|m| m["role"] == "tool"));
    let reply = if searched {
        Reply::tool_call(
            "submit_value",
            json!({"value": ["Globex", "Initech"], "confidence": "high"}).to_string(),
        )
    } else {
        Reply::tool_call(
            "search_documents",
            json!({"query": "subsidiaries"}).to_string(),
        )
    };
    reply.after(Duration::from_millis(300))
}

fn spawn_worker(db: &str, model_url: &str, log: &std::path::Path) -> Child {
    quarry()
        .args(["worker", "--db", db, "--model", "openai-compatible:m-subs"])
        .args([
            "--base-url",
            model_url,
            "--retries",
            "0",
            "--lease-secs",
            LEASE_SECS,
        ])
        .env_remove("QUARRY_DB")
        .env_remove("QUARRY_PROJECT")
        .env("QUARRY_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).expect("a log file"))
        .spawn()
        .expect("quarry worker starts")
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .args([format!("-{name}"), child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -{name} failed");
}

/// Polls `done` every 50 ms for up to 60 s; fails naming `what`.
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn paused_worker_writes_nothing(db: &str, label: &str) {
    let sandbox = Sandbox::new(&format!("fence-{label}"));
    sandbox.model.respond_with(respond);
    let model_url = sandbox.model.base_url();
    let types = sandbox.dir.join("quarry.yaml");
    std::fs::write(&types, TYPES).unwrap();
    quarry_on(db, &["type", "load", types.to_str().unwrap()]);
    let entity = quarry_on(
        db,
        &["entity", "add", "--type", "company", "--title", "Acme"],
    )
    .trim()
    .to_owned();
    let note = sandbox.dir.join("note.txt");
    std::fs::write(&note, "Acme owns two subsidiaries, Globex and Initech.").unwrap();
    quarry_on(
        db,
        &["doc", "add", note.to_str().unwrap(), "--entity", &entity],
    );
    quarry_on(db, &["run", &entity, "--no-wait"]);

    let (log_a, log_b) = (sandbox.dir.join("a.log"), sandbox.dir.join("b.log"));
    let mut a = spawn_worker(db, &model_url, &log_a);
    wait_for("worker A's first model call", || {
        sandbox.model.request_count() >= 1
    });
    signal(&a, "STOP");
    let mut b = spawn_worker(db, &model_url, &log_b);

    let runtime = tokio::runtime::Runtime::new().unwrap();
    let store: Arc<dyn Store> = runtime.block_on(quarry_store::open(db)).unwrap();
    let project = runtime.block_on(store.ensure_project("default")).unwrap();
    wait_for("worker B to complete the run", || {
        runtime
            .block_on(store.list_runs(&project, &entity, 1))
            .unwrap()
            .first()
            .is_some_and(|run| run.status == RunStatus::Completed)
    });
    signal(&a, "CONT");
    wait_for("worker A's completion to be refused", || {
        std::fs::read_to_string(&log_a)
            .is_ok_and(|log| log.contains("completion refused: the lease was taken over"))
    });
    for worker in [&mut a, &mut b] {
        let _ = worker.kill();
        let _ = worker.wait();
    }

    let subsidiaries = runtime
        .block_on(store.list_entities(&project, Some("subsidiary"), 10))
        .unwrap();
    let mut titles: Vec<&str> = subsidiaries.iter().map(|e| e.title.as_str()).collect();
    titles.sort_unstable();
    assert_eq!(titles, ["Globex", "Initech"], "each subsidiary exists once");
    let relations = runtime
        .block_on(store.relations_touching(&project, std::slice::from_ref(&entity)))
        .unwrap();
    assert_eq!(relations.len(), 2, "{relations:?}");
    assert!(
        relations.iter().all(|r| r.mention_count == 1),
        "one extraction, one mention each: {relations:?}"
    );
    let history = runtime
        .block_on(store.field_history(&project, &entity, "subsidiaries"))
        .unwrap();
    assert_eq!(history.len(), 1, "one result: {history:?}");
}

#[test]
fn sqlite_a_paused_worker_that_lost_its_lease_writes_nothing() {
    let sandbox = Sandbox::new("fence-sqlite-db");
    let db = sandbox.dir.join("quarry.db").display().to_string();
    paused_worker_writes_nothing(&db, "sqlite");
}

#[test]
fn postgres_a_paused_worker_that_lost_its_lease_writes_nothing() {
    let Ok(base) = std::env::var("QUARRY_TEST_POSTGRES_URL") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "QUARRY_TEST_POSTGRES_URL must be set in CI (scripts/postgres.sh)"
        );
        eprintln!(
            "NOTICE: the PostgreSQL lease-fence test is SKIPPED: QUARRY_TEST_POSTGRES_URL is unset"
        );
        return;
    };
    let database = TestDatabase::create(&base, "fence");
    paused_worker_writes_nothing(database.url(), "postgres");
}
