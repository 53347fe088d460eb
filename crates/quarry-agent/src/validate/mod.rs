//! Validation of an extraction against the schema: conformance, types and constraints (`required`,
//! `enum`, `format`, `pattern`, ranges, lengths). Violations are data, each naming the field path.
//!
//! Written by hand over the schema IR rather than with the `jsonschema` crate: both schema forms
//! compile to the same IR, messages are phrased for the model's feedback ("quote the date as
//! YYYY-MM-DD"), the "null where the text has no value" rule (see [`crate::schema`]) is not
//! JSON Schema's, and the subset is small. Patterns were compiled when the schema was loaded.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::schema::{Bound, FieldSpec, Format, Kind, Schema, ValueSpec};

/// One way an extraction breaks the schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Violation {
    /// `total`, `lines[0].amount`; empty for the extraction as a whole.
    pub path: String,
    pub kind: ViolationKind,
    /// The sentence sent back to the model and shown to people.
    pub message: String,
}

impl Violation {
    /// The top-level field the path starts with.
    pub fn field(&self) -> &str {
        top_level(&self.path)
    }
}

/// The top-level field name of a path such as `lines[0].amount`.
pub(crate) fn top_level(path: &str) -> &str {
    let end = path.find(['.', '[']).unwrap_or(path.len());
    &path[..end]
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ViolationKind {
    NotAnObject,
    Missing,
    Type,
    Enum,
    Format,
    Pattern,
    Range,
    Length,
}

/// Checks the whole extraction.
pub fn validate(schema: &Schema, value: &Value) -> Vec<Violation> {
    let mut violations = Vec::new();
    let Some(object) = value.as_object() else {
        violations.push(Violation {
            path: String::new(),
            kind: ViolationKind::NotAnObject,
            message: format!(
                "the extraction must be a JSON object with the schema's fields, got {}",
                describe(value)
            ),
        });
        return violations;
    };
    for field in &schema.fields {
        validate_field(field, object.get(&field.name), &field.name, &mut violations);
    }
    violations
}

/// Checks one field's value (`None` when absent) at `path`.
pub fn validate_field(
    field: &FieldSpec,
    value: Option<&Value>,
    path: &str,
    out: &mut Vec<Violation>,
) {
    match value {
        None | Some(Value::Null) => {
            if !field.may_be_null() {
                out.push(Violation {
                    path: path.to_owned(),
                    kind: ViolationKind::Missing,
                    message: format!(
                        "field '{path}' is required but has no value; find it in the document"
                    ),
                });
            }
        }
        Some(value) => validate_value(&field.spec, value, path, out),
    }
}

fn validate_value(spec: &ValueSpec, value: &Value, path: &str, out: &mut Vec<Violation>) {
    let mut push = |kind, message: String| {
        out.push(Violation {
            path: path.to_owned(),
            kind,
            message: format!("field '{path}': {message}"),
        })
    };
    if value.is_null() {
        if !spec.nullable {
            push(
                ViolationKind::Type,
                format!("expected {}, got null", spec.type_label()),
            );
        }
        return;
    }
    let type_ok = match &spec.kind {
        Kind::String => value.is_string(),
        Kind::Integer => value.as_f64().is_some_and(|n| n.fract() == 0.0),
        Kind::Number => value.is_number(),
        Kind::Boolean => value.is_boolean(),
        Kind::Array(_) => value.is_array(),
        Kind::Object(_) => value.is_object(),
        Kind::Any => true,
    };
    if !type_ok {
        push(
            ViolationKind::Type,
            format!("expected {}, got {}", spec.type_label(), describe(value)),
        );
        return;
    }
    if let Some(values) = spec
        .enum_values
        .as_ref()
        .filter(|values| !values.contains(value))
    {
        let allowed: Vec<String> = values.iter().map(Value::to_string).collect();
        push(
            ViolationKind::Enum,
            format!("{value} is not one of {}", allowed.join(", ")),
        );
    }
    match value {
        Value::String(text) => {
            if let Some(format) = spec.format.filter(|format| !format_ok(*format, text)) {
                push(ViolationKind::Format, format_hint(format, text));
            }
            if let Some(pattern) = spec.pattern.as_ref().filter(|p| !p.regex.is_match(text)) {
                push(
                    ViolationKind::Pattern,
                    format!("{value} does not match the pattern {}", pattern.source),
                );
            }
            let length = text.chars().count() as u64;
            if spec.min_length.is_some_and(|min| length < min) {
                push(
                    ViolationKind::Length,
                    format!(
                        "{value} is shorter than {} characters",
                        spec.min_length.unwrap_or(0)
                    ),
                );
            }
            if spec.max_length.is_some_and(|max| length > max) {
                push(
                    ViolationKind::Length,
                    format!(
                        "{value} is longer than {} characters",
                        spec.max_length.unwrap_or(0)
                    ),
                );
            }
        }
        Value::Number(number) => {
            let n = number.as_f64().unwrap_or(f64::NAN);
            if let Some(bound) = spec.minimum.filter(|b| below(n, *b)) {
                let relation = if bound.exclusive { "above" } else { "at least" };
                push(
                    ViolationKind::Range,
                    format!("{value} must be {relation} {}", bound.value),
                );
            }
            if let Some(bound) = spec.maximum.filter(|b| above(n, *b)) {
                let relation = if bound.exclusive { "below" } else { "at most" };
                push(
                    ViolationKind::Range,
                    format!("{value} must be {relation} {}", bound.value),
                );
            }
        }
        Value::Array(items) => {
            let count = items.len() as u64;
            if let Some(min) = spec.min_items.filter(|min| count < *min) {
                push(
                    ViolationKind::Length,
                    format!("needs at least {min} item(s), got {count}"),
                );
            }
            if let Some(max) = spec.max_items.filter(|max| count > *max) {
                push(
                    ViolationKind::Length,
                    format!("allows at most {max} item(s), got {count}"),
                );
            }
            if let Kind::Array(item_spec) = &spec.kind {
                for (index, item) in items.iter().enumerate() {
                    validate_value(item_spec, item, &format!("{path}[{index}]"), out);
                }
            }
        }
        Value::Object(object) => {
            if let Kind::Object(fields) = &spec.kind {
                for field in fields {
                    let child = format!("{path}.{}", field.name);
                    validate_field(field, object.get(&field.name), &child, out);
                }
            }
        }
        _ => {}
    }
}

fn below(n: f64, bound: Bound) -> bool {
    if bound.exclusive {
        n <= bound.value
    } else {
        n < bound.value
    }
}

fn above(n: f64, bound: Bound) -> bool {
    if bound.exclusive {
        n >= bound.value
    } else {
        n > bound.value
    }
}

static EMAIL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[^@\s]+@[^@\s.]+(\.[^@\s.]+)+$").expect("valid regex"));
static URI: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z][A-Za-z0-9+.\-]*:[^\s]+$").expect("valid regex"));

