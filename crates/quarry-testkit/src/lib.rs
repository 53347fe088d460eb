//! Test support for Quarry: a local model server with scripted replies.
//!
//! [`ScriptedServer`] listens on `127.0.0.1` on a free port and speaks three wire protocols:
//! `POST /v1/chat/completions` (OpenAI-compatible; also at Azure OpenAI's
//! `/openai/deployments/{deployment}/chat/completions` and Gemini's
//! `/v1beta/openai/chat/completions`) and `POST /v1/messages` (Anthropic), each with Server-Sent
//! Events when the request says `"stream": true`, and `POST /api/chat` (Ollama's native API,
//! streaming newline-delimited JSON unless the request says `"stream": false`, as Ollama does).
//! Every request takes the next
//! [`Scripted`] reply from a FIFO script (per model if the test queued one for that model);
//! when the script is empty it answers 500 with a body saying so. Every request is recorded, so
//! tests can assert the exact wire a client sent.
//!
//! `POST /v1/embeddings` (OpenAI-compatible; also at an Azure deployment's
//! `/openai/deployments/{deployment}/embeddings`) needs no script: it answers every input with
//! [`fake_embedding`] (8 dimensions unless [`ScriptedServer::set_embedding_dimensions`] says
//! otherwise), so equal texts get equal vectors. Errors and odd replies for it are queued apart,
//! with [`ScriptedServer::push_embeddings`], and never consume the chat script.
//!
//! Tests in another process queue replies and read requests through the control routes under
//! `/_testkit/` (see `control.rs`); `scripted-model-server` runs the server as a process.
//!
//! [`FakeWeb`] speaks Exa's search API and a SearXNG instance's JSON endpoint and serves the
//! pages, redirects and `robots.txt` a test gives it (the `web` source's tests).
//!
//! [`postgres::TestDatabase`] gives a test a PostgreSQL database of its own that is dropped when
//! the test ends, and [`TempDb`] a SQLite one whose folder is removed.
//!
//! The server runs on its own thread and runtime, so it works from sync and async tests alike,
//! and stops when dropped.
//!
//! ```no_run
//! use quarry_testkit::{Reply, ScriptedServer};
//! let server = ScriptedServer::start();
//! server.push(Reply::tool_call("submit", r#"{"name":"Ada"}"#));
//! server.push(Reply::rate_limited(1));
//! server.push(Reply::content("```json\n{\"name\": \"Ada\"}\n```").with_usage(120, 30));
//! let base = server.base_url(); // http://127.0.0.1:PORT/v1
//! ```

mod background;
mod control;
pub mod postgres;
mod script;
mod temp_db;
mod test_model;
mod web;

pub use script::{DEFAULT_EMBEDDING_DIMENSIONS, Recorded, Reply, Responder, Scripted, TokenUsage};
pub use temp_db::TempDb;
pub use web::{FakePage, FakeWeb, WebResult};

use background::Background;
use script::{Shared, lock};
pub use test_model::{test_gemma_gguf, test_gguf};

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::Response;
use axum::routing::post;
use serde_json::{Value, json};

/// The vector `/v1/embeddings` answers for `text`: `dimensions` values in `[-1, 1)`, each a
/// multiple of 1/1024 (exact in `f32` and through JSON), derived from an FNV-1a hash of the text.
/// Equal texts get equal vectors; different texts almost surely different ones.
pub fn fake_embedding(text: &str, dimensions: usize) -> Vec<f32> {
    let mut state = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    (0..dimensions)
        .map(|_| {
            // splitmix64
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            ((z >> 53) as f32 - 1024.0) / 1024.0
        })
        .collect()
}

/// A local model server with scripted replies; see the crate docs.
pub struct ScriptedServer {
    background: Background,
    shared: Arc<Shared>,
}

