//! The OpenAPI document against the server it describes, with a fuzzer no one here wrote:
//! schemathesis (PyPI, pinned in `scripts/schemathesis.sh`) reads `GET /openapi.json` of a real
//! `quarry serve` on a seeded database and sends every operation generated requests (the
//! document's examples, its boundary values and random ones, valid and invalid), checking that no
//! answer is a server error, every status, content type and body conforms to the document, no
//! request the document calls valid is refused and none it calls invalid is accepted (4xx). It
//! runs once with a key of every scope (fuzzing each operation) and once per scope with a key of
//! that scope alone (the examples and a few generated requests per operation: what a key may not
//! do answers the documented 403, what it may do answers as documented).
//!
//! Not fuzzed: `/mcp` (JSON-RPC, tested by `tests/it/mcp.rs`) and `POST /v1/chat` (a model
//! conversation streamed as Server-Sent Events, tested by `tests/it/chat.rs`).
//!
//! Needs schemathesis on `QUARRY_SCHEMATHESIS_PYTHONPATH` (or in `target/python-schemathesis`,
//! where `scripts/schemathesis.sh` installs it); without it the test is SKIPPED, except in CI
//! (`CI` set), where it fails.

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{PythonPackage, Sandbox, Server, stderr, stdout};
use serde_json::Value;

/// The pinned version (as in `scripts/schemathesis.sh`).
const VERSION: &str = "4.32.5";

/// Examples per operation in the fuzzing run: bounded so the test fits in a few minutes on two
/// cores.
const MAX_EXAMPLES: &str = "25";

/// Generated examples per operation in each one-scope run (beside the document's examples):
/// enough to reach past the scope check of every operation, few enough for two cores.
const MAX_EXAMPLES_PER_SCOPE: &str = "5";

const TYPES: &str = r#"
entity_types:
  - slug: company
    name: Company
    fields:
      - {name: ceo, instructions: "The chief executive's full name", sources: [linked-documents]}
      - {name: headquarters, instructions: "The city of the head office", sources: [linked-documents]}
"#;

/// What every answer is checked for: no server error; every status, content type and body as
/// documented; no request the document calls valid refused, none it calls invalid accepted.
const CHECKS: &[&str] = &[
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
    "positive_data_acceptance",
    "negative_data_rejection",
];

/// Operations whose requests can be valid by the document and still refused with 400 because
/// they name something the project must define first (an entity type, a field of the entity's
/// type, a value of that field's type), break a rule across fields (an entity type's field names
/// are unique and its dependencies acyclic) or name a phone region the detector does not know
/// (`skillExtract`): for these alone 400 is not counted as a valid request rejected.
const BEYOND_THE_SCHEMA: &[&str] = &[
    "putEntityType",
    "createEntity",
    "triggerWorkflow",
    "retryWorkflow",
    "lockField",
    "unlockField",
    "setFieldValue",
    "submitValue",
    "reviewResult",
    "skillExtract",
    "addCorrection",
];

#[test]
fn schemathesis_finds_the_server_true_to_its_document() {
    let Some(pythonpath) = schemathesis() else {
        return;
    };
    let sandbox = Sandbox::new("schemathesis");
    let fixture = seed(&sandbox);
    let server = Server::start(&["--db", &sandbox.db(), "--no-worker"]);
    let url = format!("http://{}", server.addr);
    // The server under test serves the document this build generates.
    let (status, _, served) = server.request("GET", "/openapi.json", None, b"");
    assert_eq!(status, 200);
    let served: Value = serde_json::from_str(&served).expect("the document is JSON");
    assert!(
        served == quarry_server::openapi_document(),
        "GET /openapi.json differs from quarry_server::openapi_document()"
    );
    let config = sandbox.dir.join("schemathesis.toml");
    std::fs::write(&config, config_toml(&fixture)).expect("the config is written");

    let mut figures = Vec::new();
    let all = fixture["keys"]["all"].as_str().unwrap_or_default();
    figures.push(run(
        &pythonpath,
        &sandbox.dir,
        &config,
        &url,
        all,
        "every scope",
        &["--phases", "examples,coverage,fuzzing", "-n", MAX_EXAMPLES],
    ));
    for scope in quarry_server::keys::SCOPES {
        let key = fixture["keys"][*scope].as_str().unwrap_or_default();
        figures.push(run(
            &pythonpath,
            &sandbox.dir,
            &config,
            &url,
            key,
            scope,
            &["--phases", "examples,fuzzing", "-n", MAX_EXAMPLES_PER_SCOPE],
        ));
    }
    let _ = writeln!(std::io::stderr(), "schemathesis {VERSION}:");
    for line in figures {
        let _ = writeln!(std::io::stderr(), "  {line}");
    }
}

