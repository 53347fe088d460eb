//! The result of an extraction: the object, per-field reports for `--explain`, and the outcome —
//! complete, or a question for a person naming each unresolved field.
//!
//! Confidence rule, per field:
//! - from grounding: exact or normalised match (strength ≥ 0.99) or stated in a clarification →
//!   high; a weaker normalised match (a date-time whose time could not be checked) or a fuzzy
//!   match with score ≥ 0.9 → medium; a weaker fuzzy match → low; exempt values (enum, boolean,
//!   `x-grounding: none`) and `null` (absence cannot be proven) → medium; unresolved → low;
//! - one level lower if the submission that supplied it needed repairs that suggest damage
//!   (syntax repairs, type coercions — not merely JSON found inside prose);
//! - one level lower if it was first accepted after the first model turn.

use quarry_llm::Usage;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::agent::FieldState;
use crate::candidates::Decoding;
use crate::check::{Problem, ProblemKind};
use crate::ground::GroundingStatus;
use crate::repair::lowers_confidence;
use crate::schema::Schema;
use crate::span::Span;

pub use quarry_core::model::Confidence;

/// One level less sure.
fn lower(level: Confidence) -> Confidence {
    match level {
        Confidence::High => Confidence::Medium,
        _ => Confidence::Low,
    }
}

/// Everything known about one top-level field (what `--explain` prints).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct FieldReport {
    pub name: String,
    /// The accepted value; `null` when the text has none or the field is unresolved.
    pub value: Value,
    /// Where the value occurs in the document: code points, end exclusive.
    pub spans: Vec<Span>,
    pub grounding: GroundingStatus,
    pub confidence: Confidence,
    /// The model turn that produced the value (1 = first); 0 if the model never gave one.
    pub attempts: u32,
    /// Repairs the lenient parser made to the submission that supplied the value.
    pub repairs: Vec<String>,
    /// Why the field is unresolved; empty when it is not.
    pub problems: Vec<Problem>,
    /// How the model's value was decoded: chosen among detector candidates, copied as a
    /// grounded span, written under the schema's grammar, or written freely.
    #[serde(default)]
    pub decoding: Decoding,
}

/// A field the engine could not resolve, for the person to answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct FieldIssue {
    pub field: String,
    pub description: Option<String>,
    /// The last value the model proposed (`null` if none).
    pub rejected_value: Value,
    pub problems: Vec<Problem>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    /// Every field passed (possibly as `null`: partial extraction is a success).
    Complete,
    /// Some fields are unresolved after every attempt; [`Extraction::value`] is the partial
    /// object. Answer the question by calling `extract` again with the answer appended to the
    /// clarifications.
    NeedsClarification {
        question: String,
        unresolved: Vec<FieldIssue>,
    },
}

/// A stretch of a long document the model never read: the first call for its chunk did not fit
/// the model's context window. The other chunks' results are kept; a field they leave without a
/// value is unresolved ([`ProblemKind::Unread`]) rather than `null`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct UnreadChunk {
    /// Where the chunk is in the document.
    pub span: Span,
    /// The provider's refusal.
    pub error: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Extraction {
    pub outcome: Outcome,
    /// One JSON object with every schema property in schema order, `null` where there is no
    /// (resolved) value.
    pub value: Value,
    pub fields: Vec<FieldReport>,
    /// Tokens of every model call, summed (transport retries included).
    pub usage: Usage,
    /// Model turns taken, over all chunks.
    pub model_calls: u32,
    /// 1 unless the document was chunked.
    pub chunks: usize,
    /// Chunks that did not fit the model's context window, in document order (when every chunk
    /// overflows, the extraction fails with [`EngineError::ContextOverflow`] instead).
    ///
    /// [`EngineError::ContextOverflow`]: crate::EngineError::ContextOverflow
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unread_chunks: Vec<UnreadChunk>,
}

impl Extraction {
    pub fn is_complete(&self) -> bool {
        self.outcome == Outcome::Complete
    }

    /// The clarification question, if the outcome asks one.
    pub fn question(&self) -> Option<&str> {
        match &self.outcome {
            Outcome::Complete => None,
            Outcome::NeedsClarification { question, .. } => Some(question),
        }
    }
}

