//! `POST /v1/chat` through a real `quarry serve` with a model behind it: Server-Sent Events with
//! tokens, the extraction, and a clarification question the client answers in the same
//! conversation.

use crate::common;

use std::io::Write;
use std::time::Duration;

use common::{Sandbox, Server, eventually, sse_events};
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

/// Found by a hostile test: a conversation whose server was stopped mid-turn stayed `running`
/// for good, and every later message got 409 "still answering the last message". A turn now
/// holds its conversation by a heartbeat; once its process is gone the turn reads `failed` and
/// the conversation takes the next message.
#[test]
fn a_turn_whose_server_died_reads_failed_and_the_conversation_continues() {
    let sandbox = Sandbox::new("chat-lost-turn");
    let key = sandbox
        .quarry_ok(&[
            "key",
            "create",
            "--scopes",
            "extraction:trigger,entities:read",
        ])
        .trim()
        .to_owned();
    // The first turn's model is still thinking when its server dies.
    sandbox
        .model
        .push(Reply::content("{}").after(Duration::from_secs(600)));
    let db = sandbox.db();
    let model_url = sandbox.model.base_url();
    let args = [
        "--db",
        db.as_str(),
        "--model",
        "openai-compatible:m-chat",
        "--base-url",
        model_url.as_str(),
        "--retries",
        "0",
        "--turn-lease-secs",
        "3",
    ];
    let first = Server::start(&args);
    let body = json!({"message": DOCUMENT, "schema": schema()}).to_string();
    let mut stalled = std::net::TcpStream::connect(first.addr).unwrap();
    write!(
        stalled,
        "POST /v1/chat HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {key}\r\nContent-Type: \
         application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let id = eventually("the turn is running", || {
        let (status, listed) = first.call(&key, "GET", "/v1/chat/conversations", None);
        assert_eq!(status, 200, "{listed}");
        let running = listed.as_array()?.first()?.clone();
        (running["status"] == "running").then(|| running["id"].as_str().unwrap().to_owned())
    });
    // Past one lease the turn still holds its conversation: its server heartbeats it.
    std::thread::sleep(Duration::from_secs(4));
    let answer = json!({"conversation_id": id, "message": "The total is 1200."});
    let (status, busy) = first.call(&key, "POST", "/v1/chat", Some(answer.clone()));
    assert_eq!(status, 409, "{busy}");
    assert_eq!(busy["error"], "Conflict", "{busy}");

    // The server is killed mid-turn; another one serves the same database.
    drop(first);
    let second = Server::start(&args);
    let failed = eventually("the lost turn reads failed", || {
        let (status, read) =
            second.call(&key, "GET", &format!("/v1/chat/conversations/{id}"), None);
        assert_eq!(status, 200, "{read}");
        (read["status"] == "failed").then_some(read)
    });
    assert_eq!(failed["messages"].as_array().unwrap().len(), 1, "{failed}");
    let (status, listed) = second.call(&key, "GET", "/v1/chat/conversations", None);
    assert_eq!(status, 200);
    assert_eq!(listed[0]["status"], "failed", "{listed}");

    sandbox.model.push(Reply::tool_call(
        "submit",
        r#"{"vendor": "Acme Supplies Ltd", "total": 1200}"#,
    ));
    let (status, _, streamed) = second.request_as(
        Some(&key),
        "POST",
        "/v1/chat",
        Some("application/json"),
        answer.to_string().as_bytes(),
    );
    assert_eq!(status, 200, "{streamed}");
    let events = sse_events(&streamed);
    let result = events_named(&events, "result")[0];
    assert_eq!(result["status"], "complete", "{result}");
    let (_, reopened) = second.call(&key, "GET", &format!("/v1/chat/conversations/{id}"), None);
    assert_eq!(reopened["status"], "complete", "{reopened}");
    let said: Vec<&str> = reopened["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert!(
        said.iter()
            .any(|m| m.contains("the server answering it stopped")),
        "{said:?}"
    );
}
