//! The HTTP host through a real `quarry serve` on a loopback port.

use crate::common;

use common::Server;
use serde_json::{Value, json};

#[test]
fn skill_endpoint_answers_like_the_cli() {
    let server = Server::start(&[]);
    let (status, body) = server.post_json(
        "/skill/extract",
        r#"{"text": "For support, email us at support@agent.rs or sales@agent.rs", "target": "email"}"#,
    );
    assert_eq!(status, 200);
    assert_eq!(body, r#"{"email": ["support@agent.rs", "sales@agent.rs"]}"#);

    let (status, body) = server.post_json(
        "/skill/extract",
        r#"{"text": "Contact: hello@agent.rs", "target": "email", "detail": true}"#,
    );
    assert_eq!(status, 200);
    let result: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(result["matches"][0]["start"], 9);
    assert_eq!(result["matches"][0]["end"], 23);
}

#[test]
fn bad_requests_get_400_in_the_one_error_shape() {
    let server = Server::start(&[]);
    let cases: &[(Option<&str>, &str, &str)] = &[
        (
            Some("application/json"),
            r#"{"text": "x", "target": "fax"}"#,
            "InvalidTarget",
        ),
        (
            Some("application/json"),
            r#"{"text": "", "target": "email"}"#,
            "EmptyInput",
        ),
        (
            Some("application/json"),
            r#"{"text": "x"}"#,
            "MissingTarget",
        ),
        (
            Some("application/json"),
            r#"{"text": "x", "target": "email""#,
            "MalformedRequest",
        ),
        (Some("application/json"), r#"["text"]"#, "MalformedRequest"),
        (
            Some("text/plain"),
            r#"{"text": "x", "target": "email"}"#,
            "UnsupportedContentType",
        ),
        (
            None,
            r#"{"text": "x", "target": "email"}"#,
            "UnsupportedContentType",
        ),
    ];
    for (content_type, body, code) in cases {
        let (status, response_type, response) =
            server.request("POST", "/skill/extract", *content_type, body.as_bytes());
        assert_eq!(status, 400, "{body} → {response}");
        assert!(
            response_type.starts_with("application/json"),
            "{response_type}"
        );
        let error: Value = serde_json::from_str(&response).expect("the error body is JSON");
        assert_eq!(error["error"], *code, "{body}");
        assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
    let (_, _, response) = server.request(
        "POST",
        "/skill/extract",
        Some("application/json"),
        br#"{"text": "x", "target": "fax"}"#,
    );
    assert_eq!(
        serde_json::from_str::<Value>(&response).unwrap(),
        json!({"error": "InvalidTarget", "message": "unknown target 'fax'"})
    );
}

#[test]
fn oversize_bodies_are_refused_in_the_error_shape() {
    let server = Server::start(&["--max-body-bytes", "1024"]);
    let body = format!(r#"{{"text": "{}", "target": "email"}}"#, "a".repeat(4096));
    let (status, _, response) = server.request(
        "POST",
        "/skill/extract",
        Some("application/json"),
        body.as_bytes(),
    );
    assert_eq!(status, 413);
    let error: Value = serde_json::from_str(&response).unwrap();
    assert_eq!(error["error"], "InputTooLarge");
}

#[test]
fn health_and_unknown_routes() {
    let server = Server::start(&[]);
    let (status, _, body) = server.request("GET", "/healthz", None, b"");
    assert_eq!(status, 200);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({"status": "ok"})
    );
    let (status, _, body) = server.request("GET", "/nope", None, b"");
    assert_eq!(status, 404);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["error"],
        "NotFound"
    );
    let (status, _, body) = server.request("GET", "/skill/extract", None, b"");
    assert_eq!(status, 405);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["error"],
        "MethodNotAllowed"
    );
}

#[test]
fn check_endpoint_returns_the_guardrail_verdict() {
    let server = Server::start(&[]);
    let (status, body) = server.post_json(
        "/skill/check",
        r#"{"text": "Contact us anytime", "target": "email", "output": "{\"email\": \"contact@example.com\"}"}"#,
    );
    assert_eq!(status, 200);
    let verdict: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(verdict["verdict"], "rejected");
    assert_eq!(
        verdict["reasons"][0]["message"],
        "contact@example.com does not appear in source text - hallucination detected"
    );
    let (status, body) = server.post_json(
        "/skill/check",
        r#"{"text": "Contact us anytime", "target": "fax", "output": "{}"}"#,
    );
    assert_eq!(status, 400);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["error"],
        "InvalidTarget"
    );
}
