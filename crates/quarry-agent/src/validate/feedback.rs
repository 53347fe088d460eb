//! The authority's errors as the model's feedback: the instance location becomes a field path
//! (`lines[0].amount`) and the error a plain sentence saying what is wrong and, where it helps,
//! how to write it (`write it as YYYY-MM-DD`). A union that nothing fits names its options and
//! why the closest one failed. The kinds a violation is sorted into ([`ViolationKind`]) and the
//! short descriptions of values the sentences use ([`describe`]) live here too.

use jsonschema::ValidationError;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::paths::{Location, LocationSegment};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::schema::{Kind, Schema, ValueSpec};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ViolationKind {
    NotAnObject,
    /// Required (`required`, `dependentRequired`) but absent or `null`.
    Missing,
    Type,
    /// `enum` or `const`.
    Enum,
    Format,
    Pattern,
    /// `minimum`, `maximum`, their exclusive forms, `multipleOf`.
    Range,
    /// `minLength`/`maxLength`, `minItems`/`maxItems`, `minProperties`/`maxProperties`,
    /// `minContains`/`maxContains`.
    Length,
    /// `uniqueItems`.
    Unique,
    /// Properties or items the schema does not allow (`additionalProperties`,
    /// `unevaluatedProperties`, `unevaluatedItems`, `propertyNames`, a `false` schema).
    Unexpected,
    /// `anyOf`/`oneOf`: no option fits, or (`oneOf`) several do.
    Union,
    /// Another rule: `not`, `contains`, and what the crate reports beyond the above.
    Rule,
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

/// One error, explained: `path` is the instance's field path (for `required`, the missing
/// property's), `sentence` has no path in it.
pub(super) struct Explained {
    pub path: String,
    pub kind: ViolationKind,
    pub sentence: String,
}

pub(super) fn explain(schema: &Schema, instance: &Value, error: &ValidationError<'_>) -> Explained {
    let path = field_path(error.instance_path());
    let value = error.instance();
    let shown = value.to_string();
    let (kind, sentence) = match error.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_owned);
            return Explained {
                path: child(&path, &name),
                kind: ViolationKind::Missing,
                sentence: String::new(),
            };
        }
        // A `null` where a declared property's schema does not admit it: missing, for Quarry
        // (a `null` under `additionalProperties` and the like is just a wrong value).
        _ if value.is_null()
            && ends_in_property(error.instance_path())
            && spec_at(schema, instance, &path).is_some() =>
        {
            return Explained {
                path,
                kind: ViolationKind::Missing,
                sentence: String::new(),
            };
        }
        ValidationErrorKind::Type { kind } => (
            ViolationKind::Type,
            format!("expected {}, got {}", type_names(kind), describe(value)),
        ),
        ValidationErrorKind::Enum { options } => (
            ViolationKind::Enum,
            format!("{shown} is not one of {}", list(options)),
        ),
        ValidationErrorKind::Constant { expected_value } => (
            ViolationKind::Enum,
            format!("{shown} must be exactly {expected_value}"),
        ),
        ValidationErrorKind::Format { format } => (
            ViolationKind::Format,
            format_hint(format, value.as_str().unwrap_or(&shown)),
        ),
        ValidationErrorKind::Pattern { pattern } => (
            ViolationKind::Pattern,
            format!("{shown} does not match the pattern {pattern}"),
        ),
        ValidationErrorKind::BacktrackLimitExceeded { .. }
        | ValidationErrorKind::RegexEngineFailure { .. } => (
            ViolationKind::Pattern,
            format!("{shown} could not be checked against the field's pattern (it is too complex)"),
        ),
        ValidationErrorKind::MinLength { limit } => (
            ViolationKind::Length,
            format!("{shown} is shorter than {limit} characters"),
        ),
        ValidationErrorKind::MaxLength { limit } => (
            ViolationKind::Length,
            format!("{shown} is longer than {limit} characters"),
        ),
        ValidationErrorKind::Minimum { limit } => (
            ViolationKind::Range,
            format!("{shown} must be at least {limit}"),
        ),
        ValidationErrorKind::ExclusiveMinimum { limit } => (
            ViolationKind::Range,
            format!("{shown} must be above {limit}"),
        ),
        ValidationErrorKind::Maximum { limit } => (
            ViolationKind::Range,
            format!("{shown} must be at most {limit}"),
        ),
        ValidationErrorKind::ExclusiveMaximum { limit } => (
            ViolationKind::Range,
            format!("{shown} must be below {limit}"),
        ),
        ValidationErrorKind::MultipleOf { multiple_of } => (
            ViolationKind::Range,
            format!("{shown} must be a multiple of {multiple_of}"),
        ),
        ValidationErrorKind::MinItems { limit } => (
            ViolationKind::Length,
            format!("needs at least {limit} item(s), got {}", count(value)),
        ),
        ValidationErrorKind::MaxItems { limit } => (
            ViolationKind::Length,
            format!("allows at most {limit} item(s), got {}", count(value)),
        ),
        ValidationErrorKind::MinProperties { limit } => (
            ViolationKind::Length,
            format!("needs at least {limit} propert(ies), got {}", count(value)),
        ),
        ValidationErrorKind::MaxProperties { limit } => (
            ViolationKind::Length,
            format!("allows at most {limit} propert(ies), got {}", count(value)),
        ),
        ValidationErrorKind::UniqueItems => (
            ViolationKind::Unique,
            "the items must all be different; remove the repeated ones".to_owned(),
        ),
        ValidationErrorKind::AdditionalProperties { unexpected }
        | ValidationErrorKind::UnevaluatedProperties { unexpected } => (
            ViolationKind::Unexpected,
            format!(
                "has properties the schema does not allow: {}; remove them",
                unexpected.join(", ")
            ),
        ),
        ValidationErrorKind::UnevaluatedItems { unexpected } => (
            ViolationKind::Unexpected,
            format!(
                "has items the schema does not allow: {}; remove them",
                unexpected.join(", ")
            ),
        ),
        ValidationErrorKind::FalseSchema => (
            ViolationKind::Unexpected,
            format!(
                "no value is allowed here, got {}; leave it out",
                describe(value)
            ),
        ),
        ValidationErrorKind::PropertyNames { error } => (
            ViolationKind::Unexpected,
            format!(
                "has a property name that is not allowed: {}",
                explain(schema, instance, error).sentence
            ),
        ),
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
            (
                ViolationKind::Union,
                no_option_fits(schema, instance, &path, &brief(value), context),
            )
        }
        ValidationErrorKind::OneOfMultipleValid { .. } => (
            ViolationKind::Union,
            format!(
                "{} fits more than one of {}, and must fit exactly one; make it \
                 unambiguous (e.g. set the field that tells the options apart)",
                brief(value),
                options_label(spec_at(schema, instance, &path))
            ),
        ),
        ValidationErrorKind::Not { schema: forbidden } => (
            ViolationKind::Rule,
            format!("{shown} must not match {forbidden}"),
        ),
        ValidationErrorKind::Contains => (
            ViolationKind::Rule,
            "not enough of the items (or too many) fit what the list must contain".to_owned(),
        ),
        _ => (ViolationKind::Rule, error.to_string()),
    };
    Explained {
        path,
        kind,
        sentence,
    }
}

