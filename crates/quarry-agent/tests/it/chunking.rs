//! Long documents: chunked, extracted per chunk, merged, offsets mapped back to the document.

use crate::support;

use std::sync::Arc;

use quarry_agent::{Extractor, ExtractorConfig, GroundingStatus, Schema};
use quarry_llm::Role;
use serde_json::json;
use support::{RespondingClient, texts, tool_call};

const SCHEMA: &str = r#"
fields:
  vendor: {type: string, required: true}
  total: {type: number, required: true}
  people: {type: list, items: string}
"#;

const NAMES: [&str; 3] = ["Ann Lee", "Bob Stone", "Cy Twombly"];

fn filler(n: usize) -> String {
    "The committee reviewed the quarterly figures in detail. ".repeat(n)
}

#[tokio::test]
async fn long_documents_are_chunked_extracted_and_merged() {
    let document = format!(
        "Contract with Acme Supplies Ltd, signed by Ann Lee.\n\n{}\n\nBob Stone joined the call. \
         {}\n\nThe total came to $1,500 as Bob Stone confirmed with Cy Twombly.\n\n{}",
        filler(6),
        filler(6),
        filler(3)
    );
    let client = Arc::new(RespondingClient::new(
        |request: &quarry_llm::ChatRequest| {
            // Answer from the chunk this request carries, as a faithful model would.
            let chunk = texts(request, Role::User)[0].clone();
            let people: Vec<&str> = NAMES
                .iter()
                .copied()
                .filter(|n| chunk.contains(n))
                .collect();
            let vendor = chunk.contains("Acme").then_some("Acme Supplies Ltd");
            let total = chunk.contains("$1,500").then_some(1500);
            tool_call(
                "submit",
                &json!({"vendor": vendor, "total": total, "people": people}).to_string(),
            )
        },
    ));
    let config = ExtractorConfig {
        chunk_bytes: 400,
        chunk_overlap: 60,
        chunk_concurrency: 2,
        ..ExtractorConfig::default()
    };
    let extractor = Extractor::new(client.clone(), "m", config);
    let schema = Schema::parse(SCHEMA).unwrap();
    let extraction = extractor.extract(&schema, &document, &[]).await.unwrap();

    assert!(extraction.chunks >= 3, "{} chunks", extraction.chunks);
    assert!(extraction.is_complete(), "{:?}", extraction.outcome);
    assert_eq!(extraction.model_calls as usize, extraction.chunks);
    assert_eq!(extraction.value["vendor"], json!("Acme Supplies Ltd"));
    assert_eq!(extraction.value["total"], json!(1500));
    assert_eq!(
        extraction.value["people"],
        json!(["Ann Lee", "Bob Stone", "Cy Twombly"])
    );
    // Spans point into the whole document, not into the chunk.
    let total = &extraction.fields[1];
    assert_eq!(total.grounding, GroundingStatus::Normalized);
    let span = total.spans[0];
    assert_eq!(&document[span.byte_start..span.byte_end], "1,500");
    let quoted: String = document
        .chars()
        .skip(span.start)
        .take(span.end - span.start)
        .collect();
    assert_eq!(quoted, "1,500");
    for span in &extraction.fields[2].spans {
        assert!(NAMES.contains(&&document[span.byte_start..span.byte_end]));
    }
}

#[tokio::test]
async fn a_required_field_no_chunk_found_escalates_after_merging() {
    let document = format!("Contract with Acme Supplies Ltd.\n\n{}", filler(20));
    let client = Arc::new(RespondingClient::new(
        |request: &quarry_llm::ChatRequest| {
            let chunk = texts(request, Role::User)[0].clone();
            let vendor = chunk.contains("Acme").then_some("Acme Supplies Ltd");
            tool_call(
                "submit",
                &json!({"vendor": vendor, "total": null}).to_string(),
            )
        },
    ));
    let config = ExtractorConfig {
        chunk_bytes: 500,
        chunk_overlap: 50,
        ..ExtractorConfig::default()
    };
    let extraction = Extractor::new(client, "m", config)
        .extract(&Schema::parse(SCHEMA).unwrap(), &document, &[])
        .await
        .unwrap();
    // One call per chunk: a chunk without the total is not a failure in itself.
    assert_eq!(extraction.model_calls as usize, extraction.chunks);
    let question = extraction.question().expect("total is unresolved");
    assert!(question.contains("'total': it is required"), "{question}");
    assert_eq!(extraction.value["vendor"], json!("Acme Supplies Ltd"));
}
