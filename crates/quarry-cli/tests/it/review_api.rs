//! The web app's review API (docs/web-app.md, "Review API used by the pages") through the real
//! binary: field states at a glance (locked, waiting for a person, failed), the review queue's
//! order and pages, a lock honoured by a run, a person's value promoted and in the history, a
//! `human_input` answer resuming its run, uploads of text, Markdown and PDF, links, episodes, and
//! a key of another project seeing none of it.

use crate::common;

use std::time::Duration;

use common::{Sandbox, Server};
use quarry_testkit::Reply;
use serde_json::{Value, json};

const TYPES: &str = r#"
entity_types:
  - slug: company
    fields:
      - {name: ceo, agent: "openai-compatible:m-ceo", sources: [linked-documents]}
      - {name: revenue, type: number, agent: "openai-compatible:m-rev"}
      - {name: approver, human_input: true}
      - {name: summary, depends_on: [approver], agent: "openai-compatible:m-sum"}
      - {name: broken, agent: "openai-compatible:m-bad"}
"#;

const ALL_SCOPES: &str = "entities:read,entities:write,documents:write,extraction:trigger,extraction:review,extraction:submit";

struct Api {
    sandbox: Sandbox,
    server: Server,
    key: String,
    reader: String,
    outsider: String,
}

impl Api {
    fn start(name: &str) -> Api {
        let sandbox = Sandbox::new(&format!("review-api-{name}"));
        let types = sandbox.dir.join("quarry.yaml");
        std::fs::write(&types, TYPES).unwrap();
        sandbox.quarry_ok(&["type", "load", types.to_str().unwrap()]);
        let key = |project: &str, scopes: &str, name: &str| {
            sandbox
                .quarry_ok(&[
                    "key",
                    "create",
                    "--scopes",
                    scopes,
                    "--project",
                    project,
                    "--name",
                    name,
                ])
                .trim()
                .to_owned()
        };
        let all = key("default", ALL_SCOPES, "alice");
        let reader = key("default", "entities:read", "rita");
        let outsider = key("other", ALL_SCOPES, "mallory");
        let url = sandbox.model.base_url();
        let server = Server::start(&["--db", &sandbox.db(), "--base-url", &url, "--retries", "0"]);
        Api {
            sandbox,
            server,
            key: all,
            reader,
            outsider,
        }
    }

    fn call_as(&self, key: &str, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let bytes = body.map(|b| b.to_string()).unwrap_or_default();
        let (status, _, response) = self.server.request_as(
            Some(key),
            method,
            path,
            Some("application/json"),
            bytes.as_bytes(),
        );
        (
            status,
            serde_json::from_str(&response).unwrap_or(Value::Null),
        )
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        self.call_as(&self.key, method, path, body)
    }

    fn ok(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let (status, value) = self.call(method, path, body);
        assert!(
            (200..300).contains(&status),
            "{method} {path}: {status} {value}"
        );
        value
    }

    fn upload(&self, key: &str, path: &str, content_type: &str, body: &[u8]) -> (u16, Value) {
        let (status, _, response) =
            self.server
                .request_as(Some(key), "POST", path, Some(content_type), body);
        (
            status,
            serde_json::from_str(&response).unwrap_or(Value::Null),
        )
    }

    fn entity(&self, title: &str) -> String {
        let created = self.ok(
            "POST",
            "/v1/entities",
            Some(json!({"entity_type": "company", "title": title})),
        );
        created["id"].as_str().unwrap().to_owned()
    }

