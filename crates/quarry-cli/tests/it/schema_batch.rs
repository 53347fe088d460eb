//! `quarry extract --schema S --jsonl`: one document per line in, one object (or error object)
//! per line out, in input order, with several documents in flight, against the scripted
//! OpenAI-compatible model server.

use crate::common;

use std::path::PathBuf;
use std::process::Output;
use std::time::Duration;

use common::{quarry, run_with_stdin, stderr, stdout};
use quarry_testkit::{Reply, Scripted, ScriptedServer};
use serde_json::{Value, json};

const SCHEMA: &str = r#"{"type": "object", "properties": {"vendor": {"type": "string"}}}"#;

/// Answers each document from its own text (requests arrive in any order): the vendor named
/// after "from", slower for the first document so that later ones finish first. Every reply
/// takes a while, so documents sent together are in flight together whichever starts first.
fn respond(request: &Value) -> Scripted {
    let conversation = request["messages"].to_string();
    let (vendor, delay) = if conversation.contains("Acme Ltd") {
        ("Acme Ltd", 600)
    } else if conversation.contains("Beta GmbH") {
        ("Beta GmbH", 250)
    } else {
        ("Nobody Inc", 250)
    };
    Scripted::from(Reply::tool_call(
        "submit",
        json!({"vendor": vendor}).to_string(),
    ))
    .after(Duration::from_millis(delay))
}

struct Batch {
    dir: PathBuf,
    server: ScriptedServer,
}

impl Batch {
    fn new(name: &str) -> Batch {
        let dir = std::env::temp_dir().join(format!("quarry-batch-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("schema.json"), SCHEMA).unwrap();
        let server = ScriptedServer::start();
        server.respond_with(respond);
        Batch { dir, server }
    }

    fn run(&self, stdin: &str, extra: &[&str]) -> Output {
        let schema = self.dir.join("schema.json");
        let mut command = quarry();
        command
            .args(["extract", "--jsonl", "--schema", schema.to_str().unwrap()])
            .args([
                "--model",
                "openai-compatible:m",
                "--base-url",
                &self.server.base_url(),
            ])
            .args(["--retries", "0"])
            .args(extra)
            .env_remove("QUARRY_MODEL");
        run_with_stdin(command, stdin)
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn lines(output: &Output) -> Vec<Value> {
    stdout(output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

#[test]
fn results_and_errors_come_back_per_line_in_input_order() {
    let batch = Batch::new("order");
    let input = [
        r#"{"text": "Invoice from Acme Ltd, due in March."}"#,
        "not json",
        r#"{"text": "Invoice from Beta GmbH."}"#,
        r#"{"text": ""}"#,
        r#"{"text": "Invoice from Beta GmbH again."}"#,
    ]
    .join("\n");
    let output = batch.run(&input, &["--concurrency", "4"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let answers = lines(&output);
    assert_eq!(answers.len(), 5, "{}", stdout(&output));
    assert_eq!(answers[0], json!({"vendor": "Acme Ltd"}));
    assert_eq!(answers[1]["error"], "MalformedRequest");
    assert_eq!(answers[1]["line"], 2);
    assert_eq!(answers[2], json!({"vendor": "Beta GmbH"}));
    assert_eq!(answers[3]["error"], "EmptyInput");
    assert_eq!(answers[3]["line"], 4);
    assert_eq!(answers[4], json!({"vendor": "Beta GmbH"}));
    assert!(
        batch.server.max_concurrent() >= 2,
        "documents were extracted at once: {}",
        batch.server.max_concurrent()
    );
    assert!(stderr(&output).contains("5 lines read, 2 answered with an error object"));
}

#[test]
fn an_unresolved_document_is_needs_person_with_its_partial_object() {
    let batch = Batch::new("person");
    // The model names a vendor the text does not contain: never grounded.
    let output = batch.run(
        "{\"text\": \"An invoice with no sender.\"}\n{\"text\": \"Invoice from Beta GmbH.\"}\n",
        &["--max-attempts", "1"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let answers = lines(&output);
    assert_eq!(answers[0]["error"], "NeedsPerson", "{}", answers[0]);
    assert!(answers[0]["value"].is_object(), "{}", answers[0]);
    assert_eq!(answers[1], json!({"vendor": "Beta GmbH"}));
}

#[test]
fn a_batch_where_every_line_failed_exits_non_zero() {
    let batch = Batch::new("failed");
    let output = batch.run("[1]\n{\"txt\": \"x\"}\n", &[]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(lines(&output).len(), 2);
    assert_eq!(
        batch.server.request_count(),
        0,
        "no model call for malformed lines"
    );
}

#[test]
fn interactive_is_refused_in_batch_mode() {
    let batch = Batch::new("interactive");
    let output = batch.run("{\"text\": \"x\"}\n", &["--interactive"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).starts_with("Error: InvalidArguments"));
}

#[test]
fn a_line_whose_chunk_did_not_fit_keeps_the_rest_and_warns_naming_the_line() {
    const OVERFLOW: &str = r#"{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}"#;
    let batch = Batch::new("unread");
    // Three chunks of the default 16,000 bytes: the vendor in the first, a stretch the model
    // cannot take in the second.
    batch.server.respond_with(|request| {
        let conversation = request["messages"].to_string();
        if conversation.contains("TOO-LONG") {
            Scripted::from(Reply::status(400, OVERFLOW))
        } else if conversation.contains("Acme Ltd") {
            Reply::tool_call("submit", json!({"vendor": "Acme Ltd"}).to_string()).into()
        } else {
            Reply::tool_call("submit", json!({"vendor": null}).to_string()).into()
        }
    });
    let filler = "Nothing to see in this sentence. ".repeat(500);
    let text = format!("Invoice from Acme Ltd. {filler}TOO-LONG {filler}{filler}");
    let input = [
        json!({"text": "Invoice from Acme Ltd."}).to_string(),
        json!({"text": text}).to_string(),
    ]
    .join("\n");
    let output = batch.run(&input, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        lines(&output),
        [json!({"vendor": "Acme Ltd"}), json!({"vendor": "Acme Ltd"})]
    );
    let warnings: Vec<String> = stderr(&output)
        .lines()
        .filter(|line| line.starts_with("warning:"))
        .map(str::to_owned)
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with("warning: line 2: characters ")
            && warnings[0].contains("were not read")
            && warnings[0].contains("context length"),
        "{warnings:?}"
    );
}
