//! Grounding of extracted values: every string, number and date must be found in the source.
//!
//! - Strings go through the core aligner (exact → normalised → fuzzy); `email`/`uri` strings
//!   must match exactly or up to case (a fuzzy match would accept a wrong domain).
//! - Numbers must match a number or amount expression of the text after normalisation
//!   ([`Quantities`]): `1200000` is grounded by "$1.2 million".
//! - Dates (`format: date`, or a string that is an ISO date) must match a date expression:
//!   `2024-01-15` is grounded by "15 January 2024". A date-time grounds on its date part.
//! - Enums, booleans and `x-grounding: none` values are exempt; `null` needs no grounding.
//!
//! Values not in the document may be grounded by the person's clarifications; they then carry
//! [`GroundingStatus::Clarified`] and no document spans.

use std::sync::OnceLock;

use quarry_core::grounding::{AlignError, AlignOptions, AlignOrder, AlignmentStatus, align_all};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::quantities::Quantities;
use crate::schema::{FieldSpec, Format, GroundingPolicy, Kind, ValueSpec};
use crate::span::Span;
use crate::validate::is_iso_date;

/// One text values may be grounded in, with its quantities scanned once, when a number or a
/// date is first looked up: a schema of text fields never scans for them.
#[derive(Debug, Clone)]
pub struct Evidence<'t> {
    text: &'t str,
    quantities: OnceLock<Quantities>,
    /// Values the detectors found (a relative date resolved, a URL made absolute) with where,
    /// offered to the model as candidates: a chosen one is grounded by its detection.
    detected: Vec<(String, Span)>,
}

impl<'t> Evidence<'t> {
    pub fn new(text: &'t str) -> Self {
        Evidence {
            text,
            quantities: OnceLock::new(),
            detected: Vec::new(),
        }
    }

    /// This evidence, also grounding the detectors' `values` where they were found.
    pub(crate) fn with_detected(mut self, values: Vec<(String, Span)>) -> Self {
        self.detected = values;
        self
    }

    /// Where a detector found `value` (a date also matches a date-time found on that day).
    fn detected(&self, value: &str, date: bool) -> Option<Span> {
        self.detected
            .iter()
            .find(|(found, _)| found == value || (date && found.starts_with(value)))
            .map(|(_, span)| *span)
    }

    pub fn text(&self) -> &'t str {
        self.text
    }

    fn quantities(&self) -> &Quantities {
        self.quantities.get_or_init(|| Quantities::scan(self.text))
    }
}

/// How well a field's value is supported by the source; ordered from strongest to weakest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum GroundingStatus {
    /// Verbatim in the document.
    Exact,
    /// In the document after normalisation (case and punctuation for text; "$1.2 million" for
    /// numbers; "15 January 2024" for dates).
    Normalized,
    /// Stated by the person in a clarification, not in the document.
    Clarified,
    /// Approximately in the document (the aligner's fuzzy match).
    Fuzzy,
    /// Not checked: enum, boolean or `x-grounding: none`.
    Exempt,
    /// `null`: nothing to ground.
    Empty,
    /// Not found.
    NotFound,
}

/// The grounding of one top-level field's value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldGrounding {
    pub status: GroundingStatus,
    /// Where the value's parts occur in the document (code points), in value order.
    pub spans: Vec<Span>,
    /// 1.0 for exact and normalised matches, the aligner's score for fuzzy ones, less for a
    /// date-time whose time could not be checked; the minimum over the value's parts.
    pub strength: f32,
    /// One message per part that was not found, naming its path.
    pub problems: Vec<GroundingProblem>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroundingProblem {
    pub path: String,
    pub message: String,
}

/// A part of a value that needs grounding.
enum Leaf {
    Text { text: String, fuzzy: bool },
    Number(f64),
    Date { iso: String, has_time: bool },
}

struct PendingLeaf {
    field: usize,
    path: String,
    leaf: Leaf,
    /// The value as JSON, for messages.
    shown: String,
}

#[derive(Clone, Copy)]
struct Found {
    span: Option<Span>,
    status: GroundingStatus,
    strength: f32,
}

