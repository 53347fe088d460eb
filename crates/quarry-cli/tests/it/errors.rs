//! Errors that say what is wrong, through the real binary: a missing API key names its variable
//! before any work is queued, a provider without its `--base-url` is a usage error, `quarry run`
//! reports a failure over a wait, a slow model call says what it waits for, and every code a
//! command prints is in the one error-code table.

use crate::common;

use std::process::Output;
use std::time::Duration;

use common::{Sandbox, quarry, stderr, stdout};
use quarry_core::ErrorCode;
use quarry_testkit::Reply;

const SCHEMA: &str = r#"{"type": "object", "required": ["vendor"], "properties": {
    "vendor": {"type": "string", "description": "Who issued the invoice"}}}"#;

const DOCUMENT: &str = "Invoice from Acme Supplies Ltd, 15 January 2024.";

/// `quarry ARGS --db DB` with no model or key in the environment.
fn without_keys(sandbox: &Sandbox, args: &[&str]) -> Output {
    quarry()
        .args(args)
        .args(["--db", &sandbox.db()])
        .env_remove("QUARRY_MODEL")
        .env_remove("QUARRY_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .expect("quarry runs")
}

/// The code of the `Error: <Code> - …` line on stderr, which must be in the error-code table.
fn printed_code(output: &Output) -> ErrorCode {
    let stderr = stderr(output);
    let line = stderr
        .lines()
        .find_map(|line| line.strip_prefix("Error: "))
        .unwrap_or_else(|| panic!("no 'Error: ' line in {stderr}"));
    let (code, _) = line.split_once(" - ").expect("Error: <Code> - <message>");
    ErrorCode::parse(code).unwrap_or_else(|| panic!("{code} is not in the error-code table"))
}

fn schema_file(sandbox: &Sandbox) -> String {
    let path = sandbox.dir.join("schema.json");
    std::fs::write(&path, SCHEMA).expect("the schema is written");
    path.display().to_string()
}

#[test]
fn extract_with_a_schema_names_the_missing_key_and_the_missing_base_url_as_usage_errors() {
    let sandbox = Sandbox::new("errors-extract");
    let schema = schema_file(&sandbox);
    let extract = |model: &str| {
        quarry()
            .args(["extract", "--schema", &schema, "--text", DOCUMENT])
            .args(["--model", model])
            .env_remove("QUARRY_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .output()
            .expect("quarry runs")
    };

    assert_fails_with(
        &extract("openai:gpt-4o-mini"),
        ErrorCode::MissingApiKey,
        "OPENAI_API_KEY is not set",
    );
    assert_fails_with(
        &extract("openai-compatible:m"),
        ErrorCode::Usage,
        "--base-url",
    );
}

/// The command exited with `code`'s status, printing it with `says`.
fn assert_fails_with(output: &Output, code: ErrorCode, says: &str) {
    assert_eq!(
        output.status.code(),
        Some(code.exit_status().into()),
        "{}",
        stderr(output)
    );
    assert_eq!(printed_code(output), code);
    assert!(stderr(output).contains(says), "{}", stderr(output));
}

#[test]
fn run_without_the_agents_key_fails_at_once_and_queues_nothing() {
    let sandbox = Sandbox::new("errors-run-key");
    sandbox.load_types(
        r#"
entity_types:
  - slug: company
    fields:
      - {name: ceo, agent: "openai:gpt-4o-mini"}
      - {name: budget, type: number, human_input: true}
"#,
    );
    let entity = sandbox.add_entity("company", "Acme Corp");

    assert_fails_with(
        &without_keys(&sandbox, &["run", &entity]),
        ErrorCode::MissingApiKey,
        "OPENAI_API_KEY is not set",
    );

    // Nothing was queued: no task in any state.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let depths = runtime.block_on(async {
        let store = quarry_store::open(&sandbox.db()).await.unwrap();
        store.queue_depths().await.unwrap()
    });
    assert!(
        depths.tasks.iter().all(|(_, count)| *count == 0),
        "a task was queued: {:?}",
        depths.tasks
    );

    // With --no-wait a worker with its own keys does the work: the run is queued.
    let output = without_keys(&sandbox, &["run", &entity, "--no-wait"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

#[test]
fn a_failed_field_outranks_one_waiting_for_a_person() {
    let sandbox = Sandbox::new("errors-run-status");
    sandbox.load_types(
        r#"
entity_types:
  - slug: company
    fields:
      - {name: ceo, agent: "openai-compatible:m-ceo"}
      - {name: budget, type: number, human_input: true}
  - slug: project
    fields:
      - {name: budget, type: number, human_input: true}
"#,
    );
    let base_url = sandbox.model.base_url();
    let run =
        |entity: &str| sandbox.quarry(&["run", entity, "--base-url", &base_url, "--retries", "0"]);

    // The model refuses the field's request for good (400): the field fails, the budget waits.
    sandbox
        .model
        .push_for_model("m-ceo", Reply::status(400, "bad request"));
    let company = sandbox.add_entity("company", "Acme Corp");
    assert_exits_with(&run(&company), ErrorCode::ExtractionFailed);

    // Only a wait: 3.
    let project = sandbox.add_entity("project", "Apollo");
    assert_exits_with(&run(&project), ErrorCode::NeedsPerson);
}

fn assert_exits_with(output: &Output, code: ErrorCode) {
    assert_eq!(
        output.status.code(),
        Some(code.exit_status().into()),
        "expected {code}'s exit status: {}\n{}",
        stdout(output),
        stderr(output)
    );
}

#[test]
fn a_model_call_slower_than_a_second_says_what_it_waits_for() {
    let sandbox = Sandbox::new("errors-slow");
    let schema = schema_file(&sandbox);
    sandbox.model.push(
        Reply::tool_call("submit", r#"{"vendor": "Acme Supplies Ltd"}"#)
            .after(Duration::from_millis(1800)),
    );
    let output = quarry()
        .args(["extract", "--schema", &schema, "--text", DOCUMENT])
        .args(["--model", "openai-compatible:m-slow"])
        .args(["--base-url", &sandbox.model.base_url(), "--retries", "0"])
        .env_remove("QUARRY_API_KEY")
        .output()
        .expect("quarry runs");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("waiting for openai-compatible:m-slow"),
        "stderr: {}",
        stderr(&output)
    );
    assert!(stdout(&output).contains("Acme Supplies Ltd"));
}

#[test]
fn check_prints_codes_from_the_table() {
    let output = quarry()
        .args(["check", "--target", "email", "--text", "Contact us anytime"])
        .args(["--output", r#"{"email": "contact@example.com"}"#])
        .output()
        .expect("quarry runs");
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(printed_code(&output), ErrorCode::Hallucination);
}
