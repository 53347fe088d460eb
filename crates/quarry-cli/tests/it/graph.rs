//! The conversation graph through the real binary: `POST /v1/episodes` answers at once while a
//! scripted model extracts in the background; entities resolve to one node across spellings; the
//! graph reads; the queue survives a restart; the no-model ingest path; the CLI equivalents.

use crate::common;

use std::time::{Duration, Instant};

use common::{Sandbox, Server, stderr};
use quarry_testkit::Reply;
use serde_json::{Value, json};

struct Graph {
    sandbox: Sandbox,
}

impl std::ops::Deref for Graph {
    type Target = Sandbox;

    fn deref(&self) -> &Sandbox {
        &self.sandbox
    }
}

impl Graph {
    fn new(name: &str) -> Graph {
        Graph {
            sandbox: Sandbox::new(&format!("graph-{name}")),
        }
    }

    fn key(&self, scopes: &str) -> String {
        self.quarry_ok(&["key", "create", "--scopes", scopes])
            .trim()
            .to_owned()
    }

    fn model_args(&self) -> Vec<String> {
        vec![
            "--model".into(),
            "openai-compatible:graph-model".into(),
            "--base-url".into(),
            self.model.base_url(),
            "--retries".into(),
            "0".into(),
        ]
    }

    fn serve(&self, with_model: bool) -> Server {
        let mut args = vec!["--db".to_owned(), self.db()];
        if with_model {
            args.extend(self.model_args());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        Server::start(&args)
    }
}

/// Polls the episode until its extraction ended; returns it.
fn finished(server: &Server, key: &str, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, episode) = server.call(key, "GET", &format!("/v1/episodes/{id}"), None);
        assert_eq!(status, 200, "{episode}");
        if episode["status"] == "done" || episode["status"] == "failed" {
            return episode;
        }
        assert!(
            Instant::now() < deadline,
            "episode never finished: {episode}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn reply(entities: Value, relationships: Value) -> Reply {
    // Prose around the JSON, as small local models answer.
    Reply::content(format!(
        "Here is the extraction:\n```json\n{}\n```\nDone.",
        json!({"entities": entities, "relationships": relationships})
    ))
}

#[test]
fn episodes_answer_at_once_and_build_one_node_per_entity_in_the_background() {
    let graph = Graph::new("api");
    let key = graph.key("documents:write,entities:read");
    graph.model.push(reply(
        json!([
            {"name": "Alice", "type": "person", "notes": "Engineer at Acme."},
            {"name": "Acme Corp", "type": "organization", "notes": "Makes anvils."},
            {"name": "Hello", "type": "concept", "notes": null}
        ]),
        json!([
            {"from": "Alice", "fromType": "person", "to": "Acme Corp", "toType": "organization", "label": "works at"},
            {"from": "Alice", "fromType": "person", "to": "Bob", "toType": "person", "label": "knows"}
        ]),
    ));
    graph.model.push(reply(
        json!([
            {"name": "ACME Corp.", "type": "organization", "notes": null},
            {"name": "Berlin", "type": "place", "notes": "Capital of Germany."}
        ]),
        json!([
            {"from": "ACME Corp.", "fromType": "organization", "to": "Berlin", "toType": "place", "label": "located_in"}
        ]),
    ));
    graph.model.push(reply(
        json!([{"name": "Acme Corporation", "type": "organization", "notes": "Anvils and rockets."}]),
        json!([]),
    ));
    let server = graph.serve(true);

    let turns = [
        (
            "Alice started at Acme Corp today.",
            "Congratulations to Alice!",
        ),
        (
            "Where is ACME Corp. based?",
            "ACME Corp. is based in Berlin.",
        ),
        (
            "Tell me about Acme Corporation.",
            "Acme Corporation makes anvils and rockets.",
        ),
    ];
    let mut ids = Vec::new();
    for (user, assistant) in turns {
        let (status, episode) = server.call(
            &key,
            "POST",
            "/v1/episodes",
            Some(json!({"user_message": user, "assistant_response": assistant})),
        );
        assert_eq!(status, 202, "{episode}");
        let id = episode["id"].as_str().unwrap().to_owned();
        // One at a time, so each prompt sees the entities of the episodes before it.
        let done = finished(&server, &key, &id);
        assert_eq!(done["status"], "done", "{done}");
        ids.push((id, done));
    }
    // The greeting is on the stoplist; the relationship to Bob has no endpoint.
    assert_eq!(ids[0].1["entities_stored"], 2, "{}", ids[0].1);
    assert_eq!(ids[0].1["entities_skipped"], 1, "{}", ids[0].1);
    assert_eq!(ids[0].1["relationships_stored"], 1, "{}", ids[0].1);
    assert_eq!(ids[0].1["relationships_skipped"], 1, "{}", ids[0].1);

    // The later prompts carried the known entities, with the name first written.
    let requests = graph.model.requests();
    assert_eq!(requests.len(), 3);
    let prompt = requests[2].to_string();
    assert!(
        prompt.contains(r#"- \"Acme Corp\" (organization)"#),
        "{prompt}"
    );
    assert!(prompt.contains("--- CONVERSATION ---"), "{prompt}");
    assert!(!requests[0].to_string().contains("Already known entities"));

    // Three spellings, one node, mentioned three times, notes kept and then replaced.
    let (status, found) = server.call(&key, "GET", "/v1/graph/entities?q=acme", None);
    assert_eq!(status, 200, "{found}");
    let names: Vec<&str> = found
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["match"] == "name")
        .map(|e| e["title"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Acme Corp"], "{found}");
    let acme = &found[0];
    assert_eq!(acme["mention_count"], 3, "{acme}");
    assert_eq!(acme["notes"], "Anvils and rockets.", "{acme}");
    let acme_id = acme["id"].as_str().unwrap();

    let (status, typed) = server.call(&key, "GET", "/v1/graph/entities?type=place", None);
    assert_eq!(status, 200);
    assert_eq!(typed[0]["title"], "Berlin", "{typed}");

    let (status, detail) = server.call(&key, "GET", &format!("/v1/graph/entities/{acme_id}"), None);
    assert_eq!(status, 200, "{detail}");
    assert_eq!(detail["episodes"].as_array().unwrap().len(), 3, "{detail}");
    assert_eq!(detail["relations"].as_array().unwrap().len(), 2, "{detail}");

    // From Berlin, two hops against the direction of the edges reach Alice.
    let berlin = typed[0]["id"].as_str().unwrap();
    let (status, around) = server.call(
        &key,
        "GET",
        &format!("/v1/graph/entities/{berlin}/neighbors?depth=2"),
        None,
    );
    assert_eq!(status, 200, "{around}");
    let reached = around.to_string();
    assert!(reached.contains("\"Alice\""), "{around}");
    let (status, near) = server.call(
        &key,
        "GET",
        &format!("/v1/graph/entities/{berlin}/neighbors?depth=1"),
        None,
    );
    assert_eq!(status, 200);
    assert!(!near.to_string().contains("\"Alice\""), "{near}");

    // Bad requests: the API's one error shape.
    let (status, error) = server.call(
        &key,
        "POST",
        "/v1/episodes",
        Some(json!({"user_message": "hi"})),
    );
    assert_eq!(
        (status, error["error"].as_str()),
        (400, Some("MalformedRequest")),
        "{error}"
    );
    let (status, error) = server.call(
        &key,
        "POST",
        "/v1/episodes",
        Some(json!({"user_message": "hi", "assistant_response": "yo", "project_id": "elsewhere"})),
    );
    assert_eq!(
        (status, error["error"].as_str()),
        (403, Some("Forbidden")),
        "{error}"
    );
    let (status, error) = server.call(
        &key,
        "GET",
        "/v1/graph/entities/nope/neighbors?depth=9",
        None,
    );
    assert_eq!(
        (status, error["error"].as_str()),
        (400, Some("InvalidDepth")),
        "{error}"
    );
    let (status, error) = server.call(&key, "GET", "/v1/graph/entities/nope/neighbors", None);
    assert_eq!(
        (status, error["error"].as_str()),
        (404, Some("NotFound")),
        "{error}"
    );
}

#[test]
fn a_failed_extraction_is_recorded_on_the_episode_not_returned() {
    let graph = Graph::new("failure");
    let key = graph.key("documents:write,entities:read");
    // A 400 is permanent: failed after one attempt (a 5xx would be retried with a backoff).
    graph
        .model
        .push(Reply::status(400, "model rejected the request"));
    let server = graph.serve(true);
    let (status, episode) = server.call(
        &key,
        "POST",
        "/v1/episodes",
        Some(json!({"user_message": "Alice joined Acme.", "assistant_response": "Nice."})),
    );
    assert_eq!(status, 202, "{episode}");
    let id = episode["id"].as_str().unwrap().to_owned();
    let done = finished(&server, &key, &id);
    assert_eq!(done["status"], "failed", "{done}");
    assert!(done["error"].as_str().unwrap().contains("400"), "{done}");
    assert_eq!(done["attempts"], 1, "{done}");
    assert_eq!(done["user_message"], "Alice joined Acme.");

    // Retried once the model is fixed: 202 with the episode queued again, then done.
    graph.model.push(reply(
        json!([{"name": "Alice", "type": "person"}, {"name": "Acme", "type": "organization"}]),
        json!([]),
    ));
    let retry = format!("/v1/episodes/{id}/retry");
    let (status, queued) = server.call(&key, "POST", &retry, None);
    assert_eq!(status, 202, "{queued}");
    assert_eq!(queued["status"], "pending", "{queued}");
    assert_eq!(queued["attempts"], 0, "{queued}");
    assert_eq!(queued["error"], Value::Null, "{queued}");
    let done = finished(&server, &key, &id);
    assert_eq!(done["status"], "done", "{done}");
    assert_eq!(done["entities_stored"], 2, "{done}");
    // Only failed episodes are retried.
    let (status, refused) = server.call(&key, "POST", &retry, None);
    assert_eq!(
        (status, refused["error"].as_str()),
        (409, Some("InvalidState")),
        "{refused}"
    );
    assert!(
        refused["message"].as_str().unwrap().contains("not failed"),
        "{refused}"
    );
    let (status, missing) = server.call(&key, "POST", "/v1/episodes/nope/retry", None);
    assert_eq!(
        (status, missing["error"].as_str()),
        (404, Some("NotFound")),
        "{missing}"
    );
    let reader = graph.key("entities:read");
    let (status, _) = server.call(&reader, "POST", &retry, None);
    assert_eq!(status, 403, "retrying needs the write scope");
}

#[test]
fn episode_add_fails_with_the_extraction_and_episode_retry_completes_it() {
    let graph = Graph::new("cli-retry");
    graph
        .model
        .push(Reply::status(400, "model rejected the request"));
    let mut args = vec![
        "episode",
        "add",
        "--user",
        "Frank joined Initech.",
        "--assistant",
        "Congratulations.",
        "--json",
    ];
    let model_args = graph.model_args();
    args.extend(model_args.iter().map(String::as_str));
    let output = graph.quarry(&args);
    assert!(
        !output.status.success(),
        "a failed extraction fails the command"
    );
    assert!(
        stderr(&output).starts_with("Error: ExtractionFailed - model call failed"),
        "{}",
        stderr(&output)
    );
    assert!(stderr(&output).contains("400"), "{}", stderr(&output));
    // The episode is kept, and printed.
    let added: Value = serde_json::from_str(&common::stdout(&output)).unwrap();
    assert_eq!(added["status"], "failed", "{added}");
    let id = added["id"].as_str().unwrap().to_owned();
    let shown: Value =
        serde_json::from_str(&graph.quarry_ok(&["episode", "show", &id, "--json"])).unwrap();
    assert_eq!(shown["status"], "failed", "{shown}");
    assert!(shown["error"].as_str().unwrap().contains("400"), "{shown}");

    // Only failed episodes can be named; nothing to retry is no error.
    let refused = graph.quarry(&["episode", "retry", "missing-id", "--no-wait"]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).starts_with("Error: NotFound - "),
        "{}",
        stderr(&refused)
    );
    let usage = graph.quarry(&["episode", "retry"]);
    assert!(!usage.status.success(), "an id or --failed is required");

    // The model is fixed: retrying every failed episode completes it.
    graph.model.push(reply(
        json!([{"name": "Frank", "type": "person"}, {"name": "Initech", "type": "organization"}]),
        json!([{"from": "Frank", "fromType": "person", "to": "Initech", "toType": "organization", "label": "works_at"}]),
    ));
    let mut args = vec!["episode", "retry", "--failed", "--json"];
    args.extend(model_args.iter().map(String::as_str));
    let retried: Value = serde_json::from_str(&graph.quarry_ok(&args)).unwrap();
    assert_eq!(retried["retried"], 1, "{retried}");
    assert_eq!(retried["episodes"][0]["id"], id.as_str(), "{retried}");
    assert_eq!(retried["episodes"][0]["status"], "done", "{retried}");
    assert_eq!(retried["episodes"][0]["attempts"], 1, "{retried}");
    assert_eq!(retried["worked"]["finished"], 1, "{retried}");
    let shown: Value =
        serde_json::from_str(&graph.quarry_ok(&["episode", "show", &id, "--json"])).unwrap();
    assert_eq!(shown["status"], "done", "{shown}");
    assert_eq!(shown["relationships_stored"], 1, "{shown}");

    // Done now: naming it again is refused.
    let again = graph.quarry(&["episode", "retry", &id]);
    assert!(!again.status.success());
    assert!(
        stderr(&again).starts_with("Error: InvalidState - "),
        "{}",
        stderr(&again)
    );
    let nothing: Value =
        serde_json::from_str(&graph.quarry_ok(&["episode", "retry", "--failed", "--json"]))
            .unwrap();
    assert_eq!(nothing["retried"], 0, "{nothing}");
    assert_eq!(graph.model.request_count(), 2);
}

#[test]
fn the_queue_survives_a_restart_and_ingest_needs_no_model() {
    let graph = Graph::new("restart");
    let key = graph.key("documents:write,entities:read");
    let server = graph.serve(false);
    // Without a model, a plain episode waits on the queue...
    let (status, waiting) = server.call(
        &key,
        "POST",
        "/v1/episodes",
        Some(json!({"user_message": "Carol uses Rust.", "assistant_response": "Rust is great."})),
    );
    assert_eq!(status, 202);
    // ...while a pre-structured one is applied without any model.
    let (status, ingested) = server.call(&key,
        "POST",
        "/v1/episodes",
        Some(json!({
            "user_message": "Dave manages Quarry.",
            "assistant_response": "Noted.",
            "entities": [
                {"name": "Dave", "type": "person"},
                {"name": "Quarry", "type": "project", "notes": "Extraction engine."}
            ],
            "relationships": [
                {"from": "Dave", "fromType": "person", "to": "Quarry", "toType": "project", "label": "manages"}
            ]
        })),
    );
    assert_eq!(status, 202, "{ingested}");
    let done = finished(&server, &key, ingested["id"].as_str().unwrap());
    assert_eq!(done["relationships_stored"], 1, "{done}");
    let waiting_id = waiting["id"].as_str().unwrap().to_owned();
    let (_, still) = server.call(&key, "GET", &format!("/v1/episodes/{waiting_id}"), None);
    assert_eq!(still["status"], "pending", "{still}");
    drop(server);
    assert_eq!(graph.model.request_count(), 0);

    // After the restart, a process with a model works the queue it finds.
    graph.model.push(reply(
        json!([{"name": "Carol", "type": "person"}, {"name": "Rust", "type": "technology"}]),
        json!([{"from": "Carol", "fromType": "person", "to": "Rust", "toType": "technology", "label": "uses"}]),
    ));
    let mut args = vec!["episode", "process"];
    let model_args = graph.model_args();
    args.extend(model_args.iter().map(String::as_str));
    let processed = graph.quarry_ok(&args);
    assert!(
        processed.contains("1 episode(s) processed, 0 of them failed"),
        "{processed}"
    );
    let shown: Value =
        serde_json::from_str(&graph.quarry_ok(&["episode", "show", &waiting_id, "--json"]))
            .unwrap();
    assert_eq!(shown["status"], "done", "{shown}");
    assert_eq!(shown["relationships_stored"], 1, "{shown}");
}

#[test]
fn the_cli_adds_episodes_and_reads_the_graph() {
    let graph = Graph::new("cli");
    let file = graph.dir.join("graph.json");
    std::fs::write(
        &file,
        json!({
            "entities": [
                {"name": "Erin", "type": "person", "notes": "Writes the parser."},
                {"name": "Quarry", "type": "project"},
                {"name": "Rust", "type": "technology"}
            ],
            "relationships": [
                {"from": "Erin", "fromType": "person", "to": "Quarry", "toType": "project", "label": "works_on"},
                {"from": "Quarry", "fromType": "project", "to": "Rust", "toType": "technology", "label": "built with"}
            ]
        })
        .to_string(),
    )
    .unwrap();
    let added: Value = serde_json::from_str(&graph.quarry_ok(&[
        "episode",
        "add",
        "--user",
        "Erin writes Quarry's parser in Rust.",
        "--assistant",
        "Good choice.",
        "--graph",
        file.to_str().unwrap(),
        "--json",
    ]))
    .unwrap();
    assert_eq!(added["status"], "done", "{added}");
    assert_eq!(added["entities_stored"], 3, "{added}");

    let found: Value =
        serde_json::from_str(&graph.quarry_ok(&["graph", "entities", "erin", "--json"])).unwrap();
    assert_eq!(found[0]["title"], "Erin", "{found}");
    let erin = found[0]["id"].as_str().unwrap().to_owned();
    let table = graph.quarry_ok(&["graph", "neighbors", &erin, "--depth", "2"]);
    assert!(
        table.contains("Rust") && table.contains("built_with"),
        "{table}"
    );
    let shown = graph.quarry_ok(&["graph", "show", &erin]);
    assert!(
        shown.contains("Erin (person), mentioned 1 time(s): Writes the parser."),
        "{shown}"
    );
    // Its relations, with the entity at the other end by name.
    let relation = shown
        .lines()
        .find(|line| line.contains("works_on"))
        .unwrap_or_else(|| panic!("no works_on relation in {shown}"));
    assert!(
        relation.contains('→') && relation.contains("Quarry"),
        "{shown}"
    );

    // A malformed graph file is refused before anything is stored.
    std::fs::write(&file, "{\"entities\": 3}").unwrap();
    let output = graph.quarry(&[
        "episode",
        "add",
        "--user",
        "x",
        "--assistant",
        "y",
        "--graph",
        file.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).starts_with("Error: InvalidGraph - "),
        "{}",
        stderr(&output)
    );
    let listed: Value =
        serde_json::from_str(&graph.quarry_ok(&["graph", "entities", "--json"])).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 3, "{listed}");
}

#[test]
fn a_provider_embeddings_endpoint_embeds_entities_and_documents() {
    let graph = Graph::new("embed");
    let key = graph.key("documents:write,entities:read");
    let url = graph.model.base_url();
    let server = Server::start(&[
        "--db",
        &graph.db(),
        "--embedder",
        "openai-compatible:embedder",
        "--base-url",
        &url,
    ]);
    let (status, episode) = server.call(
        &key,
        "POST",
        "/v1/episodes",
        Some(json!({
            "user_message": "Frank maintains the billing service.",
            "assistant_response": "Noted.",
            "entities": [{"name": "Frank", "type": "person", "notes": "Maintains billing."}]
        })),
    );
    assert_eq!(status, 202, "{episode}");
    finished(&server, &key, episode["id"].as_str().unwrap());
    let (status, document) = server.call(
        &key,
        "POST",
        "/v1/documents",
        Some(json!({"title": "billing.md", "text": "The billing service sends invoices nightly."})),
    );
    assert_eq!(status, 201, "{document}");
    let (status, _) = server.call(&key, "GET", "/v1/graph/entities?q=invoices", None);
    assert_eq!(status, 200);
    // Every vector came from the provider's real wire: the entity as "name (type): notes", the
    // episode's conversation and the document as chunks, the query.
    let inputs: Vec<String> = graph
        .model
        .requests()
        .iter()
        .filter(|request| request.get("input").is_some())
        .map(|request| request["input"].to_string())
        .collect();
    let all = inputs.join("\n");
    assert!(all.contains("Frank (person): Maintains billing."), "{all}");
    assert!(
        all.contains("User: Frank maintains the billing service."),
        "{all}"
    );
    assert!(
        all.contains("The billing service sends invoices nightly."),
        "{all}"
    );
    assert!(all.contains("invoices"), "{all}");
}

#[test]
fn the_graph_has_its_own_model_temperature_and_budget() {
    let graph = Graph::new("own-model");
    let key = graph.key("entities:read,documents:write");
    let url = graph.model.base_url();
    let server = Server::start(&[
        "--db",
        &graph.db(),
        "--model",
        "openai-compatible:general-model",
        "--graph-model",
        "openai-compatible:graph-only",
        "--graph-temperature",
        "0.7",
        "--graph-max-tokens",
        "321",
        "--base-url",
        &url,
        "--retries",
        "0",
    ]);
    graph
        .model
        .push(reply(json!([{"name": "Ada", "type": "person"}]), json!([])));
    let (status, episode) = server.call(
        &key,
        "POST",
        "/v1/episodes",
        Some(json!({"user_message": "Ada joined.", "assistant_response": "Welcome, Ada."})),
    );
    assert_eq!(status, 202, "{episode}");
    let done = finished(&server, &key, episode["id"].as_str().unwrap());
    assert_eq!(done["status"], "done", "{done}");
    let asked = graph.model.requests();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["model"], "graph-only", "{}", asked[0]);
    assert_eq!(asked[0]["temperature"], 0.7, "{}", asked[0]);
    let budget = asked[0]
        .get("max_tokens")
        .or_else(|| asked[0].get("max_completion_tokens"));
    assert_eq!(budget, Some(&json!(321)), "{}", asked[0]);

    // A temperature out of range is a usage error before anything runs.
    let output = graph.quarry(&[
        "episode",
        "add",
        "--user",
        "x",
        "--assistant",
        "y",
        "--graph-temperature",
        "5",
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("--graph-temperature 5 is out of range"),
        "{}",
        stderr(&output)
    );
}
