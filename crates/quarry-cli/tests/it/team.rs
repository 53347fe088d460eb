//! The entity pipeline through the real binary: entity types, entities, documents, runs with
//! per-field agents against a scripted model server, review with a feedback rerun, history; and
//! the authenticated REST API of `quarry serve --db`.

use crate::common;

use common::{Sandbox, Server, stderr, stdout};
use quarry_testkit::Reply;
use serde_json::{Value, json};

const TYPES: &str = r#"
entity_types:
  - slug: company
    fields:
      - {name: ceo, instructions: "The chief executive's full name", agent: "openai-compatible:m-ceo", sources: [linked-documents]}
      - {name: revenue, type: number, agent: "openai-compatible:m-rev", sources: [linked-documents]}
      - {name: leader, depends_on: [ceo], agent: "openai-compatible:m-lead"}
"#;

const DOC: &str = "Acme Corp reported revenue of $1.2 million in 2023. Its CEO is Jane Doe; \
                   John Roe chairs the board.";

struct Team {
    sandbox: Sandbox,
}

impl std::ops::Deref for Team {
    type Target = Sandbox;

    fn deref(&self) -> &Sandbox {
        &self.sandbox
    }
}

impl Team {
    fn new(name: &str) -> Team {
        let sandbox = Sandbox::new(&format!("team-{name}"));
        std::fs::write(sandbox.dir.join("quarry.yaml"), TYPES).unwrap();
        std::fs::write(sandbox.dir.join("acme.md"), DOC).unwrap();
        Team { sandbox }
    }

    fn with_model(&self, args: &[&str]) -> String {
        let url = self.model.base_url();
        let mut all = args.to_vec();
        all.extend(["--base-url", url.as_str(), "--retries", "0"]);
        self.quarry_ok(&all)
    }

    /// Scripts one field agent: search the documents, then submit `value`.
    fn script_field(&self, model: &str, value: Value) {
        self.model.push_for_model(
            model,
            Reply::tool_call("search_documents", r#"{"query": "Acme"}"#),
        );
        self.model.push_for_model(
            model,
            Reply::tool_call(
                "submit_value",
                json!({"value": value, "confidence": "high"}).to_string(),
            ),
        );
    }

    fn set_up_company(&self) -> String {
        self.quarry_ok(&[
            "type",
            "load",
            self.dir.join("quarry.yaml").to_str().unwrap(),
        ]);
        let id = self.quarry_ok(&["entity", "add", "--type", "company", "--title", "Acme Corp"]);
        let id = id.trim().to_owned();
        self.quarry_ok(&[
            "doc",
            "add",
            self.dir.join("acme.md").to_str().unwrap(),
            "--entity",
            &id,
        ]);
        id
    }
}

fn results(team: &Team, entity: &str) -> Vec<Value> {
    serde_json::from_str(&team.quarry_ok(&["results", entity, "--json"])).unwrap()
}

fn result_for<'a>(results: &'a [Value], field: &str) -> &'a Value {
    results
        .iter()
        .find(|r| r["field_name"] == field)
        .unwrap_or_else(|| panic!("no result for {field}: {results:?}"))
}

#[test]
fn run_review_rerun_and_history_through_the_cli() {
    let team = Team::new("cli");
    let entity = team.set_up_company();
    team.script_field("m-ceo", json!("John Roe"));
    team.script_field("m-rev", json!(1_200_000));
    team.model.push_for_model(
        "m-lead",
        Reply::tool_call(
            "submit_value",
            r#"{"value": "John Roe", "confidence": "medium"}"#,
        ),
    );
    let report: Value =
        serde_json::from_str(&team.with_model(&["run", &entity, "--json"])).unwrap();
    assert_eq!(report["run"]["status"], "completed", "{report:#}");

    let latest = results(&team, &entity);
    assert_eq!(latest.len(), 3);
    let ceo = result_for(&latest, "ceo");
    assert_eq!(ceo["value"], "John Roe");
    assert_eq!(ceo["status"], "pending");
    let document_source = &ceo["sources"][0];
    assert_eq!(document_source["type"], "document");
    assert_eq!(result_for(&latest, "revenue")["value"], 1_200_000);
    // The dependent field saw its dependency's value.
    let lead_prompt = team
        .model
        .requests()
        .into_iter()
        .find(|r| r["model"] == "m-lead")
        .unwrap();
    assert!(lead_prompt.to_string().contains("John Roe"));

    // Reject with a reason: the field is extracted again with the feedback sentence.
    team.script_field("m-ceo", json!("Jane Doe"));
    let ceo_id = ceo["id"].as_str().unwrap().to_owned();
    team.with_model(&[
        "reject",
        &ceo_id,
        "--reason",
        "John Roe chairs the board; he is not the CEO",
    ]);
    let rerun_prompt = team
        .model
        .requests()
        .into_iter()
        .rfind(|r| r["model"] == "m-ceo")
        .unwrap()
        .to_string();
    assert!(
        rerun_prompt.contains("The previous value John Roe was rejected because: John Roe chairs the board; he is not the CEO. Please try again with this feedback."),
        "{rerun_prompt}"
    );
    let latest = results(&team, &entity);
    let new_ceo = result_for(&latest, "ceo");
    assert_eq!(new_ceo["value"], "Jane Doe");

    // Approve promotes the value into the entity.
    team.with_model(&["approve", new_ceo["id"].as_str().unwrap()]);
    let shown: Value = serde_json::from_str(&team.quarry_ok(&["entity", "show", &entity])).unwrap();
    assert_eq!(shown["fields"]["ceo"], "Jane Doe");

    let history: Vec<Value> =
        serde_json::from_str(&team.quarry_ok(&["history", &entity, "ceo", "--json"])).unwrap();
    let statuses: Vec<&str> = history
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["rejected", "approved"]);
    assert_eq!(
        history[0]["rejection_reason"],
        "John Roe chairs the board; he is not the CEO"
    );

    // The readable table names each field.
    let table = team.quarry_ok(&["results", &entity]);
    assert!(table.starts_with("result"), "{table}");
    assert!(
        table.contains("revenue") && table.contains("approved"),
        "{table}"
    );
}