impl ScriptedServer {
    /// Starts the server on `127.0.0.1` on a free port, with an empty script.
    pub fn start() -> ScriptedServer {
        let shared = Arc::new(Shared::default());
        let app = Router::new()
            .route("/v1/chat/completions", post(openai_chat))
            .route(
                "/openai/deployments/{deployment}/chat/completions",
                post(openai_chat),
            )
            .route("/v1beta/openai/chat/completions", post(openai_chat))
            .route("/v1/messages", post(anthropic_messages))
            .route("/api/chat", post(ollama_chat))
            .route("/v1/embeddings", post(openai_embeddings))
            .route(
                "/openai/deployments/{deployment}/embeddings",
                post(openai_embeddings),
            )
            .route("/_testkit/script", post(control::push_script))
            .route("/_testkit/requests", axum::routing::get(control::requests))
            .route("/_testkit/reset", post(control::reset))
            .with_state(Arc::clone(&shared));
        let background = Background::serve("scripted-server", app);
        ScriptedServer { background, shared }
    }

    /// Answers every chat request the script has no reply for with `respond(request body)`.
    pub fn respond_with(
        &self,
        respond: impl Fn(&Value) -> Scripted + Send + Sync + 'static,
    ) -> &ScriptedServer {
        *lock(&self.shared.responder) = Some(Arc::new(respond));
        self
    }

    /// Starts the server with `replies` queued.
    pub fn with_script<R: Into<Scripted>>(replies: impl IntoIterator<Item = R>) -> ScriptedServer {
        let server = ScriptedServer::start();
        for reply in replies {
            server.push(reply);
        }
        server
    }

    /// Base URL for OpenAI-compatible clients: `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.background.addr)
    }

    /// Base URL for Anthropic clients (which add `/v1/messages`): `http://127.0.0.1:PORT`. The
    /// same host serves Ollama's native API (`/api/chat`), Azure OpenAI deployments and Gemini's
    /// `/v1beta/openai`.
    pub fn anthropic_base_url(&self) -> String {
        format!("http://{}", self.background.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.background.addr
    }

    /// Queues a reply for the next request, whatever its model.
    pub fn push(&self, reply: impl Into<Scripted>) -> &ScriptedServer {
        lock(&self.shared.script).any_model.push_back(reply.into());
        self
    }

    /// Queues a reply for the next request naming `model`; such requests fall back to the
    /// shared queue once the model's own is empty.
    pub fn push_for_model(&self, model: &str, reply: impl Into<Scripted>) -> &ScriptedServer {
        lock(&self.shared.script)
            .by_model
            .entry(model.to_string())
            .or_default()
            .push_back(reply.into());
        self
    }

    /// Queues a reply for the next `/v1/embeddings` request (the chat script is not used there).
    /// [`Reply::Status`] and [`Reply::Raw`] are sent as they are; any other reply stands for the
    /// normal answer, sent after the scripted delay and reporting its prompt tokens.
    pub fn push_embeddings(&self, reply: impl Into<Scripted>) -> &ScriptedServer {
        lock(&self.shared.embeddings).script.push_back(reply.into());
        self
    }

    /// Length of the vectors `/v1/embeddings` answers with (default
    /// [`DEFAULT_EMBEDDING_DIMENSIONS`]).
    pub fn set_embedding_dimensions(&self, dimensions: usize) -> &ScriptedServer {
        lock(&self.shared.embeddings).dimensions = dimensions;
        self
    }

    /// Whether `/v1/embeddings` lists `data` in reverse input order (each item keeps its true
    /// `index`), so tests can check that clients sort by `index`.
    pub fn reverse_embeddings(&self, reversed: bool) -> &ScriptedServer {
        lock(&self.shared.embeddings).reversed = reversed;
        self
    }

    /// Replies not yet used (the chat script; embeddings replies are not counted).
    pub fn remaining(&self) -> usize {
        lock(&self.shared.script).len()
    }

    /// Bodies of the requests received so far, in arrival order.
    pub fn requests(&self) -> Vec<Value> {
        lock(&self.shared.recorded)
            .iter()
            .map(|request| request.body.clone())
            .collect()
    }

    /// Requests received so far with path and headers.
    pub fn recorded(&self) -> Vec<Recorded> {
        lock(&self.shared.recorded).clone()
    }

    pub fn request_count(&self) -> usize {
        lock(&self.shared.recorded).len()
    }

    /// The most requests the server was handling at the same time (delays included).
    pub fn max_concurrent(&self) -> usize {
        self.shared.max_in_flight.load(Ordering::SeqCst)
    }
}

