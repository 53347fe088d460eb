//! What a local model's reply may be, as an llguidance grammar: the request's JSON Schema, a
//! choice among the offered tools' argument schemas, or free text.
//!
//! **Grounded decoding.** When the request carries the source text ([`ChatRequest::grounding`])
//! a plain string property of the schema (a `string` with no `format`, `enum`, `const` or
//! `pattern`, and no `x-grounding: none`) may only be generated as a contiguous run of the
//! source's words: its grammar is a substring lexeme over the source *as JSON escapes it*, cut
//! so that an escape sequence is never split, so the decoded value is text the source contains.
//! Objects and arrays around such strings are written out as grammar rules (properties in schema
//! order, optional ones optional); every other part of the schema stays llguidance's own JSON
//! Schema grammar (`%json`). A schema with references (`$ref`, `$defs`) is decoded without
//! grounding: its parts are not self-contained.

use llguidance::api::TopLevelGrammar;
use serde_json::{Map, Value};

use crate::LlmError;
use crate::types::{ChatRequest, ResponseFormat, ToolChoice};

/// What the decoded text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyKind {
    /// Free text (no constraint).
    Text,
    /// A JSON value following the request's schema: the reply's content.
    Json,
    /// One tool call, `{"name": …, "arguments": …}`.
    ToolCall,
}

/// The grammar a reply is decoded under (none for free text) and what the result is.
pub struct ReplyGrammar {
    pub grammar: Option<TopLevelGrammar>,
    pub kind: ReplyKind,
}

/// The grammar for `request`.
pub fn reply_grammar(request: &ChatRequest) -> Result<ReplyGrammar, LlmError> {
    if let Some(format) = &request.response_format {
        let schema = match format {
            ResponseFormat::JsonSchema { schema, .. } => closed(schema),
            ResponseFormat::JsonObject => serde_json::json!({"type": "object"}),
        };
        let grammar = match request.grounding.as_deref() {
            Some(source) if is_self_contained(&schema) => {
                TopLevelGrammar::from_lark(grounded_lark(&schema, source))
            }
            _ => TopLevelGrammar::from_json_schema(compact_json(schema)),
        };
        return Ok(ReplyGrammar {
            grammar: Some(grammar),
            kind: ReplyKind::Json,
        });
    }
    let offered: Vec<_> = match &request.tool_choice {
        Some(ToolChoice::None) => Vec::new(),
        Some(ToolChoice::Tool(name)) => request
            .tools
            .iter()
            .filter(|tool| &tool.name == name)
            .collect(),
        _ => request.tools.iter().collect(),
    };
    if offered.is_empty() {
        return Ok(ReplyGrammar {
            grammar: None,
            kind: ReplyKind::Text,
        });
    }
    let mut lark = String::from("start: ");
    let alternatives: Vec<String> = (0..offered.len()).map(|i| format!("call_{i}")).collect();
    lark.push_str(&alternatives.join(" | "));
    lark.push('\n');
    for (i, tool) in offered.iter().enumerate() {
        let head = format!("{{\"name\":{},\"arguments\":", json_text(&tool.name));
        lark.push_str(&format!(
            "call_{i}: {} %json {} \"}}\"\n",
            lark_literal(&head),
            compact(&compact_json(closed(&tool.parameters)))
        ));
    }
    Ok(ReplyGrammar {
        grammar: Some(TopLevelGrammar::from_lark(lark)),
        kind: ReplyKind::ToolCall,
    })
}

/// A tool call as the decoder writes it: `{"name":NAME,"arguments":ARGUMENTS}` (arguments as
/// the model gave them).
pub fn tool_call_text(name: &str, arguments: &str) -> String {
    let arguments = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    };
    format!("{{\"name\":{},\"arguments\":{arguments}}}", json_text(name))
}

/// `schema` told to llguidance as JSON written without layout (`x-guidance`): with the default,
/// flexible whitespace, a small model can emit spaces and line breaks between tokens until its
/// budget runs out.
fn compact_json(mut schema: Value) -> Value {
    if let Some(object) = schema.as_object_mut() {
        object.insert(
            "x-guidance".to_owned(),
            serde_json::json!({"whitespace_flexible": false}),
        );
    }
    schema
}

