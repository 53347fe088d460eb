//! The three model-driven systems on the embedded model, through the real binary: `quarry run`
//! fills a one-document entity in retrieve-then-extract mode, `quarry episode add` writes graph
//! entities, and `quarry serve` streams a chat's tokens, all with SmolLM2-135M-Instruct decoding
//! in the process (`QUARRY_TEST_GGUF`, installed by the test command; skipped without it except
//! in CI).

use crate::common;

use common::{Sandbox, Server, sse_events, stderr, stdout};
use quarry_testkit::test_gguf;
use serde_json::{Value, json};

fn local(path: &std::path::Path) -> String {
    format!("local:{}", path.display())
}

const REPORT: &str = "Acme Corp annual report 2024. Acme Corp was founded in 1987. Its chief \
                      executive officer is Jane Doe. The head office is in Springfield.";

#[test]
fn run_fills_an_entity_by_retrieving_then_extracting() {
    let Some(gguf) = test_gguf() else { return };
    let sandbox = Sandbox::new("local-run");
    sandbox.load_types(
        r#"
entity_types:
  - slug: company
    fields:
      - {name: ceo, label: Chief executive, instructions: "The chief executive officer's full name", sources: [linked-documents]}
      - {name: headquarters, label: Head office city, instructions: "The city of the head office", sources: [linked-documents]}
"#,
    );
    let entity = sandbox.add_entity("company", "Acme Corp");
    let document = sandbox.dir.join("acme.md");
    std::fs::write(&document, REPORT).unwrap();
    sandbox.quarry_ok(&[
        "doc",
        "add",
        document.to_str().unwrap(),
        "--entity",
        &entity,
    ]);

    let output = sandbox.quarry(&["run", &entity, "--model", &local(&gguf), "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["run"]["status"], "completed", "{report}");

    let results: Value =
        serde_json::from_str(&sandbox.quarry_ok(&["results", &entity, "--json"])).unwrap();
    let results = results.as_array().unwrap();
    assert_eq!(results.len(), 2, "{results:?}");
    for result in results {
        // Grounded by construction: a run of the document's words, cited to it.
        let value = result["value"]
            .as_str()
            .unwrap_or_else(|| panic!("{result}"));
        assert!(
            !value.trim().is_empty() && REPORT.contains(value),
            "{result}"
        );
        assert_eq!(result["sources"][0]["type"], "document", "{result}");
        // One answer to the passages, not a loop of tool turns.
        assert!(result["tokens_used"].as_i64().unwrap() < 2000, "{result}");
    }
}

#[test]
fn episode_add_writes_graph_entities_through_the_embedded_model() {
    let Some(gguf) = test_gguf() else { return };
    let sandbox = Sandbox::new("local-graph");
    let output = sandbox.quarry(&[
        "episode",
        "add",
        "--user",
        "Alice joined Acme Corp as CTO last week.",
        "--assistant",
        "Congratulations to Alice!",
        "--model",
        &local(&gguf),
        "--json",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let episode: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(episode["status"], "done", "{episode}");
    assert!(
        episode["entities_stored"].as_u64().unwrap() >= 1,
        "{episode}"
    );
}

#[test]
fn serve_streams_a_chat_turn_from_the_embedded_model() {
    let Some(gguf) = test_gguf() else { return };
    let server = Server::start(&["--model", &local(&gguf)]);
    let schema = json!({"type": "object", "required": ["vendor"],
        "properties": {"vendor": {"type": "string", "description": "Who issued the invoice"}}});
    let body = json!({"message": "Invoice from Acme Supplies Ltd. Total due: 1200 USD.",
        "schema": schema})
    .to_string();
    let (status, content_type, body) = server.request(
        "POST",
        "/v1/chat",
        Some("application/json"),
        body.as_bytes(),
    );
    assert_eq!(status, 200, "{body}");
    assert!(
        content_type.starts_with("text/event-stream"),
        "{content_type}"
    );
    let events = sse_events(&body);
    let tokens: Vec<&str> = events
        .iter()
        .filter(|(name, _)| name == "token")
        .filter_map(|(_, data)| data["text"].as_str())
        .collect();
    assert!(tokens.len() > 1, "the reply streams in pieces: {tokens:?}");
    let streamed = tokens.concat();
    assert!(streamed.contains("vendor"), "{streamed}");
    let result = events
        .iter()
        .find(|(name, _)| name == "result")
        .map(|(_, data)| data)
        .unwrap_or_else(|| panic!("no result event: {events:?}"));
    let vendor = result["value"]["vendor"].as_str().unwrap_or_default();
    assert!(
        "Invoice from Acme Supplies Ltd. Total due: 1200 USD.".contains(vendor),
        "{result}"
    );
    assert_eq!(events.last().unwrap().0, "done");
}

/// `quarry extract ARGS` (no database: extraction needs none).
fn extract(args: &[&str]) -> std::process::Output {
    common::quarry()
        .arg("extract")
        .args(args)
        .output()
        .expect("quarry runs")
}

/// The invoice of issue 33, whose customer ran on to the whole sentence and whose e-mail was
/// spelled until the budget ran out: four fields right in one call, three of them chosen among
/// the values the detectors found, and `--explain` says so.
#[test]
fn extract_schema_gets_the_invoice_right_in_one_call() {
    let Some(gguf) = test_gguf() else { return };
    let sandbox = Sandbox::new("local-invoice");
    let schema = sandbox.dir.join("invoice.json");
    std::fs::write(
        &schema,
        json!({"type": "object", "required": ["customer", "email", "amount", "due_date"],
            "properties": {"customer": {"type": "string"},
                "email": {"type": "string", "format": "email"},
                "amount": {"type": "number"},
                "due_date": {"type": "string", "format": "date"}}})
        .to_string(),
    )
    .unwrap();
    let output = extract(&[
        "--schema",
        schema.to_str().unwrap(),
        "--model",
        &local(&gguf),
        "--now",
        "2024-11-04T09:00:00+00:00",
        "--explain",
        "--text",
        "Customer Lee Wong, lee.wong@tailspin.io, owes 560 USD by 2024-12-24 for Tailspin Toys \
         services.",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let value: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        value,
        json!({"customer": "Lee Wong", "email": "lee.wong@tailspin.io", "amount": 560,
            "due_date": "2024-12-24"})
    );
    let explained = stderr(&output);
    assert!(explained.contains("over 1 model call(s)"), "{explained}");
    assert!(
        explained.contains("chosen among 1 email candidate(s)"),
        "{explained}"
    );
    assert!(
        explained.contains("copied from the text (grounded span)"),
        "{explained}"
    );
}

fn extract_contact(sandbox: &Sandbox, gguf: &std::path::Path, text: &str) -> Value {
    let schema = sandbox.dir.join("contact.json");
    std::fs::write(
        &schema,
        json!({"type": "object", "required": ["name", "email", "meeting"],
            "properties": {"name": {"type": "string"},
                "email": {"type": ["string", "null"], "format": "email"},
                "meeting": {"type": ["string", "null"], "format": "date"}}})
        .to_string(),
    )
    .unwrap();
    let output = extract(&[
        "--schema",
        schema.to_str().unwrap(),
        "--model",
        &local(gguf),
        "--now",
        "2024-11-04T09:00:00+00:00",
        "--text",
        text,
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    serde_json::from_str(&stdout(&output)).unwrap()
}

/// No e-mail address in the text: the field is null (the model cannot spell one that passes),
/// and a relative date is the date detector's reading of it against --now.
#[test]
fn a_missing_email_is_null_and_next_friday_is_the_detectors_date() {
    let Some(gguf) = test_gguf() else { return };
    let sandbox = Sandbox::new("local-contact");
    let text = "Maria Olsen will join the review next Friday in Room 4.";
    let detected = extract(&[
        "--target",
        "date",
        "--detail",
        "--now",
        "2024-11-04T09:00:00+00:00",
        "--text",
        text,
    ]);
    assert_eq!(detected.status.code(), Some(0), "{}", stderr(&detected));
    let detected: Value = serde_json::from_str(&stdout(&detected)).unwrap();
    let friday = detected["matches"][0]["value"].as_str().unwrap()[..10].to_owned();
    let value = extract_contact(&sandbox, &gguf, text);
    assert_eq!(value["email"], Value::Null, "{value}");
    assert_eq!(value["meeting"], json!(friday), "{value}");
    assert_eq!(value["name"], json!("Maria Olsen"), "{value}");
}