/// Counts a request as in flight until dropped.
struct InFlight<'a>(&'a Shared);

impl<'a> InFlight<'a> {
    fn enter(shared: &'a Shared) -> InFlight<'a> {
        let now = shared.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        shared.max_in_flight.fetch_max(now, Ordering::SeqCst);
        InFlight(shared)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Wire {
    OpenAi,
    Anthropic,
    Ollama,
}

async fn openai_chat(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    answer(&shared, Wire::OpenAi, &uri, headers, body).await
}

async fn anthropic_messages(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    answer(&shared, Wire::Anthropic, &uri, headers, body).await
}

async fn ollama_chat(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    answer(&shared, Wire::Ollama, &uri, headers, body).await
}

async fn openai_embeddings(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let _in_flight = InFlight::enter(&shared);
    let body = json_body(&body);
    let model = body["model"].as_str().unwrap_or("").to_string();
    let inputs: Option<Vec<String>> = match &body["input"] {
        Value::String(text) => Some(vec![text.clone()]),
        Value::Array(items) => items
            .iter()
            .map(|item| item.as_str().map(str::to_string))
            .collect(),
        _ => None,
    };
    record(
        &shared,
        uri.path(),
        uri.query().unwrap_or(""),
        &headers,
        body,
    );
    let (scripted, dimensions, reversed) = {
        let mut setup = lock(&shared.embeddings);
        (setup.script.pop_front(), setup.dimensions, setup.reversed)
    };
    let mut usage = None;
    if let Some(scripted) = scripted {
        if !scripted.delay.is_zero() {
            tokio::time::sleep(scripted.delay).await;
        }
        match scripted.reply {
            Reply::Status { .. } | Reply::Raw { .. } => return fixed_response(scripted.reply),
            _ => usage = Some(scripted.usage.prompt_tokens),
        }
    }
    let Some(inputs) = inputs else {
        return json_response(
            StatusCode::BAD_REQUEST,
            json!({"error": {
                "message": "quarry-testkit: `input` must be a string or an array of strings",
                "type": "invalid_request_error",
            }})
            .to_string(),
        );
    };
    let mut data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(index, text)| {
            json!({
                "object": "embedding",
                "index": index,
                "embedding": fake_embedding(text, dimensions),
            })
        })
        .collect();
    if reversed {
        data.reverse();
    }
    let tokens = usage.unwrap_or_else(|| {
        inputs
            .iter()
            .map(|text| text.split_whitespace().count() as u64)
            .sum()
    });
    json_response(
        StatusCode::OK,
        json!({
            "object": "list",
            "data": data,
            "model": model,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        })
        .to_string(),
    )
}

/// The request body as JSON, or a JSON string holding the raw text if it is not JSON.
fn json_body(body: &Bytes) -> Value {
    serde_json::from_slice(body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()))
}

/// Records a request; returns its 1-based sequence number.
fn record(shared: &Shared, path: &str, query: &str, headers: &HeaderMap, body: Value) -> usize {
    let mut recorded = lock(&shared.recorded);
    recorded.push(Recorded {
        path: path.to_string(),
        query: query.to_string(),
        headers: headers
            .iter()
            .map(|(name, value)| {
                (
                    name.as_str().to_string(),
                    String::from_utf8_lossy(value.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body,
    });
    recorded.len()
}

/// A [`Reply::Status`] or [`Reply::Raw`] as it goes on the wire.
fn fixed_response(reply: Reply) -> Response {
    match reply {
        Reply::Status {
            code,
            body,
            retry_after,
        } => {
            let mut response = json_response(status_code(code), body);
            if let Some(seconds) = retry_after {
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
            }
            response
        }
        Reply::Raw {
            code,
            content_type,
            body,
        } => Response::builder()
            .status(status_code(code))
            .header(header::CONTENT_TYPE, content_type)
            .body(Body::from(body))
            .expect("a valid raw response"),
        other => unreachable!("only Status and Raw replies are fixed responses, not {other:?}"),
    }
}

async fn answer(
    shared: &Shared,
    wire: Wire,
    uri: &Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let _in_flight = InFlight::enter(shared);
    let body = json_body(&body);
    let model = body["model"].as_str().unwrap_or("").to_string();
    // Ollama streams unless told not to; the others only when asked.
    let stream = match wire {
        Wire::Ollama => body["stream"] != Value::Bool(false),
        Wire::OpenAi | Wire::Anthropic => body["stream"] == Value::Bool(true),
    };
    let body_for_responder = body.clone();
    let sequence = record(
        shared,
        uri.path(),
        uri.query().unwrap_or(""),
        &headers,
        body,
    );
    let queued = lock(&shared.script).next_for(&model);
    let responder = lock(&shared.responder).clone();
    let Some(scripted) = queued.or_else(|| responder.map(|respond| respond(&body_for_responder)))
    else {
        let message = format!(
            "quarry-testkit: the script has no reply left for request #{sequence} (model '{model}'); \
             queue one with ScriptedServer::push"
        );
        return json_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            json!({"error": {"message": message, "type": "script_exhausted"}}).to_string(),
        );
    };
    if !scripted.delay.is_zero() {
        tokio::time::sleep(scripted.delay).await;
    }
    let turn = match scripted.reply {
        reply @ (Reply::Status { .. } | Reply::Raw { .. }) => return fixed_response(reply),
        Reply::Content(text) => Turn {
            text: Some(text),
            calls: Vec::new(),
        },
        Reply::ToolCall { name, arguments } => Turn {
            text: None,
            calls: vec![(name, arguments)],
        },
        Reply::ToolCalls(calls) => Turn { text: None, calls },
    };
    let usage = scripted.usage;
    match (wire, stream) {
        (Wire::OpenAi, false) => json_response(
            StatusCode::OK,
            openai_completion(&turn, &model, usage, sequence).to_string(),
        ),
        (Wire::OpenAi, true) => sse_response(openai_stream(&turn, &model, usage, sequence)),
        (Wire::Anthropic, false) => json_response(
            StatusCode::OK,
            anthropic_message(&turn, &model, usage, sequence).to_string(),
        ),
        (Wire::Anthropic, true) => sse_response(anthropic_stream(&turn, &model, usage, sequence)),
        (Wire::Ollama, false) => json_response(
            StatusCode::OK,
            ollama_message(&turn, &model, usage).to_string(),
        ),
        (Wire::Ollama, true) => ndjson_response(ollama_stream(&turn, &model, usage)),
    }
}

/// An assistant turn to encode in either wire format.
struct Turn {
    text: Option<String>,
    calls: Vec<(String, String)>,
}

fn status_code(code: u16) -> StatusCode {
    StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

fn json_response(status: StatusCode, body: String) -> Response {
    let content_type = if serde_json::from_str::<Value>(&body).is_ok() {
        "application/json"
    } else {
        "text/plain; charset=utf-8"
    };
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, content_type)
        .body(Body::from(body))
        .expect("a valid response")
}

/// Streams the events, each split in two pieces so clients must join data across chunks.
fn sse_response(events: Vec<String>) -> Response {
    let pieces: Vec<Result<Bytes, Infallible>> = events
        .into_iter()
        .flat_map(|event| {
            let bytes = Bytes::from(event);
            let middle = bytes.len() / 2;
            [Ok(bytes.slice(..middle)), Ok(bytes.slice(middle..))]
        })
        .collect();
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(futures_util::stream::iter(pieces)))
        .expect("a valid event-stream response")
}

/// Text as a model streams it: word by word, whitespace attached.
fn text_pieces(text: &str) -> Vec<&str> {
    text.split_inclusive(char::is_whitespace).collect()
}

/// Tool arguments as models stream them: fragments of a few characters.
fn argument_pieces(arguments: &str) -> Vec<String> {
    let chars: Vec<char> = arguments.chars().collect();
    chars
        .chunks(7)
        .map(|chunk| chunk.iter().collect())
        .collect()
}

fn openai_completion(turn: &Turn, model: &str, usage: TokenUsage, sequence: usize) -> Value {
    let mut message = json!({"role": "assistant", "content": turn.text});
    if !turn.calls.is_empty() {
        message["tool_calls"] = turn
            .calls
            .iter()
            .enumerate()
            .map(|(index, (name, arguments))| {
                json!({
                    "id": format!("call_{sequence}_{index}"),
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                })
            })
            .collect();
    }
    json!({
        "id": format!("chatcmpl-testkit-{sequence}"),
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": openai_finish(turn)}],
        "usage": openai_usage(usage),
    })
}

fn openai_finish(turn: &Turn) -> &'static str {
    if turn.calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    }
}

fn openai_usage(usage: TokenUsage) -> Value {
    json!({
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.prompt_tokens + usage.completion_tokens,
    })
}

fn openai_stream(turn: &Turn, model: &str, usage: TokenUsage, sequence: usize) -> Vec<String> {
    let id = format!("chatcmpl-testkit-{sequence}");
    let chunk = |choices: Value, usage: Value| {
        let chunk = json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": choices,
            "usage": usage,
        });
        format!("data: {chunk}\n\n")
    };
    let delta = |delta: Value| {
        chunk(
            json!([{"index": 0, "delta": delta, "finish_reason": null}]),
            Value::Null,
        )
    };
    let mut events = vec![delta(json!({"role": "assistant", "content": ""}))];
    if let Some(text) = &turn.text {
        events.extend(
            text_pieces(text)
                .into_iter()
                .map(|piece| delta(json!({"content": piece}))),
        );
    }
    for (index, (name, arguments)) in turn.calls.iter().enumerate() {
        events.push(delta(json!({"tool_calls": [{
            "index": index,
            "id": format!("call_{sequence}_{index}"),
            "type": "function",
            "function": {"name": name, "arguments": ""},
        }]})));
        events.extend(argument_pieces(arguments).into_iter().map(|piece| {
            delta(json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
        }));
    }
    events.push(chunk(
        json!([{"index": 0, "delta": {}, "finish_reason": openai_finish(turn)}]),
        Value::Null,
    ));
    events.push(chunk(json!([]), openai_usage(usage)));
    events.push("data: [DONE]\n\n".to_string());
    events
}