#[test]
fn load_errors_name_the_fields_and_lose_nothing() {
    let team = Team::new("errors");
    let cyclic = team.dir.join("cyclic.yaml");
    std::fs::write(
        &cyclic,
        "slug: loop\nfields:\n  - {name: a, depends_on: [b]}\n  - {name: b, depends_on: [a]}\n",
    )
    .unwrap();
    let output = team.quarry(&["type", "load", cyclic.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert!(
        message.starts_with("Error: InvalidEntityType - "),
        "{message}"
    );
    assert!(
        message.contains('a') && message.contains("cycle"),
        "{message}"
    );

    let unknown = team.dir.join("unknown.yaml");
    std::fs::write(
        &unknown,
        "slug: x\nfields:\n  - {name: total, depends_on: [subtotal]}\n",
    )
    .unwrap();
    let message = stderr(&team.quarry(&["type", "load", unknown.to_str().unwrap()]));
    assert!(
        message.contains("total") && message.contains("subtotal"),
        "{message}"
    );

    let listed: Vec<Value> =
        serde_json::from_str(&team.quarry_ok(&["type", "list", "--json"])).unwrap();
    assert!(listed.is_empty(), "nothing was half-loaded: {listed:?}");

    let output = team.quarry(&["entity", "add", "--type", "nope", "--title", "X"]);
    assert!(
        stderr(&output).starts_with("Error: UnknownEntityType - "),
        "{}",
        stderr(&output)
    );
    let output = team.quarry(&["run", "no-such-entity", "--model", "openai-compatible:m"]);
    assert!(
        stderr(&output).starts_with("Error: NotFound - "),
        "{}",
        stderr(&output)
    );
}

fn key(team: &Team, project: &str, scopes: &str) -> String {
    team.quarry_ok(&["key", "create", "--scopes", scopes, "--project", project])
        .trim()
        .to_owned()
}

#[test]
fn rest_api_authenticates_scopes_and_isolates_projects() {
    let team = Team::new("api");
    let all = key(
        &team,
        "default",
        "entities:read,entities:write,documents:write,extraction:trigger,extraction:review,extraction:submit",
    );
    let reader = key(&team, "default", "entities:read");
    let outsider = key(&team, "other", "entities:read");
    let url = team.model.base_url();
    let server = Server::start(&["--db", &team.db(), "--base-url", &url, "--retries", "0"]);
    let call = |key: Option<&str>, method: &str, path: &str, body: Option<Value>| {
        let bytes = body.map(|b| b.to_string()).unwrap_or_default();
        let (status, _, response) = server.request_as(
            key,
            method,
            path,
            Some("application/json"),
            bytes.as_bytes(),
        );
        let json = serde_json::from_str::<Value>(&response).unwrap_or(Value::Null);
        (status, json)
    };

    let (status, error) = call(None, "GET", "/v1/entities", None);
    assert_eq!(
        (status, error["error"].as_str()),
        (401, Some("Unauthorized"))
    );
    let (status, error) = call(Some("qk_00000000_forged"), "GET", "/v1/entities", None);
    assert_eq!(
        (status, error["error"].as_str()),
        (401, Some("Unauthorized"))
    );

    let company = json!({"fields": [
        {"name": "ceo", "agent": "openai-compatible:m-ceo", "sources": ["linked-documents"]}]});
    let (status, error) = call(
        Some(&reader),
        "PUT",
        "/v1/entity-types/company",
        Some(company.clone()),
    );
    assert_eq!((status, error["error"].as_str()), (403, Some("Forbidden")));
    let bad = json!({"fields": [{"name": "a", "depends_on": ["zzz"]}]});
    let (status, error) = call(Some(&all), "PUT", "/v1/entity-types/bad", Some(bad));
    assert_eq!(
        (status, error["error"].as_str()),
        (400, Some("InvalidEntityType"))
    );
    assert!(error["message"].as_str().unwrap().contains("zzz"));
    // A slug travels in paths and logs: an encoded traversal or a NUL is refused, not stored.
    for hostile in ["..%2F..%2Fetc%2Fpasswd", "a%00b"] {
        let (status, error) = call(
            Some(&all),
            "PUT",
            &format!("/v1/entity-types/{hostile}"),
            Some(json!({"fields": [{"name": "a"}]})),
        );
        assert_eq!(
            (status, error["error"].as_str()),
            (400, Some("InvalidEntityType")),
            "{hostile}: {error}"
        );
    }
    let (status, _) = call(Some(&all), "PUT", "/v1/entity-types/company", Some(company));
    assert_eq!(status, 200);

    let (status, entity) = call(
        Some(&all),
        "POST",
        "/v1/entities",
        Some(json!({"entity_type": "company", "title": "Acme Corp"})),
    );
    assert_eq!(status, 201, "{entity}");
    let id = entity["id"].as_str().unwrap().to_owned();
    let (status, _) = call(
        Some(&all),
        "POST",
        "/v1/documents",
        Some(json!({"title": "acme", "text": DOC, "entity_ids": [id]})),
    );
    assert_eq!(status, 201);

    team.script_field("m-ceo", json!("Jane Doe"));
    let (status, queued) = call(Some(&all), "POST", &format!("/v1/workflows/{id}"), None);
    assert_eq!(
        status, 202,
        "the run is queued, not run inside the request: {queued}"
    );
    assert_eq!(queued["nodes"][0]["field"], "ceo", "{queued:#}");
    // The server's own worker works it; the workflow status shows each node.
    let mut report = Value::Null;
    for _ in 0..600 {
        let (status, current) = call(Some(&reader), "GET", &format!("/v1/workflows/{id}"), None);
        assert_eq!(status, 200, "{current}");
        report = current;
        if report["run"]["status"] != "running" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(report["run"]["status"], "completed", "{report:#}");
    let ceo_node = report["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["field"] == "ceo")
        .unwrap();
    assert_eq!(ceo_node["state"], "done", "{report:#}");
    assert_eq!(ceo_node["attempts"], 1);
    let (status, retried) = call(
        Some(&all),
        "POST",
        &format!("/v1/workflows/{id}/retry"),
        None,
    );
    assert_eq!(status, 202, "{retried}");
    assert_eq!(
        retried["retried"],
        json!([]),
        "nothing failed, nothing retried"
    );

    let (status, latest) = call(Some(&reader), "GET", &format!("/v1/extraction/{id}"), None);
    assert_eq!(status, 200);
    let result_id = latest[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(latest[0]["value"], "Jane Doe");

    let approve = json!({"action": "approve"});
    let (status, _) = call(
        Some(&reader),
        "PATCH",
        &format!("/v1/extraction/results/{result_id}"),
        Some(approve.clone()),
    );
    assert_eq!(status, 403);
    let (status, outcome) = call(
        Some(&all),
        "PATCH",
        &format!("/v1/extraction/results/{result_id}"),
        Some(approve.clone()),
    );
    assert_eq!(status, 200, "{outcome}");
    let (_, entity) = call(Some(&reader), "GET", &format!("/v1/entities/{id}"), None);
    assert_eq!(entity["fields"]["ceo"], "Jane Doe");
    let (status, error) = call(
        Some(&all),
        "PATCH",
        &format!("/v1/extraction/results/{result_id}"),
        Some(approve),
    );
    assert_eq!(
        (status, error["error"].as_str()),
        (409, Some("InvalidState"))
    );

    let submission = json!({"field_name": "ceo", "value": "J. Doe", "confidence": "medium",
        "agent_id": "external-researcher", "sources": [{"type": "url", "url": "https://acme.example/about"}]});
    let (status, submitted) = call(
        Some(&all),
        "POST",
        &format!("/v1/extraction/{id}/submit"),
        Some(submission),
    );
    assert_eq!(status, 201, "{submitted}");
    assert_eq!(submitted["status"], "pending");
    assert_eq!(submitted["agent_id"], "external-researcher");

    // The reference's own example, byte for byte (camelCase keys, its placeholder URL), for a
    // `revenue` field the type gains now.
    let with_revenue = json!({"fields": [
        {"name": "ceo", "agent": "openai-compatible:m-ceo", "sources": ["linked-documents"]},
        {"name": "revenue", "type": "number"}]});
    let (status, _) = call(
        Some(&all),
        "PUT",
        "/v1/entity-types/company",
        Some(with_revenue),
    );
    assert_eq!(status, 200);
    let reference_example = r#"{
"fieldName": "revenue",
"value": 1500000,
"sources": [{ "type": "url", "url": "https://..." }],
"confidence": "high",
"agentId": "external-researcher"
}"#;
    let (status, _, response) = server.request_as(
        Some(&all),
        "POST",
        &format!("/v1/extraction/{id}/submit"),
        Some("application/json"),
        reference_example.as_bytes(),
    );
    let submitted: Value = serde_json::from_str(&response).unwrap_or(Value::Null);
    assert_eq!(status, 201, "{response}");
    assert_eq!(
        (
            &submitted["field_name"],
            &submitted["value"],
            &submitted["agent_id"]
        ),
        (
            &json!("revenue"),
            &json!(1500000),
            &json!("external-researcher")
        ),
        "{submitted}"
    );
    assert_eq!(submitted["sources"][0]["url"], "https://...", "{submitted}");
    assert!(
        submitted["workflow_node_run_id"].is_null(),
        "an external value belongs to no workflow node: {submitted}"
    );
    // One spelling per key: both at once is refused, not guessed.
    let (status, error) = call(
        Some(&all),
        "POST",
        &format!("/v1/extraction/{id}/submit"),
        Some(
            json!({"field_name": "ceo", "fieldName": "revenue", "value": "x",
            "confidence": "low", "agent_id": "a"}),
        ),
    );
    assert_eq!(
        (status, error["error"].as_str()),
        (400, Some("MalformedRequest")),
        "{error}"
    );

    let (status, history) = call(
        Some(&reader),
        "GET",
        &format!("/v1/workflows/{id}/history"),
        None,
    );
    assert_eq!(status, 200);
    assert_eq!(history.as_array().unwrap().len(), 1);
    // Paged by cursor: after the only run there is nothing; a bad cursor or size is refused.
    let last = history[0]["id"].as_str().unwrap();
    let (status, next) = call(
        Some(&reader),
        "GET",
        &format!("/v1/workflows/{id}/history?limit=1&before={last}"),
        None,
    );
    assert_eq!((status, next), (200, json!([])));
    for (query, code, error) in [
        ("before=missing", 404, "NotFound"),
        ("limit=0", 400, "InvalidArguments"),
    ] {
        let (status, answer) = call(
            Some(&reader),
            "GET",
            &format!("/v1/workflows/{id}/history?{query}"),
            None,
        );
        assert_eq!(
            (status, answer["error"].as_str()),
            (code, Some(error)),
            "{query}"
        );
    }

    // A key of another project sees nothing of this one.
    let (status, error) = call(Some(&outsider), "GET", &format!("/v1/entities/{id}"), None);
    assert_eq!((status, error["error"].as_str()), (404, Some("NotFound")));
    let (_, listed) = call(Some(&outsider), "GET", "/v1/entities", None);
    assert_eq!(listed, json!([]));

    let (status, spec) = call(None, "GET", "/openapi.json", None);
    assert_eq!(status, 200);
    for path in [
        "/v1/workflows/{entity_id}",
        "/v1/extraction/results/{id}",
        "/skill/extract",
    ] {
        assert!(spec["paths"].get(path).is_some(), "{path} is documented");
    }
}

// An external submit stored a cited document id of another project as it was, and the history
// routes answered `200 []` for an unknown or another project's entity instead of 404.
#[test]
fn submits_and_histories_stay_inside_the_callers_project() {
    let team = Team::new("foreign");
    let mine = key(
        &team,
        "default",
        "entities:read,entities:write,documents:write,extraction:submit",
    );
    let theirs = key(
        &team,
        "other",
        "entities:read,entities:write,documents:write",
    );
    let url = team.model.base_url();
    let server = Server::start(&["--db", &team.db(), "--base-url", &url, "--retries", "0"]);
    let company = json!({"fields": [{"name": "ceo"}]});
    let set_up = |key: &str, text: &str| {
        let (status, answer) = server.call(
            key,
            "PUT",
            "/v1/entity-types/company",
            Some(company.clone()),
        );
        assert_eq!(status, 200, "{answer}");
        let (status, entity) = server.call(
            key,
            "POST",
            "/v1/entities",
            Some(json!({"entity_type": "company", "title": "Acme Corp"})),
        );
        assert_eq!(status, 201, "{entity}");
        let (status, document) = server.call(
            key,
            "POST",
            "/v1/documents",
            Some(json!({"title": "acme", "text": text, "entity_ids": [entity["id"]]})),
        );
        assert_eq!(status, 201, "{document}");
        (
            entity["id"].as_str().unwrap().to_owned(),
            document["id"].as_str().unwrap().to_owned(),
        )
    };
    let (entity, document) = set_up(&mine, DOC);
    let (foreign_entity, foreign_document) =
        set_up(&theirs, "Globex Corporation's CEO is Hank Scorpio.");

    let submission = |document_id: &str| {
        json!({"field_name": "ceo", "value": "Jane Doe", "confidence": "high",
            "agent_id": "external-researcher",
            "sources": [{"type": "document", "document_id": document_id, "start": 0, "end": 9}]})
    };
    for cited in [foreign_document.as_str(), "no-such-document"] {
        let (status, error) = server.call(
            &mine,
            "POST",
            &format!("/v1/extraction/{entity}/submit"),
            Some(submission(cited)),
        );
        assert_eq!(
            (status, error["error"].as_str()),
            (404, Some("NotFound")),
            "{cited}: {error}"
        );
        assert!(
            error["message"].as_str().unwrap().contains(cited),
            "{cited}: {error}"
        );
    }
    let (status, stored) = server.call(
        &mine,
        "GET",
        &format!("/v1/extraction/{entity}/history/ceo"),
        None,
    );
    assert_eq!((status, stored), (200, json!([])), "nothing was stored");
    let (status, submitted) = server.call(
        &mine,
        "POST",
        &format!("/v1/extraction/{entity}/submit"),
        Some(submission(&document)),
    );
    assert_eq!(status, 201, "{submitted}");
    assert_eq!(submitted["sources"][0]["document_id"], document.as_str());

    for (path, missing) in [
        (format!("/v1/workflows/{entity}/history"), None),
        (format!("/v1/extraction/{entity}/history/ceo"), None),
        (
            "/v1/workflows/no-such-entity/history".to_owned(),
            Some("no-such-entity"),
        ),
        (
            "/v1/extraction/no-such-entity/history/ceo".to_owned(),
            Some("no-such-entity"),
        ),
        (
            format!("/v1/workflows/{foreign_entity}/history"),
            Some(foreign_entity.as_str()),
        ),
        (
            format!("/v1/extraction/{foreign_entity}/history/ceo"),
            Some(foreign_entity.as_str()),
        ),
    ] {
        let (status, answer) = server.call(&mine, "GET", &path, None);
        match missing {
            None => assert_eq!(status, 200, "{path}: {answer}"),
            Some(id) => {
                assert_eq!(
                    (status, answer["error"].as_str()),
                    (404, Some("NotFound")),
                    "{path}: {answer}"
                );
                assert!(
                    answer["message"].as_str().unwrap().contains(id),
                    "{path}: {answer}"
                );
            }
        }
    }
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
fn pdf_text_is_added_and_damaged_pdfs_are_refused() {
    let team = Team::new("pdf");
    let good = team.dir.join("report.pdf");
    std::fs::write(
        &good,
        pdf_with("Acme Corp was founded in 1999 by Jane Doe."),
    )
    .unwrap();
    let damaged = team.dir.join("damaged.pdf");
    std::fs::write(&damaged, b"%PDF-1.4\nnot really a pdf").unwrap();

    // A damaged file among good ones: a clear error, exit 1, and nothing is added.
    let output = team.quarry(&[
        "doc",
        "add",
        good.to_str().unwrap(),
        damaged.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert!(
        message.starts_with("Error: UnreadablePdf - ") && message.contains("damaged.pdf"),
        "{message}"
    );

    let added: Value =
        serde_json::from_str(&team.quarry_ok(&["doc", "add", good.to_str().unwrap(), "--json"]))
            .unwrap();
    assert_eq!(added.as_array().unwrap().len(), 1, "{added}");
    let text = added[0]["text"].as_str().unwrap();
    assert!(
        text.contains("Acme Corp was founded in 1999 by Jane Doe."),
        "{text}"
    );
}

#[test]
fn a_trigger_instructs_its_run_through_the_cli_and_the_api() {
    let team = Team::new("instructions");
    let entity = team.set_up_company();
    team.script_field("m-ceo", json!("John Roe"));
    let report: Value = serde_json::from_str(&team.with_model(&[
        "run",
        &entity,
        "--fields",
        "ceo",
        "--instructions",
        "Prefer the newest filing.",
        "--field-instructions",
        "ceo=Give the full legal name.",
        "--json",
    ]))
    .unwrap();
    assert_eq!(report["run"]["status"], "completed", "{report:#}");
    assert_eq!(
        report["run"]["instructions"],
        json!({"all": "Prefer the newest filing.", "fields": {"ceo": "Give the full legal name."}}),
        "recorded on the run: {report:#}"
    );
    let prompt = team
        .model
        .requests()
        .into_iter()
        .find(|r| r["model"] == "m-ceo")
        .expect("the ceo agent was asked");
    let system = prompt["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        system.contains(
            "Additional instructions for this run: Prefer the newest filing.\nGive the full legal name."
        ),
        "{system}"
    );
    // A malformed --field-instructions is a usage error.
    let output = team.quarry(&["run", &entity, "--field-instructions", "no equals sign"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("is not FIELD=TEXT"),
        "{}",
        stderr(&output)
    );

    // Through the API: per field with "*" for all, recorded on the queued run; a field the type
    // lacks is refused before anything is queued.
    let key = team
        .quarry_ok(&[
            "key",
            "create",
            "--scopes",
            "entities:read,extraction:trigger",
        ])
        .trim()
        .to_owned();
    let server = Server::start(&["--db", &team.db(), "--no-worker"]);
    let (status, queued) = server.call(
        &key,
        "POST",
        &format!("/v1/workflows/{entity}"),
        Some(json!({"fields": ["revenue"],
            "instructions": {"*": "Amounts in USD.", "revenue": "Use the 2023 figure."}})),
    );
    assert_eq!(status, 202, "{queued}");
    assert_eq!(
        queued["run"]["instructions"],
        json!({"all": "Amounts in USD.", "fields": {"revenue": "Use the 2023 figure."}}),
        "{queued:#}"
    );
    let (status, error) = server.call(
        &key,
        "POST",
        &format!("/v1/workflows/{entity}"),
        Some(json!({"instructions": {"profit": "x"}})),
    );
    assert_eq!(
        (status, error["error"].as_str()),
        (400, Some("UnknownField")),
        "{error}"
    );
}

#[test]
fn project_corrections_reach_matching_prompts_and_the_provenance() {
    let team = Team::new("corrections");
    let entity = team.set_up_company();
    let added: Value = serde_json::from_str(&team.quarry_ok(&[
        "correction",
        "add",
        "Give names in full, never initials.",
        "--type",
        "company",
        "--field",
        "ceo",
        "--json",
    ]))
    .unwrap();
    let for_ceo = added["id"].as_str().unwrap().to_owned();
    let for_project = team
        .quarry_ok(&["correction", "add", "Amounts are always in USD."])
        .trim()
        .to_owned();
    let for_revenue = team
        .quarry_ok(&[
            "correction",
            "add",
            "Use the audited figure.",
            "--type",
            "company",
            "--field",
            "revenue",
        ])
        .trim()
        .to_owned();
    // Refused before anything is stored: an unknown field, a field without its type, no text.
    let unknown = team.quarry(&[
        "correction",
        "add",
        "x",
        "--type",
        "company",
        "--field",
        "nope",
    ]);
    assert_eq!(unknown.status.code(), Some(1), "{}", stderr(&unknown));
    assert!(
        stderr(&unknown).starts_with("Error: UnknownField - "),
        "{}",
        stderr(&unknown)
    );
    let typeless = team.quarry(&["correction", "add", "x", "--field", "ceo"]);
    assert_eq!(typeless.status.code(), Some(2), "{}", stderr(&typeless));
    let empty = team.quarry(&["correction", "add", "  "]);
    assert!(
        stderr(&empty).starts_with("Error: InvalidCorrection - "),
        "{}",
        stderr(&empty)
    );

    team.script_field("m-ceo", json!("John Roe"));
    let report: Value =
        serde_json::from_str(&team.with_model(&["run", &entity, "--fields", "ceo", "--json"]))
            .unwrap();
    assert_eq!(report["run"]["status"], "completed", "{report:#}");
    let prompt = team
        .model
        .requests()
        .into_iter()
        .find(|r| r["model"] == "m-ceo")
        .expect("the ceo agent was asked");
    let system = prompt["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        system.contains(
            "Corrections from this project's reviewers (follow them):\n- Give names in full, \
             never initials.\n- Amounts are always in USD.\n"
        ),
        "{system}"
    );
    assert!(
        !system.contains("audited"),
        "another field's correction: {system}"
    );
    let latest = results(&team, &entity);
    let applied: Vec<&str> = result_for(&latest, "ceo")["metadata"]["corrections"]
        .as_array()
        .expect("the result lists the corrections it was extracted under")
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(applied, [for_ceo.as_str(), for_project.as_str()]);

    // Listed oldest first; removed by id (twice is NotFound).
    let listed: Value =
        serde_json::from_str(&team.quarry_ok(&["correction", "list", "--json"])).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 3, "{listed}");
    assert_eq!(listed[2]["field_name"], "revenue");
    team.quarry_ok(&["correction", "rm", &for_revenue]);
    let again = team.quarry(&["correction", "rm", &for_revenue]);
    assert!(
        stderr(&again).starts_with("Error: NotFound - "),
        "{}",
        stderr(&again)
    );

    // The same through the API, scoped by key.
    let reviewer = team
        .quarry_ok(&["key", "create", "--scopes", "extraction:review"])
        .trim()
        .to_owned();
    let reader = team
        .quarry_ok(&["key", "create", "--scopes", "entities:read"])
        .trim()
        .to_owned();
    let server = Server::start(&["--db", &team.db(), "--no-worker"]);
    let body = json!({"text": "Dates as YYYY-MM-DD.", "entity_type": "company"});
    let (status, _) = server.call(&reader, "POST", "/v1/corrections", Some(body.clone()));
    assert_eq!(status, 403);
    let (status, created) = server.call(&reviewer, "POST", "/v1/corrections", Some(body));
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["entity_type"], "company");
    let (status, error) = server.call(
        &reviewer,
        "POST",
        "/v1/corrections",
        Some(json!({"text": "x", "entity_type": "planet"})),
    );
    assert_eq!(
        (status, error["error"].as_str()),
        (400, Some("UnknownEntityType")),
        "{error}"
    );
    // The ceo result names the workflow node (field task) that recorded it.
    let (status, workflow) = server.call(&reader, "GET", &format!("/v1/workflows/{entity}"), None);
    assert_eq!(status, 200, "{workflow}");
    let node = workflow["nodes"]
        .as_array()
        .expect("the run's nodes")
        .iter()
        .find(|n| n["field"] == "ceo")
        .expect("the ceo node")["id"]
        .clone();
    assert!(node.is_string(), "{workflow:#}");
    assert_eq!(result_for(&latest, "ceo")["workflow_node_run_id"], node);
    // The field's cross-entity feedback summary follows the reviews.
    let summary = |server: &Server| {
        let (status, summary) = server.call(&reader, "GET", "/v1/feedback/company/ceo", None);
        assert_eq!(status, 200, "{summary}");
        summary
    };
    let before = summary(&server);
    assert_eq!(
        (before["total"].as_i64(), before["rejected"].as_i64()),
        (Some(1), Some(0))
    );
    let result_id = result_for(&latest, "ceo")["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, reviewed) = server.call(
        &reviewer,
        "PATCH",
        &format!("/v1/extraction/results/{result_id}"),
        Some(json!({"action": "reject", "reason": "that is the chair"})),
    );
    assert_eq!(status, 200, "{reviewed}");
    let after = summary(&server);
    assert_eq!(after["rejected"], 1, "{after}");
    assert_eq!(after["approval_rate"], 0.0, "{after}");
    assert_eq!(
        after["common_rejection_reasons"],
        json!([["that is the chair", 1]]),
        "{after}"
    );
    let (status, listed) = server.call(&reader, "GET", "/v1/corrections", None);
    assert_eq!(status, 200);
    assert_eq!(listed.as_array().unwrap().len(), 3, "{listed}");
    let path = format!("/v1/corrections/{}", created["id"].as_str().unwrap());
    let (status, _) = server.call(&reviewer, "DELETE", &path, None);
    assert_eq!(status, 204);
    let (status, error) = server.call(&reviewer, "DELETE", &path, None);
    assert_eq!(
        (status, error["error"].as_str()),
        (404, Some("NotFound")),
        "{error}"
    );
}

/// Types for `extract_on_create`: a lead's run is queued when it is created.
const ON_CREATE_TYPES: &str = r#"
entity_types:
  - slug: lead
    extract_on_create: true
    fields:
      - {name: email, human_input: true}
  - slug: account
    fields:
      - {name: leads, type: list, agent: "openai-compatible:m-leads", sources: [linked-documents],
         connection: {entity_type: lead, cascade: {enabled: true}}}
"#;

#[test]
fn a_type_that_extracts_on_create_queues_a_run_from_the_cli_the_api_and_a_cascade() {
    let team = Team::new("on-create");
    let types = team.dir.join("on-create.yaml");
    std::fs::write(&types, ON_CREATE_TYPES).unwrap();
    team.quarry_ok(&["type", "load", types.to_str().unwrap()]);
    let key = team
        .quarry_ok(&[
            "key",
            "create",
            "--scopes",
            "entities:read,entities:write,documents:write",
        ])
        .trim()
        .to_owned();
    let server = Server::start(&["--db", &team.db(), "--no-worker"]);
    let run_of = |id: &str| -> Value {
        let (status, workflow) = server.call(&key, "GET", &format!("/v1/workflows/{id}"), None);
        assert_eq!(status, 200, "{workflow}");
        workflow["run"].clone()
    };

    // The CLI.
    let output = team.quarry(&["entity", "add", "--type", "lead", "--title", "Ann"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let ann = stdout(&output).trim().to_owned();
    assert!(
        stderr(&output).contains("extract_on_create"),
        "{}",
        stderr(&output)
    );
    let run = run_of(&ann);
    assert_eq!(run["triggered_by"], "entity/created", "{run}");
    assert_eq!(run["status"], "waiting_human", "{run}");

    // The API.
    let (status, bea) = server.call(
        &key,
        "POST",
        "/v1/entities",
        Some(json!({"entity_type": "lead", "title": "Bea"})),
    );
    assert_eq!(status, 201, "{bea}");
    assert_eq!(
        run_of(bea["id"].as_str().unwrap())["triggered_by"],
        "entity/created"
    );

    // A cascade without auto_extract into a type that extracts on create.
    let account = team.quarry_ok(&["entity", "add", "--type", "account", "--title", "Acme"]);
    let account = account.trim();
    team.quarry_ok(&[
        "doc",
        "add",
        team.dir.join("acme.md").to_str().unwrap(),
        "--entity",
        account,
    ]);
    team.model.push_for_model(
        "m-leads",
        Reply::tool_call("search_documents", r#"{"query": "CEO"}"#),
    );
    team.model.push_for_model(
        "m-leads",
        Reply::tool_call(
            "submit_value",
            json!({"value": ["Jane Doe"], "confidence": "high"}).to_string(),
        ),
    );
    let url = team.model.base_url();
    let ran = team.quarry(&[
        "run",
        account,
        "--fields",
        "leads",
        "--base-url",
        &url,
        "--retries",
        "0",
    ]);
    // Exit 3: the lead's follow-up run waits for a person (its email is human_input).
    assert_eq!(ran.status.code(), Some(3), "{}", stderr(&ran));
    let (status, leads) = server.call(&key, "GET", "/v1/entities?type=lead", None);
    assert_eq!(status, 200, "{leads}");
    let jane = leads
        .as_array()
        .unwrap()
        .iter()
        .find(|lead| lead["title"] == "Jane Doe")
        .unwrap_or_else(|| panic!("the cascade created Jane Doe: {leads}"));
    let run = run_of(jane["id"].as_str().unwrap());
    assert!(
        run["triggered_by"]
            .as_str()
            .unwrap()
            .starts_with("cascade:"),
        "{run}"
    );
}

/// A webhook receiver on a loopback port: answers 500 to the first request and 200 to the
/// rest (or what `answer` says for the nth request), and keeps every request's head and body.
struct Receiver {
    url: String,
    seen: std::sync::Arc<std::sync::Mutex<Vec<Received>>>,
}

/// A request's head (request line and headers) and body.
type Received = (String, Vec<u8>);

impl Receiver {
    fn start() -> Receiver {
        Receiver::answering(|nth| {
            if nth == 1 {
                "500 Internal Server Error"
            } else {
                "200 OK"
            }
        })
    }

    /// A receiver whose answer to its `nth` request (from 1) is `answer(nth)`: a status line's
    /// rest, with any extra header lines.
    fn answering(answer: impl Fn(usize) -> &'static str + Send + 'static) -> Receiver {
        use std::io::{BufRead, BufReader, Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hooks/quarry", listener.local_addr().unwrap());
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let recorded = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut head = String::new();
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    head.push_str(&line);
                }
                let length = head
                    .lines()
                    .find_map(|l| {
                        let (name, value) = l.split_once(':')?;
                        name.eq_ignore_ascii_case("content-length")
                            .then(|| value.trim().parse::<usize>().ok())?
                    })
                    .unwrap_or(0);
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                let nth = {
                    let mut seen = recorded.lock().unwrap();
                    seen.push((head, body));
                    seen.len()
                };
                let status = answer(nth);
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                );
            }
        });
        Receiver { url, seen }
    }

    fn seen(&self) -> Vec<Received> {
        self.seen.lock().unwrap().clone()
    }
}

fn header<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

#[test]
fn field_actions_post_signed_webhooks_retried_and_logged() {
    let team = Team::new("webhooks");
    let receiver = Receiver::start();
    // A loopback receiver is a private address: refused at load unless allowed by name.
    let types = webhook_types(&team, &receiver.url, &["extracted", "approved"]);
    let refused = team.quarry(&["type", "load", types.to_str().unwrap()]);
    assert!(!refused.status.success());
    let said = common::stderr(&refused);
    assert!(
        said.contains("refused") && said.contains("QUARRY_OUTBOUND_ALLOW_HOSTS"),
        "{said}"
    );
    let (entity, key) =
        company_with_webhook(&team, None, &receiver.url, &["extracted", "approved"]);
    let server = delivering_server(
        &team,
        &[
            ("QUARRY_WEBHOOK_SECRET", "s3cret"),
            ("QUARRY_OUTBOUND_ALLOW_HOSTS", "127.0.0.1"),
            ("QUARRY_WEBHOOK_RETRY_BASE_SECS", "0.2"),
        ],
    );
    let (status, queued) = server.call(&key, "POST", &format!("/v1/workflows/{entity}"), None);
    assert_eq!(status, 202, "{queued}");

    // The extraction's webhook: refused once (500), delivered on the retry.
    let deliveries = eventually_deliveries(&server, &key, |list| {
        list.iter()
            .any(|d| d["event"] == "extracted" && d["state"] == "done")
    });
    let extracted = deliveries
        .iter()
        .find(|d| d["event"] == "extracted")
        .unwrap();
    assert_eq!(extracted["attempts"], 2, "{extracted:#}");
    assert_eq!(extracted["response_status"], 200, "{extracted:#}");
    let seen = receiver.seen();
    assert_eq!(seen.len(), 2, "one refused, one delivered");
    for (head, body) in &seen {
        assert!(head.starts_with("POST /hooks/quarry "), "{head}");
        assert_eq!(header(head, "x-quarry-event"), Some("extracted"), "{head}");
        let expected = quarry_webhooks::signature(b"s3cret", body);
        assert_eq!(
            header(head, "x-quarry-signature"),
            Some(expected.as_str()),
            "{head}"
        );
        let body: Value = serde_json::from_slice(body).unwrap();
        assert_eq!(body["field"], "ceo");
        assert_eq!(body["result"]["value"], "Jane Doe");
        assert_eq!(body["entity_id"], entity.as_str());
    }

    // Approving the value fires the approved webhook.
    let result_id = extracted["result_id"].as_str().unwrap().to_owned();
    let (status, reviewed) = server.call(
        &key,
        "PATCH",
        &format!("/v1/extraction/results/{result_id}"),
        Some(json!({"action": "approve"})),
    );
    assert_eq!(status, 200, "{reviewed}");
    eventually_deliveries(&server, &key, |list| {
        list.iter()
            .any(|d| d["event"] == "approved" && d["state"] == "done")
    });
    let last = receiver.seen().pop().unwrap();
    assert_eq!(header(&last.0, "x-quarry-event"), Some("approved"));
    let body: Value = serde_json::from_slice(&last.1).unwrap();
    assert_eq!(body["result"]["status"], "approved", "{body}");
}

/// `quarry ARGS` on the team's database, in `project` (else the default one), with loopback
/// allowed as a webhook host; its trimmed standard output.
fn quarry_allowing_loopback(team: &Team, project: Option<&str>, args: &[&str]) -> String {
    let mut command = common::quarry();
    command
        .args(args)
        .args(["--db", &team.db()])
        .env("QUARRY_OUTBOUND_ALLOW_HOSTS", "127.0.0.1")
        .env_remove("QUARRY_MODEL")
        .env_remove("QUARRY_DB")
        .env_remove("QUARRY_PROJECT");
    if let Some(project) = project {
        command.args(["--project", project]);
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{}", common::stderr(&output));
    common::stdout(&output).trim().to_owned()
}

/// `quarry serve` on the team's database and scripted model (no retries), with `env` set.
fn delivering_server(team: &Team, env: &[(&str, &str)]) -> Server {
    let model_url = team.model.base_url();
    Server::start_with(
        &[
            "--db",
            &team.db(),
            "--base-url",
            &model_url,
            "--retries",
            "0",
        ],
        |command| {
            command.envs(env.iter().copied());
        },
    )
}

/// The types file of a company whose `ceo` field fires a webhook to `url` on each of `events`.
fn webhook_types(team: &Team, url: &str, events: &[&str]) -> std::path::PathBuf {
    let actions: Vec<String> = events
        .iter()
        .map(|event| format!("{{on: {event}, webhook: \"{url}\"}}"))
        .collect();
    let types = team.dir.join("hooks.yaml");
    std::fs::write(
        &types,
        format!(
            "entity_types:\n  - slug: company\n    fields:\n      - {{name: ceo, agent: \
             \"openai-compatible:m-ceo\", sources: [linked-documents], actions: [{}]}}\n",
            actions.join(", ")
        ),
    )
    .unwrap();
    types
}

/// A company of [`webhook_types`] in `project` (loaded with loopback allowed) with its document
/// and the field's scripted answer; answers the entity's id and a key that may run and review.
fn company_with_webhook(
    team: &Team,
    project: Option<&str>,
    url: &str,
    events: &[&str],
) -> (String, String) {
    let types = webhook_types(team, url, events);
    let run = |args: &[&str]| quarry_allowing_loopback(team, project, args);
    run(&["type", "load", types.to_str().unwrap()]);
    let entity = run(&["entity", "add", "--type", "company", "--title", "Acme Corp"]);
    run(&[
        "doc",
        "add",
        team.dir.join("acme.md").to_str().unwrap(),
        "--entity",
        &entity,
    ]);
    team.script_field("m-ceo", json!("Jane Doe"));
    let key = run(&[
        "key",
        "create",
        "--scopes",
        "entities:read,entities:write,extraction:trigger,extraction:review",
    ]);
    (entity, key)
}

/// Found by a hostile test: a key with `entities:write` could make Quarry POST to loopback,
/// link-local (cloud metadata) and other internal addresses, follow their redirects, and read
/// which answered in the delivery log. Internal targets are refused when a type is created and
/// again at delivery (dead-lettered, nothing sent), unless the operator allows the host by name;
/// a dead delivery is redelivered on request once it can be.
#[test]
fn webhooks_to_internal_addresses_are_refused_at_load_and_at_delivery_then_redelivered() {
    let team = Team::new("webhook-policy");
    let receiver = Receiver::start();
    let (entity, key) = company_with_webhook(&team, None, &receiver.url, &["extracted"]);
    let server = delivering_server(&team, &[("QUARRY_WEBHOOK_RETRY_BASE_SECS", "0.2")]);
    for internal in [
        "http://127.0.0.1:80/hooks",
        "http://[::1]/hooks",
        "http://169.254.169.254/latest/meta-data",
        "http://localhost:9/hooks",
    ] {
        let (status, refused) = server.call(
            &key,
            "PUT",
            "/v1/entity-types/probe",
            Some(json!({"fields": [{"name": "x", "actions": [{"on": "extracted", "webhook": internal}]}]})),
        );
        assert_eq!(status, 400, "{internal}: {refused}");
        assert_eq!(refused["error"], "InvalidEntityType", "{refused}");
        assert!(
            refused["message"].as_str().unwrap().contains("refused"),
            "{refused}"
        );
    }
    // A type loaded where loopback was allowed, delivered by a server that does not allow it.
    let (status, queued) = server.call(&key, "POST", &format!("/v1/workflows/{entity}"), None);
    assert_eq!(status, 202, "{queued}");
    let deliveries = eventually_deliveries(&server, &key, |list| {
        list.iter().any(|d| d["state"] == "dead")
    });
    let dead = &deliveries[0];
    assert_eq!(dead["attempts"], 1, "refused for good at once: {dead:#}");
    let error = dead["last_error"].as_str().unwrap();
    assert!(
        error.contains("private or local address") && error.contains("QUARRY_OUTBOUND_ALLOW_HOSTS"),
        "{error}"
    );
    assert!(receiver.seen().is_empty(), "nothing was sent");
    let id = dead["id"].as_str().unwrap().to_owned();
    let (status, running) = server.call(&key, "POST", "/v1/deliveries/nope/redeliver", None);
    assert_eq!(status, 404, "{running}");
    drop(server);

    // The operator allows the host; the dead delivery is redelivered (refused once, then done).
    let server = delivering_server(
        &team,
        &[
            ("QUARRY_OUTBOUND_ALLOW_HOSTS", "127.0.0.1"),
            ("QUARRY_WEBHOOK_RETRY_BASE_SECS", "0.2"),
        ],
    );
    let (status, requeued) = server.call(
        &key,
        "POST",
        &format!("/v1/deliveries/{id}/redeliver"),
        None,
    );
    assert_eq!(status, 200, "{requeued}");
    assert_eq!(requeued["state"], "queued", "{requeued}");
    let deliveries = eventually_deliveries(&server, &key, |list| {
        list.iter().any(|d| d["state"] == "done")
    });
    assert_eq!(deliveries[0]["attempts"], 3, "{:#}", deliveries[0]);
    assert_eq!(receiver.seen().len(), 2);
    let (status, again) = server.call(
        &key,
        "POST",
        &format!("/v1/deliveries/{id}/redeliver"),
        None,
    );
    assert_eq!(status, 200, "a done delivery may be sent again: {again}");
}

/// Found by a hostile test: a 307 re-posted the signed body to another internal path. Webhooks
/// follow no redirect: a 3xx is a failed attempt that says why.
#[test]
fn webhook_redirects_are_not_followed() {
    let team = Team::new("webhook-redirect");
    let receiver = Receiver::answering(|_| "307 Temporary Redirect\r\nlocation: /internal/admin");
    let (entity, key) = company_with_webhook(&team, None, &receiver.url, &["extracted"]);
    let server = delivering_server(
        &team,
        &[
            ("QUARRY_OUTBOUND_ALLOW_HOSTS", "127.0.0.1"),
            ("QUARRY_WEBHOOK_RETRY_BASE_SECS", "0.2"),
        ],
    );
    let (status, queued) = server.call(&key, "POST", &format!("/v1/workflows/{entity}"), None);
    assert_eq!(status, 202, "{queued}");
    // A delivery's attempts count at its claim, before its POST: wait for the receiver too.
    let deliveries = eventually_deliveries(&server, &key, |list| {
        list.iter().any(|d| d["attempts"].as_i64() >= Some(2)) && receiver.seen().len() >= 2
    });
    let delivery = &deliveries[0];
    assert!(
        delivery["last_error"]
            .as_str()
            .unwrap()
            .contains("HTTP 307 (a redirect; webhooks do not follow redirects"),
        "{delivery:#}"
    );
    let seen = receiver.seen();
    for (head, _) in &seen {
        assert!(head.starts_with("POST /hooks/quarry "), "{head}");
    }
}

/// A receiver that hangs was logged only as "error sending request". A delivery's timeout now
/// says it timed out, and the attempt is retried.
#[test]
fn a_webhook_receiver_that_hangs_is_logged_as_timed_out() {
    let team = Team::new("webhook-timeout");
    let url = hanging_receiver();
    let (entity, key) = company_with_webhook(&team, None, &url, &["extracted"]);
    let server = delivering_server(
        &team,
        &[
            ("QUARRY_OUTBOUND_ALLOW_HOSTS", "127.0.0.1"),
            ("QUARRY_WEBHOOK_TIMEOUT_SECS", "0.5"),
            ("QUARRY_WEBHOOK_RETRY_BASE_SECS", "0.2"),
        ],
    );
    let (status, queued) = server.call(&key, "POST", &format!("/v1/workflows/{entity}"), None);
    assert_eq!(status, 202, "{queued}");
    let deliveries = eventually_deliveries(&server, &key, |list| {
        list.iter().any(|d| !d["last_error"].is_null())
    });
    let error = deliveries[0]["last_error"].as_str().unwrap();
    assert!(
        error.contains("no answer within 0.5 s (timed out)"),
        "{error}"
    );
}

/// Found by a hostile test: receivers that hang held every delivery slot, across projects. One
/// project holds at most its share of a worker's slots, so another project's deliveries go out
/// while the first one's hang.
#[test]
fn a_projects_hanging_receivers_leave_delivery_slots_for_other_projects() {
    let team = Team::new("webhook-fairness");
    let receiver = Receiver::answering(|_| "200 OK");
    // Project two: one webhook to a receiver that answers (set up before the server starts, so
    // its index holds the document).
    let (other_entity, other_key) =
        company_with_webhook(&team, Some("fairness-two"), &receiver.url, &["extracted"]);
    // Project one (the default): one extraction fires four webhooks to a receiver that hangs.
    let (entity, key) = company_with_webhook(&team, None, &hanging_receiver(), &["extracted"; 4]);
    let server = delivering_server(
        &team,
        &[
            ("QUARRY_OUTBOUND_ALLOW_HOSTS", "127.0.0.1"),
            ("QUARRY_WEBHOOK_TIMEOUT_SECS", "120"),
        ],
    );
    let (status, queued) = server.call(&key, "POST", &format!("/v1/workflows/{entity}"), None);
    assert_eq!(status, 202, "{queued}");
    eventually_deliveries(&server, &key, |list| {
        list.len() == 4 && list.iter().filter(|d| d["state"] == "running").count() == 2
    });

    // Project two's delivery goes out while project one's hang.
    let (status, queued) = server.call(
        &other_key,
        "POST",
        &format!("/v1/workflows/{other_entity}"),
        None,
    );
    assert_eq!(status, 202, "{queued}");
    eventually_deliveries(&server, &other_key, |list| {
        list.iter().any(|d| d["state"] == "done")
    });
    assert_eq!(receiver.seen().len(), 1);
    let (_, first) = server.call(&key, "GET", "/v1/deliveries", None);
    let running = first
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["state"] == "running")
        .count();
    assert_eq!(running, 2, "the first project kept its share: {first:#}");
}

/// A webhook receiver that accepts connections and never answers; its URL.
fn hanging_receiver() -> String {
    let hanging = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hooks/quarry", hanging.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in hanging.incoming() {
            held.push(stream);
        }
    });
    url
}

