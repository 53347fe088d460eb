//! The extraction schema: one compiled IR loaded from JSON Schema (a draft 2020-12 subset) or from
//! Quarry's compact YAML form (see [`quarry_format`]), in either JSON or YAML syntax.
//!
//! A schema is compiled once: `pattern`s become `Regex`es, `$ref`s are resolved, the prompt
//! section and tool definitions are rendered, so an extraction never re-does that work.
//!
//! Nullability rule (both forms): the engine always outputs every property, `null` where the text
//! has no value. A field *must* hold a value only when it is required **and** its type does not
//! admit `null`; everything else may be `null` (partial extraction is a success).
//!
//! This module lives in the engine, not in `quarry-core`, because compiling a schema needs
//! `regex` and YAML, and core depends on nothing but serde and thiserror.

mod json_schema;
pub mod quarry_format;
mod render;

use std::fmt;

use regex::Regex;
use serde_json::Value;
use thiserror::Error;

/// A loaded, compiled extraction schema.
#[derive(Debug, Clone)]
pub struct Schema {
    /// `title` (JSON Schema) or `name` (Quarry form); `"extraction"` when absent.
    pub name: String,
    pub description: Option<String>,
    /// The top-level fields, in declaration order.
    pub fields: Vec<FieldSpec>,
    /// The JSON Schema the model sees: the user's own when given as JSON Schema (sent verbatim),
    /// rendered from the IR for Quarry's form.
    pub(crate) json_schema: Value,
    /// The field list rendered for the system prompt, once.
    pub(crate) prompt_block: String,
    /// The IR as plain JSON Schema for the lenient parser's coercion.
    pub(crate) coercion_schema: Value,
}

/// One named property of an object.
#[derive(Debug, Clone)]
pub struct FieldSpec {
    pub name: String,
    /// Listed in `required` (JSON Schema) or `required: true` (Quarry form).
    pub required: bool,
    pub spec: ValueSpec,
}

impl FieldSpec {
    /// Whether `null` is an acceptable value (see the module docs).
    pub fn may_be_null(&self) -> bool {
        !self.required || self.spec.nullable
    }
}

/// What a value must look like.
#[derive(Debug, Clone)]
pub struct ValueSpec {
    pub kind: Kind,
    /// The type admits `null` (`["string", "null"]`, `anyOf [.., {type: null}]`, `nullable: true`).
    pub nullable: bool,
    pub description: Option<String>,
    pub enum_values: Option<Vec<Value>>,
    pub format: Option<Format>,
    pub pattern: Option<Pattern>,
    pub minimum: Option<Bound>,
    pub maximum: Option<Bound>,
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
    pub grounding: GroundingPolicy,
}

impl ValueSpec {
    pub(crate) fn new(kind: Kind) -> Self {
        ValueSpec {
            kind,
            nullable: false,
            description: None,
            enum_values: None,
            format: None,
            pattern: None,
            minimum: None,
            maximum: None,
            min_length: None,
            max_length: None,
            min_items: None,
            max_items: None,
            grounding: GroundingPolicy::Required,
        }
    }

    /// A short type label for prompts and messages: `number`, `list of string`, `date`.
    pub fn type_label(&self) -> String {
        let base = match (&self.kind, self.format) {
            (Kind::String, Some(format)) => format.as_str().to_owned(),
            (Kind::Array(items), _) => format!("list of {}", items.type_label()),
            (kind, _) => kind.as_str().to_owned(),
        };
        if self.nullable {
            format!("{base} or null")
        } else {
            base
        }
    }
}

#[derive(Debug, Clone)]
pub enum Kind {
    String,
    Integer,
    Number,
    Boolean,
    Array(Box<ValueSpec>),
    Object(Vec<FieldSpec>),
    /// No type given: any JSON value (still checked against `enum`).
    Any,
}

impl Kind {
    pub fn as_str(&self) -> &'static str {
        match self {
            Kind::String => "string",
            Kind::Integer => "integer",
            Kind::Number => "number",
            Kind::Boolean => "boolean",
            Kind::Array(_) => "array",
            Kind::Object(_) => "object",
            Kind::Any => "any",
        }
    }
}

/// The `format`s Quarry checks; others are kept as annotations and not checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Date,
    DateTime,
    Email,
    Uri,
}

impl Format {
    pub fn parse(name: &str) -> Option<Format> {
        match name {
            "date" => Some(Format::Date),
            "date-time" | "datetime" => Some(Format::DateTime),
            "email" => Some(Format::Email),
            "uri" | "url" => Some(Format::Uri),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Format::Date => "date",
            Format::DateTime => "date-time",
            Format::Email => "email",
            Format::Uri => "uri",
        }
    }
}

