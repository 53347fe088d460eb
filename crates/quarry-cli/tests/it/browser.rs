//! The web app in real headless Chromium: seeds a database through the real binary, starts a
//! scripted OpenAI-compatible model server and `quarry serve`, and runs the browser tests in
//! `tests/browser/*.test.mjs` (node's test runner driving Debian's Chromium with playwright-core).
//!
//! Needs `/usr/bin/chromium` and `tests/browser/node_modules/playwright-core`, which
//! `scripts/browser.sh` installs (the test command runs it). Screenshots of the main pages land
//! in `$CARGO_TARGET_TMPDIR/browser-artifacts` (or `$QUARRY_ARTIFACTS`).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use common::{
    ModelRequest, Sandbox, SeededKeys, Server, between, search_documents, seed_keys,
    serve_with_model, stderr, stdout, submit_value,
};
use quarry_testkit::{Reply, Scripted};
use serde_json::{Value, json};

const TYPES: &str = r#"
entity_types:
  - slug: company
    name: Company
    description: A company whose facts the team reviews.
    fields:
      - {name: ceo, label: Chief executive, instructions: "The chief executive's full name", agent: "openai-compatible:m-field", sources: [linked-documents]}
      - {name: headquarters, label: Head office, instructions: "The city of the head office", agent: "openai-compatible:m-field", sources: [linked-documents]}
      - {name: budget, type: number, label: Approved budget, instructions: "The budget a person approved, in USD", human_input: true, display_type: currency}
"#;

const ACME_DOC: &str = "Acme Corp annual report 2024.\n\nAcme Corp reported revenue of $1.2 \
                        million. John Roe chairs the board; its CEO is Jane Doe. The head office \
                        is in Springfield.";

/// CJK and astral-plane emoji before the cited values: code-point offsets differ from UTF-16
/// and byte offsets, so a page that mixes them up highlights the wrong text.
const SAKURA_DOC: &str = "桜ロボティクス株式会社 🤖🌸 年次報告 2024。\n\n本社は東京にあります。\
                          代表取締役CEOは山田太郎です。";

/// What the scripted field agents submit, per entity title and field: the first run's value and
/// the rerun's (after a rejection with a reason).
const FIELD_VALUES: &[(&str, &str, &str, &str)] = &[
    ("Acme Corp", "ceo", "John Roe", "Jane Doe"),
    ("Acme Corp", "headquarters", "Springfield", "Springfield"),
    ("Sakura Robotics", "ceo", "山田太郎", "山田太郎"),
    ("Sakura Robotics", "headquarters", "東京", "東京"),
];

/// The conversation the chat test sends, and the fields the scripted schema agent fills.
const CHAT_VENDOR: &str = "Acme Supplies Ltd";
const CHAT_TOTAL: f64 = 1200.0;

/// An episode whose first extraction fails (the model refuses it), so a person can retry it.
const FAILING_EPISODE: &str = "Zorblax said the quarterly sync moves to Thursday.";

const FILLER_COMPANIES: usize = 60;

#[test]
fn the_web_app_works_in_headless_chromium() {
    let tools = BrowserTools::find();
    let sandbox = Sandbox::new("browser");
    let failed_once = Arc::new(AtomicBool::new(false));
    let responder_failed_once = Arc::clone(&failed_once);
    sandbox
        .model
        .respond_with(move |request| respond(request, &responder_failed_once));

    let mut fixture = seed(&sandbox);
    let server = serve_with_model(&sandbox);
    fixture["url"] = json!(format!("http://{}", server.addr));
    seed_failing_episode(&server, &mut fixture);

    let fixture_path = sandbox.dir.join("fixture.json");
    std::fs::write(&fixture_path, fixture.to_string()).expect("the fixture file is written");
    let artifacts = std::env::var_os("QUARRY_ARTIFACTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser-artifacts"));
    std::fs::create_dir_all(&artifacts).expect("the artifacts folder can be made");

    let output = Command::new("node")
        .arg("--test")
        .arg("--test-concurrency=1")
        .args(&tools.test_files)
        .current_dir(&tools.dir)
        .env("QUARRY_FIXTURE", &fixture_path)
        .env("QUARRY_ARTIFACTS", &artifacts)
        .env("QUARRY_CHROMIUM", &tools.chromium)
        .output()
        .expect("node runs");
    let report = format!("{}\n{}", stdout(&output), stderr(&output));
    println!("{report}");
    println!("screenshots: {}", artifacts.display());
    assert!(
        output.status.success(),
        "the browser tests failed:\n{report}"
    );
    drop(server);
}

