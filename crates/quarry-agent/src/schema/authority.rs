//! The authority on a schema's verdict: the `jsonschema` crate's validator for JSON Schema
//! 2020-12, compiled once when the schema is loaded.
//!
//! Compiled with format assertion on (the claimed [`Format`](super::Format)s; an unknown format
//! fails the compile, though `keywords.rs` refuses it first with a friendlier message), ECMA-262
//! patterns (`fancy-regex`: look-around, backreferences), and no retriever: a `$ref` outside the
//! schema fails the compile rather than reaching the network. The user's schema is given as is,
//! but for one edit: OpenAPI's `nullable: true` becomes `"null"` in `type` (and in `enum`), which
//! is what it means and what the IR already assumes.

use std::fmt;
use std::sync::Arc;

use jsonschema::{Draft, ValidationError, Validator};
use serde_json::Value;

use super::ir::SchemaError;
use super::keywords;

/// A compiled validator, shared by the clones of a schema.
#[derive(Clone)]
pub(crate) struct Authority {
    validator: Arc<Validator>,
}

impl fmt::Debug for Authority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Authority(jsonschema 2020-12)")
    }
}

impl Authority {
    /// Compiles `json_schema`; a schema the crate refuses (it breaks the 2020-12 meta-schema, a
    /// `$ref` does not resolve, a `pattern` is not a regex) is a [`SchemaError`] naming where.
    pub(crate) fn compile(json_schema: &Value) -> Result<Authority, SchemaError> {
        let mut schema = json_schema.clone();
        spell_out_nullable(&mut schema)?;
        let validator = jsonschema::options()
            .with_draft(Draft::Draft202012)
            .should_validate_formats(true)
            .should_ignore_unknown_formats(false)
            .build(&schema)
            .map_err(|error| compile_error(&error))?;
        Ok(Authority {
            validator: Arc::new(validator),
        })
    }

    /// Every way `instance` breaks the schema, as the crate reports them.
    pub(crate) fn errors<'i>(&'i self, instance: &'i Value) -> Vec<ValidationError<'i>> {
        self.validator.iter_errors(instance).collect()
    }
}

/// Rewrites `nullable: true` beside a `type` as JSON Schema says it: `type: [T, "null"]`, and
/// `null` added to an `enum`.
fn spell_out_nullable(schema: &mut Value) -> Result<(), SchemaError> {
    let mut pointers = Vec::new();
    keywords::walk(schema, "", "", &mut |object, _, pointer| {
        if object.get("nullable") == Some(&Value::Bool(true)) {
            pointers.push(pointer.to_owned());
        }
        Ok(())
    })?;
    for pointer in pointers {
        let Some(Value::Object(object)) = schema.pointer_mut(&pointer) else {
            continue;
        };
        match object.get_mut("type") {
            Some(Value::String(name)) if name != "null" => {
                let name = std::mem::take(name);
                object.insert("type".into(), serde_json::json!([name, "null"]));
            }
            Some(Value::Array(names)) if !names.iter().any(|n| n == "null") => {
                names.push(Value::String("null".into()));
            }
            _ => {}
        }
        if let Some(Value::Array(values)) = object.get_mut("enum")
            && !values.contains(&Value::Null)
        {
            values.push(Value::Null);
        }
    }
    Ok(())
}

/// A compile error as a [`SchemaError`]: where in the schema (as a field path), and the crate's
/// own sentence.
fn compile_error(error: &ValidationError<'_>) -> SchemaError {
    let pointer = error.instance_path().as_str();
    let message = match error.kind() {
        jsonschema::error::ValidationErrorKind::Referencing(reason) => {
            return unresolved(reason);
        }
        _ if pointer.is_empty() => format!("not a valid JSON Schema 2020-12: {error}"),
        _ => format!("not a valid JSON Schema 2020-12 at `{pointer}`: {error}"),
    };
    SchemaError::at(&field_path_of_pointer(pointer), message)
}

/// A `$ref` that does not resolve inside the schema.
pub(super) fn unresolved(reason: &referencing::Error) -> SchemaError {
    SchemaError::at(
        "",
        format!(
            "{reason}; Quarry resolves only references inside the schema (`#/$defs/...`, `$id`, \
             `$anchor`) and fetches nothing"
        ),
    )
}

/// `/properties/lines/items/properties/amount/minimum` → `lines[].amount`: the field a schema
/// location belongs to, for messages.
fn field_path_of_pointer(pointer: &str) -> String {
    let mut path = String::new();
    let mut segments = pointer.split('/').skip(1).peekable();
    while let Some(segment) = segments.next() {
        match segment {
            "properties" | "$defs" | "definitions" => {
                let Some(name) = segments.next() else { break };
                let name = name.replace("~1", "/").replace("~0", "~");
                let name = if segment == "properties" {
                    name
                } else {
                    format!("{segment}.{name}")
                };
                path = keywords::join(&path, &name);
            }
            "items" => path.push_str("[]"),
            _ => {}
        }
    }
    path
}
