//! Native structured output: how each provider is asked for a reply that follows a JSON Schema,
//! what goes on the wire for a request's [`ResponseFormat`], and how a server's refusal is told
//! apart from other errors.
//!
//! | [`StructuredOutput`] | providers | on the wire |
//! |---|---|---|
//! | `StrictJsonSchema` | `openai`, `azure` | `response_format: {type: json_schema, json_schema: {name, schema, strict: true}}`, the schema rewritten to the strict subset ([`crate::strict_schema`]) and the reply mapped back |
//! | `JsonSchema` | `gemini`, `vllm`, `llamacpp`, `lmstudio` | the same with the caller's schema and `strict` as given |
//! | `OllamaFormat` | `ollama` (native `/api/chat`) | `format: <schema>` |
//! | `ForcedTool` | `anthropic` | a tool whose `input_schema` is the schema, forced with `tool_choice`; its input becomes the reply's content |
//! | `None` | `openai-compatible`, and any client after a refusal | `response_format` passed on as given, with no promise it is honoured |
//!
//! A server that answers 400 (or 422) naming `response_format`/`json_schema` is asked again
//! without it, once; the client remembers and sends no schema from then on
//! (`ProtocolClient::structured_output` says `None`), so callers fall back to tool calling and
//! lenient parsing.

use serde_json::Value;

use crate::strict_schema;
use crate::types::ResponseFormat;

/// How a client makes a reply follow a JSON Schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StructuredOutput {
    /// OpenAI strict mode: the schema rewritten to the strict subset, the reply mapped back.
    StrictJsonSchema,
    /// `response_format: json_schema` with the schema as given (grammar-constrained servers).
    JsonSchema,
    /// Ollama's native `format` field.
    OllamaFormat,
    /// A forced tool whose input schema is the schema (Anthropic).
    ForcedTool,
    /// Nothing the client can promise: callers should offer tools and parse leniently.
    None,
}

impl StructuredOutput {
    /// Whether replies are constrained to the schema by the provider itself.
    pub fn is_native(self) -> bool {
        !matches!(self, StructuredOutput::None)
    }
}

/// A request's [`ResponseFormat`] as the wire carries it (built by the client, read by the
/// protocols).
#[derive(Debug, Clone, PartialEq)]
pub enum WireFormat {
    /// Any JSON object (`json_object`, Ollama `"json"`).
    Json,
    Schema(WireSchema),
}

/// A JSON Schema as sent: name, schema and `strict` flag, and the caller's own schema when the
/// sent one is a rewrite.
#[derive(Debug, Clone, PartialEq)]
pub struct WireSchema {
    /// The caller's name reduced to what providers accept (`[A-Za-z0-9_-]{1,64}`).
    pub name: String,
    pub schema: Value,
    pub strict: bool,
    /// The caller's schema when `schema` is its strict rewrite: replies are mapped back with it.
    pub original: Option<Value>,
}

impl WireFormat {
    /// What `format` becomes for a client using `mode`.
    pub fn new(format: &ResponseFormat, mode: StructuredOutput) -> WireFormat {
        let ResponseFormat::JsonSchema {
            name,
            schema,
            strict,
        } = format
        else {
            return WireFormat::Json;
        };
        let name = wire_name(name);
        if mode == StructuredOutput::StrictJsonSchema {
            // A schema strict mode cannot express goes as it is, best effort.
            if let Ok(rewritten) = strict_schema::to_strict(schema) {
                return WireFormat::Schema(WireSchema {
                    name,
                    schema: rewritten,
                    strict: true,
                    original: Some(schema.clone()),
                });
            }
            return WireFormat::Schema(WireSchema {
                name,
                schema: schema.clone(),
                strict: false,
                original: None,
            });
        }
        WireFormat::Schema(WireSchema {
            name,
            schema: schema.clone(),
            strict: *strict,
            original: None,
        })
    }

    /// The reply's content mapped back to the caller's schema (see
    /// [`strict_schema::restore`]); content that is not JSON is left as it is.
    pub fn restore(&self, content: Option<String>) -> Option<String> {
        let WireFormat::Schema(WireSchema {
            original: Some(original),
            ..
        }) = self
        else {
            return content;
        };
        let text = content?;
        match serde_json::from_str::<Value>(&text) {
            Ok(mut value) => {
                strict_schema::restore(&mut value, original);
                Some(value.to_string())
            }
            Err(_) => Some(text),
        }
    }
}

/// `name` with every character providers refuse replaced by `_`, at most 64 characters;
/// `response` when nothing is left.
pub(crate) fn wire_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if cleaned.trim_matches('_').is_empty() {
        "response".to_owned()
    } else {
        cleaned
    }
}

/// Whether an error reply refuses the structured-output request itself (so the same request
/// without it may work): a 400 or 422 whose body names `response_format` or `json_schema`.
pub(crate) fn refuses_structured_output(status: u16, body: &str) -> bool {
    matches!(status, 400 | 422) && {
        let body = body.to_ascii_lowercase();
        body.contains("response_format") || body.contains("json_schema")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_are_reduced_to_what_providers_accept() {
        assert_eq!(wire_name("Invoice (v2)"), "Invoice__v2_");
        assert_eq!(wire_name("graph_extraction"), "graph_extraction");
        assert_eq!(wire_name("Счёт"), "response");
        assert_eq!(wire_name(&"x".repeat(100)).len(), 64);
    }

    #[test]
    fn refusals_name_the_response_format() {
        assert!(refuses_structured_output(
            400,
            r#"{"error":{"message":"'response_format.type' : value is not one of the allowed values ['text','json_object']"}}"#
        ));
        assert!(refuses_structured_output(
            400,
            r#"{"error":"json_schema is not supported by this model"}"#
        ));
        assert!(!refuses_structured_output(
            400,
            r#"{"error":{"message":"max_tokens is too large"}}"#
        ));
        assert!(!refuses_structured_output(500, "response_format crashed"));
    }

    #[test]
    fn strict_mode_rewrites_and_restores_other_modes_send_as_given() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        let format = ResponseFormat::JsonSchema {
            name: "x".into(),
            schema: schema.clone(),
            strict: false,
        };
        let strict = WireFormat::new(&format, StructuredOutput::StrictJsonSchema);
        let WireFormat::Schema(wire) = &strict else {
            panic!("a schema")
        };
        assert!(wire.strict);
        assert_eq!(wire.schema["required"], json!(["a"]));
        assert_eq!(
            strict.restore(Some(r#"{"a":null}"#.into())).as_deref(),
            Some("{}")
        );
        assert_eq!(
            strict.restore(Some("not json".into())).as_deref(),
            Some("not json")
        );

        let plain = WireFormat::new(&format, StructuredOutput::JsonSchema);
        let WireFormat::Schema(wire) = &plain else {
            panic!("a schema")
        };
        assert_eq!((wire.strict, &wire.schema), (false, &schema));
        assert_eq!(
            plain.restore(Some(r#"{"a":null}"#.into())).as_deref(),
            Some(r#"{"a":null}"#)
        );
    }
}
