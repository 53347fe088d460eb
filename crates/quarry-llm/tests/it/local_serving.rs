//! The embedded model as a serving engine, on the real SmolLM2 GGUF the test command installs
//! (`QUARRY_TEST_GGUF`; skipped without it, except in CI, where it must run): replies decoded
//! together equal replies decoded alone, a cached prefix equals a cold start, a cancelled reply
//! leaves the others whole, and the prefix cache keeps to its budget.

use std::sync::Arc;

use quarry_llm::local::{LocalClient, LocalModel, LocalSettings, load_unshared};
use quarry_llm::{ChatRequest, ChatResponse, LlmClient, Message, ResponseFormat};
use quarry_testkit::test_gguf;
use serde_json::json;

/// Four short texts of one kind, each a request of its own.
const TEXTS: [&str; 4] = [
    "Invoice 2024-117 from Acme Supplies Ltd to Globex Corporation. Total due: 1200 USD.",
    "Globex Corporation billed Initech 75.50 USD for printer cartridges on invoice 88.",
    "Receipt: Umbrella Logistics paid Stark Manufacturing 3,400 USD for freight.",
    "Wayne Enterprises owes Hooli Cloud Services 12 USD for storage, invoice 9.",
];

fn model(settings: LocalSettings) -> Option<Arc<LocalModel>> {
    let path = test_gguf()?;
    Some(load_unshared(&path, &settings).expect("the GGUF loads"))
}

/// A model decoding one reply at a time and keeping no prefix: every reply read cold.
fn cold_model() -> Option<Arc<LocalModel>> {
    model(LocalSettings {
        parallel: Some(1),
        cache_mib: Some(0),
        context: None,
    })
}