/// Why nothing fits a union: its options, and the first reason the closest (fewest errors) fails.
fn no_option_fits(
    schema: &Schema,
    instance: &Value,
    path: &str,
    shown: &str,
    context: &[Vec<ValidationError<'static>>],
) -> String {
    let spec = spec_at(schema, instance, path);
    let closest = context
        .iter()
        .enumerate()
        .filter(|(_, errors)| !errors.is_empty())
        .min_by_key(|(_, errors)| errors.len());
    let mut sentence = format!("{shown} fits none of {}", options_label(spec));
    if let Some((index, errors)) = closest {
        let reason = explain(schema, instance, &errors[0]);
        let name = option_name(spec, index, context.len());
        let at = if reason.path == path || reason.path.is_empty() {
            String::new()
        } else {
            format!("at '{}', ", reason.path)
        };
        let why = match reason.kind {
            ViolationKind::Missing => format!("'{}' is required", reason.path),
            _ => format!("{at}{}", reason.sentence),
        };
        sentence.push_str(&format!("; the closest, {name}, fails: {why}"));
    }
    sentence
}

/// `the options (string or integer)`, from the IR when it knows the union.
fn options_label(spec: Option<&ValueSpec>) -> String {
    match spec {
        Some(spec) if matches!(spec.kind, Kind::Union(_)) => {
            let mut plain = spec.clone();
            plain.nullable = false;
            format!("the options ({})", plain.type_label())
        }
        _ => "the options the schema allows".to_owned(),
    }
}

fn option_name(spec: Option<&ValueSpec>, index: usize, count: usize) -> String {
    if let Some(ValueSpec {
        kind: Kind::Union(options),
        ..
    }) = spec
        && options.len() == count
        && let Some(option) = options.get(index)
    {
        return match (&option.title, &option.kind) {
            (Some(title), _) => title.clone(),
            (None, _) => option.type_label(),
        };
    }
    format!("option {}", index + 1)
}

/// The IR spec for the value at `path`, following object fields, list items and the union
/// option each value most likely took.
fn spec_at<'s>(schema: &'s Schema, instance: &Value, path: &str) -> Option<&'s ValueSpec> {
    let mut segments = path_segments(path).into_iter();
    let first = segments.next()?;
    let mut spec = &schema.field(&first)?.spec;
    let mut value = instance.get(&first)?;
    for segment in segments {
        let branch = spec.branch_for(value);
        match (&branch.kind, segment.parse::<usize>()) {
            (Kind::Array(items), Ok(index)) => {
                spec = items;
                value = value.get(index)?;
            }
            (Kind::Object(fields), _) => {
                spec = &fields.iter().find(|field| field.name == segment)?.spec;
                value = value.get(&segment)?;
            }
            _ => return None,
        }
    }
    Some(spec)
}

