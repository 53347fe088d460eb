//! Everything the extraction model reads: the system message, the instruction with the entity
//! types, field and label rules and the JSON shape, the known-entities block (so the same entity
//! keeps one name and type across conversations), and the conversation between delimiters.
//! The conversation is data in the user message, never in the system message.

use quarry_core::model::Entity;
use quarry_llm::{ChatRequest, Message, ResponseFormat};
use serde_json::{Value, json};

use crate::GraphConfig;

pub const SYSTEM_PROMPT: &str =
    "You are a named entity and relationship extractor. You output only valid JSON.";

pub const KNOWN_ENTITIES_HEADER: &str =
    "Already known entities (use these exact name and type values if the same entity appears):";

pub const CONVERSATION_START: &str = "--- CONVERSATION ---";
pub const CONVERSATION_END: &str = "--- END CONVERSATION ---";

/// The user message for one episode. `known` is listed newest first as given; the block is left
/// out when it is empty.
pub fn user_message(
    config: &GraphConfig,
    known: &[Entity],
    user_message: &str,
    assistant_response: &str,
) -> String {
    let mut out = String::with_capacity(1600 + user_message.len() + assistant_response.len());
    out.push_str(
        "Read the conversation below and extract all named entities and the relationships \
         between them.\n",
    );
    out.push_str("Entity types: ");
    out.push_str(&config.types.join(", "));
    out.push_str("\n\n");
    out.push_str(
        "Rules for entities:\n\
         - \"name\": the name exactly as written in the conversation.\n\
         - \"type\": one of the entity types above.\n\
         - \"notes\": a short description from the conversation (one sentence), or null if it \
         says nothing about the entity.\n\
         - Only named, specific things: no pronouns, greetings or generic nouns.\n\n\
         Rules for relationships:\n\
         - \"from\" and \"to\" are names from your \"entities\" list, with their types in \
         \"fromType\" and \"toType\".\n\
         - \"label\" is a snake_case verb, e.g. works_on, manages, uses, knows, located_in, \
         part_of, created_by.\n\
         - \"notes\": a short explanation, or null.\n\
         - Only relationships the conversation states or clearly implies.\n\n",
    );
    out.push_str("Return this exact JSON structure:\n");
    out.push_str(
        "{\n  \"entities\": [\n    { \"name\": \"...\", \"type\": \"...\", \"notes\": \"...\" }\n  \
         ],\n  \"relationships\": [\n    { \"from\": \"...\", \"fromType\": \"...\", \"to\": \
         \"...\", \"toType\": \"...\", \"label\": \"...\", \"notes\": \"...\" }\n  ]\n}\n\
         If there is nothing to extract, return {\"entities\": [], \"relationships\": []}.\n",
    );
    if !known.is_empty() {
        out.push('\n');
        out.push_str(KNOWN_ENTITIES_HEADER);
        out.push('\n');
        for entity in known {
            // A JSON string: quotes inside a name cannot break the line.
            let name = serde_json::to_string(&entity.title).unwrap_or_default();
            out.push_str(&format!("- {name} ({})\n", entity.entity_type));
        }
    }
    out.push('\n');
    out.push_str(CONVERSATION_START);
    out.push_str("\nUser: ");
    out.push_str(&defuse(user_message));
    out.push_str("\nAssistant: ");
    out.push_str(&defuse(assistant_response));
    out.push('\n');
    out.push_str(CONVERSATION_END);
    out
}

/// Conversation text cannot close the delimited block early.
fn defuse(text: &str) -> String {
    text.replace(CONVERSATION_END, "- - - END CONVERSATION - - -")
        .replace(CONVERSATION_START, "- - - CONVERSATION - - -")
}

/// The chat request for one episode.
pub fn request(config: &GraphConfig, known: &[Entity], user: &str, assistant: &str) -> ChatRequest {
    ChatRequest {
        model: config.model.clone(),
        messages: vec![
            Message::system(SYSTEM_PROMPT),
            Message::user(user_message(config, known, user, assistant)),
        ],
        response_format: config
            .structured_output
            .then(|| ResponseFormat::JsonSchema {
                name: "graph_extraction".to_owned(),
                schema: output_schema(&config.types),
                strict: true,
            }),
        temperature: Some(config.temperature),
        max_tokens: Some(config.max_tokens),
        ..ChatRequest::default()
    }
}

/// The JSON Schema of the reply (strict-mode compatible: every property required, nullable
/// notes, no extra properties; types limited to the configured ones).
pub fn output_schema(types: &[String]) -> Value {
    let type_schema = json!({"type": "string", "enum": types});
    let notes = json!({"type": ["string", "null"]});
    json!({
        "type": "object",
        "properties": {
            "entities": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "type": type_schema,
                        "notes": notes,
                    },
                    "required": ["name", "type", "notes"],
                    "additionalProperties": false,
                },
            },
            "relationships": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "from": {"type": "string"},
                        "fromType": type_schema,
                        "to": {"type": "string"},
                        "toType": type_schema,
                        "label": {"type": "string"},
                        "notes": notes,
                    },
                    "required": ["from", "fromType", "to", "toType", "label", "notes"],
                    "additionalProperties": false,
                },
            },
        },
        "required": ["entities", "relationships"],
        "additionalProperties": false,
    })
}
