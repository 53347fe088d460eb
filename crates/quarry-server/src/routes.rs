//! The route table: every route of the server but `/mcp` (served by `mcp::http`, documented in
//! [`mcp_operation`]), each with its handler and what the OpenAPI document says about it. The
//! router ([`crate::router`]) and `GET /openapi.json` ([`openapi_document`], served here) are
//! both built from [`operations`], and the scopes named here are the constants the handlers
//! check.

use std::sync::OnceLock;

use axum::http::header;
use axum::response::IntoResponse;
use quarry_core::model::{
    Correction, Delivery, Entity, EntityType, Episode, ExtractionResult, ExtractionRun,
    FeedbackSummary, NewEntity,
};
use serde_json::json;

use crate::api::{
    corrections, deliveries, documents, entities, episodes, extraction, graph, review, workflows,
};
use crate::openapi::document;
use crate::openapi::operation::{Operation, Verb};
use crate::{chat, health, metrics, session, skill, web};

/// The OpenAPI 3.1 document of every route, `/mcp` included (what `GET /openapi.json` serves).
pub fn openapi_document() -> serde_json::Value {
    let mut operations = operations();
    operations.push(mcp_operation());
    document::document(&operations)
}

/// `GET /openapi.json`.
pub async fn serve_openapi() -> impl IntoResponse {
    static DOCUMENT: OnceLock<String> = OnceLock::new();
    let body = DOCUMENT.get_or_init(|| openapi_document().to_string());
    ([(header::CONTENT_TYPE, "application/json")], body.as_str())
}

/// Every operation, in the document's order.
pub(crate) fn operations() -> Vec<Operation> {
    let mut operations = service_operations();
    operations.extend(entity_operations());
    operations.extend(document_operations());
    operations.extend(graph_operations());
    operations.extend(extraction_operations());
    operations.extend(review_operations());
    operations.extend(correction_operations());
    operations
}

/// Project corrections.
fn correction_operations() -> Vec<Operation> {
    use Verb::{Delete, Get, Post};
    vec![
        Operation::new(Post, "/v1/corrections", corrections::add)
            .named("addCorrection", "review", "Add a project correction, injected into every matching prompt")
            .describe("Scoped to the project, an entity type, or one field of a type; results it shaped list it in `metadata.corrections`. 400 InvalidCorrection, UnknownEntityType or UnknownField.")
            .scopes(corrections::WRITE_SCOPES)
            .json_body::<corrections::CorrectionBody>(json!({"text": "Amounts are always in USD."}))
            .answers::<Correction>(201, "The stored correction")
            .errors(&[400]),
        Operation::new(Get, "/v1/corrections", corrections::list)
            .named("listCorrections", "review", "The project's corrections, oldest first")
            .scopes(corrections::READ_SCOPES)
            .answers::<Vec<Correction>>(200, "The corrections"),
        Operation::new(Get, "/v1/deliveries", deliveries::list)
            .named("listDeliveries", "review", "Field actions' webhook deliveries, newest first")
            .describe("Each delivery's event, target, state (queued, running, done, dead), attempts, last answer status and error. A delivery is dead (dead-lettered) once its attempts ran out or its target was refused by the outbound policy.")
            .scopes(deliveries::READ_SCOPES)
            .query::<deliveries::ListQuery>()
            .answers::<Vec<Delivery>>(200, "The deliveries")
            .errors(&[400]),
        Operation::new(Post, "/v1/deliveries/{id}/redeliver", deliveries::redeliver)
            .named("redeliver", "review", "Queue a dead or done delivery again")
            .describe("Due now, with another round of attempts (its attempt count keeps growing). 404 NotFound for no such delivery in the project; 409 Conflict while it is queued or running.")
            .scopes(deliveries::WRITE_SCOPES)
            .answers::<Delivery>(200, "The delivery, queued")
            .errors(&[404, 409]),
        Operation::new(Delete, "/v1/corrections/{id}", corrections::remove)
            .named("removeCorrection", "review", "Remove a correction")
            .scopes(corrections::WRITE_SCOPES)
            .answers_empty(204, "Removed")
            .errors(&[404]),
    ]
}

