//! Ollama's native API (`ollama:` model strings): `/api/chat`, `format`, `options`, JSON lines.

use std::sync::Arc;

use quarry_llm::{
    LlmClient, LlmError, Message, ModelSpec, ProviderSettings, ResponseFormat, StructuredOutput,
    ToolChoice, build_client,
};
use quarry_testkit::{Reply, ScriptedServer};
use serde_json::json;

use super::{Tokens, extraction_request, fast_transport, person_schema};

/// A client found through `OLLAMA_HOST`'s value, as the CLI passes it.
fn ollama_client(server: &ScriptedServer) -> Arc<dyn LlmClient> {
    let spec = ModelSpec::parse("ollama:llama3.1:8b").unwrap();
    let settings = ProviderSettings {
        host: Some(server.addr().to_string()),
        transport: fast_transport(),
        ..ProviderSettings::default()
    };
    build_client(&spec, settings).unwrap()
}

#[tokio::test]
async fn schema_goes_in_format_and_settings_in_options() {
    let server = ScriptedServer::start();
    let reply = r#"{"name":"Ada Lovelace","born":"1815-12-10","role":"mathematician"}"#;
    server.push(Reply::content(reply).with_usage(31, 12));
    let client = ollama_client(&server);
    assert_eq!(client.structured_output(), StructuredOutput::OllamaFormat);
    let mut request = extraction_request();
    request.tools.clear();
    request.temperature = Some(0.2);
    request.max_tokens = Some(512);
    // Vendor options join the ones the client sets (and win on a shared key).
    request.extra.insert(
        "options".into(),
        json!({"num_ctx": 8192, "temperature": 0.1}),
    );
    request.extra.insert("keep_alive".into(), json!("5m"));
    request.response_format = Some(ResponseFormat::JsonSchema {
        name: "person".into(),
        schema: person_schema(),
        strict: true,
    });

    let response = client.chat(&request).await.unwrap();

    assert_eq!(response.content.as_deref(), Some(reply));
    assert_eq!(
        (
            response.usage.prompt_tokens,
            response.usage.completion_tokens
        ),
        (31, 12)
    );
    assert_eq!(response.finish_reason.as_deref(), Some("stop"));
    let recorded = &server.recorded()[0];
    assert_eq!(recorded.path, "/api/chat");
    assert!(!recorded.headers.contains_key("authorization"));
    assert_eq!(
        recorded.body,
        json!({
            "model": "llama3.1:8b",
            "messages": [
                {"role": "system", "content": "Extract a person. Call submit."},
                {"role": "user", "content": "Ada Lovelace, born 1815-12-10, mathematician."}
            ],
            "format": person_schema(),
            "options": {"temperature": 0.1, "num_predict": 512, "num_ctx": 8192},
            "keep_alive": "5m",
            "stream": false
        })
    );
}

#[tokio::test]
async fn json_lines_stream_is_assembled() {
    let server = ScriptedServer::start();
    let text = "Ada Lovelace was born in 1815.";
    server.push(Reply::content(text).with_usage(20, 9));
    server.push(Reply::tool_call("submit", r#"{"name":"Ada"}"#));
    let client = ollama_client(&server);

    let tokens = Tokens::default();
    let sink = tokens.sink();
    let prose = client
        .chat_stream(&extraction_request(), &sink)
        .await
        .unwrap();
    assert!(tokens.all().len() > 3, "{:?}", tokens.all());
    assert_eq!(tokens.all().concat(), text);
    assert_eq!(prose.content.as_deref(), Some(text));
    assert_eq!(
        (prose.usage.prompt_tokens, prose.usage.completion_tokens),
        (20, 9)
    );

    let called = client
        .chat_stream(&extraction_request(), &|_| {})
        .await
        .unwrap();
    assert_eq!(called.tool_calls.len(), 1);
    assert_eq!(called.tool_calls[0].name, "submit");
    assert_eq!(called.tool_calls[0].arguments, r#"{"name":"Ada"}"#);
    assert_eq!(server.requests()[0]["stream"], true);
}

#[tokio::test]
async fn tool_round_trip_names_the_tool_in_the_result() {
    let server = ScriptedServer::start();
    server.push(Reply::tool_call("submit", r#"{"name":"Ada Lovelace"}"#));
    server.push(Reply::content("Submitted."));
    let client = ollama_client(&server);
    let mut request = extraction_request();
    request.tool_choice = Some(ToolChoice::Auto);

    let first = client.chat(&request).await.unwrap();
    let call = first.tool_calls[0].clone();
    assert_eq!(call.arguments, r#"{"name":"Ada Lovelace"}"#);
    let mut assistant = Message::assistant("");
    assistant.content = None;
    assistant.tool_calls = vec![call.clone()];
    request.messages.push(assistant);
    request
        .messages
        .push(Message::tool_result(&call.id, "ACCEPTED"));
    let second = client.chat(&request).await.unwrap();
    assert_eq!(second.content.as_deref(), Some("Submitted."));

    let sent = &server.requests()[1];
    assert_eq!(sent["tools"][0]["function"]["parameters"], person_schema());
    assert!(sent.get("tool_choice").is_none());
    assert_eq!(
        sent["messages"][2],
        json!({"role": "assistant", "content": "",
               "tool_calls": [{"function": {"name": "submit", "arguments": {"name": "Ada Lovelace"}}}]})
    );
    assert_eq!(
        sent["messages"][3],
        json!({"role": "tool", "content": "ACCEPTED", "tool_name": "submit"})
    );
}

#[tokio::test]
async fn a_v1_base_url_still_reaches_the_native_api() {
    let server = ScriptedServer::start();
    server.push(Reply::content("ok"));
    let spec = ModelSpec::parse("ollama:llama3.1").unwrap();
    let client = build_client(&spec, super::settings(server.base_url())).unwrap();
    client.chat(&extraction_request()).await.unwrap();
    assert_eq!(server.recorded()[0].path, "/api/chat");
}

#[tokio::test]
async fn error_body_names_provider_and_url() {
    let server = ScriptedServer::start();
    server.push(Reply::status(
        404,
        r#"{"error":"model \"llama3.1:8b\" not found, try pulling it first"}"#,
    ));
    let err = ollama_client(&server)
        .chat(&extraction_request())
        .await
        .unwrap_err();
    let message = err.to_string();
    assert!(
        matches!(
            err,
            LlmError::Status {
                status: 404,
                attempts: 1,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        message.contains("ollama")
            && message.contains("/api/chat")
            && message.contains("try pulling"),
        "{message}"
    );
}
