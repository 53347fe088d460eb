//! `POST /v1/chat` through a real `quarry serve` with a model behind it: Server-Sent Events with
//! tokens, the extraction, and a clarification question the client answers in the same
//! conversation.

mod common;

use common::{Server, sse_events};
use quarry_testkit::{Reply, ScriptedServer};
use serde_json::{Value, json};

const DOCUMENT: &str = "Invoice from Acme Supplies Ltd, 15 January 2024. Total due: $1,200.";

fn schema() -> Value {
    json!({"type": "object", "required": ["vendor", "total"], "properties": {
        "vendor": {"type": "string"}, "total": {"type": "number"}}})
}

fn events_named<'a>(events: &'a [(String, Value)], name: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|(n, _)| n == name)
        .map(|(_, data)| data)
        .collect()
}

#[test]
fn chat_streams_tokens_asks_a_question_and_completes_after_the_answer() {
    let model = ScriptedServer::with_script([
        Reply::content("Here it is: ```json\n{\"vendor\": \"Acme Supplies Ltd\"}\n```"),
        Reply::tool_call("submit", r#"{"vendor": "Acme Supplies Ltd"}"#),
        Reply::tool_call("submit", r#"{"vendor": "Acme Supplies Ltd"}"#),
        Reply::tool_call(
            "submit",
            r#"{"vendor": "Acme Supplies Ltd", "total": 1200}"#,
        ),
    ]);
    let server = Server::start(&[
        "--model",
        "openai-compatible:test-model",
        "--base-url",
        &model.base_url(),
        "--retries",
        "0",
    ]);
    let first = json!({"message": DOCUMENT, "schema": schema()}).to_string();
    let (status, content_type, body) = server.request(
        "POST",
        "/v1/chat",
        Some("application/json"),
        first.as_bytes(),
    );
    assert_eq!(status, 200, "{body}");
    assert!(
        content_type.starts_with("text/event-stream"),
        "{content_type}"
    );
    let events = sse_events(&body);
    let id = events_named(&events, "conversation")[0]["conversation_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let tokens: String = events_named(&events, "token")
        .iter()
        .map(|data| data["text"].as_str().unwrap())
        .collect();
    assert!(
        tokens.contains("Acme Supplies Ltd"),
        "tokens streamed: {tokens:?}"
    );
    let result = events_named(&events, "result")[0];
    assert_eq!(result["status"], "needs_clarification");
    assert_eq!(result["value"]["vendor"], "Acme Supplies Ltd");
    let question = events_named(&events, "message")[0];
    assert_eq!(question["role"], "assistant");
    assert!(
        question["content"].as_str().unwrap().contains("total"),
        "{question}"
    );
    assert_eq!(events.last().unwrap().0, "done");

    let answer =
        json!({"conversation_id": id, "message": "The total is 1200 dollars."}).to_string();
    let (status, _, body) = server.request(
        "POST",
        "/v1/chat",
        Some("application/json"),
        answer.as_bytes(),
    );
    assert_eq!(status, 200, "{body}");
    let events = sse_events(&body);
    let result = events_named(&events, "result")[0];
    assert_eq!(result["status"], "complete", "{result}");
    assert_eq!(
        result["value"],
        json!({"vendor": "Acme Supplies Ltd", "total": 1200})
    );
}

#[test]
fn chat_errors_use_the_one_error_shape() {
    let server = Server::start(&[]);
    let body = json!({"message": DOCUMENT, "schema": schema()}).to_string();
    let (status, _, response) = server.request(
        "POST",
        "/v1/chat",
        Some("application/json"),
        body.as_bytes(),
    );
    assert_eq!(status, 503);
    assert_eq!(
        serde_json::from_str::<Value>(&response).unwrap()["error"],
        "ModelNotConfigured"
    );

    let model = ScriptedServer::start();
    let server = Server::start(&[
        "--model",
        "openai-compatible:m",
        "--base-url",
        &model.base_url(),
    ]);
    for (request, status, code) in [
        (json!({"message": DOCUMENT}), 400, "InvalidSchema"),
        (
            json!({"message": DOCUMENT, "schema": {"type": "object", "properties": {"a": {"type": "nope"}}}}),
            400,
            "InvalidSchema",
        ),
        (
            json!({"message": "  ", "schema": schema()}),
            400,
            "EmptyInput",
        ),
        (
            json!({"conversation_id": "conv_missing", "message": "hi"}),
            404,
            "UnknownConversation",
        ),
    ] {
        let (got, _, response) = server.request(
            "POST",
            "/v1/chat",
            Some("application/json"),
            request.to_string().as_bytes(),
        );
        assert_eq!(got, status, "{request} → {response}");
        assert_eq!(
            serde_json::from_str::<Value>(&response).unwrap()["error"],
            code
        );
    }
    assert_eq!(model.request_count(), 0);
}
