//! `GET /openapi.json`: the API described for clients and tools (OpenAPI 3.1). Kept beside the
//! routes; a test checks every route is documented.

use axum::Json;
use serde_json::{Value, json};

/// (method, path, scope, summary) for every authenticated route.
pub const OPERATIONS: &[(&str, &str, &str, &str)] = &[
    (
        "get",
        "/v1/entity-types",
        "entities:read",
        "List entity types",
    ),
    (
        "get",
        "/v1/entity-types/{slug}",
        "entities:read",
        "Get an entity type",
    ),
    (
        "put",
        "/v1/entity-types/{slug}",
        "entities:write",
        "Create or replace an entity type",
    ),
    ("post", "/v1/entities", "entities:write", "Create an entity"),
    (
        "get",
        "/v1/entities",
        "entities:read",
        "List entities (?type=&limit=)",
    ),
    ("get", "/v1/entities/{id}", "entities:read", "Get an entity"),
    (
        "post",
        "/v1/documents",
        "documents:write",
        "Add a document, optionally linked to entities; idempotent by title and text: 201 created, 200 with the document stored earlier (links still applied); `warnings` when a step after storing failed",
    ),
    (
        "get",
        "/v1/documents/search",
        "entities:read",
        "Passages of the project's documents best matching ?q= by words and meaning (&limit=, 1-100, default 10)",
    ),
    (
        "post",
        "/v1/episodes",
        "documents:write",
        "Store a conversation episode (answers at once; graph extraction runs in the background)",
    ),
    (
        "get",
        "/v1/episodes/{id}",
        "entities:read",
        "Get an episode and the state of its graph extraction",
    ),
    (
        "post",
        "/v1/episodes/{id}/retry",
        "documents:write",
        "Queue a failed episode's graph extraction again (attempts from zero); 202, or 409 if it is not failed",
    ),
    (
        "get",
        "/v1/graph/entities",
        "entities:read",
        "Find graph entities by name and meaning (?q=&type=&project_id=&limit=)",
    ),
    (
        "get",
        "/v1/graph/entities/{id}",
        "entities:read",
        "Get a graph entity with its episodes and relations",
    ),
    (
        "get",
        "/v1/graph/entities/{id}/neighbors",
        "entities:read",
        "Entities within ?depth= hops (1-3, default 2), relations followed both ways",
    ),
    (
        "post",
        "/v1/workflows/{entity_id}",
        "extraction:trigger",
        "Queue extraction for an entity (all or some fields); 202 with the run and its nodes",
    ),
    (
        "post",
        "/v1/workflows/{entity_id}/retry",
        "extraction:trigger",
        "Queue the failed or blocked fields again (all, or {\"fields\": [...]}); 202",
    ),
    (
        "get",
        "/v1/workflows/{entity_id}",
        "entities:read",
        "Latest run with each field's node state, and the latest results",
    ),
    (
        "get",
        "/v1/workflows/{entity_id}/history",
        "entities:read",
        "Run history of an entity",
    ),
    (
        "get",
        "/v1/extraction/{entity_id}",
        "entities:read",
        "Latest result per field",
    ),
    (
        "get",
        "/v1/extraction/{entity_id}/history/{field}",
        "entities:read",
        "Every result of one field",
    ),
    (
        "patch",
        "/v1/extraction/results/{id}",
        "extraction:review",
        "Approve or reject a result",
    ),
    (
        "post",
        "/v1/extraction/{entity_id}/submit",
        "extraction:submit",
        "Submit a value as an external agent",
    ),
    (
        "get",
        "/v1/feedback/{entity_type}/{field}",
        "entities:read",
        "Cross-entity feedback summary",
    ),
    // The review workspace of the web app (review.rs; docs/web-app.md).
    (
        "get",
        "/v1/entity-types/{slug}/entities",
        "entities:read",
        "Entities of a type by title (?q=&limit=1-200, default 50&offset=), each field's state (none, queued, running, pending, approved, rejected, locked, waiting_human, failed, blocked), value, result id and confidence",
    ),
    (
        "get",
        "/v1/review-queue",
        "entities:read",
        "Pending results of ?type=SLUG, oldest first, with their entity's title (&limit=&offset=)",
    ),
    (
        "get",
        "/v1/entities/{id}/overview",
        "entities:read",
        "An entity, its type, and per field its state, latest result and latest task",
    ),
    (
        "put",
        "/v1/entities/{id}/locks/{field}",
        "extraction:review",
        "Lock a field (runs skip it; values for it are refused); 200 with the entity",
    ),
    (
        "delete",
        "/v1/entities/{id}/locks/{field}",
        "extraction:review",
        "Unlock a field; 200 with the entity",
    ),
    (
        "put",
        "/v1/extraction/{entity_id}/fields/{field}",
        "extraction:review",
        "Set a field's value by hand ({\"value\"}): recorded as human:<key name>, approved and promoted; a human_input field's answer resumes its run; 201, 409 FieldLocked for a locked field",
    ),
    (
        "get",
        "/v1/documents",
        "entities:read",
        "Documents newest first without their text (?q=&kind=file|episode&limit=&offset=)",
    ),
    (
        "get",
        "/v1/documents/{id}",
        "entities:read",
        "A document with its text and the entities it is linked to",
    ),
    (
        "post",
        "/v1/documents/upload",
        "documents:write",
        "Upload a raw text/plain, text/markdown or application/pdf body (?title=&entity_id=), stored as by POST /v1/documents; 415 for another type, 422 PdfWithoutText for a scan",
    ),
    (
        "post",
        "/v1/documents/{id}/links",
        "documents:write",
        "Link a document to entities ({\"entity_ids\"}); 200 with every link it has",
    ),
    (
        "get",
        "/v1/episodes",
        "entities:read",
        "Episodes newest first with their extraction's state and error (?state=pending|running|done|failed&limit=&offset=)",
    ),
    (
        "get",
        "/v1/chat/conversations",
        "extraction:trigger or entities:read",
        "The project's chat conversations, most recently updated first",
    ),
    (
        "get",
        "/v1/chat/conversations/{id}",
        "extraction:trigger or entities:read",
        "One chat conversation: schema, document, messages and last result",
    ),
];

