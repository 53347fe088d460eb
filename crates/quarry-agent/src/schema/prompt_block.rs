//! The field list of the system prompt: one line per field with its type, whether it is required,
//! its allowed values and description; nested objects indented below their field, and each object
//! option of a union (a discriminated union's `Cat`, `Dog`) listed with its own fields.

use std::fmt::Write;

use serde_json::Value;

use super::ir::{FieldSpec, GroundingPolicy, Kind, ValueSpec};

/// Renders the top-level fields.
pub(super) fn render(fields: &[FieldSpec]) -> String {
    let mut out = String::new();
    render_fields(fields, "", &mut out);
    out
}

fn render_fields(fields: &[FieldSpec], indent: &str, out: &mut String) {
    for field in fields {
        let spec = &field.spec;
        let mut notes = vec![spec.type_label()];
        if !field.may_be_null() {
            notes.push("required".to_owned());
        }
        notes.extend(value_notes(spec));
        let _ = write!(out, "{indent}- {} ({})", field.name, notes.join("; "));
        if let Some(description) = &spec.description {
            let _ = write!(out, ": {description}");
        }
        out.push('\n');
        render_shape(spec, &format!("{indent}  "), out);
    }
}

/// `one of "a", "b"`, `always "cat"`, `may be inferred`.
fn value_notes(spec: &ValueSpec) -> Vec<String> {
    let mut notes = Vec::new();
    match spec.enum_values.as_deref() {
        Some([only]) => notes.push(format!("always {only}")),
        Some(values) => {
            let values: Vec<String> = values.iter().map(Value::to_string).collect();
            notes.push(format!("one of {}", values.join(", ")));
        }
        None => {}
    }
    if spec.grounding == GroundingPolicy::None {
        notes.push("may be inferred".to_owned());
    }
    notes
}

/// What sits below a field's line: an object's fields, a list's item fields, a union's options.
fn render_shape(spec: &ValueSpec, indent: &str, out: &mut String) {
    match &spec.kind {
        Kind::Object(children) => render_fields(children, indent, out),
        Kind::Array(items) => render_shape(items, indent, out),
        Kind::Union(options) => {
            if !options.iter().any(has_shape) {
                return;
            }
            for (index, option) in options.iter().enumerate() {
                let name = option
                    .title
                    .clone()
                    .unwrap_or_else(|| format!("option {}", index + 1));
                let mut notes = vec![option.type_label()];
                notes.extend(value_notes(option));
                let _ = write!(out, "{indent}* {name} ({})", notes.join("; "));
                if let Some(description) = &option.description {
                    let _ = write!(out, ": {description}");
                }
                out.push('\n');
                render_shape(option, &format!("{indent}  "), out);
            }
        }
        _ => {}
    }
}

fn has_shape(spec: &ValueSpec) -> bool {
    match &spec.kind {
        Kind::Object(_) => true,
        Kind::Array(items) => has_shape(items),
        Kind::Union(options) => options.iter().any(has_shape),
        _ => false,
    }
}