/// `schema` with every object that lists its properties and says nothing of others closed
/// (`additionalProperties: false`): a reply holds the fields asked for, and a small model cannot
/// go on adding keys until its budget runs out.
fn closed(schema: &Value) -> Value {
    match schema {
        Value::Object(object) => {
            let mut closed_object: Map<String, Value> = object
                .iter()
                .map(|(key, value)| {
                    let value = match (key.as_str(), value) {
                        // Maps from names to schemas.
                        (
                            "properties" | "$defs" | "definitions" | "patternProperties",
                            Value::Object(named),
                        ) => Value::Object(
                            named
                                .iter()
                                .map(|(name, schema)| (name.clone(), closed(schema)))
                                .collect(),
                        ),
                        // Data, not schemas.
                        ("enum" | "const" | "default" | "examples" | "required", _) => {
                            value.clone()
                        }
                        _ => closed(value),
                    };
                    (key.clone(), value)
                })
                .collect();
            if object.contains_key("properties") && !object.contains_key("additionalProperties") {
                closed_object.insert("additionalProperties".to_owned(), Value::Bool(false));
            }
            Value::Object(closed_object)
        }
        Value::Array(items) => Value::Array(items.iter().map(closed).collect()),
        other => other.clone(),
    }
}

/// Whether every part of `schema` can be compiled alone (no `$ref` into the whole).
fn is_self_contained(schema: &Value) -> bool {
    match schema {
        Value::Object(object) => {
            !object.contains_key("$ref")
                && !object.contains_key("$defs")
                && !object.contains_key("definitions")
                && object.values().all(is_self_contained)
        }
        Value::Array(items) => items.iter().all(is_self_contained),
        _ => true,
    }
}

/// The Lark grammar of `schema` with its plain strings grounded in `source`.
fn grounded_lark(schema: &Value, source: &str) -> String {
    let mut rules = Rules::default();
    let start = rules.value(schema, None);
    let escaped = json_text(source);
    let inner = &escaped[1..escaped.len() - 1];
    let chunks = json_escape_aware_chunks(inner);
    let mut lark = format!("start: {start}\n");
    for rule in rules.defined.iter().chain(&rules.lexemes) {
        lark.push_str(rule);
        lark.push('\n');
    }
    // Never empty, and no space, line break or clause punctuation at either end: a value, not
    // a stretch of layout.
    lark.push_str(&format!(
        "GROUNDED: %regex {} & {WORD_ENDS}\n",
        serde_json::json!({ "substring_chunks": chunks })
    ));
    lark
}

/// A JSON string's content that is not empty, does not start with a space or with punctuation
/// that ends a clause or closes a bracket, and does not end with a space, an escaped line break
/// or tab, or punctuation that joins or opens (`,`, `;`, `:`, `(`, `-`). "Acme Ltd." and
/// "(415) 555-0100" are values; "Lee Wong," and ", owes" are not.
const WORD_ENDS: &str = r#"/[^ \\,;:.!?)\]}\-](?s:.*[^ ,;:(\[{\-])?/ & ~/(?s:.*)\\[nrt]/"#;

/// How a formatted string is written when the detectors offered no candidates for it: bounded,
/// so a small model cannot go on spelling until its budget runs out (llguidance's own e-mail
/// and URI expressions have no length bound). `None` for formats left to llguidance.
fn format_regex(format: &str) -> Option<String> {
    const DATE: &str = "[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])";
    const TIME: &str = r"([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,6})?(Z|[+\-]([01][0-9]|2[0-3]):[0-5][0-9])";
    const OCTET: &str = "(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])";
    let regex = match format {
        "email" => {
            r"[A-Za-z0-9._%+\-]{1,64}@[A-Za-z0-9\-]{1,63}(\.[A-Za-z0-9\-]{1,63}){1,6}".to_owned()
        }
        "date" => DATE.to_owned(),
        "time" => TIME.to_owned(),
        "date-time" => format!("{DATE}T{TIME}"),
        // A scheme, then printable ASCII other than a quote or a backslash.
        "uri" => r"[A-Za-z][A-Za-z0-9+.\-]{0,15}:[!#-\[\]-~]{1,2000}".to_owned(),
        "ipv4" => format!(r"({OCTET}\.){{3}}{OCTET}"),
        "ipv6" => "[0-9A-Fa-f:.]{2,45}".to_owned(),
        _ => return None,
    };
    Some(format!("/{regex}/"))
}

/// A JSON number with at most 15 digits before the point and 8 after (no exponent), or an
/// integer of at most 18 digits: enough for any amount, never a run to the output budget.
const NUMBER: &str = r"/-?(0|[1-9][0-9]{0,14})(\.[0-9]{1,8})?/";
const INTEGER: &str = r"/-?(0|[1-9][0-9]{0,17})/";

