//! The extraction schema: one IR loaded from JSON Schema (draft 2020-12) or from Quarry's compact
//! YAML form (see [`quarry_format`]), in either JSON or YAML syntax.
//!
//! Two views of one schema are built once, when it is loaded:
//! - the IR ([`FieldSpec`], [`ValueSpec`]; `ir.rs`): what the prompt shows, what the lenient
//!   parser coerces to, what grounding and chunk merging walk, and how feedback is phrased;
//! - the [`Authority`](authority::Authority): the `jsonschema` crate's validator compiled from the
//!   JSON Schema, which gives the verdict on every keyword (see [`crate::validate`]).
//!
//! Every keyword of a JSON Schema is either enforced by the authority or refused when the schema
//! is loaded, naming it (see `keywords.rs`); an unknown keyword, usually a typo, is refused as the
//! YAML form refuses an unknown key.
//!
//! Nullability rule (both forms): the engine always outputs every property, `null` where the text
//! has no value. A field *must* hold a value only when it is required **and** its schema does not
//! admit `null`; everything else may be `null` (partial extraction is a success).
//!
//! This module lives in the engine, not in `quarry-core`, because compiling a schema needs
//! `jsonschema` and YAML, and core depends on nothing but serde and thiserror.

pub(crate) mod authority;
mod cache;
mod ir;
mod json_schema;
mod keywords;
mod prompt_block;
pub mod quarry_format;
mod render;

use serde_json::Value;

pub use cache::SchemaCache;
pub use ir::{Bound, FieldSpec, Format, GroundingPolicy, Kind, SchemaError, ValueSpec};

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
    /// The validator compiled from `json_schema`: the verdict on every keyword.
    pub(crate) authority: authority::Authority,
    /// The system prompt (`prompt::system_prompt`), written at the first extraction: it
    /// depends on the schema only, and a cached schema serves many extractions.
    pub(crate) system_prompt: std::sync::OnceLock<String>,
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
        let (name, description, fields, json_schema) = if object.contains_key("fields") {
            quarry_format::load(value)?
        } else {
            json_schema::load(value)?
        };
        Schema::finish(name, description, fields, json_schema)
    }

    /// The field called `name`.
    pub fn field(&self, name: &str) -> Option<&FieldSpec> {
        self.fields.iter().find(|field| field.name == name)
    }

    /// The field list the system prompt shows the model (types, required, allowed values,
    /// descriptions, union options).
    pub fn prompt_fields(&self) -> &str {
        &self.prompt_block
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
        let authority = authority::Authority::compile(&json_schema)?;
        let prompt_block = prompt_block::render(&fields);
        let coercion_schema = render::object_schema(&fields);
        Ok(Schema {
            name,
            description,
            fields,
            json_schema,
            prompt_block,
            coercion_schema,
            authority,
            system_prompt: std::sync::OnceLock::new(),
        })
    }
}

#[cfg(test)]
mod tests;