/// The health check, the skill, the document itself, the web app and its session, chat.
fn service_operations() -> Vec<Operation> {
    use Verb::{Delete, Get, Post};
    vec![
        Operation::new(Get, "/healthz", health::healthz)
            .named("healthz", "service", "Health check")
            .answers::<health::Health>(200, "The server is serving"),
        Operation::new(Get, "/readyz", health::readyz)
            .named("readyz", "service", "Readiness: the database answers and has every migration")
            .describe("200 once the database answers and holds every migration this server carries (one migrated further by a newer server counts), or when the server has none; 500 StorageError while it does not.")
            .answers::<health::Readiness>(200, "Ready"),
        Operation::new(Get, "/metrics", metrics::serve)
            .named("metrics", "service", "Metrics in Prometheus's text format")
            .describe("Prometheus text format 0.0.4 (`text/plain; version=0.0.4`), no key needed: HTTP requests and latency histograms per route template, queue depths per state read from the database, extraction slots in use, model calls, failures, retries and tokens per provider and model. Labels carry no project, key or request data.")
            .answers_raw(200, "text/plain", "The metrics, in text format version 0.0.4"),
        Operation::new(Get, "/openapi.json", serve_openapi)
            .named("openapi", "service", "This document (OpenAPI 3.1)")
            .answers::<document::OpenApiDocument>(200, "The OpenAPI document"),
        Operation::new(Post, "/skill/extract", skill::extract)
            .named("skillExtract", "skill", "Extract emails, URLs, dates, phones, IPs, names or entities without a model")
            .describe("Deterministic, no model: answers `{\"<target>\": value}` (one string, a list for several values, [] for none); with `detail`, also every match with its code-point offsets. The CLI prints the same bytes.")
            .json_body::<skill::ExtractArguments>(json!({"text": "Write to ana@example.com", "target": "email"}))
            .answers::<quarry_detect::skill::SkillOutput>(200, "The extracted values")
            .errors(&[]),
        Operation::new(Post, "/skill/check", skill::check)
            .named("skillCheck", "skill", "Check an extraction output against the guardrails")
            .describe("200 whether the output is accepted or rejected: the verdict is the answer.")
            .json_body::<quarry_detect::skill::CheckInput>(json!({"text": "Mail ana@example.com", "target": "email", "output": "{\"email\": \"ana@example.com\"}"}))
            .answers::<quarry_core::guardrail::Verdict>(200, "The verdict, with each value's evidence or one reason per failure"),
        Operation::new(Get, "/", web::index)
            .named("webApp", "web", "The web app's page")
            .answers_raw(200, "text/html", "The app's shell")
            .answers_empty(304, "Not modified (If-None-Match)"),
        Operation::new(Get, "/assets/{file}", web::asset)
            .named("webAsset", "web", "A script, style or other file of the web app")
            .answers_raw(200, "application/octet-stream", "The file, with its own content type")
            .answers_empty(304, "Not modified (If-None-Match)")
            .errors(&[404]),
        Operation::new(Post, "/v1/session", session::sign_in)
            .named("signIn", "session", "Sign in with an API key")
            .describe("Trades a key for the web app's session: the session and its HttpOnly cookie `quarry_session`.")
            .json_body::<session::SignIn>(json!({"key": "qk_…"}))
            .answers::<session::SessionView>(200, "The session, with its CSRF token")
            .errors(&[401, 403]),
        Operation::new(Get, "/v1/session", session::current)
            .named("currentSession", "session", "The session of the request's cookie")
            .session()
            .answers::<session::SessionView>(200, "The session, with its CSRF token"),
        Operation::new(Delete, "/v1/session", session::sign_out)
            .named("signOut", "session", "Sign out")
            .describe("Ends the session of the request's cookie, if any (its X-CSRF-Token header needed then), and clears the cookie: 204 either way.")
            .answers_empty(204, "Signed out"),
        Operation::new(Post, "/v1/chat", chat::chat)
            .named("chat", "chat", "Schema extraction as a conversation (Server-Sent Events)")
            .describe("Starts a conversation (`message` is the document, `schema` required) or answers its question (`conversation_id`). Streams tokens, results and clarification questions. The scope is needed on a server with a database.")
            .scopes(chat::CHAT_SCOPES)
            .json_body::<chat::ChatRequest>(json!({"message": "Invoice 42 from ACME, total 12.50 EUR", "schema": {"type": "object", "properties": {"total": {"type": "number"}}}}))
            .answers_raw(200, "text/event-stream", "The conversation's events")
            .errors(&[404]),
        Operation::new(Get, "/v1/chat/conversations", chat::list)
            .named("listConversations", "chat", "The project's chat conversations, most recently updated first")
            .scopes(chat::READ_SCOPES)
            .answers::<Vec<chat::ConversationSummary>>(200, "Each conversation's id, title, status and updated_at"),
        Operation::new(Get, "/v1/chat/conversations/{id}", chat::get)
            .named("getConversation", "chat", "One chat conversation: schema, document, messages and last result")
            .scopes(chat::READ_SCOPES)
            .answers::<chat::ConversationView>(200, "The conversation")
            .errors(&[404]),
    ]
}

