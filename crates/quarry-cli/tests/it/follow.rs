//! Two `quarry serve` processes on one SQLite file: what one writes, the other finds within a
//! second or so, without a restart — documents in its search index, graph entities in its
//! entity index and in its resolver cache. Also: adding a document again answers 200 with the
//! document stored the first time.

use crate::common;

use std::time::{Duration, Instant};

use common::{Sandbox, Server, eventually};
use quarry_testkit::postgres::TestDatabase;
use serde_json::{Value, json};

fn organizations(server: &Server, key: &str) -> Vec<Value> {
    let (status, found) = server.call(
        key,
        "GET",
        "/v1/graph/entities?type=organization&limit=50",
        None,
    );
    assert_eq!(status, 200, "{found}");
    found.as_array().unwrap().clone()
}

/// An API key made by `quarry key create` on `db`.
fn key(db: &str) -> String {
    let output = common::quarry()
        .args([
            "key",
            "create",
            "--scopes",
            "documents:write,entities:read",
            "--db",
            db,
        ])
        .env_remove("QUARRY_DB")
        .env_remove("QUARRY_PROJECT")
        .output()
        .expect("quarry runs");
    assert!(output.status.success(), "{}", common::stderr(&output));
    common::stdout(&output).trim().to_owned()
}

#[test]
fn sqlite_two_servers_on_one_file_follow_each_others_writes() {
    let sandbox = Sandbox::new("follow");
    two_servers_follow_each_others_writes(&sandbox.db());
}

#[test]
fn postgres_two_servers_on_one_database_follow_each_others_writes() {
    let Some(database) = postgres_database() else {
        return;
    };
    let db = database.url();
    two_servers_follow_each_others_writes(db);
}

/// A fresh database on the test PostgreSQL server, dropped with the guard (`None`: not
/// configured).
fn postgres_database() -> Option<TestDatabase> {
    let Ok(base) = std::env::var("QUARRY_TEST_POSTGRES_URL") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "QUARRY_TEST_POSTGRES_URL must be set in CI (scripts/postgres.sh)"
        );
        eprintln!(
            "NOTICE: the PostgreSQL follow test is SKIPPED: QUARRY_TEST_POSTGRES_URL is unset"
        );
        return None;
    };
    Some(TestDatabase::create(&base, "follow"))
}

fn two_servers_follow_each_others_writes(db: &str) {
    let key = key(db);
    // B first, alone: its resolver cache for organizations is loaded by its own episode.
    let b = Server::start(&["--db", db]);
    b.ingest(
        &key,
        "Globex is a competitor.",
        json!([{"name": "Globex", "type": "organization"}]),
    );
    let a = Server::start(&["--db", db]);

    // A document added through A is found through B's search.
    let text = "The zeppelin maintenance contract renews every October.";
    let (status, added) = a.call(
        &key,
        "POST",
        "/v1/documents",
        Some(json!({"title": "contract.md", "text": text})),
    );
    assert_eq!(status, 201, "{added}");
    let document_id = added["id"].as_str().unwrap().to_owned();
    let started = Instant::now();
    eventually("B finds the document A added", || {
        let (status, hits) = b.call(
            &key,
            "GET",
            "/v1/documents/search?q=zeppelin%20maintenance",
            None,
        );
        assert_eq!(status, 200, "{hits}");
        hits.as_array()
            .unwrap()
            .iter()
            .any(|hit| hit["document_id"] == document_id.as_str())
            .then_some(())
    });
    eprintln!("B found A's document after {:?}", started.elapsed());

    // Added again (a client retrying): the same document, 200, and still one hit.
    let (status, again) = b.call(
        &key,
        "POST",
        "/v1/documents",
        Some(json!({"title": "contract.md", "text": text})),
    );
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["id"], document_id.as_str());
    let (_, hits) = b.call(&key, "GET", "/v1/documents/search?q=zeppelin", None);
    let hits: Vec<&Value> = hits
        .as_array()
        .unwrap()
        .iter()
        .filter(|hit| hit["document_id"] == document_id.as_str())
        .collect();
    assert_eq!(hits.len(), 1, "{hits:?}");

    // A graph entity ingested through A: B finds it by meaning (its entity index follows) and
    // resolves another spelling of it to the same node (its resolver cache follows).
    let done = a.ingest(
        &key,
        "Acme Corp makes anvils.",
        json!([{"name": "Acme Corp", "type": "organization", "notes": "Makes anvils."}]),
    );
    assert_eq!(done["entities_stored"], 1, "{done}");
    let acme = organizations(&a, &key)
        .into_iter()
        .find(|e| e["title"] == "Acme Corp")
        .expect("A stored Acme Corp");
    eventually("B finds A's entity by meaning", || {
        let (status, found) = b.call(&key, "GET", "/v1/graph/entities?q=anvils", None);
        assert_eq!(status, 200, "{found}");
        found
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["id"] == acme["id"] && e["match"] == "meaning")
            .then_some(())
    });
    // The resolver cache is refreshed when older than a fraction of a second.
    std::thread::sleep(Duration::from_secs(1));
    b.ingest(
        &key,
        "Where is ACME Corp. based?",
        json!([{"name": "ACME Corp.", "type": "organization"}]),
    );
    let found = organizations(&b, &key);
    let titles: Vec<&str> = found.iter().filter_map(|e| e["title"].as_str()).collect();
    assert_eq!(titles.len(), 2, "{found:?}");
    assert!(titles.contains(&"Globex"), "{titles:?}");
    let acme_now = found
        .iter()
        .find(|e| e["id"] == acme["id"])
        .expect("still one Acme node");
    assert_eq!(acme_now["title"], "Acme Corp", "{acme_now}");
    assert_eq!(acme_now["mention_count"], 2, "{acme_now}");
}

#[test]
fn doc_add_twice_prints_the_same_document() {
    let sandbox = Sandbox::new("doc-again");
    let file = sandbox.dir.join("notes.md");
    std::fs::write(&file, "Quarterly notes: revenue grew.").unwrap();
    let path = file.display().to_string();
    let first = sandbox.quarry_ok(&["doc", "add", &path]);
    let again = sandbox.quarry(&["doc", "add", &path]);
    assert!(again.status.success(), "{}", common::stderr(&again));
    assert_eq!(common::stdout(&again), first);
    assert!(
        common::stderr(&again).contains("already stored"),
        "{}",
        common::stderr(&again)
    );
}
