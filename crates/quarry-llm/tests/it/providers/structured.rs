//! Native structured output per provider: the exact request each sends for a JSON Schema
//! response format, the reply mapped back, and the fallback when a server refuses it.

use quarry_llm::{
    ChatRequest, LlmError, Message, ModelSpec, ProviderSettings, ResponseFormat, StructuredOutput,
    build_client,
};
use quarry_testkit::{Reply, ScriptedServer};
use serde_json::{Value, json};

use super::{anthropic_client, settings};

/// A user schema with optional fields, a `$ref`, keywords strict mode does not enforce and a
/// vendor key.
fn invoice_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "Line": {
                "type": "object",
                "properties": {"sku": {"type": "string"}, "note": {"type": "string"}},
                "required": ["sku"]
            }
        },
        "properties": {
            "number": {"type": "string", "minLength": 3, "x-grounding": "exact"},
            "total": {"type": "number", "minimum": 0},
            "due": {"type": "string", "format": "date"},
            "lines": {"type": "array", "items": {"$ref": "#/$defs/Line"}, "uniqueItems": true}
        },
        "required": ["number", "total"]
    })
}

/// What OpenAI's strict mode receives for [`invoice_schema`].
fn invoice_schema_strict() -> Value {
    json!({
        "type": "object",
        "$defs": {
            "Line": {
                "type": "object",
                "properties": {"sku": {"type": "string"}, "note": {"type": ["string", "null"]}},
                "required": ["sku", "note"],
                "additionalProperties": false
            }
        },
        "properties": {
            "number": {"type": "string", "description": "Also: minLength 3."},
            "total": {"type": "number", "minimum": 0},
            "due": {"type": ["string", "null"], "format": "date"},
            "lines": {"type": ["array", "null"], "items": {"$ref": "#/$defs/Line"},
                      "description": "Also: uniqueItems true."}
        },
        "required": ["number", "total", "due", "lines"],
        "additionalProperties": false
    })
}

fn invoice_request() -> ChatRequest {
    ChatRequest {
        messages: vec![
            Message::system("Extract the invoice."),
            Message::user("Invoice INV-7, total 12.50, one line: SKU A."),
        ],
        response_format: Some(ResponseFormat::JsonSchema {
            name: "invoice (v2)".into(),
            schema: invoice_schema(),
            strict: true,
        }),
        ..ChatRequest::default()
    }
}

/// A strict reply: every property present, `null` for the optional ones the text lacks.
const STRICT_REPLY: &str =
    r#"{"number":"INV-7","total":12.5,"due":null,"lines":[{"sku":"A","note":null}]}"#;

fn restored_reply() -> Value {
    json!({"number": "INV-7", "total": 12.5, "lines": [{"sku": "A"}]})
}

fn content_json(content: Option<&str>) -> Value {
    serde_json::from_str(content.expect("content")).expect("JSON content")
}

fn keyed(base_url: String, key: &str) -> ProviderSettings {
    ProviderSettings {
        api_key: Some(key.into()),
        ..settings(base_url)
    }
}

#[tokio::test]
async fn openai_sends_the_strict_subset_and_maps_the_reply_back() {
    let server = ScriptedServer::start();
    server.push(Reply::content(STRICT_REPLY));
    server.push(Reply::content(STRICT_REPLY));
    let spec = ModelSpec::parse("openai:gpt-4o-mini").unwrap();
    let client = build_client(&spec, keyed(server.base_url(), "sk-test")).unwrap();
    assert_eq!(
        client.structured_output(),
        StructuredOutput::StrictJsonSchema
    );

    let response = client.chat(&invoice_request()).await.unwrap();
    assert_eq!(content_json(response.content.as_deref()), restored_reply());
    let streamed = client
        .chat_stream(&invoice_request(), &|_| {})
        .await
        .unwrap();
    assert_eq!(content_json(streamed.content.as_deref()), restored_reply());

    let recorded = server.recorded();
    assert_eq!(recorded[0].path, "/v1/chat/completions");
    assert_eq!(recorded[0].headers["authorization"], "Bearer sk-test");
    assert_eq!(
        recorded[0].body["response_format"],
        json!({
            "type": "json_schema",
            "json_schema": {"name": "invoice__v2_", "schema": invoice_schema_strict(), "strict": true}
        })
    );
    assert!(recorded[0].body.get("tools").is_none());
    assert_eq!(
        recorded[1].body["response_format"],
        recorded[0].body["response_format"]
    );
}

