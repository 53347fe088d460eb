//! Validation of an extraction against the schema. The verdict is the authority's (the
//! `jsonschema` crate, every JSON Schema 2020-12 keyword; see [`crate::schema`]); this module
//! applies Quarry's own rule on top and phrases each failure as the sentence the model is sent
//! back (`feedback.rs`). Violations are data, each naming the field path.
//!
//! Quarry's rule (see [`crate::schema`]): the model writes every field, `null` where the text has
//! no value. So before the authority sees an extraction, a `null` is dropped wherever the IR says
//! the property is not required (JSON Schema's "absent"), keys that are not fields are dropped
//! (the result never carries them), and a required property that is absent, or `null` where its
//! schema does not admit `null`, is reported as [`ViolationKind::Missing`] — which a chunk of a
//! long document may leave for another chunk.

mod feedback;

pub use feedback::ViolationKind;
pub(crate) use feedback::describe;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::schema::{FieldSpec, Kind, Schema, ValueSpec};

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

/// Checks the whole extraction.
pub fn validate(schema: &Schema, value: &Value) -> Vec<Violation> {
    let Some(object) = value.as_object() else {
        return vec![Violation {
            path: String::new(),
            kind: ViolationKind::NotAnObject,
            message: format!(
                "the extraction must be a JSON object with the schema's fields, got {}",
                describe(value)
            ),
        }];
    };
    check(schema, object, None, &|path| path.to_owned())
}

/// Checks one top-level field of `schema` (`None` when absent); messages name `path` in the
/// field's place (the pipeline's field agents check `{"value": …}` for a field of an entity).
pub fn validate_field(
    schema: &Schema,
    field: &FieldSpec,
    value: Option<&Value>,
    path: &str,
    out: &mut Vec<Violation>,
) {
    let mut object = Map::new();
    if let Some(value) = value {
        object.insert(field.name.clone(), value.clone());
    }
    let rename = |inner: &str| format!("{path}{}", inner.get(field.name.len()..).unwrap_or(""));
    out.extend(check(schema, &object, Some(&field.name), &rename));
}

/// The violations of the fields in `object` (of `only`, if given), their paths passed through
/// `rename`, in schema field order.
fn check(
    schema: &Schema,
    object: &Map<String, Value>,
    only: Option<&str>,
    rename: &dyn Fn(&str) -> String,
) -> Vec<Violation> {
    let instance = Value::Object(
        schema
            .fields
            .iter()
            .filter_map(|field| {
                let value = object.get(&field.name)?;
                if value.is_null() && !field.required {
                    return None;
                }
                Some((
                    field.name.clone(),
                    without_optional_nulls(&field.spec, value),
                ))
            })
            .collect(),
    );
    let mut found: Vec<feedback::Explained> = Vec::new();
    for error in schema.authority.errors(&instance) {
        let explained = feedback::explain(schema, &instance, &error);
        if only.is_some_and(|name| top_level(&explained.path) != name) {
            continue;
        }
        let repeated = explained.kind == ViolationKind::Missing
            && found
                .iter()
                .any(|seen| seen.kind == ViolationKind::Missing && seen.path == explained.path);
        if !repeated {
            found.push(explained);
        }
    }
    let order = |explained: &feedback::Explained| {
        let field = top_level(&explained.path);
        schema.fields.iter().position(|spec| spec.name == field)
    };
    found.sort_by_key(order);
    found
        .into_iter()
        .map(|explained| {
            let path = rename(&explained.path);
            let message = match (explained.kind, path.as_str()) {
                (ViolationKind::Missing, _) => {
                    format!("field '{path}' is required but has no value; find it in the document")
                }
                (_, "") => format!("the extraction: {}", explained.sentence),
                _ => format!("field '{path}': {}", explained.sentence),
            };
            Violation {
                path,
                kind: explained.kind,
                message,
            }
        })
        .collect()
}

/// `value` with the `null`s of properties the IR does not require dropped, at every depth the
/// IR describes (through the union option the value most likely took).
fn without_optional_nulls(spec: &ValueSpec, value: &Value) -> Value {
    let spec = spec.branch_for(value);
    match (&spec.kind, value) {
        (Kind::Object(fields), Value::Object(object)) => Value::Object(
            object
                .iter()
                .filter_map(|(name, child)| {
                    let Some(field) = fields.iter().find(|field| &field.name == name) else {
                        return Some((name.clone(), child.clone()));
                    };
                    if child.is_null() && !field.required {
                        return None;
                    }
                    Some((name.clone(), without_optional_nulls(&field.spec, child)))
                })
                .collect(),
        ),
        (Kind::Array(items), Value::Array(values)) => Value::Array(
            values
                .iter()
                .map(|item| without_optional_nulls(items, item))
                .collect(),
        ),
        _ => value.clone(),
    }
}

pub(crate) fn is_iso_date(text: &str) -> bool {
    text.len() == 10 && chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").is_ok()
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