/// Builds the extraction from per-field states (schema order).
pub(crate) fn assemble(
    schema: &Schema,
    mut states: Vec<FieldState>,
    usage: Usage,
    model_calls: u32,
    chunks: usize,
    unread_chunks: Vec<UnreadChunk>,
) -> Extraction {
    let mut value = Map::new();
    let mut reports = Vec::with_capacity(states.len());
    let mut unresolved = Vec::new();
    for (spec, state) in schema.fields.iter().zip(states.iter_mut()) {
        // Chunks do not check `required` (the value may be in another chunk): check it here.
        if state.passed && state.value.is_null() && !spec.may_be_null() {
            state.passed = false;
            state.problems = vec![Problem {
                path: spec.name.clone(),
                kind: ProblemKind::Missing,
                message: format!(
                    "field '{}' is required but has no value; find it in the document",
                    spec.name
                ),
            }];
        }
        if !state.passed && state.problems.is_empty() {
            state.problems.push(Problem {
                path: spec.name.clone(),
                kind: ProblemKind::Missing,
                message: format!("field '{}' was never given a valid value", spec.name),
            });
        }
        let accepted = if state.passed {
            state.value.clone()
        } else {
            Value::Null
        };
        value.insert(spec.name.clone(), accepted.clone());
        if !state.passed {
            unresolved.push(FieldIssue {
                field: spec.name.clone(),
                description: spec.spec.description.clone(),
                rejected_value: state.value.clone(),
                problems: state.problems.clone(),
            });
        }
        reports.push(FieldReport {
            name: spec.name.clone(),
            value: accepted,
            spans: if state.passed {
                state.grounding.spans.clone()
            } else {
                Vec::new()
            },
            grounding: if state.passed {
                state.grounding.status
            } else {
                GroundingStatus::NotFound
            },
            confidence: confidence(state),
            attempts: state.attempt,
            repairs: state.repairs.clone(),
            problems: if state.passed {
                Vec::new()
            } else {
                state.problems.clone()
            },
            decoding: state.decoding,
        });
    }
    let outcome = if unresolved.is_empty() {
        Outcome::Complete
    } else {
        Outcome::NeedsClarification {
            question: question(&unresolved),
            unresolved,
        }
    };
    Extraction {
        outcome,
        value: Value::Object(value),
        fields: reports,
        usage,
        model_calls,
        chunks,
        unread_chunks,
    }
}

fn confidence(state: &FieldState) -> Confidence {
    if !state.passed {
        return Confidence::Low;
    }
    let grounding = &state.grounding;
    let mut level = match grounding.status {
        GroundingStatus::Exact | GroundingStatus::Normalized if grounding.strength >= 0.99 => {
            Confidence::High
        }
        GroundingStatus::Exact | GroundingStatus::Normalized => Confidence::Medium,
        GroundingStatus::Clarified => Confidence::High,
        GroundingStatus::Fuzzy if grounding.strength >= 0.9 => Confidence::Medium,
        GroundingStatus::Fuzzy | GroundingStatus::NotFound => Confidence::Low,
        GroundingStatus::Exempt | GroundingStatus::Empty => Confidence::Medium,
    };
    if state.repairs.iter().any(|repair| lowers_confidence(repair)) {
        level = lower(level);
    }
    if state.attempt > 1 {
        level = lower(level);
    }
    level
}

/// A question for a person naming each unresolved field and why.
pub(crate) fn question(unresolved: &[FieldIssue]) -> String {
    let mut reasons = Vec::with_capacity(unresolved.len());
    for issue in unresolved {
        let name = match &issue.description {
            Some(description) => {
                format!("'{}' ({})", issue.field, description.trim_end_matches('.'))
            }
            None => format!("'{}'", issue.field),
        };
        let why: Vec<String> = issue
            .problems
            .iter()
            .map(|problem| reason(problem, &issue.field, &issue.rejected_value))
            .collect();
        reasons.push(format!("{name}: {}", why.join("; ")));
    }
    let names: Vec<String> = unresolved
        .iter()
        .map(|issue| format!("'{}'", issue.field))
        .collect();
    let count = if unresolved.len() == 1 {
        "1 field".to_owned()
    } else {
        format!("{} fields", unresolved.len())
    };
    format!(
        "I could not extract {count} reliably. {}. What are the correct values for {}? If the \
         document does not state one, say so.",
        reasons.join(". "),
        join_names(&names)
    )
}

fn reason(problem: &Problem, field: &str, rejected: &Value) -> String {
    match problem.kind {
        ProblemKind::Missing => "it is required, but I could not find it in the document".into(),
        ProblemKind::NotGrounded if problem.path == field => {
            format!("the value I extracted, {rejected}, does not appear in the document")
        }
        ProblemKind::NotGrounded => format!(
            "part of it ({}) does not appear in the document",
            problem.path
        ),
        ProblemKind::Invalid | ProblemKind::Unread => {
            let prefix = format!("field '{}': ", problem.path);
            problem
                .message
                .strip_prefix(&prefix)
                .unwrap_or(&problem.message)
                .to_owned()
        }
    }
}

fn join_names(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}