#[tokio::test]
async fn openai_sends_a_schema_strict_mode_cannot_express_as_it_is() {
    let server = ScriptedServer::start();
    server.push(Reply::content(r#"{"meta":{"a":1},"note":null}"#));
    let spec = ModelSpec::parse("openai:gpt-4o-mini").unwrap();
    let client = build_client(&spec, keyed(server.base_url(), "sk-test")).unwrap();
    let free_form = json!({"type": "object", "properties": {
        "meta": {"type": "object"}, "note": {"type": "string"}}});
    let mut request = invoice_request();
    request.response_format = Some(ResponseFormat::JsonSchema {
        name: "free".into(),
        schema: free_form.clone(),
        strict: true,
    });

    let response = client.chat(&request).await.unwrap();

    // Not rewritten, so not mapped back either.
    assert_eq!(
        content_json(response.content.as_deref()),
        json!({"meta": {"a": 1}, "note": null})
    );
    assert_eq!(
        server.requests()[0]["response_format"]["json_schema"],
        json!({"name": "free", "schema": free_form, "strict": false})
    );
}

#[tokio::test]
async fn azure_uses_the_deployment_url_api_version_and_api_key_header() {
    let server = ScriptedServer::start();
    server.push(Reply::content(STRICT_REPLY));
    server.push(Reply::content("ok"));
    let spec = ModelSpec::parse("azure:extraction-4o").unwrap();
    let azure = ProviderSettings {
        // The resource URL as the Azure portal shows it, trailing `/openai/` and all.
        host: Some(format!("{}/openai/", server.anthropic_base_url())),
        api_key: Some("azure-key".into()),
        transport: super::fast_transport(),
        ..ProviderSettings::default()
    };
    let client = build_client(&spec, azure.clone()).unwrap();
    let response = client.chat(&invoice_request()).await.unwrap();
    assert_eq!(content_json(response.content.as_deref()), restored_reply());

    let pinned = ProviderSettings {
        api_version: Some("2025-01-01-preview".into()),
        ..azure
    };
    build_client(&spec, pinned)
        .unwrap()
        .chat(&invoice_request())
        .await
        .unwrap();

    let recorded = server.recorded();
    assert_eq!(
        recorded[0].path,
        "/openai/deployments/extraction-4o/chat/completions"
    );
    assert_eq!(recorded[0].query, "api-version=2024-10-21");
    assert_eq!(recorded[1].query, "api-version=2025-01-01-preview");
    assert_eq!(recorded[0].headers["api-key"], "azure-key");
    assert!(!recorded[0].headers.contains_key("authorization"));
    assert_eq!(
        recorded[0].body["response_format"]["json_schema"]["schema"],
        invoice_schema_strict()
    );
}

#[tokio::test]
async fn gemini_uses_its_openai_compatible_endpoint_with_the_schema_as_given() {
    let server = ScriptedServer::start();
    let reply = r#"{"number":"INV-7","total":12.5}"#;
    server.push(Reply::content(reply));
    let spec = ModelSpec::parse("gemini:gemini-2.5-flash").unwrap();
    let base = format!("{}/v1beta/openai/", server.anthropic_base_url());
    let client = build_client(&spec, keyed(base, "gemini-key")).unwrap();
    assert_eq!(client.structured_output(), StructuredOutput::JsonSchema);

    let response = client.chat(&invoice_request()).await.unwrap();

    assert_eq!(response.content.as_deref(), Some(reply));
    let recorded = &server.recorded()[0];
    assert_eq!(recorded.path, "/v1beta/openai/chat/completions");
    assert_eq!(recorded.headers["authorization"], "Bearer gemini-key");
    assert_eq!(recorded.body["model"], "gemini-2.5-flash");
    assert_eq!(
        recorded.body["response_format"],
        json!({
            "type": "json_schema",
            "json_schema": {"name": "invoice__v2_", "schema": invoice_schema(), "strict": true}
        })
    );
}

#[test]
fn gemini_at_its_own_url_needs_a_key() {
    let spec = ModelSpec::parse("gemini:gemini-2.5-flash").unwrap();
    let err = build_client(&spec, ProviderSettings::default())
        .err()
        .unwrap();
    assert!(err.to_string().contains("GEMINI_API_KEY"), "{err}");
}

#[tokio::test]
async fn anthropic_forces_a_tool_whose_input_schema_is_the_schema() {
    let server = ScriptedServer::start();
    let input = r#"{"number":"INV-7","total":12.5}"#;
    server.push(Reply::tool_call("invoice__v2_", input));
    server.push(Reply::tool_call("invoice__v2_", input));
    let client = anthropic_client(&server);
    assert_eq!(client.structured_output(), StructuredOutput::ForcedTool);

    let response = client.chat(&invoice_request()).await.unwrap();
    let streamed = client
        .chat_stream(&invoice_request(), &|_| {})
        .await
        .unwrap();

    for reply in [&response, &streamed] {
        assert_eq!(
            content_json(reply.content.as_deref()),
            content_json(Some(input))
        );
        assert!(reply.tool_calls.is_empty());
    }
    let sent = &server.requests()[0];
    assert_eq!(
        sent["tools"],
        json!([{
            "name": "invoice__v2_",
            "description": quarry_llm::anthropic::FORCED_TOOL_DESCRIPTION,
            "input_schema": invoice_schema(),
        }])
    );
    assert_eq!(
        sent["tool_choice"],
        json!({"type": "tool", "name": "invoice__v2_"})
    );
    assert!(sent.get("response_format").is_none());
}

#[tokio::test]
async fn anthropic_base_url_works_with_or_without_v1() {
    let server = ScriptedServer::start();
    server.push(Reply::content("a"));
    server.push(Reply::content("b"));
    let spec = ModelSpec::parse("anthropic:claude-test").unwrap();
    for base in [
        server.anthropic_base_url(),
        format!("{}/v1/", server.anthropic_base_url()),
    ] {
        let client = build_client(&spec, keyed(base, "sk-ant")).unwrap();
        client.chat(&invoice_request()).await.unwrap();
    }
    let paths: Vec<String> = server.recorded().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/v1/messages", "/v1/messages"]);
}

#[tokio::test]
async fn a_refused_schema_is_dropped_once_and_remembered() {
    let server = ScriptedServer::start();
    server.push(Reply::status(
        400,
        r#"{"error":{"message":"'response_format.type' must be 'text' or 'json_object'","type":"invalid_request_error"}}"#,
    ));
    server.push(Reply::content(r#"{"number":"INV-7","total":12.5}"#));
    server.push(Reply::content("second"));
    let spec = ModelSpec::parse("vllm:qwen2.5-7b").unwrap();
    let client = build_client(&spec, settings(server.base_url())).unwrap();
    assert_eq!(client.structured_output(), StructuredOutput::JsonSchema);

    let response = client.chat(&invoice_request()).await.unwrap();
    assert_eq!(
        response.content.as_deref(),
        Some(r#"{"number":"INV-7","total":12.5}"#)
    );
    assert_eq!(client.structured_output(), StructuredOutput::None);
    client
        .chat_stream(&invoice_request(), &|_| {})
        .await
        .unwrap();

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0]["response_format"]["type"], "json_schema");
    for later in &requests[1..] {
        assert!(later.get("response_format").is_none(), "{later}");
    }
    // Apart from the schema, the retry is the same request.
    let mut first = requests[0].clone();
    first.as_object_mut().unwrap().remove("response_format");
    assert_eq!(first, requests[1]);
}

#[tokio::test]
async fn other_client_errors_are_not_taken_for_a_refusal() {
    let server = ScriptedServer::start();
    server.push(Reply::status(
        400,
        r#"{"error":{"message":"max_tokens is too large"}}"#,
    ));
    server.push(Reply::content("never reached"));
    let spec = ModelSpec::parse("vllm:qwen2.5-7b").unwrap();
    let client = build_client(&spec, settings(server.base_url())).unwrap();

    let err = client.chat(&invoice_request()).await.unwrap_err();

    assert!(
        matches!(err, LlmError::Status { status: 400, .. }),
        "{err:?}"
    );
    assert_eq!(server.request_count(), 1);
    assert_eq!(client.structured_output(), StructuredOutput::JsonSchema);
}

#[tokio::test]
async fn a_streamed_request_falls_back_too() {
    let server = ScriptedServer::start();
    server.push(Reply::status(
        422,
        r#"{"object":"error","message":"json_schema: unsupported keyword 'prefixItems'","code":422}"#,
    ));
    server.push(Reply::content(r#"{"number":"INV-7","total":12.5}"#));
    let spec = ModelSpec::parse("llamacpp:").unwrap();
    let client = build_client(&spec, settings(server.base_url())).unwrap();

    let tokens = super::Tokens::default();
    let sink = tokens.sink();
    let response = client.chat_stream(&invoice_request(), &sink).await.unwrap();

    assert_eq!(tokens.all().concat(), r#"{"number":"INV-7","total":12.5}"#);
    assert_eq!(
        response.content.as_deref(),
        Some(r#"{"number":"INV-7","total":12.5}"#)
    );
    let requests = server.requests();
    assert_eq!(requests[0]["stream"], true);
    assert_eq!(requests[0]["response_format"]["type"], "json_schema");
    assert!(requests[1].get("response_format").is_none());
    assert_eq!(requests[1]["stream"], true);
    assert_eq!(client.structured_output(), StructuredOutput::None);
}
