//! Custom headers (`--header`, `QUARRY_HEADERS`) reach every provider, over its own.

use quarry_llm::{LlmError, ModelSpec, ProviderSettings, build_client, build_embedder};
use quarry_testkit::{Reply, ScriptedServer};

use super::{extraction_request, fast_transport};

fn with_headers(base_url: Option<String>, host: Option<String>) -> ProviderSettings {
    ProviderSettings {
        base_url,
        host,
        api_key: Some("key".into()),
        headers: vec![
            ("X-Gateway-Team".into(), "extraction".into()),
            ("anthropic-version".into(), "2099-01-01".into()),
        ],
        transport: fast_transport(),
        ..ProviderSettings::default()
    }
}

#[tokio::test]
async fn custom_headers_reach_every_provider() {
    let server = ScriptedServer::start();
    let host = server.anthropic_base_url();
    let cases = [
        (
            "openai-compatible:m",
            with_headers(Some(server.base_url()), None),
        ),
        (
            "anthropic:claude-test",
            with_headers(Some(host.clone()), None),
        ),
        ("ollama:llama3.1", with_headers(None, Some(host.clone()))),
        ("azure:dep", with_headers(None, Some(host.clone()))),
    ];
    for (model, settings) in cases {
        server.push(Reply::content("ok"));
        let spec = ModelSpec::parse(model).unwrap();
        build_client(&spec, settings)
            .unwrap()
            .chat(&extraction_request())
            .await
            .unwrap();
    }
    let embedder = build_embedder(
        &ModelSpec::parse("openai-compatible:e5").unwrap(),
        with_headers(Some(server.base_url()), None),
    )
    .unwrap();
    embedder.embed(&["a"]).await.unwrap();

    let recorded = server.recorded();
    assert_eq!(recorded.len(), 5);
    for request in &recorded {
        assert_eq!(
            request.headers["x-gateway-team"], "extraction",
            "{}",
            request.path
        );
    }
    // A custom header wins over the provider's own.
    assert_eq!(recorded[1].headers["anthropic-version"], "2099-01-01");
}

#[test]
fn an_invalid_header_is_named() {
    let spec = ModelSpec::parse("openai-compatible:m").unwrap();
    let settings = ProviderSettings {
        base_url: Some("http://127.0.0.1:9/v1".into()),
        headers: vec![("Bad Name".into(), "v".into())],
        ..ProviderSettings::default()
    };
    let err = build_client(&spec, settings).err().unwrap();
    assert!(
        matches!(&err, LlmError::Misconfigured { reason, .. } if reason.contains("'Bad Name'")),
        "{err:?}"
    );
}