/// Where the browser, playwright-core and the test files are; panics with what to run when
/// something is missing (a skipped browser test would hide a broken web app).
struct BrowserTools {
    dir: PathBuf,
    chromium: PathBuf,
    test_files: Vec<PathBuf>,
}

impl BrowserTools {
    fn find() -> BrowserTools {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/browser");
        let chromium = std::env::var_os("QUARRY_CHROMIUM")
            .map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
        assert!(
            chromium.exists(),
            "{} is missing: run ./scripts/browser.sh (installs Debian's chromium and playwright-core)",
            chromium.display()
        );
        assert!(
            dir.join("node_modules/playwright-core/package.json")
                .exists(),
            "playwright-core is not installed in tests/browser: run ./scripts/browser.sh"
        );
        let only = std::env::var("QUARRY_BROWSER_TESTS").ok();
        let mut test_files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .expect("tests/browser is readable")
            .filter_map(|entry| Some(entry.ok()?.path()))
            .filter(|path| {
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                name.ends_with(".test.mjs")
                    && only
                        .as_deref()
                        .is_none_or(|only| only.split(',').any(|o| name.starts_with(o)))
            })
            .collect();
        test_files.sort();
        assert!(!test_files.is_empty(), "no tests/browser/*.test.mjs to run");
        BrowserTools {
            dir,
            chromium,
            test_files,
        }
    }
}

/// The scripted model: field agents search and then submit the value of `FIELD_VALUES`
/// (the rerun's value when the task carries a reviewer's feedback); the schema agent of the
/// chat fills the vendor and, once a person answered its question, the total; the graph
/// extraction refuses `FAILING_EPISODE` once, then answers.
fn respond(request: &Value, failed_once: &AtomicBool) -> Scripted {
    let ModelRequest {
        messages,
        system,
        all_text,
    } = ModelRequest::of(request);
    if system.starts_with("You extract one field of one entity.") {
        return field_agent(&system, &messages);
    }
    if all_text.contains("--- CONVERSATION ---") {
        if all_text.contains(FAILING_EPISODE) && !failed_once.swap(true, Ordering::SeqCst) {
            return Reply::status(400, "the model refused this conversation").into();
        }
        return graph_reply(
            json!([{"name": "Zorblax", "type": "person", "notes": "Runs the quarterly sync."}]),
            json!([]),
        );
    }
    // The schema agent behind POST /v1/chat.
    if all_text.contains("A person answered your clarification question") {
        Reply::tool_call(
            "submit",
            json!({"vendor": CHAT_VENDOR, "total": CHAT_TOTAL}).to_string(),
        )
        .into()
    } else {
        // Prose around the JSON, as small local models answer: the text streams as tokens.
        Reply::content(format!(
            "Here is what I found:\n```json\n{}\n```",
            json!({"vendor": CHAT_VENDOR})
        ))
        .into()
    }
}

fn field_agent(system: &str, messages: &[Value]) -> Scripted {
    let searched = messages.iter().any(|m| m["role"] == "tool");
    let entity = between(system, "Entity: \"", "\"").unwrap_or_default();
    let field = between(system, "\nField: ", " ").unwrap_or_default();
    if !searched {
        return search_documents(&format!("{entity} {field}"));
    }
    // The task message carries a reviewer's feedback after its first sentence on a rerun.
    let task = messages
        .iter()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or("");
    let rerun = task
        .split_once("for this entity.")
        .is_some_and(|(_, feedback)| !feedback.trim().is_empty());
    let value = FIELD_VALUES
        .iter()
        .find(|(title, name, _, _)| *title == entity && *name == field)
        .map(|(_, _, first, again)| if rerun { *again } else { *first });
    submit_value(value)
}