    /// Polls the entity list until `entity`'s `field` shows `state` (10 s at most).
    fn wait_for_state(&self, entity: &str, field: &str, state: &str) -> Value {
        let mut row = Value::Null;
        for _ in 0..400 {
            let list = self.ok("GET", "/v1/entity-types/company/entities", None);
            row = list["entities"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["id"] == entity)
                .cloned()
                .unwrap();
            if row["fields"][field]["state"] == state {
                return row;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        let overview = self.ok("GET", &format!("/v1/entities/{entity}/overview"), None);
        panic!("{field} of {entity} never became {state}: {row:#}\n{overview:#}");
    }
}

fn states(row: &Value) -> Vec<(String, String)> {
    let mut states: Vec<(String, String)> = row["fields"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, field)| (name.clone(), field["state"].as_str().unwrap().to_owned()))
        .collect();
    states.sort();
    states
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = list
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect();
    pairs.sort();
    pairs
}

#[test]
fn field_states_locks_person_values_and_the_human_input_answer() {
    let api = Api::start("states");
    let acme = api.entity("Acme Corp");
    let beta = api.entity("Beta Inc");

    // A lock: by a reviewer only, on a field the type has.
    let (status, error) = api.call_as(
        &api.reader,
        "PUT",
        &format!("/v1/entities/{acme}/locks/revenue"),
        None,
    );
    assert_eq!((status, error["error"].as_str()), (403, Some("Forbidden")));
    let (status, error) = api.call("PUT", &format!("/v1/entities/{acme}/locks/nope"), None);
    assert_eq!(
        (status, error["error"].as_str()),
        (400, Some("UnknownField")),
        "{error}"
    );
    let locked = api.ok("PUT", &format!("/v1/entities/{acme}/locks/revenue"), None);
    assert_eq!(locked["metadata"]["locked_fields"], json!(["revenue"]));
    // Locking twice changes nothing.
    let again = api.ok("PUT", &format!("/v1/entities/{acme}/locks/revenue"), None);
    assert_eq!(again["metadata"]["locked_fields"], json!(["revenue"]));

    // A run: ceo extracted, revenue skipped (locked), approver waits for a person and summary
    // for it, broken fails (the model refuses the request).
    api.ok(
        "POST",
        "/v1/documents",
        Some(
            json!({"title": "acme", "text": "Acme Corp's CEO is Jane Doe.", "entity_ids": [acme]}),
        ),
    );
    api.sandbox.model.push_for_model(
        "m-ceo",
        Reply::tool_call("search_documents", r#"{"query": "Acme CEO"}"#),
    );
    api.sandbox.model.push_for_model(
        "m-ceo",
        Reply::tool_call(
            "submit_value",
            json!({"value": "Jane Doe", "confidence": "high"}).to_string(),
        ),
    );
    api.sandbox.model.push_for_model(
        "m-bad",
        Reply::status(400, "the model refused this request"),
    );
    let (status, queued) = api.call("POST", &format!("/v1/workflows/{acme}"), None);
    assert_eq!(status, 202, "{queued}");
    api.wait_for_state(&acme, "broken", "failed");
    let row = api.wait_for_state(&acme, "ceo", "pending");
    assert_eq!(
        states(&row),
        pairs(&[
            ("ceo", "pending"),
            ("revenue", "locked"),
            ("approver", "waiting_human"),
            ("summary", "waiting_human"),
            ("broken", "failed"),
        ]),
        "{row:#}"
    );
    assert_eq!(row["fields"]["ceo"]["value"], "Jane Doe");
    assert_eq!(row["fields"]["ceo"]["confidence"], "high");
    assert!(row["fields"]["ceo"]["result_id"].is_string());
    assert!(
        !api.sandbox
            .model
            .requests()
            .iter()
            .any(|r| r["model"] == "m-rev"),
        "the locked field was not extracted"
    );

    // The list: every field named, searchable by title, paginated.
    let list = api.ok("GET", "/v1/entity-types/company/entities", None);
    assert_eq!(list["total"], 2);
    assert_eq!(
        list["fields"],
        json!(["ceo", "revenue", "approver", "summary", "broken"])
    );
    let beta_row = list["entities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == beta)
        .unwrap();
    assert!(
        states(beta_row).iter().all(|(_, state)| state == "none"),
        "{beta_row}"
    );
    let found = api.ok("GET", "/v1/entity-types/company/entities?q=acme", None);
    assert_eq!(found["total"], 1);
    assert_eq!(found["entities"][0]["title"], "Acme Corp");
    let second = api.ok(
        "GET",
        "/v1/entity-types/company/entities?limit=1&offset=1",
        None,
    );
    assert_eq!(
        (second["total"].clone(), second["limit"].clone()),
        (json!(2), json!(1))
    );
    assert_eq!(second["entities"][0]["title"], "Beta Inc", "by title");
    let (status, error) = api.call("GET", "/v1/entity-types/company/entities?limit=0", None);
    assert_eq!(
        (status, error["error"].as_str()),
        (400, Some("InvalidLimit"))
    );
    let (status, _) = api.call("GET", "/v1/entity-types/nope/entities", None);
    assert_eq!(status, 404);

    // The overview: one round trip with spec, state, result and task per field.
    let overview = api.ok("GET", &format!("/v1/entities/{acme}/overview"), None);
    assert_eq!(overview["entity"]["id"], acme.as_str());
    assert_eq!(overview["entity_type"]["slug"], "company");
    let field = |name: &str| {
        overview["fields"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == name)
            .unwrap()
            .clone()
    };
    let broken = field("broken");
    assert_eq!(broken["state"], "failed");
    assert_eq!(broken["task"]["state"], "failed");
    assert!(
        broken["task"]["last_error"]
            .as_str()
            .unwrap()
            .contains("refused"),
        "{broken}"
    );
    assert_eq!(field("approver")["spec"]["human_input"], true);
    assert_eq!(field("approver")["task"]["state"], "waiting_human");
    assert_eq!(field("ceo")["result"]["value"], "Jane Doe");
    assert_eq!(field("revenue")["state"], "locked");

    // The human_input answer: recorded as the key's person, and the run resumes (summary runs).
    api.sandbox.model.push_for_model(
        "m-sum",
        Reply::tool_call(
            "submit_value",
            json!({"value": "Ann", "confidence": "medium"}).to_string(),
        ),
    );
    let (status, answer) = api.call(
        "PUT",
        &format!("/v1/extraction/{acme}/fields/approver"),
        Some(json!({"value": "Ann"})),
    );
    assert_eq!(status, 201, "{answer}");
    assert_eq!(answer["agent_id"], "human:alice");
    assert_eq!(answer["status"], "approved");
    let row = api.wait_for_state(&acme, "summary", "pending");
    assert_eq!(row["fields"]["summary"]["value"], "Ann");
    assert_eq!(row["fields"]["approver"]["state"], "approved");

    // A person's value for an ordinary field: approved, promoted, in the history after the
    // agent's value it supersedes.
    let (status, set) = api.call(
        "PUT",
        &format!("/v1/extraction/{acme}/fields/ceo"),
        Some(json!({"value": "John Smith"})),
    );
    assert_eq!(status, 201, "{set}");
    assert_eq!(
        (set["agent_id"].as_str(), set["status"].as_str()),
        (Some("human:alice"), Some("approved"))
    );
    let entity = api.ok("GET", &format!("/v1/entities/{acme}"), None);
    assert_eq!(entity["fields"]["ceo"], "John Smith");
    let history = api.ok("GET", &format!("/v1/extraction/{acme}/history/ceo"), None);
    let statuses: Vec<(&str, &str)> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["agent_id"].as_str().unwrap(),
                r["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        [
            ("openai-compatible:m-ceo", "superseded"),
            ("human:alice", "approved")
        ]
    );
    // A person's value after a failure shows, not the failure.
    let (status, _) = api.call(
        "PUT",
        &format!("/v1/extraction/{acme}/fields/broken"),
        Some(json!({"value": "fixed by hand"})),
    );
    assert_eq!(status, 201);
    let row = api.wait_for_state(&acme, "broken", "approved");
    assert_eq!(row["fields"]["ceo"]["state"], "approved");

    // A locked field refuses values (409); unlocked, the value is checked against its type.
    let (status, error) = api.call(
        "PUT",
        &format!("/v1/extraction/{acme}/fields/revenue"),
        Some(json!({"value": 5})),
    );
    assert_eq!(
        (status, error["error"].as_str()),
        (409, Some("FieldLocked")),
        "{error}"
    );
    let unlocked = api.ok(
        "DELETE",
        &format!("/v1/entities/{acme}/locks/revenue"),
        None,
    );
    assert_eq!(unlocked["metadata"]["locked_fields"], json!([]));
    let (status, error) = api.call(
        "PUT",
        &format!("/v1/extraction/{acme}/fields/revenue"),
        Some(json!({"value": "a lot"})),
    );
    assert_eq!(
        (status, error["error"].as_str()),
        (400, Some("InvalidValue")),
        "{error}"
    );
    let (status, _) = api.call(
        "PUT",
        &format!("/v1/extraction/{acme}/fields/revenue"),
        Some(json!({"value": 1_200_000})),
    );
    assert_eq!(status, 201);
    let (status, error) = api.call(
        "PUT",
        &format!("/v1/extraction/{acme}/fields/nope"),
        Some(json!({"value": 1})),
    );
    assert_eq!(
        (status, error["error"].as_str()),
        (400, Some("UnknownField"))
    );

    // Another project's key sees nothing of this one.
    let outsider = |method: &str, path: &str, body: Option<Value>| {
        let (status, error) = api.call_as(&api.outsider, method, path, body);
        assert_eq!(status, 404, "{method} {path}: {error}");
        assert_eq!(error["error"], "NotFound", "{method} {path}: {error}");
    };
    outsider("GET", "/v1/entity-types/company/entities", None);
    outsider("GET", "/v1/review-queue?type=company", None);
    outsider("GET", &format!("/v1/entities/{acme}/overview"), None);
    outsider("PUT", &format!("/v1/entities/{acme}/locks/ceo"), None);
    outsider("DELETE", &format!("/v1/entities/{acme}/locks/ceo"), None);
    outsider(
        "PUT",
        &format!("/v1/extraction/{acme}/fields/ceo"),
        Some(json!({"value": "Mallory"})),
    );
    let entity = api.ok("GET", &format!("/v1/entities/{acme}"), None);
    assert_eq!(entity["fields"]["ceo"], "John Smith");
    assert_eq!(entity["metadata"]["locked_fields"], json!([]));
}

#[test]
fn the_review_queue_is_oldest_first_and_paginated() {
    let api = Api::start("queue");
    let ids: Vec<String> = ["Acme Corp", "Beta Inc", "Gamma LLC"]
        .iter()
        .map(|title| api.entity(title))
        .collect();
    // Five pending values in a known order: (entity, field, value).
    let submitted = [
        (0, "ceo", json!("Ann")),
        (1, "ceo", json!("Bob")),
        (2, "summary", json!("Gamma sells gum")),
        (0, "revenue", json!(10)),
        (1, "summary", json!("Beta bakes")),
    ];
    let mut result_ids = Vec::new();
    for (entity, field, value) in &submitted {
        let (status, result) = api.call(
            "POST",
            &format!("/v1/extraction/{}/submit", ids[*entity]),
            Some(
                json!({"field_name": field, "value": value, "confidence": "medium",
                        "agent_id": "external:scout"}),
            ),
        );
        assert_eq!(status, 201, "{result}");
        result_ids.push(result["id"].as_str().unwrap().to_owned());
        std::thread::sleep(Duration::from_millis(2));
    }
    let page = |limit: usize, offset: usize| {
        api.ok(
            "GET",
            &format!("/v1/review-queue?type=company&limit={limit}&offset={offset}"),
            None,
        )
    };
    let item_ids = |page: &Value| -> Vec<String> {
        page["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|item| item["result"]["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let first = page(2, 0);
    assert_eq!(first["total"], 5, "{first:#}");
    assert_eq!(item_ids(&first), result_ids[0..2]);
    assert_eq!(first["items"][0]["entity_title"], "Acme Corp");
    assert_eq!(first["items"][1]["entity_title"], "Beta Inc");
    assert_eq!(first["items"][0]["entity_type"], "company");
    assert_eq!(item_ids(&page(2, 2)), result_ids[2..4]);
    assert_eq!(item_ids(&page(2, 4)), result_ids[4..5]);
    assert!(item_ids(&page(2, 6)).is_empty());

    // Reviewed results leave the queue; a newer value of the same field replaces the older.
    api.ok(
        "PATCH",
        &format!("/v1/extraction/results/{}", result_ids[0]),
        Some(json!({"action": "approve"})),
    );
    api.ok(
        "PATCH",
        &format!("/v1/extraction/results/{}", result_ids[1]),
        Some(json!({"action": "reject"})),
    );
    let (status, newer) = api.call(
        "POST",
        &format!("/v1/extraction/{}/submit", ids[2]),
        Some(
            json!({"field_name": "summary", "value": "Gamma sells gum and tea",
                    "confidence": "high", "agent_id": "external:scout"}),
        ),
    );
    assert_eq!(status, 201);
    let rest = page(50, 0);
    assert_eq!(rest["total"], 3, "{rest:#}");
    assert_eq!(
        item_ids(&rest),
        [
            result_ids[3].clone(),
            result_ids[4].clone(),
            newer["id"].as_str().unwrap().to_owned()
        ]
    );
    let row = api.ok("GET", "/v1/entity-types/company/entities?q=beta", None);
    assert_eq!(row["entities"][0]["fields"]["ceo"]["state"], "rejected");
    assert_eq!(row["entities"][0]["fields"]["summary"]["state"], "pending");

    let (status, error) = api.call("GET", "/v1/review-queue", None);
    assert_eq!(status, 400, "{error}");
    let (status, _) = api.call("GET", "/v1/review-queue?type=nope", None);
    assert_eq!(status, 404);
    // The reader may look; the outsider's project has no such type.
    let (status, _) = api.call_as(&api.reader, "GET", "/v1/review-queue?type=company", None);
    assert_eq!(status, 200);
    let (status, _) = api.call_as(&api.outsider, "GET", "/v1/review-queue?type=company", None);
    assert_eq!(status, 404);
}

/// A one-page PDF whose text layer is `text` (Helvetica, no compression), with a correct xref.
fn pdf_with(text: &str) -> Vec<u8> {
    let stream = format!("BT /F1 12 Tf 72 720 Td ({text}) Tj ET");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_owned(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>".to_owned(),
        format!("<< /Length {} >>\nstream\n{stream}\nendstream", stream.len()),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
            .to_owned(),
    ];
    let mut pdf = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (number, object) in objects.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.extend(format!("{} 0 obj\n{object}\nendobj\n", number + 1).bytes());
    }
    let xref = pdf.len();
    pdf.extend(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).bytes());
    for offset in offsets {
        pdf.extend(format!("{offset:010} 00000 n \n").bytes());
    }
    pdf.extend(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .bytes(),
    );
    pdf
}

#[test]
fn uploads_links_documents_and_episodes() {
    let api = Api::start("documents");
    let acme = api.entity("Acme Corp");
    let beta = api.entity("Beta Inc");

    let (status, text) = api.upload(
        &api.key,
        &format!("/v1/documents/upload?title=notes.txt&entity_id={acme}"),
        "text/plain; charset=utf-8",
        "Acme Corp's CEO is Jane Doe.".as_bytes(),
    );
    assert_eq!(status, 201, "{text}");
    let markdown_text = "# 会议记录\n\nAcme 的首席执行官是 Jane Doe 😀。";
    let (status, markdown) = api.upload(
        &api.key,
        "/v1/documents/upload?title=minutes.md",
        "text/markdown",
        markdown_text.as_bytes(),
    );
    assert_eq!(status, 201, "{markdown}");
    assert_eq!(
        markdown["text"], markdown_text,
        "Markdown is kept as written"
    );
    let (status, pdf) = api.upload(
        &api.key,
        "/v1/documents/upload?title=report.pdf",
        "application/pdf",
        &pdf_with("Acme Corp was founded in 1999 by Jane Doe."),
    );
    assert_eq!(status, 201, "{pdf}");
    assert!(
        pdf["text"]
            .as_str()
            .unwrap()
            .contains("Acme Corp was founded in 1999 by Jane Doe."),
        "{pdf}"
    );
    // The same upload again is the same document.
    let (status, again) = api.upload(
        &api.key,
        "/v1/documents/upload?title=report.pdf",
        "application/pdf",
        &pdf_with("Acme Corp was founded in 1999 by Jane Doe."),
    );
    assert_eq!((status, &again["id"]), (200, &pdf["id"]));

    // Refusals, each in the error shape.
    let refused = |content_type: &str, body: &[u8], status: u16, code: &str| {
        let (got, error) = api.upload(&api.key, "/v1/documents/upload?title=x", content_type, body);
        assert_eq!(
            (got, error["error"].as_str()),
            (status, Some(code)),
            "{error}"
        );
        assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()));
    };
    refused("image/png", b"\x89PNG", 415, "UnsupportedMediaType");
    refused("application/pdf", &pdf_with(""), 422, "PdfWithoutText");
    refused(
        "application/pdf",
        b"%PDF-1.4\nnot really a pdf",
        400,
        "UnreadablePdf",
    );
    refused("text/plain", b"ab\xffcd", 400, "InvalidUtf8");
    let (status, error) = api.upload(&api.key, "/v1/documents/upload", "text/plain", b"no title");
    assert_eq!(status, 400, "{error}");
    let (status, _) = api.upload(
        &api.reader,
        "/v1/documents/upload?title=x",
        "text/plain",
        b"a reader cannot upload",
    );
    assert_eq!(status, 403);

