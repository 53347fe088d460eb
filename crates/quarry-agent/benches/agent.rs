//! The schema agent's own cost, apart from the model's:
//! 1. overhead per extraction (prompt build, parse, coerce, validate, ground) with an in-memory
//!    model that answers at once — one at a time, and 64 concurrent;
//! 2. extractions/s at 64 concurrent through the real OpenAI-compatible client over loopback HTTP
//!    to a zero-latency scripted server;
//! 3. wall time for 1,000 documents at concurrency 64 with 200 ms model latency, against the
//!    ideal 1000/64 × 200 ms.
//!
//! Run: `cargo bench -p quarry-agent --bench agent` (add `-- --quick` for a shorter run).

use std::sync::Arc;
use std::time::{Duration, Instant};

use quarry_agent::{Extractor, ExtractorConfig, Schema};
use quarry_llm::{
    BoxFuture, ChatRequest, ChatResponse, Endpoint, LlmClient, LlmError, OpenAiClient, TokenSink,
    ToolCall, TransportConfig, Usage,
};
use quarry_testkit::{Reply, ScriptedServer};

const SCHEMA: &str = r#"{"type": "object", "required": ["vendor", "total"], "properties": {
    "vendor": {"type": "string"}, "total": {"type": "number"},
    "issued": {"type": ["string", "null"], "format": "date"},
    "email": {"type": ["string", "null"], "format": "email"}}}"#;

const ANSWER: &str = r#"{"vendor": "Acme Supplies Ltd", "total": 1200, "issued": "2024-01-15", "email": "billing@acme.example"}"#;

/// A realistic invoice e-mail of about 1.5 KB.
fn document() -> String {
    let mut text = String::from(
        "Hello team,\n\nPlease find attached the invoice from Acme Supplies Ltd dated \
         15 January 2024. Total due: $1,200.00, payable within 30 days. Questions go to \
         billing@acme.example.\n\n",
    );
    while text.len() < 1500 {
        text.push_str(
            "The delivery included the replacement parts we discussed on the call, and the \
             warranty terms are unchanged from the previous order. ",
        );
    }
    text
}

/// A model that answers every request at once with the same grounded submission.
struct InstantModel;

impl LlmClient for InstantModel {
    fn chat<'a>(&'a self, _: &'a ChatRequest) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async {
            Ok(ChatResponse {
                content: None,
                tool_calls: vec![ToolCall {
                    id: "call_1".to_owned(),
                    name: "submit".to_owned(),
                    arguments: ANSWER.to_owned(),
                }],
                finish_reason: Some("tool_calls".to_owned()),
                usage: Usage {
                    prompt_tokens: 400,
                    completion_tokens: 40,
                    ..Usage::default()
                },
                latency: Duration::ZERO,
                attempts: 1,
            })
        })
    }

    fn chat_stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        _: TokenSink<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        self.chat(request)
    }

    fn describe(&self) -> String {
        "instant:bench".to_owned()
    }
}

fn http_extractor(server: &ScriptedServer, concurrency: usize) -> Extractor {
    let endpoint = Endpoint {
        provider: "openai-compatible".to_owned(),
        base_url: server.base_url(),
        model: "bench".to_owned(),
        api_key: None,
    };
    let client = OpenAiClient::new(endpoint, TransportConfig::default(), concurrency)
        .expect("the client builds");
    Extractor::new(Arc::new(client), "bench", ExtractorConfig::default())
}

/// Runs `documents` extractions, at most `concurrency` at once; returns the wall time.
async fn run_batch(
    extractor: Arc<Extractor>,
    schema: Arc<Schema>,
    text: Arc<String>,
    documents: usize,
    concurrency: usize,
) -> Duration {
    let started = Instant::now();
    let semaphore = Arc::new(tokio::sync::Semaphore::new(concurrency));
    let mut tasks = Vec::with_capacity(documents);
    for _ in 0..documents {
        let permit = semaphore
            .clone()
            .acquire_owned()
            .await
            .expect("the semaphore is open");
        let (extractor, schema, text) = (extractor.clone(), schema.clone(), text.clone());
        tasks.push(tokio::spawn(async move {
            let extraction = extractor
                .extract(&schema, &text, &[])
                .await
                .expect("extraction succeeds");
            assert!(extraction.is_complete(), "{:?}", extraction.outcome);
            drop(permit);
        }));
    }
    for task in tasks {
        task.await.expect("the task finishes");
    }
    started.elapsed()
}

fn main() {
    let quick = std::env::args().any(|arg| arg == "--quick");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let schema = Arc::new(Schema::parse(SCHEMA).expect("the bench schema is valid"));
    let text = Arc::new(document());

    // 1. Overhead with an in-memory model.
    let instant = Arc::new(Extractor::new(
        Arc::new(InstantModel),
        "bench",
        ExtractorConfig::default(),
    ));
    let sequential = if quick { 500 } else { 5_000 };
    runtime.block_on(run_batch(
        instant.clone(),
        schema.clone(),
        text.clone(),
        100,
        1,
    ));
    let elapsed = runtime.block_on(run_batch(
        instant.clone(),
        schema.clone(),
        text.clone(),
        sequential,
        1,
    ));
    println!(
        "engine overhead, in-memory model, one at a time: {:.1} µs per extraction ({} extractions)",
        elapsed.as_secs_f64() * 1e6 / sequential as f64,
        sequential
    );
    let elapsed = runtime.block_on(run_batch(
        instant,
        schema.clone(),
        text.clone(),
        sequential,
        64,
    ));
    println!(
        "engine, in-memory model, 64 concurrent: {:.0} extractions/s",
        sequential as f64 / elapsed.as_secs_f64()
    );

    // 2. Through the real client over loopback HTTP, zero model latency.
    let documents = if quick { 500 } else { 2_000 };
    let server = ScriptedServer::start();
    for _ in 0..documents + 64 {
        server.push(Reply::tool_call("submit", ANSWER));
    }
    let extractor = Arc::new(http_extractor(&server, 64));
    runtime.block_on(run_batch(
        extractor.clone(),
        schema.clone(),
        text.clone(),
        64,
        64,
    ));
    let elapsed = runtime.block_on(run_batch(
        extractor,
        schema.clone(),
        text.clone(),
        documents,
        64,
    ));
    println!(
        "OpenAI-compatible client over loopback, zero latency, 64 concurrent: {:.0} extractions/s ({:.0} µs each)",
        documents as f64 / elapsed.as_secs_f64(),
        elapsed.as_secs_f64() * 1e6 / documents as f64
    );

    // 3. 1,000 documents at 200 ms model latency, concurrency 64.
    let documents = 1_000;
    let latency = Duration::from_millis(200);
    let server = ScriptedServer::start();
    for _ in 0..documents {
        server.push(Reply::tool_call("submit", ANSWER).after(latency));
    }
    let extractor = Arc::new(http_extractor(&server, 64));
    let elapsed = runtime.block_on(run_batch(extractor, schema, text, documents, 64));
    let ideal = latency.as_secs_f64() * documents as f64 / 64.0;
    println!(
        "1,000 documents, 200 ms latency, concurrency 64: {:.2} s wall vs {:.2} s ideal (1000/64 × 200 ms): {:+.1} %",
        elapsed.as_secs_f64(),
        ideal,
        (elapsed.as_secs_f64() / ideal - 1.0) * 100.0
    );
}
