//! [`FakeWeb`]: a local server that speaks Exa's search API (`POST /exa/search`, `x-api-key`)
//! and a SearXNG instance's JSON endpoint (`GET /searxng/search?q=…&format=json`), and serves
//! the pages and the `robots.txt` a test gives it. Search answers list the results the test set,
//! in Exa's and SearXNG's own shapes; every request is recorded.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::background::Background;
use crate::script::lock;

/// The API key the Exa endpoint accepts.
pub const FAKE_EXA_KEY: &str = "exa-test-key";

/// What a path serves.
#[derive(Debug, Clone, PartialEq)]
pub enum FakePage {
    /// `text/html; charset=utf-8`.
    Html(String),
    /// `text/plain; charset=utf-8`.
    Text(String),
    /// Any content type (a PDF, an image).
    Typed { content_type: String, body: Vec<u8> },
    /// `302 Found` to this location (absolute or relative).
    Redirect(String),
    /// This page, after a delay.
    Slow(Duration, Box<FakePage>),
}

/// One search result, as both providers list it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebResult {
    pub url: String,
    pub title: String,
    pub snippet: String,
}

#[derive(Default)]
struct WebState {
    pages: Mutex<HashMap<String, FakePage>>,
    robots: Mutex<Option<String>>,
    results: Mutex<Vec<WebResult>>,
    /// `METHOD path?query` of every request, in order.
    requests: Mutex<Vec<String>>,
}

pub struct FakeWeb {
    background: Background,
    state: Arc<WebState>,
}

impl FakeWeb {
    pub fn start() -> FakeWeb {
        let state = Arc::new(WebState::default());
        let app = Router::new()
            .route("/exa/search", post(exa_search))
            .route("/searxng/search", get(searxng_search))
            .route("/robots.txt", get(robots))
            .fallback(page)
            .with_state(Arc::clone(&state));
        FakeWeb {
            background: Background::serve("fake-web", app),
            state,
        }
    }

    /// `http://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.background.addr)
    }

    /// Exa's API root here (`QUARRY_WEB_SEARCH_URL` for `exa`).
    pub fn exa_base_url(&self) -> String {
        self.url("/exa")
    }

    /// The SearXNG instance's root here (`QUARRY_WEB_SEARCH_URL` for `searxng`).
    pub fn searxng_base_url(&self) -> String {
        self.url("/searxng")
    }

    pub fn exa_key(&self) -> &'static str {
        FAKE_EXA_KEY
    }

    pub fn page(&self, path: &str, page: FakePage) -> &FakeWeb {
        lock(&self.state.pages).insert(path.to_owned(), page);
        self
    }

    /// `robots.txt`'s text (none set: 404, which allows everything).
    pub fn robots(&self, text: &str) -> &FakeWeb {
        *lock(&self.state.robots) = Some(text.to_owned());
        self
    }

    /// The results every search lists, best first.
    pub fn results(&self, results: Vec<WebResult>) -> &FakeWeb {
        *lock(&self.state.results) = results;
        self
    }

    /// `METHOD path?query` of every request so far.
    pub fn requests(&self) -> Vec<String> {
        lock(&self.state.requests).clone()
    }
}

fn record(state: &WebState, method: &str, uri: &Uri) {
    lock(&state.requests).push(format!("{method} {uri}"));
}

async fn exa_search(
    State(state): State<Arc<WebState>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    record(&state, "POST", &uri);
    if headers.get("x-api-key").and_then(|v| v.to_str().ok()) != Some(FAKE_EXA_KEY) {
        return (
            StatusCode::UNAUTHORIZED,
            axum::Json(
                json!({"requestId": "r0", "error": "Invalid API key", "tag": "INVALID_API_KEY"}),
            ),
        )
            .into_response();
    }
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return (StatusCode::BAD_REQUEST, "body is not JSON").into_response();
    };
    if !request["query"].is_string() {
        return (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({"error": "query is required", "tag": "INVALID_REQUEST_BODY"})),
        )
            .into_response();
    }
    let wanted = request["numResults"].as_u64().unwrap_or(10) as usize;
    let results: Vec<Value> = lock(&state.results)
        .iter()
        .take(wanted)
        .enumerate()
        .map(|(i, r)| {
            json!({"id": r.url, "url": r.url, "title": r.title, "score": 0.9 - 0.1 * i as f64,
                "publishedDate": "2026-03-01T00:00:00.000Z", "author": null,
                "highlights": [r.snippet], "highlightScores": [0.5]})
        })
        .collect();
    axum::Json(json!({"requestId": "r1", "resolvedSearchType": "neural",
        "results": results, "costDollars": {"total": 0.005}}))
    .into_response()
}

async fn searxng_search(
    State(state): State<Arc<WebState>>,
    uri: Uri,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    record(&state, "GET", &uri);
    // As SearXNG answers a format its settings do not list.
    if query.get("format").map(String::as_str) != Some("json") {
        return (StatusCode::FORBIDDEN, "403 Forbidden").into_response();
    }
    let q = query.get("q").cloned().unwrap_or_default();
    let results: Vec<Value> = lock(&state.results)
        .iter()
        .enumerate()
        .map(|(i, r)| {
            json!({"url": r.url, "title": r.title, "content": r.snippet, "engine": "duckduckgo",
                "engines": ["duckduckgo"], "positions": [i + 1], "score": 1.0 / (i + 1) as f64,
                "category": "general", "publishedDate": null})
        })
        .collect();
    axum::Json(
        json!({"query": q, "number_of_results": 0, "results": results, "answers": [],
        "corrections": [], "infoboxes": [], "suggestions": [], "unresponsive_engines": []}),
    )
    .into_response()
}

async fn robots(State(state): State<Arc<WebState>>, uri: Uri) -> Response {
    record(&state, "GET", &uri);
    match lock(&state.robots).clone() {
        Some(text) => ([(header::CONTENT_TYPE, "text/plain")], text).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn page(State(state): State<Arc<WebState>>, uri: Uri) -> Response {
    record(&state, "GET", &uri);
    let found = lock(&state.pages).get(uri.path()).cloned();
    match found {
        Some(page) => serve(page).await,
        None => (StatusCode::NOT_FOUND, "no such page").into_response(),
    }
}

async fn serve(mut page: FakePage) -> Response {
    while let FakePage::Slow(delay, inner) = page {
        tokio::time::sleep(delay).await;
        page = *inner;
    }
    match page {
        FakePage::Html(body) => {
            ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
        }
        FakePage::Text(body) => {
            ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], body).into_response()
        }
        FakePage::Typed { content_type, body } => {
            ([(header::CONTENT_TYPE, content_type)], body).into_response()
        }
        FakePage::Redirect(location) => {
            (StatusCode::FOUND, [(header::LOCATION, location)]).into_response()
        }
        FakePage::Slow(..) => unreachable!("unwrapped above"),
    }
}
