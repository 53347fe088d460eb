//! The embeddings client against a local server speaking the OpenAI-compatible embeddings API.

use std::time::Duration;

use quarry_llm::{
    EmbeddingsClient, LlmError, ModelSpec, ProviderSettings, TransportConfig, build_embedder,
};
use quarry_testkit::{DEFAULT_EMBEDDING_DIMENSIONS, Reply, ScriptedServer, fake_embedding};
use serde_json::json;

/// Retries without waiting, so failure paths run in milliseconds.
fn fast_transport() -> TransportConfig {
    TransportConfig {
        connect_timeout: Duration::from_secs(2),
        request_timeout: Duration::from_secs(10),
        read_timeout: Duration::from_secs(10),
        max_attempts: 3,
        backoff_base: Duration::from_millis(1),
        backoff_max: Duration::from_millis(5),
        retry_after_max: Duration::from_secs(5),
    }
}

fn client(server: &ScriptedServer) -> EmbeddingsClient {
    let spec = ModelSpec::parse("vllm:all-minilm").unwrap();
    let settings = ProviderSettings {
        base_url: Some(server.base_url()),
        api_key: Some("sk-embed".into()),
        transport: fast_transport(),
        ..ProviderSettings::default()
    };
    build_embedder(&spec, settings).unwrap()
}

#[tokio::test]
async fn vectors_come_back_in_input_order_whatever_the_reply_order() {
    let server = ScriptedServer::start();
    server.reverse_embeddings(true);
    let client = client(&server);
    let texts = ["alpha", "beta", "gamma", "delta"];
    let embeddings = client.embed_with_usage(&texts).await.unwrap();
    let expected: Vec<Vec<f32>> = texts
        .iter()
        .map(|text| fake_embedding(text, DEFAULT_EMBEDDING_DIMENSIONS))
        .collect();
    assert_eq!(embeddings.vectors, expected);
    assert_eq!(embeddings.attempts, 1);
    assert_eq!(embeddings.usage.prompt_tokens, 4);
    assert_eq!(client.model(), "all-minilm");

    let recorded = server.recorded();
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].path, "/v1/embeddings");
    assert_eq!(recorded[0].headers["authorization"], "Bearer sk-embed");
    assert_eq!(
        recorded[0].body,
        json!({"model": "all-minilm", "input": ["alpha", "beta", "gamma", "delta"]})
    );
    // The chat script is untouched.
    assert_eq!(server.remaining(), 0);
}

#[tokio::test]
async fn inputs_are_sent_in_batches() {
    let server = ScriptedServer::start();
    server.set_embedding_dimensions(3);
    let client = client(&server);
    assert_eq!(client.batch_size(), 64);
    let texts: Vec<String> = (0..130).map(|i| format!("text number {i}")).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = client.embed(&refs).await.unwrap();
    assert_eq!(vectors.len(), 130);
    for (text, vector) in texts.iter().zip(&vectors) {
        assert_eq!(vector, &fake_embedding(text, 3));
    }
    let sizes: Vec<usize> = server
        .requests()
        .iter()
        .map(|body| body["input"].as_array().unwrap().len())
        .collect();
    assert_eq!(sizes, vec![64, 64, 2]);
    assert_eq!(
        server.requests()[2]["input"],
        json!(["text number 128", "text number 129"])
    );

    let small = client.with_batch_size(50);
    small.embed(&refs[..120]).await.unwrap();
    assert_eq!(server.request_count(), 3 + 3);
}

#[tokio::test]
async fn no_texts_no_request() {
    let server = ScriptedServer::start();
    let vectors = client(&server).embed(&[]).await.unwrap();
    assert!(vectors.is_empty());
    assert_eq!(server.request_count(), 0);
}

#[tokio::test]
async fn error_status_names_provider_url_and_status() {
    let server = ScriptedServer::start();
    server.push_embeddings(Reply::status(
        404,
        json!({"error": {"message": "model 'all-minilm' not found"}}).to_string(),
    ));
    let client = client(&server);
    let err = client.embed(&["hello"]).await.unwrap_err();
    let url = format!("{}/embeddings", server.base_url());
    match &err {
        LlmError::Status {
            provider,
            url: at,
            status,
            attempts,
            body,
        } => {
            assert_eq!(provider, "vllm");
            assert_eq!(at, &url);
            assert_eq!(*status, 404);
            assert_eq!(*attempts, 1, "a 404 is not retried");
            assert!(body.contains("not found"), "{body}");
        }
        other => panic!("expected a status error, got {other:?}"),
    }
    let message = err.to_string();
    assert!(
        message.contains(&url) && message.contains("404"),
        "{message}"
    );
}