/// Invalid requests schemathesis's `negative_data_rejection` found the server accepting (a limit
/// past the documented maximum clamped, a blank title stored, an offset past u32 or a state
/// with spaces read, a body slug of any type ignored): each now answers 400 in the error shape,
/// with or without schemathesis installed.
#[test]
fn invalid_requests_schemathesis_found_accepted_are_refused() {
    let sandbox = Sandbox::new("schemathesis-regressions");
    let key = sandbox
        .quarry_ok(&[
            "key",
            "create",
            "--scopes",
            &quarry_server::keys::SCOPES.join(","),
        ])
        .trim()
        .to_owned();
    let server = Server::start(&["--db", &sandbox.db(), "--no-worker"]);
    let company = r#"{"slug": {}, "fields": [{"name": "ceo"}]}"#;
    for (method, path, body, code) in [
        ("GET", "/v1/entities?limit=1001", "", "InvalidLimit"),
        (
            "GET",
            "/v1/graph/entities/x/neighbors?limit=501",
            "",
            "InvalidLimit",
        ),
        (
            "GET",
            "/v1/graph/entities/x/neighbors?limit=0",
            "",
            "InvalidLimit",
        ),
        ("GET", "/v1/episodes?offset=4294967296", "", "InvalidLimit"),
        ("GET", "/v1/episodes?state=%20done", "", "InvalidArguments"),
        (
            "POST",
            "/v1/documents",
            r#"{"title": " ", "text": "x"}"#,
            "InvalidArguments",
        ),
        (
            "PUT",
            "/v1/entity-types/company",
            company,
            "InvalidEntityType",
        ),
    ] {
        let (status, _, answer) = server.request_as(
            Some(&key),
            method,
            path,
            Some("application/json"),
            body.as_bytes(),
        );
        let answer: Value = serde_json::from_str(&answer).unwrap_or_default();
        assert_eq!(
            (status, answer["error"].as_str()),
            (400, Some(code)),
            "{method} {path}: {answer}"
        );
    }
}

/// One schemathesis run as `key`; fails the test on any failure or error. Answers its figures.
fn run(
    pythonpath: &Path,
    dir: &Path,
    config: &Path,
    url: &str,
    key: &str,
    label: &str,
    extra: &[&str],
) -> String {
    let output = Command::new("python3")
        .args(["-m", "schemathesis.cli"])
        .args(["--config-file", &config.display().to_string()])
        .args(["run", &format!("{url}/openapi.json")])
        .args(["--header", &format!("Authorization: Bearer {key}")])
        .args(["--exclude-path", "/mcp", "--exclude-path", "/v1/chat"])
        // One worker: hypothesis describing strategies from several threads at once trips
        // CPython 3.11's "AST constructor recursion depth mismatch".
        .args(["--workers", "1", "--seed", "1", "--no-color"])
        .args(extra)
        .current_dir(dir)
        .env("PYTHONPATH", pythonpath)
        .output()
        .expect("python3 runs");
    let report = format!("{}\n{}", stdout(&output), stderr(&output));
    assert!(
        output.status.success(),
        "schemathesis as a key with {label} found failures:\n{report}"
    );
    let tested = figure(&report, "Tested: ");
    let generated = report
        .lines()
        .find(|line| line.contains(" generated, "))
        .map(str::trim)
        .unwrap_or("?");
    format!("{label}: {tested} operations tested, {generated}")
}