fn graph_reply(entities: Value, relationships: Value) -> Scripted {
    Reply::content(json!({"entities": entities, "relationships": relationships}).to_string()).into()
}

/// Types, entities, documents, runs, keys and graph episodes, all through the real binary.
fn seed(sandbox: &Sandbox) -> Value {
    let write = |name: &str, text: &str| {
        let path = sandbox.dir.join(name);
        std::fs::write(&path, text).expect("a seed file is written");
        path.display().to_string()
    };
    let types = write("types.yaml", TYPES);
    sandbox.quarry_ok(&["type", "load", &types]);
    let add_entity = |title: &str| {
        sandbox
            .quarry_ok(&["entity", "add", "--type", "company", "--title", title])
            .trim()
            .to_owned()
    };
    let acme = add_entity("Acme Corp");
    let sakura = add_entity("Sakura Robotics");
    let globex = add_entity("Globex");
    for n in 1..=FILLER_COMPANIES {
        add_entity(&format!("Filler Company {n:02}"));
    }
    let acme_doc = add_document(sandbox, &write("acme-report.md", ACME_DOC), &acme);
    let sakura_doc = add_document(sandbox, &write("sakura-report.txt", SAKURA_DOC), &sakura);
    for entity in [&acme, &sakura] {
        run_workflow(sandbox, entity);
    }

    let SeededKeys {
        admin,
        reader,
        other,
        other_entity,
    } = seed_keys(sandbox, &types, "Ada Reviewer");

    let graph = seed_graph(sandbox);
    json!({
        "type": "company",
        "keys": {"admin": admin, "reader": reader, "other": other},
        "key_names": {"admin": "Ada Reviewer", "reader": "Rita Reader", "other": "Otto Outsider"},
        "entities": {"acme": acme, "sakura": sakura, "globex": globex, "other_project": other_entity},
        "documents": {"acme": acme_doc, "sakura": sakura_doc},
        "values": {
            "acme_ceo_first": "John Roe", "acme_ceo_rerun": "Jane Doe",
            "acme_headquarters": "Springfield", "sakura_ceo": "山田太郎", "sakura_headquarters": "東京",
        },
        "chat": {"vendor": CHAT_VENDOR, "total": CHAT_TOTAL},
        "graph": graph,
        "filler_count": FILLER_COMPANIES,
    })
}

fn add_document(sandbox: &Sandbox, path: &str, entity: &str) -> String {
    let output = sandbox.quarry_ok(&["doc", "add", path, "--entity", entity, "--json"]);
    let added: Value = serde_json::from_str(output.trim())
        .or_else(|_| serde_json::from_str::<Value>(output.lines().last().unwrap_or_default()))
        .unwrap_or_else(|error| panic!("doc add --json printed {output:?}: {error}"));
    find_string(&added, "id").unwrap_or_else(|| panic!("no document id in {added}"))
}

/// Runs every field of `entity` against the scripted model; the `human_input` field leaves the
/// run waiting for a person (exit 3), which is the state the pages show.
fn run_workflow(sandbox: &Sandbox, entity: &str) {
    let base_url = sandbox.model.base_url();
    let output = sandbox.quarry(&["run", entity, "--base-url", &base_url, "--retries", "0"]);
    let code = output.status.code();
    assert!(
        matches!(code, Some(0 | 3)),
        "quarry run {entity}: exit {code:?}: {}",
        stderr(&output)
    );
}