/// `lines[0].amount` → `lines`, `0`, `amount`.
fn path_segments(path: &str) -> Vec<String> {
    path.split(['.', '['])
        .filter(|segment| !segment.is_empty())
        .map(|segment| segment.trim_end_matches(']').to_owned())
        .collect()
}

/// `/lines/0/amount` → `lines[0].amount`.
fn field_path(location: &Location) -> String {
    let mut path = String::new();
    for segment in location.iter() {
        match segment {
            LocationSegment::Index(index) => path.push_str(&format!("[{index}]")),
            LocationSegment::Property(name) => path = child(&path, &name),
        }
    }
    path
}

fn ends_in_property(location: &Location) -> bool {
    matches!(location.iter().last(), Some(LocationSegment::Property(_)))
}

fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

fn type_names(kind: &TypeKind) -> String {
    match kind {
        TypeKind::Single(single) => single.to_string(),
        TypeKind::Multiple(set) => set
            .iter()
            .map(|single| single.to_string())
            .collect::<Vec<_>>()
            .join(" or "),
    }
}

fn list(options: &Value) -> String {
    match options {
        Value::Array(values) => values
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    }
}

/// A scalar as JSON (`"A-7"`, `true`), a list or object by its shape (`an object`).
fn brief(value: &Value) -> String {
    match value {
        Value::Array(_) | Value::Object(_) => describe(value),
        scalar => scalar.to_string(),
    }
}

fn count(value: &Value) -> usize {
    match value {
        Value::Array(items) => items.len(),
        Value::Object(members) => members.len(),
        _ => 0,
    }
}

/// What is wrong with a string of a `format`, and how to write one.
fn format_hint(format: &str, text: &str) -> String {
    let how = match format {
        "date" => "a date; write it as YYYY-MM-DD",
        "date-time" => "a date-time; write it as YYYY-MM-DDTHH:MM:SS with an offset (Z or +01:00)",
        "time" => "a time; write it as HH:MM:SS with an offset (e.g. 14:30:00Z)",
        "duration" => "an ISO 8601 duration (e.g. P3D, PT1H30M)",
        "email" | "idn-email" => "an email address",
        "hostname" | "idn-hostname" => "a host name (e.g. example.com)",
        "ipv4" => "an IPv4 address (e.g. 192.0.2.1)",
        "ipv6" => "an IPv6 address (e.g. 2001:db8::1)",
        "uri" | "iri" => "an absolute URI (e.g. https://example.com/path)",
        "uri-reference" | "iri-reference" => "a URI reference (e.g. /path or https://example.com)",
        "uuid" => "a UUID (32 hex digits as 8-4-4-4-12)",
        _ => return format!("{text:?} is not a valid {format}"),
    };
    format!("{text:?} is not {how}")
}
