//! Checking one submission: lenient parse → coerce → validate → ground, field by field.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ground::{Evidence, FieldGrounding, GroundingStatus, ground_fields};
use crate::repair::read_extraction;
use crate::schema::{FieldSpec, Schema};
use crate::validate::{ViolationKind, validate};

/// Something wrong with a field's value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Problem {
    /// `total`, `lines[1].amount`.
    pub path: String,
    pub kind: ProblemKind,
    /// The sentence the model was given, naming the field and why.
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ProblemKind {
    /// Required, but no value was given.
    Missing,
    /// The value breaks the schema (type, enum, format, pattern, range, length).
    Invalid,
    /// The value is not in the document (nor in a clarification).
    NotGrounded,
    /// No value was found, and part of the document was never read: its chunk did not fit the
    /// model's context window.
    Unread,
}

/// The verdict on one submission.
#[derive(Debug, Clone)]
pub(crate) struct Checked {
    /// One per schema field, in schema order (empty when unreadable).
    pub fields: Vec<FieldCheck>,
    pub repairs: Vec<String>,
    /// Why nothing could be read, if so.
    pub unreadable: Option<String>,
}

#[derive(Debug, Clone)]
pub(crate) struct FieldCheck {
    pub name: String,
    pub value: Value,
    pub grounding: FieldGrounding,
    pub problems: Vec<Problem>,
}

impl Checked {
    pub(crate) fn passed(&self) -> bool {
        self.unreadable.is_none() && self.fields.iter().all(|field| field.problems.is_empty())
    }
}

/// What the check needs besides the submission.
pub(crate) struct CheckContext<'a, 't> {
    pub schema: &'a Schema,
    pub document: &'a Evidence<'t>,
    pub clarifications: &'a [Evidence<'t>],
    /// Whether a required field without a value is a problem. Off for a chunk of a long document:
    /// the value may be in another chunk, so `required` is checked after merging.
    pub enforce_required: bool,
}

pub(crate) fn check(raw: &str, context: &CheckContext<'_, '_>) -> Checked {
    let schema = context.schema;
    let repaired = match read_extraction(raw, schema) {
        Ok(repaired) => repaired,
        Err(reason) => return unreadable(reason, Vec::new()),
    };
    let value = unwrap_envelope(repaired.value, schema);
    let Some(object) = value.as_object() else {
        let reason = format!(
            "expected a JSON object with the schema's fields, got {}",
            crate::validate::describe(&value)
        );
        return unreadable(reason, repaired.repairs);
    };

    // Every violation belongs to a field: keys that are not fields are not validated (the result
    // never carries them), and rules on the object as a whole are refused when the schema loads.
    let mut violations = validate(schema, &value);
    let mut fields: Vec<FieldCheck> = Vec::with_capacity(schema.fields.len());
    for spec in &schema.fields {
        let field_value = object.get(&spec.name);
        let problems = violations
            .extract_if(.., |v| v.field() == spec.name)
            .filter(|v| context.enforce_required || v.kind != ViolationKind::Missing)
            .map(|v| Problem {
                path: v.path,
                kind: if v.kind == ViolationKind::Missing {
                    ProblemKind::Missing
                } else {
                    ProblemKind::Invalid
                },
                message: v.message,
            })
            .collect();
        fields.push(FieldCheck {
            name: spec.name.clone(),
            value: field_value.cloned().unwrap_or(Value::Null),
            grounding: FieldGrounding {
                status: GroundingStatus::Empty,
                spans: Vec::new(),
                strength: 0.0,
                problems: Vec::new(),
            },
            problems,
        });
    }

    // Only values that conform are worth grounding; a wrong type is already reported.
    let to_ground: Vec<usize> = (0..fields.len())
        .filter(|&i| fields[i].problems.is_empty())
        .collect();
    let specs: Vec<&FieldSpec> = to_ground.iter().map(|&i| &schema.fields[i]).collect();
    let values: Vec<Option<&Value>> = to_ground.iter().map(|&i| Some(&fields[i].value)).collect();
    let groundings = ground_fields(&specs, &values, context.document, context.clarifications);
    for (index, grounding) in to_ground.into_iter().zip(groundings) {
        let field = &mut fields[index];
        field
            .problems
            .extend(grounding.problems.iter().map(|p| Problem {
                path: p.path.clone(),
                kind: ProblemKind::NotGrounded,
                message: p.message.clone(),
            }));
        field.grounding = grounding;
    }
    Checked {
        fields,
        repairs: repaired.repairs,
        unreadable: None,
    }
}

fn unreadable(reason: String, repairs: Vec<String>) -> Checked {
    Checked {
        fields: Vec::new(),
        repairs,
        unreadable: Some(reason),
    }
}

/// Accepts `{"extraction": {...}}` (the shape a model guesses from the tool's name) as the
/// extraction itself, unless the schema has a field called `extraction`.
fn unwrap_envelope(value: Value, schema: &Schema) -> Value {
    if schema.field("extraction").is_some() {
        return value;
    }
    match value {
        Value::Object(mut object) if object.len() == 1 && object.contains_key("extraction") => {
            match object.remove("extraction") {
                Some(inner @ Value::Object(_)) => inner,
                Some(other) => {
                    object.insert("extraction".to_owned(), other);
                    Value::Object(object)
                }
                None => Value::Object(object),
            }
        }
        other => other,
    }
}
