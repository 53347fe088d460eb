//! Unions through the agent loop: the prompt describes the options, a value that fits none comes
//! back as per-field feedback naming the closest option and why it failed, and the value the
//! model fixes is accepted — with lenient coercion leaving a union's string alone.

use crate::support;

use std::sync::Arc;

use quarry_agent::{Extractor, ExtractorConfig, Outcome, Schema};
use quarry_llm::Role;
use serde_json::json;
use support::{ScriptedClient, texts, tool_call};

const SCHEMA: &str = r##"{"title": "payment", "type": "object",
    "required": ["reference", "payment"],
    "properties": {
        "reference": {"anyOf": [{"type": "string"}, {"type": "integer"}],
                      "description": "The payment reference"},
        "payment": {"oneOf": [{"$ref": "#/$defs/Card"}, {"$ref": "#/$defs/Transfer"}],
                    "discriminator": {"propertyName": "method"}}},
    "$defs": {
        "Card": {"title": "Card", "type": "object", "required": ["method", "last4"],
            "properties": {"method": {"const": "card"},
                           "last4": {"type": "string", "pattern": "^\\d{4}$"}}},
        "Transfer": {"title": "Transfer", "type": "object", "required": ["method", "iban"],
            "properties": {"method": {"const": "transfer"}, "iban": {"type": "string"}}}}}"##;

const DOCUMENT: &str = "Paid by card ending 4242. Payment reference 0077.";

#[tokio::test]
async fn a_union_value_that_fits_no_option_is_sent_back_then_fixed() {
    let client = Arc::new(ScriptedClient::new(vec![
        tool_call(
            "submit",
            r#"{"reference": "0077", "payment": {"method": "card", "last4": "42 42"}}"#,
        ),
        tool_call(
            "submit",
            r#"{"reference": "0077", "payment": {"method": "card", "last4": "4242"}}"#,
        ),
    ]));
    let schema = Schema::parse(SCHEMA).unwrap();
    let extraction = Extractor::new(client.clone(), "test-model", ExtractorConfig::default())
        .extract(&schema, DOCUMENT, &[])
        .await
        .unwrap();
    assert_eq!(extraction.outcome, Outcome::Complete);
    // "0077" stays the string the document shows; the union allows a string.
    assert_eq!(extraction.value["reference"], json!("0077"));
    assert_eq!(
        extraction.value["payment"],
        json!({"method": "card", "last4": "4242"})
    );

    let requests = client.requests();
    let system = &texts(&requests[0], Role::System)[0];
    assert!(
        system.contains("- reference (string or integer; required): The payment reference"),
        "{system}"
    );
    assert!(
        system.contains("- payment (Card or Transfer; required)"),
        "{system}"
    );
    assert!(system.contains("  * Transfer (object)"), "{system}");
    let feedback = texts(&requests[1], Role::Tool).join("\n");
    assert!(
        feedback.contains(
            "field 'payment': an object fits none of the options (Card or Transfer); the \
             closest, Card, fails: at 'payment.last4', \"42 42\" does not match the pattern ^\\d{4}$"
        ),
        "{feedback}"
    );
    assert!(!feedback.contains("'reference'"), "{feedback}");
}
