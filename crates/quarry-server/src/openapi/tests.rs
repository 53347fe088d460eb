//! The document against the router it describes.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use serde_json::Value;
use tower::ServiceExt;

use crate::routes::openapi_document;
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

/// Parts of success answers left free-form on purpose, each with why: their shape is the
/// project's (its entity types and schemas), the caller's, or another specification's.
const FREE_FORM: &[(&str, &str)] = &[
    (
        "Delivery.body",
        "the webhook's JSON as POSTed: the event, ids and the result (an ExtractionResult)",
    ),
    (
        "Entity.fields",
        "an entity's values by field name, each typed by the project's entity type",
    ),
    (
        "Entity.metadata",
        "what callers keep beside the values (`locked_fields` and their own keys)",
    ),
    ("EntityWithEpisodes.fields", "as Entity.fields"),
    ("EntityWithEpisodes.metadata", "as Entity.metadata"),
    ("FoundEntity.fields", "as Entity.fields"),
    ("FoundEntity.metadata", "as Entity.metadata"),
    (
        "FieldGlance.value",
        "an extracted value, typed by the project's entity type",
    ),
    (
        "ExtractionResult.value",
        "an extracted value, typed by the project's entity type",
    ),
    (
        "ExtractionResult.metadata",
        "what the extractor or submitter attached to the result",
    ),
    (
        "ConversationView.schema",
        "the caller's schema as sent: a JSON Schema object or YAML text",
    ),
    (
        "TurnResult.value",
        "the extracted object, shaped by the conversation's own schema",
    ),
    (
        "FieldReport.value",
        "a field's accepted value, shaped by the conversation's own schema",
    ),
    (
        "OpenApiDocument.paths",
        "operations, described by the OpenAPI 3.1 specification's schema",
    ),
    (
        "Components.securitySchemes",
        "described by the OpenAPI 3.1 specification's schema",
    ),
    (
        "Components.responses",
        "described by the OpenAPI 3.1 specification's schema",
    ),
    (
        "Components.schemas",
        "JSON Schemas, described by the JSON Schema meta-schema",
    ),
    (
        "JsonRpcRequest.params",
        "an MCP method's parameters (see docs/mcp.md and `tools/list`)",
    ),
    (
        "JsonRpcNotification.params",
        "an MCP notification's parameters",
    ),
    (
        "JsonRpcResponse.result",
        "an MCP method's result (tools' results: see `tools/list`)",
    ),
    (
        "ErrorData.data",
        "JSON-RPC error data, free-form by the JSON-RPC 2.0 specification",
    ),
];

/// Whether `schema` says nothing of its value's shape: `true`, `{}`, or an object (or array)
/// with no properties, items, reference or alternatives.
fn untyped(schema: &Value) -> bool {
    let Some(object) = schema.as_object() else {
        return schema == &Value::Bool(true);
    };
    let said: Vec<&str> = object
        .keys()
        .map(String::as_str)
        .filter(|key| !["description", "title", "default", "examples", "deprecated"].contains(key))
        .collect();
    if said.is_empty() {
        return true;
    }
    let names = |kind: &str| match object.get("type") {
        Some(Value::String(named)) => named == kind,
        Some(Value::Array(kinds)) => kinds.iter().any(|named| named == kind),
        _ => false,
    };
    let structured = [
        "properties",
        "$ref",
        "oneOf",
        "anyOf",
        "allOf",
        "const",
        "enum",
    ]
    .iter()
    .any(|key| object.contains_key(*key))
        || object
            .get("additionalProperties")
            .is_some_and(Value::is_object);
    (names("object") && !structured) || (names("array") && !object.contains_key("items"))
}

/// Collects into `found` where `schema` (at `at`) or anything it contains is untyped; each
/// named schema is entered once.
fn find_untyped(
    schema: &Value,
    at: &str,
    schemas: &Value,
    entered: &mut Vec<String>,
    found: &mut std::collections::BTreeSet<String>,
) {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let name = reference.rsplit('/').next().unwrap_or_default().to_owned();
        if !entered.contains(&name) {
            entered.push(name.clone());
            find_untyped(&schemas[&name], &name, schemas, entered, found);
        }
        return;
    }
    if untyped(schema) {
        found.insert(at.to_owned());
        return;
    }
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        find_untyped(property, &format!("{at}.{name}"), schemas, entered, found);
    }
    if schema["items"].is_object() || schema["items"].is_boolean() {
        find_untyped(
            &schema["items"],
            &format!("{at}[]"),
            schemas,
            entered,
            found,
        );
    }
    if schema["additionalProperties"].is_object() {
        let values = &schema["additionalProperties"];
        find_untyped(values, &format!("{at}{{}}"), schemas, entered, found);
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        for alternative in schema[key].as_array().into_iter().flatten() {
            find_untyped(alternative, at, schemas, entered, found);
        }
    }
}

/// Every success answer with a JSON body has a real schema: no part of it is a bare object or
/// any value, but those in [`FREE_FORM`], which say why (and must still be free-form).
#[test]
fn every_success_answer_is_typed() {
    let document = openapi_document();
    let schemas = &document["components"]["schemas"];
    let mut found = std::collections::BTreeSet::new();
    for (method, path) in documented(&document) {
        let operation = &document["paths"][&path][&method];
        for (status, answer) in operation["responses"].as_object().unwrap() {
            if !status.starts_with('2') {
                continue;
            }
            for (_, media) in answer["content"].as_object().into_iter().flatten() {
                if let Some(schema) = media.get("schema") {
                    let at = format!("{} {status}", operation["operationId"].as_str().unwrap());
                    find_untyped(schema, &at, schemas, &mut Vec::new(), &mut found);
                }
            }
        }
    }
    let allowed: std::collections::BTreeSet<String> =
        FREE_FORM.iter().map(|(at, _)| (*at).to_owned()).collect();
    let untyped: Vec<&String> = found.difference(&allowed).collect();
    assert!(
        untyped.is_empty(),
        "success answers with untyped parts (derive a schema for the real type, or list the \
         part in FREE_FORM saying why): {untyped:?}"
    );
    let stale: Vec<&String> = allowed.difference(&found).collect();
    assert!(
        stale.is_empty(),
        "FREE_FORM lists parts now typed: {stale:?}"
    );
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
