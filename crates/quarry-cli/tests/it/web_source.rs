//! The `web` source through the binary: a field with `sources: [web]` searches through Exa's API
//! (tool loop) or a SearXNG instance (retrieve-then-extract), reads pages within the fetcher's
//! limits, stores them as documents with their URL and fetch time, and cites them with grounded
//! spans. The search providers and the pages are a local server speaking their wire.

use crate::common;

use std::process::Output;

use common::{ModelRequest, Sandbox, Server, quarry, stderr, stdout};
use quarry_testkit::{FakePage, FakeWeb, Reply, WebResult};
use serde_json::{Value, json};

const PAGE: &str = "<html><head><title>Acme Robotics leadership</title></head><body>\
    <nav>Home | Products | Careers | Sign in</nav><main><article><h1>Leadership</h1>\
    <p>Acme Robotics was founded in 2011 in Lyon. Claire Martin has been its chief executive \
    since 2019, after eight years leading the navigation software team.</p>\
    <p>The board is chaired by Paul Girard, who co-founded the company and still owns a fifth \
    of its shares through a family holding.</p></article></main>\
    <footer>Cookie settings | Privacy</footer></body></html>";

fn types(mode: &str) -> String {
    format!(
        r#"
entity_types:
  - slug: company
    fields:
      - {{name: ceo, instructions: "The chief executive's full name", agent: "openai-compatible:m-web", sources: [web], max_steps: 6{mode}}}
"#
    )
}

/// A sandbox with the company type, an entity, and a fake web with the leadership page. Search
/// lists a page on a name that resolves to a private address first, then the real one.
fn set_up(name: &str, mode: &str) -> (Sandbox, FakeWeb, String) {
    let sandbox = Sandbox::new(&format!("web-source-{name}"));
    sandbox.load_types(&types(mode));
    let entity = sandbox.add_entity("company", "Acme Robotics");
    let web = FakeWeb::start();
    let port = web.url("").rsplit(':').next().unwrap().to_owned();
    web.page("/acme/leadership", FakePage::Html(PAGE.to_owned()))
        .results(vec![
            WebResult {
                url: format!("http://localhost:{port}/acme/leadership"),
                title: "Acme Robotics leadership (mirror)".to_owned(),
                snippet: "Claire Martin has been its chief executive".to_owned(),
            },
            WebResult {
                url: web.url("/acme/leadership"),
                title: "Acme Robotics leadership".to_owned(),
                snippet: "Claire Martin has been its chief executive since 2019".to_owned(),
            },
        ]);
    (sandbox, web, entity)
}