/// A model decoding up to four replies together and keeping no prefix between replies.
fn batched_model() -> Option<Arc<LocalModel>> {
    model(LocalSettings {
        parallel: Some(4),
        cache_mib: Some(0),
        context: None,
    })
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A constrained, grounded extraction of `text` (the kind of reply Quarry asks for most).
fn extraction(text: &str) -> ChatRequest {
    ChatRequest {
        model: "smollm2".to_owned(),
        messages: vec![
            Message::system("Extract the fields of the schema from the user's text as JSON."),
            Message::user(text),
        ],
        response_format: Some(ResponseFormat::JsonSchema {
            name: "payment".to_owned(),
            schema: json!({
                "type": "object",
                "required": ["payer", "payee", "amount"],
                "properties": {
                    "payer": {"type": "string", "description": "Who pays"},
                    "payee": {"type": "string", "description": "Who is paid"},
                    "amount": {"type": "number"}
                }
            }),
            strict: true,
        }),
        temperature: Some(0.0),
        max_tokens: Some(60),
        grounding: Some(text.to_owned()),
        ..ChatRequest::default()
    }
}

/// Free text: a reply that runs to its budget, long enough to be cancelled mid-way.
fn free_text(text: &str, max_tokens: u32) -> ChatRequest {
    let mut extra = serde_json::Map::new();
    extra.insert("ignore_eos".to_owned(), json!(true));
    ChatRequest {
        model: "smollm2".to_owned(),
        messages: vec![Message::user(format!("Summarise: {text}"))],
        temperature: Some(0.0),
        max_tokens: Some(max_tokens),
        extra,
        ..ChatRequest::default()
    }
}

fn alone(model: &Arc<LocalModel>, requests: &[ChatRequest]) -> Vec<ChatResponse> {
    let client = LocalClient::new(model.clone());
    let runtime = runtime();
    requests
        .iter()
        .map(|request| runtime.block_on(client.chat(request)).unwrap())
        .collect()
}

fn together(model: &Arc<LocalModel>, requests: &[ChatRequest]) -> Vec<ChatResponse> {
    let runtime = runtime();
    runtime.block_on(async {
        let handles: Vec<_> = requests
            .iter()
            .cloned()
            .map(|request| {
                let client = LocalClient::new(model.clone());
                tokio::spawn(async move { client.chat(&request).await.unwrap() })
            })
            .collect();
        let mut replies = Vec::new();
        for handle in handles {
            replies.push(handle.await.unwrap());
        }
        replies
    })
}

#[test]
fn replies_decoded_in_a_batch_of_four_equal_replies_decoded_alone() {
    let (Some(cold), Some(batched)) = (cold_model(), batched_model()) else {
        return;
    };
    let requests: Vec<ChatRequest> = TEXTS.iter().map(|text| extraction(text)).collect();
    let one_by_one = alone(&cold, &requests);
    let four_at_once = together(&batched, &requests);
    for ((single, batch), text) in one_by_one.iter().zip(&four_at_once).zip(TEXTS) {
        assert!(single.usage.completion_tokens > 3, "{text}: {single:?}");
        assert_eq!(single.content, batch.content, "{text}");
        assert_eq!(
            (single.usage.prompt_tokens, single.usage.completion_tokens),
            (batch.usage.prompt_tokens, batch.usage.completion_tokens),
            "{text}"
        );
    }
    // Sent at once, the replies after the first copy the system prompt they share from it
    // instead of reading it again (nothing is kept between replies: the cache budget is 0).
    let read = |replies: &[ChatResponse]| -> u64 {
        replies
            .iter()
            .map(|reply| reply.usage.prompt_tokens - reply.usage.cached_tokens())
            .sum()
    };
    assert!(read(&four_at_once) < read(&one_by_one));
}

#[test]
fn a_reply_from_a_cached_prefix_equals_a_cold_start() {
    let (Some(cold), Some(cached)) = (cold_model(), model(LocalSettings::default())) else {
        return;
    };
    let first = extraction(TEXTS[0]);
    // A retry: the conversation, the reply, and feedback after it.
    let reply = alone(&cached, std::slice::from_ref(&first)).remove(0);
    let mut retry = first.clone();
    retry.messages.push(Message::assistant(
        reply.content.clone().unwrap_or_default(),
    ));
    retry.messages.push(Message::user(
        "The amount must be the total due, as a number. Correct the JSON.",
    ));
    let warm = alone(&cached, std::slice::from_ref(&retry)).remove(0);
    let cold_reply = alone(&cold, std::slice::from_ref(&retry)).remove(0);
    assert_eq!(cold_reply.usage.cached_tokens(), 0);
    assert!(
        warm.usage.cached_tokens() >= reply.usage.prompt_tokens,
        "the retry starts after the first prompt: {:?} of {:?}",
        warm.usage,
        reply.usage
    );
    assert_eq!(warm.content, cold_reply.content);
    assert_eq!(
        warm.usage.completion_tokens,
        cold_reply.usage.completion_tokens
    );
}

#[test]
fn cancelling_one_of_four_replies_leaves_the_other_three_complete() {
    let (Some(cold), Some(batched)) = (cold_model(), batched_model()) else {
        return;
    };
    let requests: Vec<ChatRequest> = TEXTS.iter().map(|text| free_text(text, 24)).collect();
    let expected = alone(&cold, &requests[1..]);
    let runtime = runtime();
    let replies = runtime.block_on(async {
        // The first request streams; it is cancelled once its first text arrives, while the
        // other three are being decoded beside it.
        let (first_text, mut started) = tokio::sync::mpsc::unbounded_channel::<()>();
        let long = free_text(TEXTS[0], 400);
        let client = LocalClient::new(batched.clone());
        let cancelled = tokio::spawn(async move {
            let sink = move |_: &str| {
                let _ = first_text.send(());
            };
            client.chat_stream(&long, &sink).await
        });
        let others: Vec<_> = requests[1..]
            .iter()
            .cloned()
            .map(|request| {
                let client = LocalClient::new(batched.clone());
                tokio::spawn(async move { client.chat(&request).await.unwrap() })
            })
            .collect();
        started.recv().await.expect("the first reply streams");
        cancelled.abort();
        assert!(cancelled.await.unwrap_err().is_cancelled());
        let mut replies = Vec::new();
        for handle in others {
            replies.push(handle.await.unwrap());
        }
        replies
    });
    for (reply, expected) in replies.iter().zip(&expected) {
        assert_eq!(reply.finish_reason.as_deref(), Some("length"));
        assert_eq!(reply.content, expected.content);
        assert_eq!(reply.usage.completion_tokens, 24);
    }
}

#[test]
fn the_prefix_cache_stays_within_its_budget_under_fifty_prompts() {
    let budget_mib = 32;
    let Some(model) = model(LocalSettings {
        parallel: Some(2),
        cache_mib: Some(budget_mib),
        context: None,
    }) else {
        return;
    };
    let client = LocalClient::new(model.clone());
    let runtime = runtime();
    let mut kept_any = false;
    for index in 0..50 {
        let request = free_text(&format!("note {index}: {}", TEXTS[index % 4]), 2);
        runtime.block_on(client.chat(&request)).unwrap();
        let report = model.cache_report();
        assert!(
            report.bytes() <= budget_mib << 20,
            "{} bytes kept after prompt {index}",
            report.bytes()
        );
        kept_any |= report.sequences() > 0;
    }
    assert!(kept_any, "a 32 MiB budget keeps some prompts");
}

#[test]
fn a_shorter_context_setting_is_the_window_a_prompt_must_fit() {
    let Some(model) = model(LocalSettings {
        context: Some(64),
        ..LocalSettings::default()
    }) else {
        return;
    };
    assert_eq!(model.context_length(), 64);
    let client = LocalClient::new(model);
    let long = free_text(&TEXTS.join(" "), 8);
    let error = runtime().block_on(client.chat(&long)).unwrap_err();
    assert!(
        matches!(error, quarry_llm::LlmError::ContextOverflow { .. }),
        "{error}"
    );
    let short = free_text("Hi.", 4);
    let reply = runtime().block_on(client.chat(&short)).unwrap();
    assert_eq!(reply.usage.completion_tokens, 4);
}
