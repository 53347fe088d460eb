use quarry_llm::{ResponseFormat, ToolChoice};
use quarry_testkit::{Reply, ScriptedServer};
use serde_json::json;

use super::{Tokens, extraction_request, openai_client, person_schema};

#[tokio::test]
async fn tool_call_is_parsed() {
    let server = ScriptedServer::start();
    server.push(Reply::tool_call("submit", r#"{"name":"Ada Lovelace"}"#).with_usage(42, 7));
    let client = openai_client(&server);
    let mut request = extraction_request();
    request.tool_choice = Some(ToolChoice::Tool("submit".into()));

    let response = client.chat(&request).await.unwrap();

    assert_eq!(response.tool_calls.len(), 1);
    assert_eq!(response.tool_calls[0].name, "submit");
    assert_eq!(
        response.tool_calls[0].arguments,
        r#"{"name":"Ada Lovelace"}"#
    );
    assert!(!response.tool_calls[0].id.is_empty());
    assert_eq!(response.content, None);
    assert_eq!(response.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(
        (
            response.usage.prompt_tokens,
            response.usage.completion_tokens
        ),
        (42, 7)
    );
    assert_eq!(response.attempts, 1);

    let sent = &server.requests()[0];
    assert_eq!(sent["model"], "test-model");
    assert_eq!(
        sent["messages"][0],
        json!({"role": "system", "content": "Extract a person. Call submit."})
    );
    assert_eq!(sent["messages"][1]["role"], "user");
    assert_eq!(sent["tools"][0]["type"], "function");
    assert_eq!(sent["tools"][0]["function"]["parameters"], person_schema());
    assert_eq!(
        sent["tool_choice"],
        json!({"type": "function", "function": {"name": "submit"}})
    );
    assert!(sent.get("stream").is_none());
}

#[tokio::test]
async fn content_reply_is_returned_as_is() {
    let server = ScriptedServer::start();
    let prose = "Sure! Here it is:\n```json\n{\"name\": \"Ada\",}\n```\nHope that helps.";
    server.push(Reply::content(prose));
    let response = openai_client(&server)
        .chat(&extraction_request())
        .await
        .unwrap();
    assert_eq!(response.content.as_deref(), Some(prose));
    assert!(response.tool_calls.is_empty());
    assert_eq!(response.finish_reason.as_deref(), Some("stop"));
}

#[tokio::test]
async fn malformed_tool_arguments_arrive_raw() {
    // Lenient parsing is the engine's job: the client must not drop or "fix" broken arguments.
    let broken = "{name: 'Ada', born: 1815-12-10,";
    let server = ScriptedServer::start();
    server.push(Reply::tool_call("submit", broken));
    server.push(Reply::tool_call("submit", broken));
    let client = openai_client(&server);
    let plain = client.chat(&extraction_request()).await.unwrap();
    let streamed = client
        .chat_stream(&extraction_request(), &|_| {})
        .await
        .unwrap();
    assert_eq!(plain.tool_calls[0].arguments, broken);
    assert_eq!(streamed.tool_calls[0].arguments, broken);
}

#[tokio::test]
async fn schema_is_sent_verbatim_in_response_format() {
    let server = ScriptedServer::start();
    server.push(Reply::content(r#"{"name":"Ada"}"#));
    let mut request = extraction_request();
    request.tools.clear();
    request.response_format = Some(ResponseFormat::JsonSchema {
        name: "person".into(),
        schema: person_schema(),
        strict: true,
    });
    openai_client(&server).chat(&request).await.unwrap();

    let sent = &server.requests()[0];
    let expected = json!({
        "type": "json_schema",
        "json_schema": {"name": "person", "schema": person_schema(), "strict": true}
    });
    assert_eq!(sent["response_format"], expected);
    // Key order too: the schema text the server sees is the one the user wrote.
    assert_eq!(
        sent["response_format"]["json_schema"]["schema"].to_string(),
        person_schema().to_string()
    );
    assert!(sent.get("tools").is_none() && sent.get("tool_choice").is_none());
}

#[tokio::test]
async fn vendor_extra_fields_pass_through() {
    let server = ScriptedServer::start();
    server.push(Reply::content("ok"));
    let mut request = extraction_request();
    request.temperature = Some(0.2);
    request.max_tokens = Some(256);
    request
        .extra
        .insert("options".into(), json!({"num_ctx": 8192, "seed": 7}));
    request.extra.insert("guided_json".into(), person_schema());
    request.extra.insert("keep_alive".into(), json!("5m"));
    openai_client(&server).chat(&request).await.unwrap();

    let sent = &server.requests()[0];
    assert_eq!(sent["options"], json!({"num_ctx": 8192, "seed": 7}));
    assert_eq!(sent["guided_json"], person_schema());
    assert_eq!(sent["keep_alive"], "5m");
    assert_eq!(sent["temperature"], json!(0.2));
    assert_eq!(sent["max_tokens"], 256);
}

#[tokio::test]
async fn bearer_key_is_sent_only_when_given() {
    let server = ScriptedServer::start();
    server.push(Reply::content("a"));
    server.push(Reply::content("b"));
    let spec = quarry_llm::ModelSpec::parse("openai:gpt-4o-mini").unwrap();
    let keyed = quarry_llm::ProviderSettings {
        api_key: Some("sk-test".into()),
        ..super::settings(server.base_url())
    };
    let with_key = quarry_llm::build_client(&spec, keyed).unwrap();
    with_key.chat(&extraction_request()).await.unwrap();
    openai_client(&server)
        .chat(&extraction_request())
        .await
        .unwrap();

    let recorded = server.recorded();
    assert_eq!(
        recorded[0].headers.get("authorization").map(String::as_str),
        Some("Bearer sk-test")
    );
    assert_eq!(recorded[0].body["model"], "gpt-4o-mini");
    assert_eq!(recorded[0].path, "/v1/chat/completions");
    assert!(!recorded[1].headers.contains_key("authorization"));
}

#[tokio::test]
async fn streaming_delivers_tokens_in_order() {
    let server = ScriptedServer::start();
    let text = "Ada Lovelace was born in London — 10 December 1815.";
    server.push(Reply::content(text).with_usage(31, 12));
    let tokens = Tokens::default();
    let sink = tokens.sink();

    let response = openai_client(&server)
        .chat_stream(&extraction_request(), &sink)
        .await
        .unwrap();

    let tokens = tokens.all();
    assert!(tokens.len() > 3, "expected several tokens, got {tokens:?}");
    assert_eq!(tokens.concat(), text);
    assert_eq!(response.content.as_deref(), Some(text));
    assert_eq!(response.finish_reason.as_deref(), Some("stop"));
    assert_eq!(
        (
            response.usage.prompt_tokens,
            response.usage.completion_tokens
        ),
        (31, 12)
    );
    let sent = &server.requests()[0];
    assert_eq!(sent["stream"], true);
    assert_eq!(sent["stream_options"], json!({"include_usage": true}));
}

#[tokio::test]
async fn streaming_assembles_tool_calls() {
    let server = ScriptedServer::start();
    let first = r#"{"name": "Ada Lovelace", "born": "1815-12-10", "role": "mathematician"}"#;
    let second = r#"{"field": "born"}"#;
    server.push(Reply::ToolCalls(vec![
        ("submit".into(), first.into()),
        ("validate".into(), second.into()),
    ]));
    let tokens = Tokens::default();
    let sink = tokens.sink();
    let response = openai_client(&server)
        .chat_stream(&extraction_request(), &sink)
        .await
        .unwrap();

    assert!(tokens.all().is_empty());
    assert_eq!(response.content, None);
    let calls: Vec<(&str, &str)> = response
        .tool_calls
        .iter()
        .map(|call| (call.name.as_str(), call.arguments.as_str()))
        .collect();
    assert_eq!(calls, [("submit", first), ("validate", second)]);
    assert_ne!(response.tool_calls[0].id, response.tool_calls[1].id);
    assert_eq!(response.finish_reason.as_deref(), Some("tool_calls"));
}

#[tokio::test]
async fn tool_round_trip_sends_calls_and_results_back() {
    let server = ScriptedServer::start();
    server.push(Reply::tool_call("validate", r#"{"name":"Ada"}"#));
    server.push(Reply::content("done"));
    let client = openai_client(&server);
    let mut request = extraction_request();
    let first = client.chat(&request).await.unwrap();
    let call = first.tool_calls[0].clone();
    let mut assistant = quarry_llm::Message::assistant("");
    assistant.content = None;
    assistant.tool_calls = vec![call.clone()];
    request.messages.push(assistant);
    request
        .messages
        .push(quarry_llm::Message::tool_result(&call.id, "valid"));
    client.chat(&request).await.unwrap();

    let sent = &server.requests()[1];
    assert_eq!(
        sent["messages"][2],
        json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": call.id, "type": "function",
            "function": {"name": "validate", "arguments": "{\"name\":\"Ada\"}"}}]})
    );
    assert_eq!(
        sent["messages"][3],
        json!({"role": "tool", "content": "valid", "tool_call_id": call.id})
    );
}

#[tokio::test]
async fn per_model_scripts_answer_by_model() {
    let server = ScriptedServer::start();
    server.push_for_model("model-a", Reply::content("from a"));
    server.push_for_model("model-b", Reply::content("from b"));
    server.push(Reply::content("shared"));
    let client = openai_client(&server);
    let ask = |model: &str| {
        let mut request = extraction_request();
        request.model = model.into();
        request
    };
    let b = client.chat(&ask("model-b")).await.unwrap();
    let a = client.chat(&ask("model-a")).await.unwrap();
    let a_again = client.chat(&ask("model-a")).await.unwrap();
    assert_eq!(b.content.as_deref(), Some("from b"));
    assert_eq!(a.content.as_deref(), Some("from a"));
    assert_eq!(a_again.content.as_deref(), Some("shared"));
    assert_eq!(server.remaining(), 0);
}