/// Entity types and entities.
fn entity_operations() -> Vec<Operation> {
    use Verb::{Get, Post, Put};
    vec![
        Operation::new(Get, "/v1/entity-types", entities::list_types)
            .named("listEntityTypes", "entities", "List entity types")
            .scopes(entities::READ_SCOPES)
            .answers::<Vec<EntityType>>(200, "Every entity type of the project"),
        Operation::new(Get, "/v1/entity-types/{slug}", entities::get_type)
            .named("getEntityType", "entities", "Get an entity type")
            .scopes(entities::READ_SCOPES)
            .answers::<EntityType>(200, "The entity type")
            .errors(&[404]),
        Operation::new(Put, "/v1/entity-types/{slug}", entities::put_type)
            .named("putEntityType", "entities", "Create or replace an entity type")
            .describe("The path names the type (a slug in the body is overridden). An invalid type (unknown dependency, cycle, bad source) answers 400 naming the fields.")
            .scopes(entities::WRITE_SCOPES)
            .json_body::<entities::EntityTypeBody>(json!({"slug": "company", "name": "Company", "fields": [{"name": "ceo", "type": "string", "description": "The chief executive"}]}))
            .answers::<EntityType>(200, "The stored type"),
        Operation::new(Post, "/v1/entities", entities::create)
            .named("createEntity", "entities", "Create an entity")
            .scopes(entities::WRITE_SCOPES)
            .json_body::<NewEntity>(json!({"entity_type": "company", "title": "ACME"}))
            .answers::<Entity>(201, "The created entity")
            .errors(&[404]),
        Operation::new(Get, "/v1/entities", entities::list)
            .named("listEntities", "entities", "List entities")
            .scopes(entities::READ_SCOPES)
            .query::<entities::ListQuery>()
            .answers::<Vec<Entity>>(200, "Entities, of one type when `type` is given"),
        Operation::new(Get, "/v1/entities/{id}", entities::get)
            .named("getEntity", "entities", "Get an entity")
            .scopes(entities::READ_SCOPES)
            .answers::<Entity>(200, "The entity")
            .errors(&[404]),
    ]
}