/// The words of a property's name (`due_date`, `dueDate` → `due`, `date`) as a case-blind
/// regex that matches the name written as a label, or its first word when that has four
/// letters or more: a grounded value may not begin with its own label ("Customer Lee Wong" for
/// `customer`, "Invoice QP-2291" for `invoice_number`). `None` for names that are not plain
/// words.
fn label_regex(name: &str) -> Option<String> {
    let mut words: Vec<String> = Vec::new();
    let mut current = String::new();
    for c in name.chars() {
        if c == '_' || c == '-' || c == ' ' {
            words.extend((!current.is_empty()).then(|| std::mem::take(&mut current)));
        } else if c.is_ascii_uppercase() && !current.is_empty() {
            words.push(std::mem::take(&mut current));
            current.push(c.to_ascii_lowercase());
        } else if c.is_ascii_alphabetic() {
            current.push(c.to_ascii_lowercase());
        } else {
            return None;
        }
    }
    words.extend((!current.is_empty()).then_some(current));
    if words.is_empty() || words.concat().len() < 3 {
        return None;
    }
    let patterns: Vec<String> = words.iter().map(|word| format!("(?i:{word})")).collect();
    let mut label = patterns.join("[ _-]?");
    // "Invoice QP-2291" for `invoice_number`: the first word alone is a label too.
    if words.len() > 1 && words[0].len() >= 4 {
        label = format!("({label}|{})", patterns[0]);
    }
    Some(format!(r"/{label}([^A-Za-z0-9](?s:.*))?/"))
}

/// Named rules made while writing out a schema.
#[derive(Default)]
struct Rules {
    defined: Vec<String>,
    /// Lexemes (terminals), each defined once.
    lexemes: Vec<String>,
    lexeme_names: Vec<String>,
    count: usize,
}

/// Between a key and its value, and between members: the layout most JSON a model has read is
/// written in (`{"a": 1, "b": 2}`), rather than the compact form.
const KEY_SEPARATOR: &str = ": ";
const MEMBER_SEPARATOR: &str = ", ";

impl Rules {
    fn fresh(&mut self, stem: &str) -> String {
        self.count += 1;
        format!("{stem}_{}", self.count)
    }

    /// A lexeme named `name` defined as `definition`, defined once.
    fn lexeme(&mut self, name: &str, definition: &str) -> String {
        if !self.lexeme_names.iter().any(|known| known == name) {
            self.lexeme_names.push(name.to_owned());
            self.lexemes.push(format!("{name}: {definition}"));
        }
        name.to_owned()
    }

    /// A grounded string of the property `label` (if any), at most `max_length` characters.
    fn grounded(&mut self, label: Option<&str>, max_length: Option<u64>) -> String {
        let label = label.and_then(label_regex);
        let lexeme = match (&label, max_length) {
            (None, None) => "GROUNDED".to_owned(),
            _ => {
                let mut definition = "GROUNDED".to_owned();
                if let Some(label) = &label {
                    definition.push_str(&format!(" & ~{label}"));
                }
                if let Some(max) = max_length {
                    definition.push_str(&format!(" & /(?s:.){{1,{max}}}/"));
                }
                let name = self.fresh("GROUNDED").to_uppercase();
                self.lexeme(&name, &definition)
            }
        };
        format!("\"\\\"\" {lexeme} \"\\\"\"")
    }

    /// The grammar expression of a value of `schema`; `label`: the property it is the value of.
    fn value(&mut self, schema: &Value, label: Option<&str>) -> String {
        let Some(object) = schema.as_object() else {
            return format!("%json {}", compact(&compact_json(schema.clone())));
        };
        let (kinds, nullable) = kinds(object);
        if has_combinators(object) {
            return format!("%json {}", compact(&compact_json(schema.clone())));
        }
        let bounded = |keys: &[&str]| !keys.iter().any(|key| object.contains_key(*key));
        let format = object.get("format").and_then(Value::as_str);
        let format_regex = format.and_then(format_regex);
        let expression = match kinds.as_slice() {
            ["string"] if is_grounded_string(object) && bounded(&["minLength"]) => {
                self.grounded(label, object.get("maxLength").and_then(Value::as_u64))
            }
            ["string"]
                if format_regex.is_some() && bounded(&["minLength", "maxLength", "pattern"]) =>
            {
                let name = format!(
                    "FORMAT_{}",
                    format.unwrap_or_default().replace('-', "_").to_uppercase()
                );
                let lexeme = self.lexeme(&name, &format_regex.unwrap_or_default());
                format!("\"\\\"\" {lexeme} \"\\\"\"")
            }
            ["number"] if bounded(&NUMERIC_KEYWORDS) => self.lexeme("JSON_NUMBER", NUMBER),
            ["integer"] if bounded(&NUMERIC_KEYWORDS) => self.lexeme("JSON_INTEGER", INTEGER),
            ["object"] if object.contains_key("properties") => self.object(object),
            ["array"] if object.get("items").is_some_and(Value::is_object) => self.array(object),
            _ => return format!("%json {}", compact(&compact_json(schema.clone()))),
        };
        if nullable {
            format!("({expression} | \"null\")")
        } else {
            expression
        }
    }