/// Grounds each field's value (`values[i]` belongs to `fields[i]`; `None` = absent).
pub fn ground_fields(
    fields: &[&FieldSpec],
    values: &[Option<&Value>],
    document: &Evidence<'_>,
    clarifications: &[Evidence<'_>],
) -> Vec<FieldGrounding> {
    let mut leaves = Vec::new();
    let mut exempt = vec![false; fields.len()];
    for (index, (field, value)) in fields.iter().zip(values).enumerate() {
        match value {
            Some(value) if !value.is_null() => {
                let mut saw_leaf = false;
                collect(
                    &field.spec,
                    value,
                    &field.name,
                    index,
                    &mut leaves,
                    &mut saw_leaf,
                );
                exempt[index] = !saw_leaf;
            }
            _ => {}
        }
    }
    let found = resolve(&leaves, document, clarifications);

    let mut results: Vec<FieldGrounding> = fields
        .iter()
        .zip(values)
        .enumerate()
        .map(|(index, (_, value))| {
            let status = match value {
                Some(Value::Array(items)) if items.is_empty() => GroundingStatus::Empty,
                Some(value) if !value.is_null() && exempt[index] => GroundingStatus::Exempt,
                Some(value) if !value.is_null() => GroundingStatus::Exact,
                _ => GroundingStatus::Empty,
            };
            FieldGrounding {
                status,
                spans: Vec::new(),
                strength: 1.0,
                problems: Vec::new(),
            }
        })
        .collect();
    for (pending, found) in leaves.iter().zip(found) {
        let result = &mut results[pending.field];
        match found {
            Some(found) => {
                result.status = result.status.max(found.status);
                result.strength = result.strength.min(found.strength);
                result.spans.extend(found.span);
            }
            None => {
                result.status = GroundingStatus::NotFound;
                result.strength = 0.0;
                result.problems.push(GroundingProblem {
                    path: pending.path.clone(),
                    message: not_found_message(pending),
                });
            }
        }
    }
    results
}

fn collect(
    spec: &ValueSpec,
    value: &Value,
    path: &str,
    field: usize,
    out: &mut Vec<PendingLeaf>,
    saw_leaf: &mut bool,
) {
    let spec = spec.branch_for(value);
    if spec.grounding == GroundingPolicy::None || spec.enum_values.is_some() {
        return;
    }
    let leaf = match (value, &spec.kind) {
        (Value::Null | Value::Bool(_), _) => return,
        (Value::Array(items), kind) => {
            let item_spec = match kind {
                Kind::Array(item_spec) => item_spec.as_ref().clone(),
                _ => ValueSpec::new(Kind::Any),
            };
            for (index, item) in items.iter().enumerate() {
                collect(
                    &item_spec,
                    item,
                    &format!("{path}[{index}]"),
                    field,
                    out,
                    saw_leaf,
                );
            }
            return;
        }
        (Value::Object(object), Kind::Object(children)) => {
            for child in children {
                if let Some(child_value) = object.get(&child.name) {
                    let child_path = format!("{path}.{}", child.name);
                    collect(&child.spec, child_value, &child_path, field, out, saw_leaf);
                }
            }
            return;
        }
        (Value::Object(_), _) => return,
        (Value::Number(number), _) => Leaf::Number(number.as_f64().unwrap_or(f64::NAN)),
        (Value::String(text), _) => string_leaf(spec.format, text),
    };
    *saw_leaf = true;
    out.push(PendingLeaf {
        field,
        path: path.to_owned(),
        leaf,
        shown: value.to_string(),
    });
}

fn string_leaf(format: Option<Format>, text: &str) -> Leaf {
    match format {
        Some(Format::Date | Format::DateTime) if text.len() >= 10 && is_iso_date(&text[..10]) => {
            Leaf::Date {
                iso: text[..10].to_owned(),
                has_time: text.len() > 10,
            }
        }
        Some(Format::Email | Format::Uri) => Leaf::Text {
            text: text.to_owned(),
            fuzzy: false,
        },
        _ if is_iso_date(text) => Leaf::Date {
            iso: text.to_owned(),
            has_time: false,
        },
        _ => Leaf::Text {
            text: text.to_owned(),
            fuzzy: true,
        },
    }
}

/// Finds each leaf in the document, else in a clarification.
fn resolve(
    leaves: &[PendingLeaf],
    document: &Evidence<'_>,
    clarifications: &[Evidence<'_>],
) -> Vec<Option<Found>> {
    let mut found = find_in(leaves, document);
    for clarification in clarifications {
        let missing: Vec<usize> = (0..leaves.len()).filter(|&i| found[i].is_none()).collect();
        if missing.is_empty() {
            break;
        }
        let subset: Vec<&PendingLeaf> = missing.iter().map(|&i| &leaves[i]).collect();
        for (&index, hit) in missing.iter().zip(find_in(&subset, clarification)) {
            found[index] = hit.map(|hit| Found {
                span: None,
                status: GroundingStatus::Clarified,
                strength: hit.strength,
            });
        }
    }
    found
}

fn find_in<L: std::borrow::Borrow<PendingLeaf>>(
    leaves: &[L],
    evidence: &Evidence<'_>,
) -> Vec<Option<Found>> {
    let mut found: Vec<Option<Found>> = vec![None; leaves.len()];
    // Texts are aligned in one batch per option set, so the source is indexed once.
    for fuzzy in [true, false] {
        let (indices, texts): (Vec<usize>, Vec<&str>) = leaves
            .iter()
            .enumerate()
            .filter_map(|(i, leaf)| match &leaf.borrow().leaf {
                Leaf::Text { text, fuzzy: f } if *f == fuzzy => Some((i, text.as_str())),
                _ => None,
            })
            .unzip();
        if texts.is_empty() {
            continue;
        }
        let options = AlignOptions {
            enable_fuzzy_alignment: fuzzy,
            order: AlignOrder::Any,
            ..AlignOptions::default()
        };
        for (index, result) in indices
            .into_iter()
            .zip(align_all(evidence.text, &texts, &options))
        {
            found[index] = match result {
                Ok(alignment) => Some(Found {
                    span: Some(Span {
                        start: alignment.start,
                        end: alignment.end,
                        byte_start: alignment.byte_start,
                        byte_end: alignment.byte_end,
                    }),
                    status: match alignment.status {
                        AlignmentStatus::Exact => GroundingStatus::Exact,
                        AlignmentStatus::Normalized => GroundingStatus::Normalized,
                        AlignmentStatus::Fuzzy | AlignmentStatus::Lesser => GroundingStatus::Fuzzy,
                    },
                    strength: alignment.score,
                }),
                Err(AlignError::Rejected(_) | AlignError::EmptySource) => {
                    let text = texts_of(leaves, index);
                    text_as_quantity(text, evidence).or_else(|| {
                        evidence.detected(text, false).map(|span| Found {
                            span: Some(span),
                            status: GroundingStatus::Normalized,
                            strength: 1.0,
                        })
                    })
                }
                // An empty string claims nothing.
                Err(AlignError::EmptyExtraction) => Some(Found {
                    span: None,
                    status: GroundingStatus::Exact,
                    strength: 1.0,
                }),
            };
        }
    }
    for (index, leaf) in leaves.iter().enumerate() {
        let hit = match &leaf.borrow().leaf {
            Leaf::Text { .. } => continue,
            Leaf::Number(value) => evidence
                .quantities()
                .find_number(*value)
                .map(|span| (span, 1.0)),
            Leaf::Date { iso, has_time } => {
                let strength = if *has_time { 0.8 } else { 1.0 };
                evidence
                    .quantities()
                    .find_date(iso)
                    .or_else(|| evidence.detected(iso, true))
                    .map(|span| (span, strength))
            }
        };
        found[index] = hit.map(|(span, strength)| Found {
            span: Some(span),
            status: GroundingStatus::Normalized,
            strength,
        });
    }
    found
}

fn texts_of<L: std::borrow::Borrow<PendingLeaf>>(leaves: &[L], index: usize) -> &str {
    match &leaves[index].borrow().leaf {
        Leaf::Text { text, .. } => text,
        _ => "",
    }
}

/// A string field holding a number ("1200") may be grounded by "1,200".
fn text_as_quantity(text: &str, evidence: &Evidence<'_>) -> Option<Found> {
    let cleaned: String = text
        .trim()
        .trim_start_matches(['$', '€', '£', '¥', '₹'])
        .chars()
        .filter(|c| *c != ',')
        .collect();
    let value: f64 = cleaned.parse().ok()?;
    evidence.quantities().find_number(value).map(|span| Found {
        span: Some(span),
        status: GroundingStatus::Normalized,
        strength: 1.0,
    })
}

fn not_found_message(pending: &PendingLeaf) -> String {
    let path = &pending.path;
    let shown = &pending.shown;
    match &pending.leaf {
        Leaf::Text { .. } => format!(
            "field '{path}': {shown} does not appear in the document; copy the value exactly as \
             the document writes it, or use null if the document does not state it"
        ),
        Leaf::Number(_) => format!(
            "field '{path}': {shown} does not appear in the document; quote the amount as written \
             (\"$1.2 million\" may be given as 1200000), or use null if the document does not state it"
        ),
        Leaf::Date { .. } => format!(
            "field '{path}': the date {shown} does not appear in the document; use a date the \
             document states, as YYYY-MM-DD, or null"
        ),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::Schema;

    fn ground(schema: &str, text: &str, value: Value) -> Vec<FieldGrounding> {
        let schema = Schema::parse(schema).unwrap();
        let fields: Vec<&FieldSpec> = schema.fields.iter().collect();
        let values: Vec<Option<&Value>> = fields.iter().map(|f| value.get(&f.name)).collect();
        ground_fields(&fields, &values, &Evidence::new(text), &[])
    }

    const SCHEMA: &str = r#"
fields:
  company: string
  revenue: number
  signed: date
  status: {type: string, enum: [open, closed]}
  summary: {type: string, x-grounding: none}
  people: {type: list, items: string}
"#;

    #[test]
    fn amount_in_words_grounds_the_normalised_number() {
        let text = "Acme Corp reported revenue of $1.2 million on 15 January 2024.";
        let results = ground(
            SCHEMA,
            text,
            json!({"company": "Acme Corp", "revenue": 1200000,
            "signed": "2024-01-15", "status": "open", "summary": "A good year", "people": []}),
        );
        let statuses: Vec<GroundingStatus> = results.iter().map(|r| r.status).collect();
        assert_eq!(
            statuses,
            [
                GroundingStatus::Exact,
                GroundingStatus::Normalized,
                GroundingStatus::Normalized,
                GroundingStatus::Exempt,
                GroundingStatus::Exempt,
                GroundingStatus::Empty,
            ]
        );
        let revenue = results[1].spans[0];
        assert_eq!(&text[revenue.byte_start..revenue.byte_end], "1.2 million");
        let signed = results[2].spans[0];
        assert_eq!(&text[signed.byte_start..signed.byte_end], "15 January 2024");
        assert_eq!((signed.start, signed.end), (46, 61));
    }

    #[test]
    fn hallucinated_values_name_their_path() {
        let text = "Acme Corp met Ann Lee; revenue 1,200.";
        let results = ground(
            SCHEMA,
            text,
            json!({"company": "Globex", "revenue": 1500,
            "people": ["Ann Lee", "Bob Stone"]}),
        );
        assert_eq!(results[0].status, GroundingStatus::NotFound);
        assert_eq!(results[1].status, GroundingStatus::NotFound);
        assert!(results[1].problems[0].message.starts_with(
            "field 'revenue': 1500 does not appear in the document; quote the amount as written"
        ));
        assert_eq!(results[5].problems.len(), 1);
        assert_eq!(results[5].problems[0].path, "people[1]");
        assert_eq!(results[5].spans.len(), 1);
    }

    #[test]
    fn clarifications_ground_values_the_document_lacks() {
        let schema = Schema::parse(SCHEMA).unwrap();
        let fields: Vec<&FieldSpec> = schema.fields.iter().collect();
        let value = json!({"revenue": 1500});
        let values: Vec<Option<&Value>> = fields.iter().map(|f| value.get(&f.name)).collect();
        let results = ground_fields(
            &fields,
            &values,
            &Evidence::new("No figures here."),
            &[Evidence::new("The revenue was $1,500.")],
        );
        assert_eq!(results[1].status, GroundingStatus::Clarified);
        assert!(results[1].spans.is_empty());
    }
}