pub(crate) fn format_ok(format: Format, text: &str) -> bool {
    match format {
        Format::Date => is_iso_date(text),
        Format::DateTime => {
            chrono::DateTime::parse_from_rfc3339(text).is_ok()
                || chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S").is_ok()
                || chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M").is_ok()
        }
        Format::Email => EMAIL.is_match(text),
        Format::Uri => URI.is_match(text),
    }
}

pub(crate) fn is_iso_date(text: &str) -> bool {
    text.len() == 10 && chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").is_ok()
}

fn format_hint(format: Format, text: &str) -> String {
    match format {
        Format::Date => format!("{text:?} is not a date; write it as YYYY-MM-DD"),
        Format::DateTime => {
            format!("{text:?} is not a date-time; write it as YYYY-MM-DDTHH:MM:SS with an offset")
        }
        Format::Email => format!("{text:?} is not an email address"),
        Format::Uri => format!("{text:?} is not a URI (e.g. https://example.com/path)"),
    }
}

/// `"abc"`, `a number (12)`, `an object` — short descriptions for messages.
pub(crate) fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the string {s:?}"),
        Value::Array(items) => format!("a list of {} item(s)", items.len()),
        Value::Object(_) => "an object".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Schema {
        Schema::parse(
            r#"{"type": "object", "required": ["id", "total"], "properties": {
                "id": {"type": "string", "pattern": "^INV-[0-9]+$"},
                "total": {"type": "number", "minimum": 0},
                "currency": {"type": ["string", "null"], "enum": ["USD", "EUR"]},
                "issued": {"type": "string", "format": "date"},
                "email": {"type": "string", "format": "email"},
                "lines": {"type": "array", "items": {"type": "object", "properties": {
                    "amount": {"type": "integer", "maximum": 100}}}}}}"#,
        )
        .unwrap()
    }

    #[test]
    fn a_conforming_partial_extraction_passes() {
        let value = json!({"id": "INV-1", "total": 10.5, "currency": null, "issued": "2024-01-15",
            "lines": [{"amount": 3}]});
        assert_eq!(validate(&schema(), &value), vec![]);
    }

    #[test]
    fn violations_name_the_path_and_why() {
        let value = json!({"id": "X-1", "total": -1, "currency": "usd", "issued": "15/01/2024",
            "email": "nobody", "lines": [{"amount": 300}]});
        let found: Vec<(String, ViolationKind)> = validate(&schema(), &value)
            .into_iter()
            .map(|v| (v.path, v.kind))
            .collect();
        assert_eq!(
            found,
            vec![
                ("id".into(), ViolationKind::Pattern),
                ("total".into(), ViolationKind::Range),
                ("currency".into(), ViolationKind::Enum),
                ("issued".into(), ViolationKind::Format),
                ("email".into(), ViolationKind::Format),
                ("lines[0].amount".into(), ViolationKind::Range),
            ]
        );
    }

    #[test]
    fn required_non_nullable_fields_need_a_value() {
        let violations = validate(&schema(), &json!({"id": "INV-2"}));
        assert_eq!(violations.len(), 1);
        assert_eq!(violations[0].field(), "total");
        assert_eq!(violations[0].kind, ViolationKind::Missing);
        assert!(violations[0].message.contains("'total' is required"));
    }

    #[test]
    fn wrong_types_are_reported_with_the_value() {
        let violations = validate(&schema(), &json!({"id": "INV-2", "total": "ten"}));
        assert_eq!(
            violations[0].message,
            "field 'total': expected number, got the string \"ten\""
        );
        assert_eq!(
            validate(&schema(), &json!([1]))[0].kind,
            ViolationKind::NotAnObject
        );
    }
}