/// Documents and conversation episodes.
fn document_operations() -> Vec<Operation> {
    use Verb::{Get, Post};
    vec![
        Operation::new(Post, "/v1/documents", documents::add)
            .named("addDocument", "documents", "Add a document, optionally linked to entities")
            .describe("Idempotent by title and text: 201 created, 200 with the document stored earlier (links still applied); `warnings` when a step after storing failed.")
            .scopes(documents::ADD_SCOPES)
            .json_body::<documents::NewDocument>(json!({"title": "ACME annual report", "text": "ACME's CEO is Ana Lopez."}))
            .answers::<documents::AddedDocument>(201, "Stored")
            .answers::<documents::AddedDocument>(200, "Stored earlier with the same title and text")
            .errors(&[404]),
        Operation::new(Get, "/v1/documents", documents::list)
            .named("listDocuments", "documents", "Documents newest first, without their text")
            .scopes(documents::READ_SCOPES)
            .query::<documents::ListQuery>()
            .answers::<documents::DocumentList>(200, "A page of documents"),
        Operation::new(Get, "/v1/documents/search", documents::search)
            .named("searchDocuments", "documents", "Passages best matching a query by words and meaning")
            .scopes(documents::SEARCH_SCOPES)
            .query::<documents::SearchQuery>()
            .answers::<Vec<documents::Passage>>(200, "The best passages first"),
        Operation::new(Post, "/v1/documents/upload", documents::upload)
            .named("uploadDocument", "documents", "Upload a raw text, Markdown or PDF body")
            .describe("Stored as by POST /v1/documents; 415 for another content type, 422 PdfWithoutText for a scan.")
            .scopes(documents::ADD_SCOPES)
            .query::<documents::UploadQuery>()
            .raw_body("text/plain")
            .raw_body("text/markdown")
            .raw_body("application/pdf")
            .answers::<documents::AddedDocument>(201, "Stored")
            .answers::<documents::AddedDocument>(200, "Stored earlier with the same title and text")
            .errors(&[404, 422]),
        Operation::new(Get, "/v1/documents/{id}", documents::get)
            .named("getDocument", "documents", "A document with its text and the entities it is linked to")
            .scopes(documents::READ_SCOPES)
            .answers::<documents::DocumentWithLinks>(200, "The document")
            .errors(&[404]),
        Operation::new(Post, "/v1/documents/{id}/links", documents::link)
            .named("linkDocument", "documents", "Link a document to entities")
            .scopes(documents::ADD_SCOPES)
            .json_body::<documents::LinksBody>(json!({"entity_ids": ["ent_1"]}))
            .answers::<documents::Links>(200, "Every link the document has")
            .errors(&[404]),
        Operation::new(Post, "/v1/episodes", episodes::add)
            .named("addEpisode", "episodes", "Store a conversation episode")
            .describe("Answers 202 at once; the graph extraction runs in the background (see GET /v1/episodes/{id}).")
            .scopes(episodes::ADD_SCOPES)
            .json_body::<episodes::EpisodeBody>(json!({"user_message": "I moved to Lisbon", "assistant_response": "Noted."}))
            .answers::<Episode>(202, "Stored and queued"),
        Operation::new(Get, "/v1/episodes", episodes::list)
            .named("listEpisodes", "episodes", "Episodes newest first with their extraction's state and error")
            .scopes(episodes::READ_SCOPES)
            .query::<episodes::ListQuery>()
            .answers::<episodes::EpisodeList>(200, "A page of episodes"),
        Operation::new(Get, "/v1/episodes/{id}", episodes::get)
            .named("getEpisode", "episodes", "An episode and the state of its graph extraction")
            .scopes(episodes::READ_SCOPES)
            .answers::<Episode>(200, "The episode")
            .errors(&[404]),
        Operation::new(Post, "/v1/episodes/{id}/retry", episodes::retry)
            .named("retryEpisode", "episodes", "Queue a failed episode's graph extraction again")
            .describe("Attempts start from zero; 409 if the episode is not failed.")
            .scopes(episodes::ADD_SCOPES)
            .answers::<Episode>(202, "Queued again")
            .errors(&[404, 409]),
    ]
}

