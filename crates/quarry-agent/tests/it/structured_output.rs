//! How the agent asks for the extraction, over HTTP against a local scripted server: the schema
//! as native structured output when the provider has it (no tools), the `validate`/`submit`
//! tools otherwise or once the server refused the schema; and what a context overflow keeps.

use std::time::Duration;

use quarry_agent::chunk::chunk;
use quarry_agent::{EngineError, Extractor, ExtractorConfig, Outcome, ProblemKind, Schema};
use quarry_llm::{ModelSpec, ProviderSettings, TransportConfig, build_client};
use quarry_testkit::{Reply, ScriptedServer};
use serde_json::{Value, json};

const SCHEMA: &str = r#"{"type": "object", "required": ["vendor", "total"], "properties": {
    "vendor": {"type": "string", "description": "Who issued the invoice"},
    "total": {"type": "number"},
    "po_number": {"type": "string"}}}"#;

const DOCUMENT: &str = "Invoice from Acme Supplies Ltd, 15 January 2024. Total due: $1,200.";

fn extractor(server: &ScriptedServer, model: &str, config: ExtractorConfig) -> Extractor {
    let spec = ModelSpec::parse(model).unwrap();
    let settings = ProviderSettings {
        base_url: Some(server.base_url()),
        api_key: Some("sk-test".into()),
        transport: TransportConfig {
            max_attempts: 2,
            backoff_base: Duration::from_millis(1),
            backoff_max: Duration::from_millis(2),
            ..TransportConfig::default()
        },
        ..ProviderSettings::default()
    };
    let client = build_client(&spec, settings).unwrap();
    Extractor::new(client, spec.model, config)
}

