//! The document against the router it describes.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use serde_json::Value;
use tower::ServiceExt;

use super::openapi_document;
use crate::{ServerConfig, router};

/// Every (method, path) the document names.
fn documented(document: &Value) -> Vec<(String, String)> {
    let mut operations = Vec::new();
    for (path, item) in document["paths"].as_object().into_iter().flatten() {
        for method in item.as_object().into_iter().flatten().map(|(m, _)| m) {
            operations.push((method.clone(), path.clone()));
        }
    }
    operations
}

#[tokio::test]
async fn every_documented_operation_is_routed() {
    let document = openapi_document();
    let operations = documented(&document);
    assert!(operations.len() >= 45, "{operations:?}");
    for (method, path) in operations {
        // Any value for the path's parameters: the route must answer, not the fallbacks.
        let uri: String = path
            .split('/')
            .map(|part| if part.starts_with('{') { "x" } else { part })
            .collect::<Vec<_>>()
            .join("/");
        let request = Request::builder()
            .method(Method::from_bytes(method.to_uppercase().as_bytes()).unwrap())
            .uri(if uri.is_empty() { "/".to_owned() } else { uri })
            .header("host", "localhost")
            .body(Body::empty())
            .unwrap();
        let response = router(ServerConfig::default())
            .oneshot(request)
            .await
            .unwrap();
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        let text = String::from_utf8_lossy(&body);
        assert_ne!(status, StatusCode::METHOD_NOT_ALLOWED, "{method} {path}");
        assert!(!text.contains("no such route"), "{method} {path}: {text}");
    }
}

/// The router is built from the route table alone: no file but the table's fold in `lib.rs`
/// and `/mcp`'s own (documented by `routes::mcp_operation`) adds a route.
#[test]
fn no_route_is_added_outside_the_table() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut adding = Vec::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs")
                && !path.ends_with("openapi/tests.rs")
            {
                let text = std::fs::read_to_string(&path).unwrap();
                if text.contains(".route(") || text.contains(".route_service(") {
                    adding.push(path.strip_prefix(&src).unwrap().display().to_string());
                }
            }
        }
    }
    adding.sort();
    assert_eq!(adding, ["lib.rs", "mcp/http.rs"]);
    assert!(openapi_document()["paths"]["/mcp"]["post"].is_object());
}

#[test]
fn every_operation_is_complete() {
    let document = openapi_document();
    let mut ids = Vec::new();
    for (method, path) in documented(&document) {
        let operation = &document["paths"][&path][&method];
        let id = operation["operationId"].as_str().unwrap_or_default();
        assert!(!id.is_empty(), "{method} {path}");
        ids.push(id.to_owned());
        assert!(operation["tags"][0].is_string(), "{method} {path}");
        assert!(operation["security"].is_array(), "{method} {path}");
        for (status, answer) in operation["responses"].as_object().unwrap() {
            if status.starts_with('4') || status.starts_with('5') {
                let reference = answer["$ref"].as_str().unwrap_or_default();
                let name = reference.rsplit('/').next().unwrap_or_default();
                assert_eq!(
                    document["components"]["responses"][name]["content"]["application/json"]["schema"]
                        ["$ref"],
                    "#/components/schemas/Error",
                    "{method} {path} {status}"
                );
            }
        }
        if path.contains('{') {
            assert!(operation["parameters"].is_array(), "{method} {path}");
        }
    }
    let count = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), count, "operation ids are unique");
}

/// Pinned: what the hand-kept document had wrong.
#[test]
fn statuses_and_scopes_are_the_handlers() {
    let document = openapi_document();
    let paths = &document["paths"];
    assert!(paths["/v1/entities"]["post"]["responses"]["201"].is_object());
    assert!(paths["/v1/episodes"]["post"]["responses"]["202"].is_object());
    assert!(paths["/v1/episodes"]["post"]["responses"]["200"].is_null());
    // Results are readable with a key that may trigger extraction.
    assert_eq!(
        paths["/v1/extraction/{entity_id}"]["get"]["x-required-scopes"]["anyOf"],
        serde_json::json!(["entities:read", "extraction:trigger"])
    );
    // Query parameters come from the handler's query type.
    let names: Vec<&str> = paths["/v1/entities"]["get"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(names, ["type", "limit"]);
}

/// Prints the document: `cargo test -p quarry-server --lib dump -- --ignored --nocapture`.
#[test]
#[ignore]
fn dump() {
    println!(
        "{}",
        serde_json::to_string_pretty(&openapi_document()).unwrap()
    );
}