/// The graph built from episodes.
fn graph_operations() -> Vec<Operation> {
    use Verb::Get;
    vec![
        Operation::new(Get, "/v1/graph/entities", graph::search)
            .named(
                "searchGraphEntities",
                "graph",
                "Find graph entities by name and meaning",
            )
            .scopes(graph::READ_SCOPES)
            .query::<graph::SearchQuery>()
            .answers::<Vec<quarry_graph::FoundEntity>>(200, "Matches, exact titles first"),
        Operation::new(Get, "/v1/graph/entities/{id}", graph::get)
            .named(
                "getGraphEntity",
                "graph",
                "A graph entity with its episodes and relations",
            )
            .scopes(graph::READ_SCOPES)
            .answers::<graph::EntityWithEpisodes>(200, "The entity")
            .errors(&[404]),
        Operation::new(
            Get,
            "/v1/graph/entities/{id}/neighbors",
            graph::neighborhood,
        )
        .named(
            "graphNeighbors",
            "graph",
            "Entities within `depth` hops, relations followed both ways",
        )
        .scopes(graph::READ_SCOPES)
        .query::<graph::NeighborsQuery>()
        .answers::<quarry_graph::Neighborhood>(
            200,
            "The root, the reached entities and the relations traversed",
        )
        .errors(&[404]),
    ]
}

/// Workflows, results, submissions and feedback.
fn extraction_operations() -> Vec<Operation> {
    use Verb::{Get, Patch, Post};
    vec![
        Operation::new(Post, "/v1/workflows/{entity_id}", workflows::trigger)
            .named(
                "triggerWorkflow",
                "workflows",
                "Queue extraction for an entity (all or some fields)",
            )
            .describe("An empty body queues every field not locked.")
            .scopes(workflows::TRIGGER_SCOPES)
            .optional_json_body::<workflows::RunRequest>(json!({"fields": ["ceo"]}))
            .answers::<workflows::WorkflowStatus>(202, "The run and its field tasks")
            .errors(&[404, 409]),
        Operation::new(Get, "/v1/workflows/{entity_id}", workflows::status)
            .named(
                "workflowStatus",
                "workflows",
                "Latest run with each field's node state, and the latest results",
            )
            .scopes(workflows::READ_SCOPES)
            .answers::<workflows::WorkflowStatus>(200, "The latest run")
            .errors(&[404]),
        Operation::new(Get, "/v1/workflows/{entity_id}/history", workflows::history)
            .named("workflowHistory", "workflows", "Run history of an entity, a page at a time")
            .describe("Pass the last run's id as `before` for the next page; a page shorter than `limit` is the last. 404 for an unknown `before`.")
            .scopes(workflows::READ_SCOPES)
            .query::<workflows::HistoryQuery>()
            .answers::<Vec<ExtractionRun>>(200, "Runs, newest first")
            .errors(&[400, 404]),
        Operation::new(Post, "/v1/workflows/{entity_id}/retry", workflows::retry)
            .named(
                "retryWorkflow",
                "workflows",
                "Queue the failed or blocked fields again",
            )
            .describe("An empty body retries every failed or blocked field.")
            .scopes(workflows::TRIGGER_SCOPES)
            .optional_json_body::<workflows::RetryRequest>(json!({"fields": ["ceo"]}))
            .answers::<workflows::Retried>(202, "What was queued again")
            .errors(&[404, 409]),
        Operation::new(Get, "/v1/extraction/{entity_id}", extraction::latest)
            .named("latestResults", "results", "Latest result per field")
            .scopes(extraction::READ_SCOPES)
            .answers::<Vec<ExtractionResult>>(200, "One result per field")
            .errors(&[404]),
        Operation::new(
            Get,
            "/v1/extraction/{entity_id}/history/{field}",
            extraction::history,
        )
        .named("resultHistory", "results", "Every result of one field")
        .scopes(extraction::READ_SCOPES)
        .answers::<Vec<ExtractionResult>>(200, "Results, newest first")
        .errors(&[404]),
        Operation::new(Patch, "/v1/extraction/results/{id}", extraction::review)
            .named("reviewResult", "results", "Approve or reject a result")
            .scopes(extraction::REVIEW_SCOPES)
            .json_body::<extraction::ReviewRequest>(
                json!({"action": "reject", "reason": "wrong year"}),
            )
            .answers::<quarry_pipeline::ReviewOutcome>(200, "The review and what it caused")
            .errors(&[404, 409]),
        Operation::new(
            Post,
            "/v1/extraction/{entity_id}/submit",
            extraction::submit,
        )
        .named(
            "submitValue",
            "results",
            "Submit a value as an external agent",
        )
        .scopes(extraction::SUBMIT_SCOPES)
        .json_body::<extraction::Submission>(json!({"field_name": "ceo", "value": "Ana Lopez"}))
        .answers::<ExtractionResult>(201, "The stored result, pending review")
        .errors(&[404, 409]),
        Operation::new(
            Get,
            "/v1/feedback/{entity_type}/{field}",
            extraction::feedback,
        )
        .named(
            "feedbackSummary",
            "results",
            "Cross-entity feedback summary of one field",
        )
        .scopes(extraction::FEEDBACK_SCOPES)
        .answers::<FeedbackSummary>(200, "The summary"),
    ]
}