    /// `{"a": …, "b": …}` with the properties in schema order; optional ones may be left out.
    fn object(&mut self, object: &Map<String, Value>) -> String {
        let empty = Map::new();
        let properties = object
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let required: Vec<&str> = object
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if properties.is_empty() {
            return "\"{}\"".to_owned();
        }
        let members: Vec<(String, bool)> = properties
            .iter()
            .map(|(name, schema)| {
                let key = lark_literal(&format!("{}{KEY_SEPARATOR}", json_text(name)));
                (
                    format!("{key} {}", self.value(schema, Some(name))),
                    required.contains(&name.as_str()),
                )
            })
            .collect();
        let separator = lark_literal(MEMBER_SEPARATOR);
        // after_i: members i.. with one already written (each takes a comma); first_i: members
        // i.. with none written yet.
        let stem = self.fresh("object");
        let n = members.len();
        let after = |i: usize| (i < n).then(|| format!("{stem}_after_{i}"));
        let first = |i: usize| (i < n).then(|| format!("{stem}_first_{i}"));
        for (i, (member, is_required)) in members.iter().enumerate() {
            let rest = after(i + 1).unwrap_or_default();
            let after_body = if *is_required {
                format!("{separator} {member} {rest}")
            } else {
                format!("({separator} {member})? {rest}")
            };
            // Member 0 is never written after another.
            if let Some(name) = after(i).filter(|_| i > 0) {
                self.defined.push(format!("{name}: {after_body}"));
            }
            let first_body = match (is_required, first(i + 1)) {
                (true, _) => format!("{member} {rest}"),
                (false, Some(next)) => format!("{member} {rest} | {next}"),
                (false, None) => format!("({member})?"),
            };
            self.defined
                .push(format!("{}: {first_body}", first(i).expect("i < n")));
        }
        format!("\"{{\" {} \"}}\"", first(0).expect("n > 0"))
    }

    /// `[item, item, …]`, with `minItems` to `maxItems` items.
    fn array(&mut self, object: &Map<String, Value>) -> String {
        let bound = |key: &str| object.get(key).and_then(Value::as_u64);
        let min = bound("minItems").unwrap_or(0);
        let max = bound("maxItems");
        if max == Some(0) {
            return "\"[\" \"]\"".to_owned();
        }
        let item = self.value(&object["items"], None);
        let name = self.fresh("items");
        let more_min = min.saturating_sub(1);
        let more = match max {
            Some(max) => format!("{{{more_min},{}}}", max - 1),
            None => format!("{{{more_min},}}"),
        };
        let separator = lark_literal(MEMBER_SEPARATOR);
        self.defined
            .push(format!("{name}: {item} ({separator} {item}){more}"));
        let optional = if min == 0 { "?" } else { "" };
        format!("\"[\" {name}{optional} \"]\"")
    }
}