/// The text after `prefix` on the first line that has it.
fn figure<'a>(report: &'a str, prefix: &str) -> &'a str {
    report
        .lines()
        .find_map(|line| line.trim().strip_prefix(prefix))
        .unwrap_or("?")
}

/// schemathesis's folder, or `None` (SKIPPED) outside CI when it is not installed.
fn schemathesis() -> Option<PathBuf> {
    PythonPackage {
        name: "schemathesis",
        env: "QUARRY_SCHEMATHESIS_PYTHONPATH",
        default_dir: &format!("python-schemathesis/schemathesis-{VERSION}"),
        imports: "import schemathesis.cli",
        script: "schemathesis.sh",
    }
    .locate()
}

/// A project with an entity type, an entity, a linked document and an episode, and a key of
/// every scope and one per scope. Answers their ids and keys.
fn seed(sandbox: &Sandbox) -> Value {
    sandbox.load_types(TYPES);
    let entity = sandbox.add_entity("company", "Acme");
    let report = sandbox.dir.join("report.md");
    std::fs::write(
        &report,
        "Annual report. The CEO is Jane Doe, in Springfield.",
    )
    .expect("the report is written");
    let output = sandbox.quarry(&[
        "doc",
        "add",
        &report.display().to_string(),
        "--entity",
        &entity,
    ]);
    assert!(output.status.success(), "doc add: {}", stderr(&output));
    // `<id>  <title>`
    let document = stdout(&output)
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_owned();
    let key = |scopes: &str| {
        sandbox
            .quarry_ok(&["key", "create", "--name", "fuzzer", "--scopes", scopes])
            .trim()
            .to_owned()
    };
    let mut keys = serde_json::Map::new();
    keys.insert(
        "all".to_owned(),
        key(&quarry_server::keys::SCOPES.join(",")).into(),
    );
    for scope in quarry_server::keys::SCOPES {
        keys.insert((*scope).to_owned(), key(scope).into());
    }
    serde_json::json!({"entity": entity, "document": document, "keys": keys})
}

/// The run's configuration: path parameters naming what the seed made, so operations answer
/// their 200s and not only 404s, and the allowance of the operations in [`BEYOND_THE_SCHEMA`].
fn config_toml(fixture: &Value) -> String {
    let entity = fixture["entity"].as_str().unwrap_or_default();
    let document = fixture["document"].as_str().unwrap_or_default();
    // The checks, here rather than on the command line, where they would override an
    // operation's own setting below.
    let mut toml = String::from("[checks]\nenabled = false\n");
    for check in CHECKS {
        toml.push_str(&format!("{check}.enabled = true\n"));
    }
    toml.push('\n');
    for id in BEYOND_THE_SCHEMA {
        toml.push_str(&format!(
            "[[operations]]\ninclude-operation-id = \"{id}\"\n\
             checks.positive_data_acceptance.expected-statuses = \
             [\"2xx\", \"400\", \"401\", \"403\", \"404\", \"409\"]\n\n"
        ));
    }
    // A raw text body has no wrong type: the "invalid" bodies schemathesis makes for it (an
    // object, a number) reach the server as text it rightly stores.
    toml.push_str(
        "[[operations]]\ninclude-operation-id = \"uploadDocument\"\n\
         checks.negative_data_rejection.enabled = false\n\n",
    );
    for (path, id) in [
        ("/v1/entities/{id}", entity),
        ("/v1/entities/{id}/overview", entity),
        ("/v1/documents/{id}", document),
    ] {
        toml.push_str(&format!(
            "[[operations]]\ninclude-path = \"{path}\"\nparameters = {{ \"path.id\" = \"{id}\" }}\n\n"
        ));
    }
    toml.push_str(&format!(
        "[[operations]]\ninclude-path-regex = \"entity_id\"\nparameters = {{ \"path.entity_id\" = \"{entity}\" }}\n\n\
         [[operations]]\ninclude-path-regex = \"slug\"\nparameters = {{ \"path.slug\" = \"company\" }}\n\n"
    ));
    toml
}