/// Polls the delivery log until `done` says so.
fn eventually_deliveries(
    server: &Server,
    key: &str,
    done: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    common::eventually("the deliveries reached their state", || {
        let (status, list) = server.call(key, "GET", "/v1/deliveries", None);
        assert_eq!(status, 200, "{list}");
        let list = list.as_array().unwrap().clone();
        done(&list).then_some(list)
    })
}

#[test]
fn the_workflow_and_the_entity_page_name_required_fields_without_a_value() {
    let team = Team::new("required");
    let types = team.dir.join("required.yaml");
    std::fs::write(
        &types,
        "entity_types:\n  - slug: company\n    fields:\n      - {name: ceo, required: true}\n      \
         - {name: revenue, required: true}\n      - {name: motto}\n",
    )
    .unwrap();
    team.quarry_ok(&["type", "load", types.to_str().unwrap()]);
    let entity = team
        .quarry_ok(&[
            "entity",
            "add",
            "--type",
            "company",
            "--title",
            "Acme",
            "--fields",
            r#"{"ceo": "Jane Doe", "revenue": ""}"#,
        ])
        .trim()
        .to_owned();
    let key = team
        .quarry_ok(&[
            "key",
            "create",
            "--scopes",
            "entities:read,extraction:review",
        ])
        .trim()
        .to_owned();
    let server = Server::start(&["--db", &team.db(), "--no-worker"]);
    let (status, workflow) = server.call(&key, "GET", &format!("/v1/workflows/{entity}"), None);
    assert_eq!(status, 200, "{workflow}");
    assert_eq!(
        workflow["missing_required"],
        json!(["revenue"]),
        "an empty string is no value"
    );
    let (status, overview) = server.call(
        &key,
        "GET",
        &format!("/v1/entities/{entity}/overview"),
        None,
    );
    assert_eq!(status, 200, "{overview}");
    assert_eq!(overview["missing_required"], json!(["revenue"]));
}