/// Anthropic requires `input` to be an object; arguments that are not JSON are sent as a JSON
/// string so the test still sees them (streaming sends them verbatim as `partial_json`).
fn anthropic_input(arguments: &str) -> Value {
    serde_json::from_str(arguments).unwrap_or_else(|_| Value::String(arguments.to_string()))
}

fn anthropic_stop(turn: &Turn) -> &'static str {
    if turn.calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    }
}

fn anthropic_message(turn: &Turn, model: &str, usage: TokenUsage, sequence: usize) -> Value {
    let mut content = Vec::new();
    if let Some(text) = &turn.text {
        content.push(json!({"type": "text", "text": text}));
    }
    for (index, (name, arguments)) in turn.calls.iter().enumerate() {
        content.push(json!({
            "type": "tool_use",
            "id": format!("toolu_{sequence}_{index}"),
            "name": name,
            "input": anthropic_input(arguments),
        }));
    }
    json!({
        "id": format!("msg_testkit_{sequence}"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": anthropic_stop(turn),
        "stop_sequence": null,
        "usage": {"input_tokens": usage.prompt_tokens, "output_tokens": usage.completion_tokens},
    })
}

fn anthropic_stream(turn: &Turn, model: &str, usage: TokenUsage, sequence: usize) -> Vec<String> {
    let event = |name: &str, data: Value| format!("event: {name}\ndata: {data}\n\n");
    let mut events = vec![
        event(
            "message_start",
            json!({"type": "message_start", "message": {
                "id": format!("msg_testkit_{sequence}"),
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": {"input_tokens": usage.prompt_tokens, "output_tokens": 1},
            }}),
        ),
        event("ping", json!({"type": "ping"})),
    ];
    let mut index = 0;
    if let Some(text) = &turn.text {
        events.push(event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index,
                   "content_block": {"type": "text", "text": ""}}),
        ));
        for piece in text_pieces(text) {
            events.push(event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                       "delta": {"type": "text_delta", "text": piece}}),
            ));
        }
        events.push(event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    for (call, (name, arguments)) in turn.calls.iter().enumerate() {
        events.push(event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": {
                "type": "tool_use", "id": format!("toolu_{sequence}_{call}"), "name": name, "input": {},
            }}),
        ));
        for piece in argument_pieces(arguments) {
            events.push(event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                       "delta": {"type": "input_json_delta", "partial_json": piece}}),
            ));
        }
        events.push(event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    events.push(event(
        "message_delta",
        json!({"type": "message_delta",
               "delta": {"stop_reason": anthropic_stop(turn), "stop_sequence": null},
               "usage": {"output_tokens": usage.completion_tokens}}),
    ));
    events.push(event("message_stop", json!({"type": "message_stop"})));
    events
}