/// The web app's session routes (no scope: they trade a key for a cookie).
const SESSION_OPERATIONS: &[(&str, &str)] = &[
    (
        "post",
        "Sign in with {\"key\"}: the session and its HttpOnly cookie quarry_session",
    ),
    (
        "get",
        "The session of the request's cookie, with its CSRF token",
    ),
    (
        "delete",
        "Sign out (X-CSRF-Token): 204, the session ended and the cookie cleared",
    ),
];

pub async fn document() -> Json<Value> {
    let mut paths = serde_json::Map::new();
    for (method, path, scope, summary) in OPERATIONS {
        let parameters: Vec<Value> = path
            .split('/')
            .filter_map(|part| part.strip_prefix('{').and_then(|p| p.strip_suffix('}')))
            .map(|name| json!({"name": name, "in": "path", "required": true, "schema": {"type": "string"}}))
            .collect();
        let entry = paths.entry(path.to_string()).or_insert_with(|| json!({}));
        entry[*method] = json!({
            "summary": summary,
            "parameters": parameters,
            "security": [{"apiKey": []}, {"session": []}],
            "x-required-scope": scope,
            "responses": {
                "200": {"description": "OK"},
                "400": {"$ref": "#/components/responses/Error"},
                "401": {"$ref": "#/components/responses/Error"},
                "403": {"$ref": "#/components/responses/Error"},
                "404": {"$ref": "#/components/responses/Error"},
            },
        });
    }
    for (path, summary) in [
        (
            "/skill/extract",
            "Extract emails, URLs, dates, phones, IPs, names or entities without a model",
        ),
        (
            "/skill/check",
            "Check an extraction output against the guardrails",
        ),
        (
            "/v1/chat",
            "Schema extraction as a conversation (Server-Sent Events)",
        ),
    ] {
        paths.insert(
            path.to_owned(),
            json!({"post": {"summary": summary, "responses": {"200": {"description": "OK"}, "400": {"$ref": "#/components/responses/Error"}}}}),
        );
    }
    let mut session = json!({});
    for (method, summary) in SESSION_OPERATIONS {
        session[*method] = json!({"summary": summary, "responses": {
            "200": {"description": "OK"},
            "401": {"$ref": "#/components/responses/Error"},
            "403": {"$ref": "#/components/responses/Error"}}});
    }
    paths.insert("/v1/session".to_owned(), session);
    paths.insert(
        "/healthz".to_owned(),
        json!({"get": {"summary": "Health check", "responses": {"200": {"description": "OK"}}}}),
    );
    Json(json!({
        "openapi": "3.1.0",
        "info": {"title": "Quarry", "version": env!("CARGO_PKG_VERSION")},
        "paths": paths,
        "components": {
            "securitySchemes": {
                "apiKey": {"type": "http", "scheme": "bearer", "description": "qk_… key from quarry key create"},
                "session": {"type": "apiKey", "in": "cookie", "name": "quarry_session", "description": "the web app's session (POST /v1/session); unsafe methods also need X-CSRF-Token"},
            },
            "schemas": {"Error": {"type": "object", "required": ["error", "message"], "properties": {
                "error": {"type": "string"}, "message": {"type": "string"}}}},
            "responses": {"Error": {"description": "The one error shape", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}},
        },
    }))
}
