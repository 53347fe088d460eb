//! End to end: the real OpenAI-compatible client over HTTP against a local scripted server.

use std::sync::Arc;
use std::time::Duration;

use quarry_agent::{EngineError, Extractor, ExtractorConfig, Outcome, Schema};
use quarry_llm::{Endpoint, OpenAiClient, TransportConfig};
use quarry_testkit::{Reply, ScriptedServer};
use serde_json::{Value, json};

const SCHEMA: &str = r#"{"type": "object", "required": ["vendor", "total"], "properties": {
    "vendor": {"type": "string", "description": "Who issued the invoice"},
    "total": {"type": "number"},
    "issued": {"type": ["string", "null"], "format": "date"}}}"#;

const DOCUMENT: &str = "Invoice from Acme Supplies Ltd, 15 January 2024. Total due: $1,200.";

fn extractor(server: &ScriptedServer) -> Extractor {
    let endpoint = Endpoint {
        provider: "openai".to_owned(),
        base_url: server.base_url(),
        model: "gpt-test".to_owned(),
        api_key: Some("sk-test".to_owned()),
    };
    let transport = TransportConfig {
        max_attempts: 2,
        backoff_base: Duration::from_millis(5),
        backoff_max: Duration::from_millis(10),
        ..TransportConfig::default()
    };
    let client = OpenAiClient::new(endpoint, transport, 4).unwrap();
    Extractor::new(Arc::new(client), "gpt-test", ExtractorConfig::default())
}

fn messages(body: &Value) -> &Vec<Value> {
    body["messages"].as_array().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn hallucination_rejected_over_http_then_fixed() {
    let server = ScriptedServer::with_script([
        Reply::tool_call(
            "submit",
            r#"{"vendor": "Acme Supplies Ltd", "total": 1500}"#,
        )
        .with_usage(300, 40),
        Reply::tool_call(
            "submit",
            r#"{"vendor": "Acme Supplies Ltd", "total": 1200, "issued": "2024-01-15"}"#,
        )
        .with_usage(420, 45),
    ]);
    let schema = Schema::parse(SCHEMA).unwrap();
    let extraction = extractor(&server)
        .extract(&schema, DOCUMENT, &[])
        .await
        .unwrap();
    assert_eq!(extraction.outcome, Outcome::Complete);
    assert_eq!(
        extraction.value,
        json!({"vendor": "Acme Supplies Ltd", "total": 1200, "issued": "2024-01-15"})
    );
    assert_eq!(extraction.usage.total(), 805);
    assert_eq!(extraction.model_calls, 2);

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first = messages(&requests[0]);
    assert_eq!(first[0]["role"], "system");
    assert!(!first[0]["content"].as_str().unwrap().contains("Acme"));
    assert!(first[1]["content"].as_str().unwrap().contains(DOCUMENT));
    // The user's JSON Schema reaches the wire as the tools' parameters, with the fields a
    // detector knows offering what the detectors found ("$1,200", "15 January 2024").
    let schema_sent = &requests[0]["tools"][1]["function"]["parameters"];
    assert_eq!(
        schema_sent,
        &json!({"type": "object", "required": ["vendor", "total"], "properties": {
            "vendor": {"type": "string", "description": "Who issued the invoice"},
            "total": {"type": "number", "enum": [1200]},
            "issued": {"type": ["string", "null"], "enum": ["2024-01-15", null]}}})
    );
    // The second request carries the precise feedback as a tool result.
    let tool_result = messages(&requests[1])
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("a tool message");
    let text = tool_result["content"].as_str().unwrap();
    assert!(
        text.contains("field 'total': 1500 does not appear in the document"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn prose_json_after_a_server_error_is_repaired_without_a_model_retry() {
    let server = ScriptedServer::with_script([
        Reply::status(500, "upstream overloaded").with_usage(0, 0),
        Reply::content(
            "Here you go:\n```json\n{'vendor': 'Acme Supplies Ltd', 'total': '$1,200',}\n```",
        )
        .with_usage(250, 30),
    ]);
    let schema = Schema::parse(SCHEMA).unwrap();
    let extraction = extractor(&server)
        .extract(&schema, DOCUMENT, &[])
        .await
        .unwrap();
    assert!(extraction.is_complete(), "{:?}", extraction.outcome);
    assert_eq!(extraction.model_calls, 1);
    assert_eq!(extraction.value["total"], json!(1200));
    assert_eq!(server.request_count(), 2, "one transport retry");
}

#[tokio::test(flavor = "multi_thread")]
async fn three_bad_replies_over_http_escalate() {
    let bad = r#"{"vendor": "Globex", "total": 99}"#;
    let server = ScriptedServer::with_script([
        Reply::tool_call("submit", bad),
        Reply::tool_call("submit", bad),
        Reply::tool_call("submit", bad),
    ]);
    let schema = Schema::parse(SCHEMA).unwrap();
    let extraction = extractor(&server)
        .extract(&schema, DOCUMENT, &[])
        .await
        .unwrap();
    let question = extraction.question().expect("escalation");
    assert!(
        question.contains("'vendor' (Who issued the invoice)"),
        "{question}"
    );
    assert!(question.contains("'total'"), "{question}");
    assert_eq!(server.request_count(), 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn provider_down_is_a_clear_error() {
    let server =
        ScriptedServer::with_script([Reply::status(500, "boom"), Reply::status(500, "boom")]);
    let schema = Schema::parse(SCHEMA).unwrap();
    let error = extractor(&server)
        .extract(&schema, DOCUMENT, &[])
        .await
        .unwrap_err();
    assert!(matches!(error, EngineError::Llm(_)), "{error}");
    let message = error.to_string();
    assert!(
        message.contains("500") && message.contains(&server.base_url()),
        "{message}"
    );
}