#[tokio::test]
async fn server_errors_are_retried() {
    let server = ScriptedServer::start();
    server.push_embeddings(Reply::status(503, "overloaded"));
    server.push_embeddings(Reply::rate_limited(0));
    let embeddings = client(&server)
        .embed_with_usage(&["a b", "c"])
        .await
        .unwrap();
    assert_eq!(embeddings.attempts, 3);
    assert_eq!(embeddings.vectors.len(), 2);
    assert_eq!(server.request_count(), 3);
}

/// Every embeddings request is counted in the process-wide metrics, apart from chat calls: a
/// batch retried after a 503, a second batch, and a refused one.
#[tokio::test]
async fn embeddings_requests_are_counted_apart_from_chat() {
    use quarry_llm::metrics::{ModelCounts, Operation, snapshot};

    let server = ScriptedServer::start();
    let spec = ModelSpec::parse("vllm:metrics-embedder").unwrap();
    let settings = ProviderSettings {
        base_url: Some(server.base_url()),
        transport: fast_transport(),
        ..ProviderSettings::default()
    };
    let client = build_embedder(&spec, settings).unwrap().with_batch_size(2);
    server.push_embeddings(Reply::status(503, "overloaded"));
    client.embed(&["one", "two words", "three"]).await.unwrap();
    server.push_embeddings(Reply::status(400, "bad input"));
    client.embed(&["refused"]).await.unwrap_err();

    let counted: Vec<_> = snapshot()
        .into_iter()
        .filter(|series| series.provider == "vllm" && series.model == "metrics-embedder")
        .collect();
    assert_eq!(counted.len(), 1, "{counted:?}");
    assert_eq!(counted[0].operation, Operation::Embeddings);
    assert_eq!(
        counted[0].counts,
        ModelCounts {
            requests: 3,
            failures: 1,
            retries: 1,
            prompt_tokens: 1 + 2 + 1,
            completion_tokens: 0,
        }
    );
}

#[tokio::test]
async fn a_reply_with_the_wrong_count_is_a_bad_reply() {
    let server = ScriptedServer::start();
    server.push_embeddings(Reply::Raw {
        code: 200,
        content_type: "application/json".into(),
        body: json!({"data": [{"index": 0, "embedding": [0.5, 0.25]}]}).to_string(),
    });
    let err = client(&server).embed(&["one", "two"]).await.unwrap_err();
    match &err {
        LlmError::BadReply { url, reason, .. } => {
            assert!(url.ends_with("/v1/embeddings"), "{url}");
            assert!(reason.contains("1 embeddings for 2 inputs"), "{reason}");
        }
        other => panic!("expected a bad reply, got {other:?}"),
    }
}

#[tokio::test]
async fn anthropic_specs_cannot_embed() {
    let spec = ModelSpec::parse("anthropic:claude-sonnet-4-5").unwrap();
    let settings = ProviderSettings {
        api_key: Some("sk-ant".into()),
        ..ProviderSettings::default()
    };
    let err = build_embedder(&spec, settings).unwrap_err();
    assert!(
        err.to_string().contains("Anthropic has no embeddings API"),
        "{err}"
    );
}

#[tokio::test]
async fn azure_deployments_embed_at_their_url_with_api_key() {
    let server = ScriptedServer::start();
    let spec = ModelSpec::parse("azure:embed-3-small").unwrap();
    let settings = ProviderSettings {
        host: Some(server.anthropic_base_url()),
        api_key: Some("azure-key".into()),
        transport: fast_transport(),
        ..ProviderSettings::default()
    };
    let client = build_embedder(&spec, settings).unwrap();

    let vectors = client.embed(&["alpha"]).await.unwrap();

    assert_eq!(
        vectors,
        [fake_embedding("alpha", DEFAULT_EMBEDDING_DIMENSIONS)]
    );
    let recorded = &server.recorded()[0];
    assert_eq!(
        recorded.path,
        "/openai/deployments/embed-3-small/embeddings"
    );
    assert_eq!(recorded.query, "api-version=2024-10-21");
    assert_eq!(recorded.headers["api-key"], "azure-key");
    assert!(!recorded.headers.contains_key("authorization"));
}