fn tool_names(body: &Value) -> Vec<&str> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|tool| tool["function"]["name"].as_str())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn openai_gets_the_schema_as_strict_structured_output_instead_of_tools() {
    // Strict mode answers every property; `null` stands for the optional one the text lacks.
    let server = ScriptedServer::with_script([Reply::content(
        r#"{"vendor": "Acme Supplies Ltd", "total": 1200, "po_number": null}"#,
    )]);
    let schema = Schema::parse(SCHEMA).unwrap();
    let extraction = extractor(&server, "openai:gpt-test", ExtractorConfig::default())
        .extract(&schema, DOCUMENT, &[])
        .await
        .unwrap();

    assert_eq!(extraction.outcome, Outcome::Complete);
    assert_eq!(
        extraction.value,
        json!({"vendor": "Acme Supplies Ltd", "total": 1200, "po_number": null})
    );
    let sent = &server.requests()[0];
    assert!(sent.get("tools").is_none() && sent.get("tool_choice").is_none());
    assert_eq!(
        sent["response_format"],
        json!({"type": "json_schema", "json_schema": {
            "name": "extraction",
            "strict": true,
            "schema": {
                "type": "object",
                "properties": {
                    "vendor": {"type": "string", "description": "Who issued the invoice"},
                    // The one amount the text states, as the only choice.
                    "total": {"type": "number", "enum": [1200]},
                    "po_number": {"type": ["string", "null"]}
                },
                "required": ["vendor", "total", "po_number"],
                "additionalProperties": false
            }
        }})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_refusing_the_schema_gets_tools_from_then_on() {
    let server = ScriptedServer::with_script([
        Reply::status(
            400,
            r#"{"error":{"message":"response_format json_schema is not supported","type":"BadRequestError"}}"#,
        ),
        Reply::content(r#"{"vendor": "Acme Supplies Ltd", "total": 1200}"#),
        Reply::tool_call(
            "submit",
            r#"{"vendor": "Acme Supplies Ltd", "total": 1200}"#,
        ),
    ]);
    let schema = Schema::parse(SCHEMA).unwrap();
    let extractor = extractor(&server, "vllm:qwen2.5-7b", ExtractorConfig::default());

    let first = extractor.extract(&schema, DOCUMENT, &[]).await.unwrap();
    let second = extractor.extract(&schema, DOCUMENT, &[]).await.unwrap();

    assert!(first.is_complete() && second.is_complete());
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    // vLLM gets the user's schema, the total offering the one amount the text states, and
    // no tools.
    let mut offered = serde_json::from_str::<Value>(SCHEMA).unwrap();
    offered["properties"]["total"] = serde_json::json!({"type": "number", "enum": [1200]});
    assert_eq!(
        requests[0]["response_format"]["json_schema"]["schema"],
        offered
    );
    assert!(tool_names(&requests[0]).is_empty());
    // The refused turn is sent again without the schema; the next extraction offers tools.
    assert!(requests[1].get("response_format").is_none());
    assert_eq!(requests[1]["messages"], requests[0]["messages"]);
    assert!(requests[2].get("response_format").is_none());
    assert_eq!(tool_names(&requests[2]), ["validate", "submit"]);
}

const OVERFLOW: &str = r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 8400 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_context_overflow_on_a_retry_keeps_what_earlier_turns_found() {
    let server = ScriptedServer::with_script([
        // The total is invented (the text says $1,200): rejected with feedback, vendor kept.
        Reply::tool_call(
            "submit",
            r#"{"vendor": "Acme Supplies Ltd", "total": 1500}"#,
        )
        .with_usage(300, 40),
        Reply::status(400, OVERFLOW).into(),
    ]);
    let schema = Schema::parse(SCHEMA).unwrap();
    let extraction = extractor(&server, "openai-compatible:m", ExtractorConfig::default())
        .extract(&schema, DOCUMENT, &[])
        .await
        .unwrap();

    assert_eq!(extraction.value["vendor"], "Acme Supplies Ltd");
    assert_eq!(extraction.value["total"], Value::Null);
    assert!(extraction.question().unwrap().contains("total"));
    assert_eq!(extraction.usage.total(), 340);
    assert_eq!(extraction.model_calls, 1);
    assert_eq!(server.request_count(), 2);
}

/// One after the other (the script answers in order), chunks of at most 80 bytes.
fn sequential_chunks() -> ExtractorConfig {
    ExtractorConfig {
        chunk_bytes: 80,
        chunk_overlap: 0,
        chunk_concurrency: 1,
        ..ExtractorConfig::default()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_chunk_that_does_not_fit_keeps_the_other_chunks_results() {
    // Three chunks: the first names the vendor, the second does not fit, the third has the total.
    let document = format!(
        "Invoice from Acme Supplies Ltd, 15 January 2024.\n\n{}\n\nTotal due: $1,200.",
        "Terms and conditions apply. ".repeat(3)
    );
    let chunks = chunk(&document, 80, 0);
    assert_eq!(chunks.len(), 3, "{chunks:?}");
    assert!(chunks[2].text.contains("$1,200"), "{chunks:?}");
    let server = ScriptedServer::with_script([
        Reply::tool_call(
            "submit",
            r#"{"vendor": "Acme Supplies Ltd", "total": null, "po_number": null}"#,
        )
        .with_usage(300, 40),
        Reply::status(400, OVERFLOW).into(),
        Reply::tool_call(
            "submit",
            r#"{"vendor": null, "total": 1200, "po_number": null}"#,
        )
        .with_usage(200, 20),
    ]);
    let schema = Schema::parse(SCHEMA).unwrap();
    let extraction = extractor(&server, "openai-compatible:m", sequential_chunks())
        .extract(&schema, &document, &[])
        .await
        .unwrap();

    assert_eq!(extraction.value["vendor"], "Acme Supplies Ltd");
    assert_eq!(extraction.value["total"], 1200);
    // The other chunks say nothing of a PO number, but the unread one might: unresolved, not null.
    let Outcome::NeedsClarification {
        unresolved,
        question,
    } = &extraction.outcome
    else {
        panic!("expected a question, got {:?}", extraction.outcome);
    };
    assert_eq!(unresolved.len(), 1, "{unresolved:?}");
    assert_eq!(unresolved[0].field, "po_number");
    assert_eq!(unresolved[0].problems[0].kind, ProblemKind::Unread);
    assert!(question.contains("were not read"), "{question}");
    // The report names the stretch that was not read and what the provider said.
    assert_eq!(extraction.unread_chunks.len(), 1);
    let unread = &extraction.unread_chunks[0];
    assert_eq!(
        &document[unread.span.byte_start..unread.span.byte_end],
        chunks[1].text
    );
    assert_eq!(unread.span.start, chunks[1].offset.start);
    assert_eq!(
        unread.span.end - unread.span.start,
        chunks[1].text.chars().count()
    );
    assert!(unread.error.contains("context"), "{}", unread.error);
    // Tokens spent by the chunks that ran.
    assert_eq!(extraction.usage.total(), 560);
    assert_eq!(extraction.model_calls, 2);
    assert_eq!(extraction.chunks, 3);
    assert_eq!(server.request_count(), 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn when_no_chunk_fits_the_overflow_is_an_error_reporting_the_tokens_spent() {
    let document = format!("{DOCUMENT}\n\n{}", "Terms and conditions apply. ".repeat(4));
    let chunks = chunk(&document, 80, 0).len();
    assert!(chunks > 1);
    let server = ScriptedServer::with_script((0..chunks).map(|_| Reply::status(400, OVERFLOW)));
    let schema = Schema::parse(SCHEMA).unwrap();
    let error = extractor(&server, "openai-compatible:m", sequential_chunks())
        .extract(&schema, &document, &[])
        .await
        .unwrap_err();

    let EngineError::ContextOverflow { usage, .. } = &error else {
        panic!("expected a context overflow, got {error:?}");
    };
    assert_eq!(usage.total(), 0);
    let message = error.to_string();
    assert!(
        message.contains("context window") && message.contains("0 tokens"),
        "{message}"
    );
    assert_eq!(server.request_count(), chunks);
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_and_ollama_get_the_schema_their_native_way() {
    let server = ScriptedServer::with_script([
        // Anthropic answers with the forced tool; its input is the extraction.
        Reply::tool_call(
            "extraction",
            r#"{"vendor": "Acme Supplies Ltd", "total": 1200}"#,
        ),
        Reply::content(r#"{"vendor": "Acme Supplies Ltd", "total": 1200}"#),
    ]);
    let schema = Schema::parse(SCHEMA).unwrap();
    // The user's schema, the total offering the one amount the text states.
    let mut user_schema: Value = serde_json::from_str(SCHEMA).unwrap();
    user_schema["properties"]["total"] = json!({"type": "number", "enum": [1200]});
    for model in ["anthropic:claude-test", "ollama:llama3.1"] {
        let spec = ModelSpec::parse(model).unwrap();
        let settings = ProviderSettings {
            base_url: Some(server.anthropic_base_url()),
            api_key: Some("key".into()),
            ..ProviderSettings::default()
        };
        let client = build_client(&spec, settings).unwrap();
        let extraction = Extractor::new(client, spec.model, ExtractorConfig::default())
            .extract(&schema, DOCUMENT, &[])
            .await
            .unwrap();
        assert!(
            extraction.is_complete(),
            "{model}: {:?}",
            extraction.outcome
        );
        assert_eq!(extraction.value["total"], json!(1200));
    }

    let recorded = server.recorded();
    assert_eq!(recorded[0].path, "/v1/messages");
    assert_eq!(
        recorded[0].body["tools"],
        json!([{"name": "extraction",
                "description": quarry_llm::anthropic::FORCED_TOOL_DESCRIPTION,
                "input_schema": user_schema}])
    );
    assert_eq!(
        recorded[0].body["tool_choice"],
        json!({"type": "tool", "name": "extraction"})
    );
    assert_eq!(recorded[1].path, "/api/chat");
    assert_eq!(recorded[1].body["format"], user_schema);
    assert!(recorded[1].body.get("tools").is_none());
}