/// A compiled `pattern` with its source text for messages.
#[derive(Debug, Clone)]
pub struct Pattern {
    pub source: String,
    pub regex: Regex,
}

/// A numeric bound; `exclusive` for `exclusiveMinimum`/`exclusiveMaximum`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bound {
    pub value: f64,
    pub exclusive: bool,
}

/// Whether a value must be found in the source (`x-grounding`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroundingPolicy {
    /// The default: strings, numbers and dates must occur in the source; enums and booleans are
    /// exempt by nature.
    Required,
    /// `"x-grounding": "none"`: derived or inferred values (a summary, a category) are not checked.
    None,
}

/// Why a schema could not be loaded. `path` names the field (`total`, `items[].price`), empty
/// for the schema as a whole.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub struct SchemaError {
    pub path: String,
    pub message: String,
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "invalid schema: {}", self.message)
        } else {
            write!(f, "schema field '{}': {}", self.path, self.message)
        }
    }
}

impl SchemaError {
    pub(crate) fn at(path: &str, message: impl Into<String>) -> Self {
        SchemaError {
            path: path.to_owned(),
            message: message.into(),
        }
    }
}

impl Schema {
    /// Loads a schema from text: JSON or YAML syntax, JSON Schema or Quarry's form (a top-level
    /// `fields` map selects Quarry's form).
    pub fn parse(text: &str) -> Result<Schema, SchemaError> {
        let value: Value = match serde_json::from_str(text) {
            Ok(value) => value,
            Err(json_error) => serde_yaml_ng::from_str(text).map_err(|yaml_error| {
                let message = if text.trim_start().starts_with('{') {
                    format!("not valid JSON: {json_error}")
                } else {
                    format!("not valid YAML: {yaml_error}")
                };
                SchemaError::at("", message)
            })?,
        };
        Schema::from_value(&value)
    }

    /// Loads a schema from a parsed document (see [`Schema::parse`]).
    pub fn from_value(value: &Value) -> Result<Schema, SchemaError> {
        let Some(object) = value.as_object() else {
            return Err(SchemaError::at("", "expected an object at the top level"));
        };
        if object.contains_key("fields") {
            quarry_format::load(value)
        } else {
            json_schema::load(value)
        }
    }

    /// The field called `name`.
    pub fn field(&self, name: &str) -> Option<&FieldSpec> {
        self.fields.iter().find(|field| field.name == name)
    }

    /// The JSON Schema sent to the model as tool parameters.
    pub fn json_schema(&self) -> &Value {
        &self.json_schema
    }

    pub(crate) fn finish(
        name: String,
        description: Option<String>,
        fields: Vec<FieldSpec>,
        json_schema: Value,
    ) -> Result<Schema, SchemaError> {
        if fields.is_empty() {
            return Err(SchemaError::at(
                "",
                "the schema declares no fields; add at least one property",
            ));
        }
        let prompt_block = render_prompt_block(&fields);
        let coercion_schema = render::object_schema(&fields);
        Ok(Schema {
            name,
            description,
            fields,
            json_schema,
            prompt_block,
            coercion_schema,
        })
    }
}

fn render_prompt_block(fields: &[FieldSpec]) -> String {
    let mut out = String::new();
    render_fields(fields, "", &mut out);
    out
}

fn render_fields(fields: &[FieldSpec], indent: &str, out: &mut String) {
    use std::fmt::Write;
    for field in fields {
        let spec = &field.spec;
        let mut notes = vec![spec.type_label()];
        if !field.may_be_null() {
            notes.push("required".to_owned());
        }
        if let Some(values) = &spec.enum_values {
            let values: Vec<String> = values.iter().map(Value::to_string).collect();
            notes.push(format!("one of {}", values.join(", ")));
        }
        if spec.grounding == GroundingPolicy::None {
            notes.push("may be inferred".to_owned());
        }
        let _ = write!(out, "{indent}- {} ({})", field.name, notes.join("; "));
        if let Some(description) = &spec.description {
            let _ = write!(out, ": {description}");
        }
        out.push('\n');
        let nested = match &spec.kind {
            Kind::Object(children) => Some(children),
            Kind::Array(items) => match &items.kind {
                Kind::Object(children) => Some(children),
                _ => None,
            },
            _ => None,
        };
        if let Some(children) = nested {
            render_fields(children, &format!("{indent}  "), out);
        }
    }
}

#[cfg(test)]
mod tests;
