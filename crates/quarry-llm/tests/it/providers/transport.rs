use std::time::{Duration, Instant};

use quarry_llm::{LlmError, ModelSpec, ProviderSettings, TransportConfig, build_client};
use quarry_testkit::{Reply, ScriptedServer};
use serde_json::json;

use super::{extraction_request, fast_transport, openai_client, settings};

#[tokio::test]
async fn rate_limit_with_retry_after_is_honoured() {
    let server = ScriptedServer::start();
    server.push(Reply::rate_limited(1));
    server.push(Reply::content("ok").with_usage(7, 3));
    let started = Instant::now();

    let response = openai_client(&server)
        .chat(&extraction_request())
        .await
        .unwrap();

    assert_eq!(response.attempts, 2);
    assert_eq!(response.content.as_deref(), Some("ok"));
    assert_eq!(
        (
            response.usage.prompt_tokens,
            response.usage.completion_tokens
        ),
        (7, 3)
    );
    // The backoff in the test config is 1–5 ms; only Retry-After explains a wait of ~1 s.
    assert!(started.elapsed() >= Duration::from_millis(900));
    assert!(response.latency >= Duration::from_millis(900));
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn server_errors_are_retried_and_usage_summed() {
    let server = ScriptedServer::start();
    // A failed attempt that still reports tokens (some gateways do) must be paid for.
    let costly_failure = json!({
        "error": {"message": "upstream overloaded"},
        "usage": {"prompt_tokens": 4, "completion_tokens": 0}
    });
    server.push(Reply::status(500, costly_failure.to_string()));
    server.push(Reply::status(502, "bad gateway"));
    server.push(Reply::content("ok").with_usage(10, 5));

    let response = openai_client(&server)
        .chat(&extraction_request())
        .await
        .unwrap();

    assert_eq!(response.attempts, 3);
    assert_eq!(
        (
            response.usage.prompt_tokens,
            response.usage.completion_tokens
        ),
        (14, 5)
    );
    assert_eq!(server.request_count(), 3);
    // The exact same body went out each time.
    let requests = server.requests();
    assert!(requests.iter().all(|body| *body == requests[0]));
}

#[tokio::test]
async fn persistent_failure_names_provider_url_and_status() {
    let server = ScriptedServer::start();
    for _ in 0..4 {
        server.push(Reply::status(503, r#"{"error":"model is loading"}"#));
    }
    server.push(Reply::content("never reached"));

    let err = openai_client(&server)
        .chat(&extraction_request())
        .await
        .unwrap_err();

    let LlmError::Status {
        provider,
        url,
        status,
        attempts,
        body,
    } = &err
    else {
        panic!("expected a status error, got {err:?}");
    };
    assert_eq!(provider, "openai-compatible");
    assert_eq!(*url, format!("{}/chat/completions", server.base_url()));
    assert_eq!((*status, *attempts), (503, 4));
    assert!(body.contains("model is loading"));
    let message = err.to_string();
    assert!(
        message.contains("503") && message.contains(&server.base_url()),
        "{message}"
    );
    assert_eq!(server.remaining(), 1);
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let server = ScriptedServer::start();
    server.push(Reply::status(
        400,
        r#"{"error":{"message":"'tools' is not supported by this model"}}"#,
    ));
    server.push(Reply::content("never reached"));

    let err = openai_client(&server)
        .chat(&extraction_request())
        .await
        .unwrap_err();

    assert!(
        matches!(err, LlmError::Status { status: 400, attempts: 1, ref body, .. } if body.contains("not supported")),
        "{err:?}"
    );
    assert_eq!(server.request_count(), 1);
    assert_eq!(server.remaining(), 1);
}

#[tokio::test]
async fn retry_after_beyond_the_limit_fails_at_once() {
    let server = ScriptedServer::start();
    server.push(Reply::rate_limited(3600));
    server.push(Reply::content("never reached"));
    let err = openai_client(&server)
        .chat(&extraction_request())
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            LlmError::Status {
                status: 429,
                attempts: 1,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("3600s"), "{err}");
}

#[tokio::test]
async fn provider_down_is_unreachable_naming_provider_and_url() {
    // A port that was free a moment ago: nothing listens there.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let base_url = format!("http://127.0.0.1:{port}/v1");
    let spec = ModelSpec::parse("vllm:qwen2.5-3b").unwrap();
    let client = build_client(&spec, settings(base_url.clone())).unwrap();

    let err = client.chat(&extraction_request()).await.unwrap_err();

    let LlmError::Unreachable {
        provider,
        url,
        attempts,
        ..
    } = &err
    else {
        panic!("expected Unreachable, got {err:?}");
    };
    assert_eq!(provider, "vllm");
    assert_eq!(*url, format!("{base_url}/chat/completions"));
    assert_eq!(*attempts, fast_transport().max_attempts);
    let message = err.to_string();
    assert!(
        message.contains("vllm") && message.contains(&base_url),
        "{message}"
    );
}

#[tokio::test]
async fn slow_reply_times_out_without_retry() {
    let server = ScriptedServer::start();
    server.push(Reply::content("too late").after(Duration::from_secs(3)));
    server.push(Reply::content("never reached"));
    let spec = ModelSpec::parse("openai-compatible:test-model").unwrap();
    let settings = ProviderSettings {
        transport: TransportConfig {
            request_timeout: Duration::from_millis(300),
            ..fast_transport()
        },
        ..settings(server.base_url())
    };
    let client = build_client(&spec, settings).unwrap();

    let err = client.chat(&extraction_request()).await.unwrap_err();

    assert!(
        matches!(err, LlmError::Unreachable { attempts: 1, ref reason, .. } if reason.contains("timeout")),
        "{err:?}"
    );
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn concurrency_limit_is_respected() {
    let server = ScriptedServer::start();
    for _ in 0..6 {
        server.push(Reply::content("ok").after(Duration::from_millis(100)));
    }
    let spec = ModelSpec::parse("openai-compatible:test-model").unwrap();
    let settings = ProviderSettings {
        concurrency: 2,
        ..settings(server.base_url())
    };
    let client = build_client(&spec, settings).unwrap();

    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..6 {
        let client = client.clone();
        calls.spawn(async move { client.chat(&extraction_request()).await });
    }
    while let Some(result) = calls.join_next().await {
        assert_eq!(result.unwrap().unwrap().content.as_deref(), Some("ok"));
    }

    assert_eq!(server.request_count(), 6);
    assert_eq!(server.max_concurrent(), 2);
}

#[tokio::test]
async fn unreadable_reply_is_a_bad_reply() {
    let server = ScriptedServer::start();
    server.push(Reply::Raw {
        code: 200,
        content_type: "application/json".into(),
        body: r#"{"choices": [{"message": {"content": "cut of"#.into(),
    });
    let err = openai_client(&server)
        .chat(&extraction_request())
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::BadReply { .. }), "{err:?}");
}

#[test]
fn server_and_client_work_from_a_sync_test() {
    let server = ScriptedServer::with_script([Reply::content("sync ok")]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let client = openai_client(&server);
    let response = runtime
        .block_on(client.chat(&extraction_request()))
        .unwrap();
    assert_eq!(response.content.as_deref(), Some("sync ok"));
}

#[tokio::test]
async fn truncated_stream_is_a_bad_reply_not_a_short_answer() {
    let server = ScriptedServer::start();
    let cut = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Ada was\"}}]}\n\n";
    server.push(Reply::Raw {
        code: 200,
        content_type: "text/event-stream".into(),
        body: cut.into(),
    });
    let err = openai_client(&server)
        .chat_stream(&extraction_request(), &|_| {})
        .await
        .unwrap_err();
    assert!(
        matches!(err, LlmError::BadReply { ref reason, .. } if reason.contains("stream ended")),
        "{err:?}"
    );
}

#[tokio::test]
async fn server_ignoring_stream_flag_still_works() {
    // Some compatible servers answer plain JSON to `"stream": true`.
    let server = ScriptedServer::start();
    let body = json!({"choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": "whole answer"}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2}});
    server.push(Reply::Raw {
        code: 200,
        content_type: "application/json".into(),
        body: body.to_string(),
    });
    let tokens = super::Tokens::default();
    let sink = tokens.sink();
    let response = openai_client(&server)
        .chat_stream(&extraction_request(), &sink)
        .await
        .unwrap();
    assert_eq!(tokens.all(), ["whole answer"]);
    assert_eq!(response.usage.total(), 5);
}

#[tokio::test]
async fn not_implemented_is_not_retried() {
    let server = ScriptedServer::start();
    server.push(Reply::status(
        501,
        r#"{"error":{"message":"streaming is not implemented"}}"#,
    ));
    server.push(Reply::content("never reached"));

    let err = openai_client(&server)
        .chat(&extraction_request())
        .await
        .unwrap_err();

    assert!(
        matches!(
            err,
            LlmError::Status {
                status: 501,
                attempts: 1,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(!err.is_transient());
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn context_overflow_is_its_own_error_for_each_provider() {
    let server = ScriptedServer::start();
    let cases = [
        (
            "openai-compatible:m",
            400,
            r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
        ),
        (
            "anthropic:claude-test",
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}"#,
        ),
        (
            "llamacpp:",
            400,
            r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}}"#,
        ),
        (
            "ollama:llama3.1",
            400,
            r#"{"error":"input length exceeds the context length"}"#,
        ),
    ];
    for (model, status, body) in cases {
        server.push(Reply::status(status, body));
        let spec = ModelSpec::parse(model).unwrap();
        let base = if model.starts_with("openai") || model.starts_with("llamacpp") {
            server.base_url()
        } else {
            server.anthropic_base_url()
        };
        let settings = ProviderSettings {
            api_key: Some("key".into()),
            ..settings(base)
        };
        let err = build_client(&spec, settings)
            .unwrap()
            .chat(&extraction_request())
            .await
            .unwrap_err();
        assert!(
            matches!(&err, LlmError::ContextOverflow { status: 400, body: sent, .. } if sent == body),
            "{model}: {err:?}"
        );
        assert!(!err.is_transient());
        assert!(err.to_string().contains("context window"), "{err}");
    }
    assert_eq!(server.request_count(), 4);
}