/// The schema's types (`type` as a string or a list) without `null`, and whether null is allowed.
fn kinds(object: &Map<String, Value>) -> (Vec<&str>, bool) {
    let listed: Vec<&str> = match object.get("type") {
        Some(Value::String(kind)) => vec![kind.as_str()],
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let nullable = listed.contains(&"null");
    (
        listed.into_iter().filter(|kind| *kind != "null").collect(),
        nullable,
    )
}

/// Keywords that bound a number: such a number is left to llguidance's JSON Schema grammar.
const NUMERIC_KEYWORDS: [&str; 5] = [
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
];

fn has_combinators(object: &Map<String, Value>) -> bool {
    ["anyOf", "oneOf", "allOf", "not", "if", "enum", "const"]
        .iter()
        .any(|key| object.contains_key(*key))
}

/// A string the text must contain: no format or pattern, and grounding not lifted.
fn is_grounded_string(object: &Map<String, Value>) -> bool {
    let lifted = object.get("x-grounding").and_then(Value::as_str) == Some("none");
    !lifted && !object.contains_key("format") && !object.contains_key("pattern")
}

/// Splits JSON-escaped text into runs of one character class (letters and digits, spaces,
/// other), each escape sequence (`\n`, `\"`, `\u00e9`) kept whole in its run, so a substring of
/// the chunks never ends inside an escape.
fn json_escape_aware_chunks(escaped: &str) -> Vec<String> {
    #[derive(PartialEq, Clone, Copy)]
    enum Class {
        Word,
        Space,
        Other,
    }
    let class = |c: char| {
        if c.is_alphanumeric() {
            Class::Word
        } else if c.is_whitespace() {
            Class::Space
        } else {
            Class::Other
        }
    };
    let mut chunks: Vec<String> = Vec::new();
    let mut current: Option<Class> = None;
    let mut chars = escaped.chars().peekable();
    while let Some(c) = chars.next() {
        let (piece, kind) = if c == '\\' {
            let mut piece = String::from('\\');
            match chars.next() {
                Some('u') => {
                    piece.push('u');
                    for _ in 0..4 {
                        piece.extend(chars.next());
                    }
                }
                Some(other) => piece.push(other),
                None => {}
            }
            (piece, Class::Other)
        } else {
            (c.to_string(), class(c))
        };
        match chunks.last_mut() {
            Some(last) if current == Some(kind) => last.push_str(&piece),
            _ => chunks.push(piece),
        }
        current = Some(kind);
    }
    chunks
}

/// `text` as a JSON string, quotes included.
fn json_text(text: &str) -> String {
    serde_json::to_string(text).expect("a string serialises")
}

/// `text` as a Lark string literal.
fn lark_literal(text: &str) -> String {
    json_text(text)
}

fn compact(value: &Value) -> String {
    serde_json::to_string(value).expect("JSON serialises")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_stay_whole_and_the_chunks_rebuild_the_text() {
        let escaped = r#"Tom \"Tiny\" Lee\nParis é\u00e9"#;
        let chunks = json_escape_aware_chunks(escaped);
        assert_eq!(chunks.concat(), escaped);
        assert!(
            chunks.iter().all(|chunk| !chunk.ends_with('\\')),
            "{chunks:?}"
        );
        assert!(chunks.contains(&r#"\""#.to_owned()), "{chunks:?}");
    }

    #[test]
    fn plain_strings_are_grounded_and_the_rest_stays_json_schema() {
        let schema = serde_json::json!({
            "type": "object",
            "required": ["vendor", "total"],
            "properties": {
                "vendor": {"type": "string"},
                "issued": {"type": ["string", "null"], "format": "date"},
                "total": {"type": "number"},
                "note": {"type": "string", "x-grounding": "none"},
                "buyer": {"type": ["string", "null"]}
            }
        });
        let lark = grounded_lark(&schema, "Acme Ltd");
        // Each plain string is a span of the source that does not begin with its own label.
        assert!(
            lark.contains(r#""\"vendor\": " "\"" GROUNDED_1 "\"""#),
            "{lark}"
        );
        assert!(
            lark.contains("GROUNDED_1: GROUNDED & ~/(?i:vendor)([^A-Za-z0-9](?s:.*))?/"),
            "{lark}"
        );
        assert!(
            lark.contains(r#"("\"" GROUNDED_2 "\"" | "null")"#),
            "{lark}"
        );
        // Formats and numbers are bounded expressions.
        assert!(
            lark.contains(r#"("\"" FORMAT_DATE "\"" | "null")"#),
            "{lark}"
        );
        assert!(lark.contains(r#""\"total\": " JSON_NUMBER"#), "{lark}");
        assert!(
            lark.contains(r#"%json {"type":"string","x-grounding":"none","#),
            "{lark}"
        );
        assert!(
            lark.contains(r#"GROUNDED: %regex {"substring_chunks":["Acme"," ","Ltd"]}"#),
            "{lark}"
        );
    }

    #[test]
    fn labels_are_the_words_of_a_property_name() {
        assert_eq!(
            label_regex("due_date").as_deref(),
            Some("/(?i:due)[ _-]?(?i:date)([^A-Za-z0-9](?s:.*))?/")
        );
        assert_eq!(
            label_regex("invoiceNumber").as_deref(),
            Some("/((?i:invoice)[ _-]?(?i:number)|(?i:invoice))([^A-Za-z0-9](?s:.*))?/")
        );
        assert_eq!(label_regex("id"), None);
        assert_eq!(label_regex("line2"), None);
    }

    #[test]
    fn references_turn_grounding_off() {
        let schema = serde_json::json!({"$defs": {"a": {"type": "string"}}, "type": "object",
            "properties": {"a": {"$ref": "#/$defs/a"}}});
        assert!(!is_self_contained(&schema));
    }
}
