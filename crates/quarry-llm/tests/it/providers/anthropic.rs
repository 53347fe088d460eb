use quarry_llm::{LlmError, Message, ToolChoice};
use quarry_testkit::{Reply, ScriptedServer};
use serde_json::json;

use super::{Tokens, anthropic_client, extraction_request, person_schema};

#[tokio::test]
async fn tool_use_round_trip() {
    let server = ScriptedServer::start();
    server.push(Reply::tool_call("submit", r#"{"name":"Ada Lovelace"}"#).with_usage(50, 9));
    server.push(Reply::content("Submitted."));
    let client = anthropic_client(&server);
    let mut request = extraction_request();
    request.tool_choice = Some(ToolChoice::Tool("submit".into()));

    let first = client.chat(&request).await.unwrap();
    assert_eq!(first.tool_calls.len(), 1);
    let call = first.tool_calls[0].clone();
    assert_eq!(call.name, "submit");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&call.arguments).unwrap(),
        json!({"name": "Ada Lovelace"})
    );
    assert_eq!(first.finish_reason.as_deref(), Some("tool_use"));
    assert_eq!(
        (first.usage.prompt_tokens, first.usage.completion_tokens),
        (50, 9)
    );

    let mut assistant = Message::assistant("");
    assistant.content = None;
    assistant.tool_calls = vec![call.clone()];
    request.messages.push(assistant);
    request
        .messages
        .push(Message::tool_result(&call.id, "accepted"));
    let second = client.chat(&request).await.unwrap();
    assert_eq!(second.content.as_deref(), Some("Submitted."));

    let recorded = server.recorded();
    assert_eq!(recorded[0].path, "/v1/messages");
    assert_eq!(recorded[0].headers["x-api-key"], "sk-ant-test");
    assert_eq!(recorded[0].headers["anthropic-version"], "2023-06-01");
    let sent = &recorded[1].body;
    assert_eq!(sent["model"], "claude-test");
    assert_eq!(sent["max_tokens"], 4096);
    assert_eq!(sent["system"], "Extract a person. Call submit.");
    assert_eq!(sent["tools"][0]["input_schema"], person_schema());
    assert_eq!(
        sent["tool_choice"],
        json!({"type": "tool", "name": "submit"})
    );
    assert_eq!(
        sent["messages"],
        json!([
            {"role": "user", "content": [
                {"type": "text", "text": "Ada Lovelace, born 1815-12-10, mathematician."}]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": call.id, "name": "submit",
                 "input": {"name": "Ada Lovelace"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": call.id, "content": "accepted"}]}
        ])
    );
}

#[tokio::test]
async fn streaming_text_and_tool_use() {
    let server = ScriptedServer::start();
    let text = "Looking at the text, Ada was born in 1815.";
    let arguments = r#"{"name": "Ada Lovelace", "born": "1815-12-10"}"#;
    server.push(Reply::content(text).with_usage(20, 11));
    server.push(Reply::tool_call("submit", arguments));
    let client = anthropic_client(&server);

    let tokens = Tokens::default();
    let sink = tokens.sink();
    let prose = client
        .chat_stream(&extraction_request(), &sink)
        .await
        .unwrap();
    assert!(tokens.all().len() > 3, "{:?}", tokens.all());
    assert_eq!(tokens.all().concat(), text);
    assert_eq!(prose.content.as_deref(), Some(text));
    assert_eq!(prose.finish_reason.as_deref(), Some("end_turn"));
    assert_eq!(
        (prose.usage.prompt_tokens, prose.usage.completion_tokens),
        (20, 11)
    );

    let called = client
        .chat_stream(&extraction_request(), &|_| {})
        .await
        .unwrap();
    assert_eq!(called.tool_calls.len(), 1);
    assert_eq!(called.tool_calls[0].name, "submit");
    assert_eq!(called.tool_calls[0].arguments, arguments);
    assert_eq!(called.finish_reason.as_deref(), Some("tool_use"));
    assert_eq!(server.requests()[1]["stream"], true);
}

#[tokio::test]
async fn overloaded_is_retried_and_bad_request_is_not() {
    let server = ScriptedServer::start();
    let overloaded =
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    server.push(Reply::status(529, overloaded));
    server.push(Reply::content("ok"));
    server.push(Reply::status(
        400,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens too large"}}"#,
    ));
    let client = anthropic_client(&server);

    let ok = client.chat(&extraction_request()).await.unwrap();
    assert_eq!(ok.attempts, 2);
    let err = client.chat(&extraction_request()).await.unwrap_err();
    assert!(
        matches!(err, LlmError::Status { status: 400, attempts: 1, ref provider, .. } if provider == "anthropic"),
        "{err:?}"
    );
    assert!(err.to_string().contains("/v1/messages"), "{err}");
}