/// Two conversation episodes with their graphs given (no model): Alice and Bob work on Project
/// Falcon at Initech, which is in Berlin.
fn seed_graph(sandbox: &Sandbox) -> Value {
    let episodes = [
        (
            "Alice leads Project Falcon at Initech.",
            "Noted: Alice is the lead of Project Falcon.",
            json!({"entities": [
                {"name": "Alice", "type": "person", "notes": "Leads Project Falcon."},
                {"name": "Project Falcon", "type": "project", "notes": "Initech's new search engine."},
                {"name": "Initech", "type": "organization", "notes": "A software company."}
            ], "relationships": [
                {"from": "Alice", "fromType": "person", "to": "Project Falcon", "toType": "project", "label": "leads"},
                {"from": "Alice", "fromType": "person", "to": "Initech", "toType": "organization", "label": "works_at"}
            ]}),
        ),
        (
            "Bob joined Project Falcon; he works from Initech's Berlin office.",
            "Bob is on Project Falcon, in Berlin.",
            json!({"entities": [
                {"name": "Bob", "type": "person", "notes": "Engineer on Project Falcon."},
                {"name": "Project Falcon", "type": "project", "notes": null},
                {"name": "Berlin", "type": "place", "notes": "Capital of Germany."},
                {"name": "Initech", "type": "organization", "notes": null}
            ], "relationships": [
                {"from": "Bob", "fromType": "person", "to": "Project Falcon", "toType": "project", "label": "works_on"},
                {"from": "Initech", "fromType": "organization", "to": "Berlin", "toType": "place", "label": "located_in"}
            ]}),
        ),
    ];
    for (n, (user, assistant, graph)) in episodes.iter().enumerate() {
        let path = sandbox.dir.join(format!("graph-{n}.json"));
        std::fs::write(&path, graph.to_string()).expect("a graph file is written");
        sandbox.quarry_ok(&[
            "episode",
            "add",
            "--user",
            user,
            "--assistant",
            assistant,
            "--graph",
            path.to_str().expect("a UTF-8 path"),
        ]);
    }
    let mut ids = serde_json::Map::new();
    for (name, label) in [
        ("Alice", "alice"),
        ("Bob", "bob"),
        ("Project Falcon", "falcon"),
        ("Initech", "initech"),
        ("Berlin", "berlin"),
    ] {
        let found: Value =
            serde_json::from_str(&sandbox.quarry_ok(&["graph", "entities", name, "--json"]))
                .expect("graph entities --json prints JSON");
        let id = find_id_titled(&found, name)
            .unwrap_or_else(|| panic!("no graph entity '{name}' in {found}"));
        ids.insert(label.to_owned(), Value::String(id));
    }
    Value::Object(ids)
}

/// An episode queued over the API, whose first extraction on the server's worker fails.
fn seed_failing_episode(server: &Server, fixture: &mut Value) {
    let admin = fixture["keys"]["admin"]
        .as_str()
        .expect("an admin key")
        .to_owned();
    let body = json!({"user_message": FAILING_EPISODE, "assistant_response": "Thursday it is."})
        .to_string();
    let (status, _, answer) = server.request_as(
        Some(&admin),
        "POST",
        "/v1/episodes",
        Some("application/json"),
        body.as_bytes(),
    );
    assert!(status < 300, "POST /v1/episodes: {status} {answer}");
    let answer: Value = serde_json::from_str(&answer).expect("the episode answer is JSON");
    let id = find_string(&answer, "id").expect("the new episode's id");
    // The page test retries it, so it must have failed first.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let (_, _, shown) = server.request_as(
            Some(&admin),
            "GET",
            &format!("/v1/episodes/{id}"),
            None,
            b"",
        );
        if shown.contains("\"failed\"") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the failing episode never failed: {shown}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    fixture["episodes"] = json!({"failed": id});
}

/// The first string under `key` anywhere in `value` (depth first).
fn find_string(value: &Value, key: &str) -> Option<String> {
    match value {
        Value::Object(map) => map
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| map.values().find_map(|v| find_string(v, key))),
        Value::Array(items) => items.iter().find_map(|v| find_string(v, key)),
        _ => None,
    }
}

/// The id of the first object anywhere in `value` whose `title` (or `name`) is `title`.
fn find_id_titled(value: &Value, title: &str) -> Option<String> {
    match value {
        Value::Object(map) => {
            let named = [map.get("title"), map.get("name")]
                .into_iter()
                .flatten()
                .any(|t| t == title);
            if named && let Some(id) = map.get("id").and_then(Value::as_str) {
                return Some(id.to_owned());
            }
            map.values().find_map(|v| find_id_titled(v, title))
        }
        Value::Array(items) => items.iter().find_map(|v| find_id_titled(v, title)),
        _ => None,
    }
}