/// `quarry run ENTITY --json` with the scripted model and `web` set (pages on 127.0.0.1 may be
/// read, as an operator allows an intranet host by name).
fn run(sandbox: &Sandbox, entity: &str, web: &[(&str, String)]) -> Output {
    quarry()
        .args(["run", entity, "--json", "--db", &sandbox.db()])
        .args(["--base-url", &sandbox.model.base_url(), "--retries", "0"])
        .env_remove("QUARRY_MODEL")
        .env_remove("QUARRY_WEB_SEARCH")
        .env("QUARRY_WEB_ALLOW_HOSTS", "127.0.0.1")
        .envs(web.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .expect("quarry runs")
}

fn ceo_result(sandbox: &Sandbox, entity: &str) -> Value {
    let results: Vec<Value> =
        serde_json::from_str(&sandbox.quarry_ok(&["results", entity, "--json"])).unwrap();
    results
        .into_iter()
        .find(|r| r["field_name"] == "ceo")
        .unwrap_or_else(|| panic!("no ceo result"))
}

/// The stored document a result cites, read through the API.
fn cited_document(sandbox: &Sandbox, result: &Value) -> Value {
    let document_id = result["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["type"] == "document")
        .unwrap_or_else(|| panic!("no document source: {result:#}"))["document_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let key = sandbox
        .quarry_ok(&["key", "create", "--scopes", "entities:read"])
        .trim()
        .to_owned();
    let server = Server::start(&["--db", &sandbox.db(), "--no-worker"]);
    let (status, document) =
        server.call(&key, "GET", &format!("/v1/documents/{document_id}"), None);
    assert_eq!(status, 200, "{document}");
    document["document"].clone()
}

/// The value is cited by the page's URL and by a grounded span of the stored page.
fn assert_cited(result: &Value, page_url: &str) {
    let sources = result["sources"].as_array().unwrap();
    assert!(
        sources.contains(&json!({"type": "url", "url": page_url})),
        "{result:#}"
    );
    assert!(
        sources
            .iter()
            .any(|s| s["type"] == "document" && s["snippet"] == "Claire Martin"),
        "a grounded span of the page: {result:#}"
    );
}

fn assert_stored_page(document: &Value, page_url: &str) {
    assert_eq!(document["kind"], "web", "{document:#}");
    assert_eq!(document["url"], page_url);
    assert_eq!(document["title"], "Acme Robotics leadership");
    let text = document["text"].as_str().unwrap();
    assert!(
        text.contains("Claire Martin has been its chief executive"),
        "{text}"
    );
    assert!(
        !text.contains("Cookie settings"),
        "the page chrome is dropped: {text}"
    );
    assert!(
        document["fetched_at"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z')),
        "{document:#}"
    );
}

#[test]
fn a_web_field_searches_exa_reads_a_page_and_cites_it_with_grounded_spans() {
    let (sandbox, web, entity) = set_up("exa", "");
    let port = web.url("").rsplit(':').next().unwrap().to_owned();
    let page_url = web.url("/acme/leadership");
    let script = [
        Reply::tool_call(
            "search_web",
            r#"{"query": "Acme Robotics chief executive"}"#,
        ),
        Reply::tool_call(
            "read_web_page",
            json!({"url": format!("http://localhost:{port}/acme/leadership")}).to_string(),
        ),
        Reply::tool_call(
            "read_web_page",
            json!({"url": page_url, "query": "chief executive"}).to_string(),
        ),
        // Not on the page: rejected, and the agent is told why.
        Reply::tool_call(
            "submit_value",
            r#"{"value": "Jean Dupont", "confidence": "high"}"#,
        ),
        Reply::tool_call(
            "submit_value",
            r#"{"value": "Claire Martin", "confidence": "high"}"#,
        ),
    ];
    for reply in script {
        sandbox.model.push_for_model("m-web", reply);
    }
    let output = run(
        &sandbox,
        &entity,
        &[
            ("QUARRY_WEB_SEARCH", "exa".to_owned()),
            ("QUARRY_WEB_SEARCH_URL", web.exa_base_url()),
            ("QUARRY_WEB_SEARCH_KEY", web.exa_key().to_owned()),
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["run"]["status"], "completed", "{report:#}");

    let ceo = ceo_result(&sandbox, &entity);
    assert_eq!(ceo["value"], "Claire Martin");
    assert_cited(&ceo, &page_url);
    assert_stored_page(&cited_document(&sandbox, &ceo), &page_url);

    // What the agent was told at each step.
    let requests: Vec<ModelRequest> = sandbox
        .model
        .requests()
        .iter()
        .map(ModelRequest::of)
        .collect();
    assert_eq!(requests.len(), 5);
    let tools: Vec<String> = sandbox.model.requests()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        tools.contains(&"search_web".to_owned()) && tools.contains(&"read_web_page".to_owned()),
        "{tools:?}"
    );
    assert!(
        requests[1].all_text.contains(&page_url) && requests[1].all_text.contains("since 2019"),
        "the search results: {}",
        requests[1].all_text
    );
    assert!(
        requests[2]
            .all_text
            .contains("'localhost' is a private or local address"),
        "the private mirror is refused: {}",
        requests[2].all_text
    );
    assert!(
        requests[3]
            .all_text
            .contains("Claire Martin has been its chief executive"),
        "the page's passages: {}",
        requests[3].all_text
    );
    assert!(
        requests[4].all_text.contains("REJECTED"),
        "{}",
        requests[4].all_text
    );

    let asked = web.requests();
    assert!(asked.contains(&"POST /exa/search".to_owned()), "{asked:?}");
    assert!(asked.contains(&"GET /robots.txt".to_owned()), "{asked:?}");
}

#[test]
fn a_web_field_in_retrieve_mode_reads_searxng_results_itself() {
    let (sandbox, web, entity) = set_up("searxng", ", mode: retrieve");
    let page_url = web.url("/acme/leadership");
    sandbox.model.push_for_model(
        "m-web",
        Reply::content(r#"{"ceo": "Claire Martin", "confidence": "high"}"#),
    );
    let output = run(
        &sandbox,
        &entity,
        &[
            ("QUARRY_WEB_SEARCH", "searxng".to_owned()),
            ("QUARRY_WEB_SEARCH_URL", web.searxng_base_url()),
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["run"]["status"], "completed", "{report:#}");
    let ceo = ceo_result(&sandbox, &entity);
    assert_eq!(ceo["value"], "Claire Martin");
    assert_cited(&ceo, &page_url);
    assert_stored_page(&cited_document(&sandbox, &ceo), &page_url);

    let prompt = ModelRequest::of(&sandbox.model.requests()[0]);
    assert!(
        prompt
            .all_text
            .contains("Claire Martin has been its chief executive since 2019"),
        "the engine read the page and gave its passages: {}",
        prompt.all_text
    );
    assert!(
        web.requests()
            .iter()
            .any(|r| r.starts_with("GET /searxng/search?q=") && r.ends_with("&format=json")),
        "{:?}",
        web.requests()
    );
}

#[test]
fn a_web_field_without_a_provider_fails_saying_what_to_set_and_bad_settings_are_refused() {
    let (sandbox, _web, entity) = set_up("unset", "");
    let output = run(&sandbox, &entity, &[]);
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap_or(Value::Null);
    assert_eq!(report["run"]["status"], "failed", "{}", stderr(&output));
    assert!(
        report.to_string().contains("set QUARRY_WEB_SEARCH"),
        "{report:#}"
    );
    assert!(
        sandbox.model.requests().is_empty(),
        "no model call without the web"
    );

    let output = run(
        &sandbox,
        &entity,
        &[("QUARRY_WEB_SEARCH", "bing".to_owned())],
    );
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("use exa or searxng"),
        "{}",
        stderr(&output)
    );
}