    // The list: newest first, without text, with the length in code points; searchable.
    let list = api.ok("GET", "/v1/documents", None);
    assert_eq!(list["total"], 3, "{list:#}");
    let titles: Vec<&str> = list["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["report.pdf", "minutes.md", "notes.txt"]);
    assert_eq!(list["documents"][1]["chars"], markdown_text.chars().count());
    assert!(list["documents"][0].get("text").is_none());
    let found = api.ok("GET", "/v1/documents?q=MINUTES&limit=1", None);
    assert_eq!(
        (
            found["total"].clone(),
            found["documents"][0]["title"].clone()
        ),
        (json!(1), json!("minutes.md"))
    );

    // One document with its links; linking more.
    let id = markdown["id"].as_str().unwrap();
    let one = api.ok("GET", &format!("/v1/documents/{id}"), None);
    assert_eq!(one["document"]["text"], markdown_text);
    assert_eq!(one["entity_ids"], json!([]));
    let linked = api.ok(
        "POST",
        &format!("/v1/documents/{id}/links"),
        Some(json!({"entity_ids": [acme, beta]})),
    );
    let mut expected = vec![acme.clone(), beta.clone()];
    expected.sort();
    assert_eq!(linked["entity_ids"], json!(expected));
    let one = api.ok("GET", &format!("/v1/documents/{id}"), None);
    assert_eq!(one["entity_ids"], json!(expected));
    let (status, _) = api.call(
        "POST",
        &format!("/v1/documents/{id}/links"),
        Some(json!({"entity_ids": ["no-such-entity"]})),
    );
    assert_eq!(status, 404);
    let text_id = text["id"].as_str().unwrap();
    let one = api.ok("GET", &format!("/v1/documents/{text_id}"), None);
    assert_eq!(one["entity_ids"], json!([acme]));

    // Episodes: newest first with their state; filtered by state.
    for turn in ["first", "second"] {
        let (status, episode) = api.call(
            "POST",
            "/v1/episodes",
            Some(json!({"user_message": format!("the {turn} turn"),
                        "assistant_response": "noted", "entities": [], "relationships": []})),
        );
        assert_eq!(status, 202, "{episode}");
        std::thread::sleep(Duration::from_millis(2));
    }
    let episodes = api.ok("GET", "/v1/episodes?limit=10", None);
    assert_eq!(episodes["total"], 2, "{episodes:#}");
    assert_eq!(episodes["episodes"][0]["user_message"], "the second turn");
    assert!(episodes["episodes"][0]["status"].is_string());
    let failed = api.ok("GET", "/v1/episodes?state=failed", None);
    assert_eq!(failed["total"], 0);
    let (status, _) = api.call("GET", "/v1/episodes?state=sideways", None);
    assert_eq!(status, 400);
    let files = api.ok("GET", "/v1/documents?kind=file", None);
    assert_eq!(files["total"], 3);
    let turns = api.ok("GET", "/v1/documents?kind=episode", None);
    assert_eq!(turns["total"], 2);

    // Another project's key sees none of it.
    let (status, _) = api.call_as(&api.outsider, "GET", &format!("/v1/documents/{id}"), None);
    assert_eq!(status, 404);
    let (status, _) = api.call_as(
        &api.outsider,
        "POST",
        &format!("/v1/documents/{id}/links"),
        Some(json!({"entity_ids": [acme]})),
    );
    assert_eq!(status, 404);
    let (status, _) = api.upload(
        &api.outsider,
        &format!("/v1/documents/upload?title=x.txt&entity_id={acme}"),
        "text/plain",
        b"linked to another project's entity",
    );
    assert_eq!(status, 404);
    let theirs = api.ok_as_outsider("/v1/documents");
    assert_eq!(theirs["total"], 0, "{theirs}");
    let theirs = api.ok_as_outsider("/v1/episodes");
    assert_eq!(theirs["total"], 0, "{theirs}");
}

impl Api {
    fn ok_as_outsider(&self, path: &str) -> Value {
        let (status, value) = self.call_as(&self.outsider, "GET", path, None);
        assert_eq!(status, 200, "{path}: {value}");
        value
    }
}