/// The web app's review workspace (review.rs; docs/web-app.md).
fn review_operations() -> Vec<Operation> {
    use Verb::{Delete, Get, Put};
    vec![
        Operation::new(Get, "/v1/entity-types/{slug}/entities", review::entities)
            .named("entityTable", "review", "Entities of a type with each field's state")
            .describe("Each field's state (none, queued, running, pending, approved, rejected, locked, waiting_human, failed, blocked), value, result id and confidence.")
            .scopes(review::QUEUE_SCOPES)
            .query::<review::EntityListQuery>()
            .answers::<review::EntityList>(200, "A page of entities")
            .errors(&[404]),
        Operation::new(Get, "/v1/review-queue", review::queue)
            .named("reviewQueue", "review", "Pending results of a type, oldest first")
            .scopes(review::QUEUE_SCOPES)
            .query::<review::QueueQuery>()
            .answers::<review::Queue>(200, "A page of the queue")
            .errors(&[404]),
        Operation::new(Get, "/v1/entities/{id}/overview", review::overview)
            .named("entityOverview", "review", "An entity, its type, and per field its state, latest result and latest task")
            .scopes(review::QUEUE_SCOPES)
            .answers::<review::Overview>(200, "The overview")
            .errors(&[404]),
        Operation::new(Put, "/v1/entities/{id}/locks/{field}", review::lock)
            .named("lockField", "review", "Lock a field: runs skip it and values for it are refused")
            .scopes(extraction::REVIEW_SCOPES)
            .answers::<Entity>(200, "The entity")
            .errors(&[404]),
        Operation::new(Delete, "/v1/entities/{id}/locks/{field}", review::unlock)
            .named("unlockField", "review", "Unlock a field")
            .scopes(extraction::REVIEW_SCOPES)
            .answers::<Entity>(200, "The entity")
            .errors(&[404]),
        Operation::new(Put, "/v1/extraction/{entity_id}/fields/{field}", review::set_value)
            .named("setFieldValue", "review", "Set a field's value by hand")
            .describe("Recorded as `human:<key name>`, approved and promoted; a human_input field's answer resumes its run. 409 FieldLocked for a locked field.")
            .scopes(extraction::REVIEW_SCOPES)
            .json_body::<review::PersonValue>(json!({"value": "Ana Lopez"}))
            .answers::<ExtractionResult>(201, "The stored result")
            .errors(&[404, 409]),
    ]
}

/// `/mcp`, served by `mcp::http` (rmcp's streamable HTTP service), described for completeness:
/// JSON-RPC 2.0 messages whose tools are listed by `tools/list`, not REST operations.
pub(crate) fn mcp_operation() -> Operation {
    Operation::new(Verb::Post, "/mcp", || async {})
        .named("mcp", "mcp", "The MCP server (JSON-RPC 2.0 over streamable HTTP)")
        .describe("Model Context Protocol: `initialize`, `tools/list` (filtered by the key's scopes), `tools/call`; see docs/mcp.md. Loopback `Host` only unless configured. Not a REST operation: its tools' schemas are in `tools/list`.")
        .bearer()
        .json_body::<rmcp::model::JsonRpcMessage>(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .answers::<rmcp::model::JsonRpcMessage>(200, "The JSON-RPC response (or error)")
}