/// Ollama sends tool-call arguments as an object; arguments that are not JSON are sent as a JSON
/// string so the test still sees them.
fn ollama_calls(turn: &Turn) -> Vec<Value> {
    turn.calls
        .iter()
        .map(|(name, arguments)| {
            json!({"function": {"name": name, "arguments": anthropic_input(arguments)}})
        })
        .collect()
}

fn ollama_done(line: &mut Value, usage: TokenUsage) {
    line["done"] = json!(true);
    line["done_reason"] = json!("stop");
    line["total_duration"] = json!(1_000_000);
    line["prompt_eval_count"] = json!(usage.prompt_tokens);
    line["eval_count"] = json!(usage.completion_tokens);
}

fn ollama_message(turn: &Turn, model: &str, usage: TokenUsage) -> Value {
    let mut message =
        json!({"role": "assistant", "content": turn.text.clone().unwrap_or_default()});
    if !turn.calls.is_empty() {
        message["tool_calls"] = Value::Array(ollama_calls(turn));
    }
    let mut reply = json!({
        "model": model,
        "created_at": "2025-01-01T00:00:00Z",
        "message": message,
    });
    ollama_done(&mut reply, usage);
    reply
}

/// Lines as Ollama streams them: text word by word, tool calls whole in one line, then the
/// `done` line with the counts.
fn ollama_stream(turn: &Turn, model: &str, usage: TokenUsage) -> Vec<String> {
    let line = |message: Value| json!({"model": model, "created_at": "2025-01-01T00:00:00Z", "message": message, "done": false});
    let mut lines = Vec::new();
    if let Some(text) = &turn.text {
        lines.extend(
            text_pieces(text)
                .into_iter()
                .map(|piece| line(json!({"role": "assistant", "content": piece}))),
        );
    }
    if !turn.calls.is_empty() {
        lines.push(line(
            json!({"role": "assistant", "content": "", "tool_calls": ollama_calls(turn)}),
        ));
    }
    let mut done = line(json!({"role": "assistant", "content": ""}));
    ollama_done(&mut done, usage);
    lines.push(done);
    lines.into_iter().map(|line| format!("{line}\n")).collect()
}

/// Streams the lines, each split in two pieces so clients must join lines across chunks.
fn ndjson_response(lines: Vec<String>) -> Response {
    let pieces: Vec<Result<Bytes, Infallible>> = lines
        .into_iter()
        .flat_map(|line| {
            let bytes = Bytes::from(line);
            let middle = bytes.len() / 2;
            [Ok(bytes.slice(..middle)), Ok(bytes.slice(middle..))]
        })
        .collect();
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "application/x-ndjson")
        .body(Body::from_stream(futures_util::stream::iter(pieces)))
        .expect("a valid JSON-lines response")
}
