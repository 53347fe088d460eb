//! `quarry extract --schema` through the real binary against a local server speaking the
//! OpenAI-compatible wire protocol with scripted replies.

use crate::common;

use std::path::PathBuf;
use std::process::Output;

use common::{quarry, run_with_stdin, stderr, stdout};
use quarry_testkit::{Reply, ScriptedServer};
use serde_json::{Value, json};

const SCHEMA: &str = r#"{"type": "object", "required": ["vendor", "total"], "properties": {
    "vendor": {"type": "string", "description": "Who issued the invoice"},
    "total": {"type": "number", "description": "Amount due"},
    "issued": {"type": ["string", "null"], "format": "date"}}}"#;

const DOCUMENT: &str = "Invoice from Acme Supplies Ltd, 15 January 2024. Total due: $1,200.";

struct Workspace {
    dir: PathBuf,
}

impl Workspace {
    fn new(name: &str) -> Workspace {
        let dir = std::env::temp_dir().join(format!("quarry-agent-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("schema.json"), SCHEMA).unwrap();
        Workspace { dir }
    }

    fn schema(&self) -> String {
        self.dir.join("schema.json").display().to_string()
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn run_agent(server_url: &str, schema: &str, extra: &[&str], stdin: &str) -> Output {
    let mut command = quarry();
    command
        .args(["extract", "--schema", schema, "--text", DOCUMENT])
        .args([
            "--model",
            "openai-compatible:test-model",
            "--base-url",
            server_url,
        ])
        .args(["--retries", "1"])
        .args(extra)
        .env_remove("QUARRY_MODEL")
        .env_remove("QUARRY_API_KEY");
    run_with_stdin(command, stdin)
}

fn json_stdout(output: &Output) -> Value {
    serde_json::from_str(&stdout(output)).unwrap_or_else(|e| panic!("{e}: {}", stdout(output)))
}

#[test]
fn a_grounded_tool_call_completes_in_one_attempt() {
    let workspace = Workspace::new("ok");
    let server = ScriptedServer::with_script([Reply::tool_call(
        "submit",
        r#"{"vendor": "Acme Supplies Ltd", "total": 1200, "issued": "2024-01-15"}"#,
    )]);
    let output = run_agent(&server.base_url(), &workspace.schema(), &["--explain"], "");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        json_stdout(&output),
        json!({"vendor": "Acme Supplies Ltd", "total": 1200, "issued": "2024-01-15"})
    );
    let explain = stderr(&output);
    assert!(explain.contains("vendor"), "{explain}");
    assert!(
        explain.contains("13..30"),
        "the vendor's span is reported: {explain}"
    );
    assert!(explain.contains("tokens:"), "{explain}");
    // The user's schema went to the model, and the document only in a user message.
    let request = &server.requests()[0];
    let system = request["messages"][0]["content"].as_str().unwrap();
    assert!(!system.contains("Acme Supplies"));
}

#[test]
fn unresolved_fields_escalate_with_exit_3_partial_output_and_a_question() {
    let workspace = Workspace::new("escalate");
    let hallucinated = r#"{"vendor": "Acme Supplies Ltd", "total": 9999}"#;
    let server = ScriptedServer::with_script([
        Reply::tool_call("submit", hallucinated),
        Reply::tool_call("submit", hallucinated),
        Reply::tool_call("submit", hallucinated),
    ]);
    let output = run_agent(&server.base_url(), &workspace.schema(), &[], "");
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let partial = json_stdout(&output);
    assert_eq!(partial["vendor"], "Acme Supplies Ltd");
    assert_eq!(partial["total"], Value::Null);
    assert!(stderr(&output).contains("total"), "{}", stderr(&output));
    assert_eq!(server.request_count(), 3);
}

#[test]
fn interactive_clarification_is_fed_back_and_completes() {
    let workspace = Workspace::new("interactive");
    let server = ScriptedServer::with_script([
        Reply::tool_call("submit", r#"{"vendor": "Acme Supplies Ltd"}"#),
        Reply::tool_call("submit", r#"{"vendor": "Acme Supplies Ltd"}"#),
        Reply::tool_call("submit", r#"{"vendor": "Acme Supplies Ltd"}"#),
        Reply::tool_call(
            "submit",
            r#"{"vendor": "Acme Supplies Ltd", "total": 1200}"#,
        ),
    ]);
    let output = run_agent(
        &server.base_url(),
        &workspace.schema(),
        &["--interactive"],
        "The total is the amount due, 1200 dollars.\n",
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(json_stdout(&output)["total"], 1200);
    let last = server.requests().pop().unwrap();
    assert!(
        last.to_string().contains("1200 dollars"),
        "the answer reached the model: {last}"
    );
}

#[test]
fn a_token_budget_stops_the_run_with_a_clear_error() {
    let workspace = Workspace::new("budget");
    let server = ScriptedServer::start();
    let output = run_agent(
        &server.base_url(),
        &workspace.schema(),
        &["--max-tokens-budget", "10"],
        "",
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stdout(&output).is_empty(),
        "nothing half-written: {}",
        stdout(&output)
    );
    assert!(
        stderr(&output).starts_with("Error: BudgetExceeded - "),
        "{}",
        stderr(&output)
    );
    assert_eq!(server.request_count(), 0);
}

#[test]
fn a_provider_that_is_down_fails_clearly_and_writes_nothing() {
    let workspace = Workspace::new("down");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", closed.local_addr().unwrap());
    drop(closed);
    let output = run_agent(&url, &workspace.schema(), &[], "");
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout(&output).is_empty());
    let message = stderr(&output);
    assert!(message.starts_with("Error: ModelError - "), "{message}");
    assert!(message.contains(&url), "names the URL: {message}");
}

#[test]
fn bad_schema_and_missing_model_are_named() {
    let workspace = Workspace::new("bad");
    let bad = workspace.dir.join("bad.json");
    std::fs::write(
        &bad,
        r#"{"type": "object", "properties": {"total": {"type": "nubmer"}}}"#,
    )
    .unwrap();
    let output = run_agent("http://127.0.0.1:9/v1", bad.to_str().unwrap(), &[], "");
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).starts_with("Error: InvalidSchema - "),
        "{}",
        stderr(&output)
    );
    assert!(stderr(&output).contains("total"), "{}", stderr(&output));

    let output = quarry()
        .args([
            "extract",
            "--schema",
            &workspace.schema(),
            "--text",
            DOCUMENT,
        ])
        .env_remove("QUARRY_MODEL")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).starts_with("Error: MissingModel - "),
        "{}",
        stderr(&output)
    );
}
