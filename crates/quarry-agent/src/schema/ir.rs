//! The IR of an extraction schema: the fields ([`FieldSpec`]) and what their values must look like
//! ([`ValueSpec`], [`Kind`], [`Format`], [`Bound`], [`GroundingPolicy`]), and why a schema could
//! not be loaded ([`SchemaError`]). Both schema forms load into it (see `json_schema.rs` and
//! [`quarry_format`](super::quarry_format)); what it is for is told in the module docs of
//! [`crate::schema`].

use std::fmt;

use serde_json::Value;
use thiserror::Error;

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

/// What a value must look like, as far as the prompt, coercion and grounding need to know. The
/// authority checks every keyword, including those the IR does not keep (`if`, `not`, …).
#[derive(Debug, Clone)]
pub struct ValueSpec {
    pub kind: Kind,
    /// The type admits `null` (`["string", "null"]`, `anyOf [.., {type: null}]`, `nullable: true`).
    pub nullable: bool,
    /// `title`, used to name the options of a union in the prompt.
    pub title: Option<String>,
    pub description: Option<String>,
    /// `enum`, or `const` as a one-value list (without `null`, which sets `nullable`).
    pub enum_values: Option<Vec<Value>>,
    pub format: Option<Format>,
    /// The `pattern` source (ECMA-262 dialect; the authority compiles and checks it).
    pub pattern: Option<String>,
    pub minimum: Option<Bound>,
    pub maximum: Option<Bound>,
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
    pub grounding: GroundingPolicy,
    /// `x-detector` (the YAML form: `type: phone`, `person`, `organization`, `location`): the
    /// detector whose findings the model chooses among (see [`crate::candidates`]).
    pub detector: Option<String>,
}

impl ValueSpec {
    pub(crate) fn new(kind: Kind) -> Self {
        ValueSpec {
            kind,
            nullable: false,
            title: None,
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
            detector: None,
        }
    }

    /// A short type label for prompts and messages: `number`, `list of string`, `date`,
    /// `string or integer`, `Cat or Dog`.
    pub fn type_label(&self) -> String {
        let base = match (&self.kind, self.format) {
            (Kind::String, Some(format)) => format.as_str().to_owned(),
            (Kind::Array(items), _) => format!("list of {}", items.type_label()),
            (Kind::Union(options), _) => options
                .iter()
                .map(|option| match (&option.kind, &option.title) {
                    (Kind::Object(_), Some(title)) => title.clone(),
                    _ => option.type_label(),
                })
                .collect::<Vec<_>>()
                .join(" or "),
            (kind, _) => kind.as_str().to_owned(),
        };
        if self.nullable {
            format!("{base} or null")
        } else {
            base
        }
    }

    /// The option of a union that `value` most likely took (the spec itself when it is not a
    /// union): the first option of the value's JSON type, and among object options the one whose
    /// `const`/`enum` fields (a discriminator) and field names fit the value best.
    /// A string (or a list of strings) with no format, pattern or enum that must be grounded:
    /// what a grounded decoder copies from the document.
    pub fn is_plain_text(&self) -> bool {
        let plain = |spec: &ValueSpec| {
            matches!(spec.kind, Kind::String)
                && spec.format.is_none()
                && spec.pattern.is_none()
                && spec.enum_values.is_none()
                && spec.grounding == GroundingPolicy::Required
        };
        match &self.kind {
            Kind::Array(items) => plain(items),
            _ => plain(self),
        }
    }

    pub fn is_list(&self) -> bool {
        matches!(self.kind, Kind::Array(_))
    }

    pub fn branch_for(&self, value: &Value) -> &ValueSpec {
        let Kind::Union(options) = &self.kind else {
            return self;
        };
        let score = |option: &ValueSpec| -> i64 {
            match (&option.kind, value) {
                (Kind::Object(fields), Value::Object(object)) => {
                    let mut score = 1;
                    for field in fields {
                        match (object.get(&field.name), &field.spec.enum_values) {
                            (Some(found), Some(allowed)) if allowed.contains(found) => score += 100,
                            (Some(_), Some(_)) => score -= 100,
                            (Some(_), None) => score += 1,
                            (None, _) => {}
                        }
                    }
                    score
                }
                (kind, value) if kind_admits(kind, value) => 1,
                _ => i64::MIN,
            }
        };
        options
            .iter()
            .map(|option| (score(option), option))
            .filter(|(score, _)| *score > i64::MIN)
            .fold(
                None::<(i64, &ValueSpec)>,
                |best, (score, option)| match best {
                    Some((best_score, _)) if best_score >= score => best,
                    _ => Some((score, option)),
                },
            )
            .map_or(self, |(_, option)| option.branch_for(value))
    }
}

/// Whether a value of `value`'s JSON type can be of `kind` (an integer is a number).
fn kind_admits(kind: &Kind, value: &Value) -> bool {
    match kind {
        Kind::String => value.is_string(),
        Kind::Integer => value.as_f64().is_some_and(|n| n.fract() == 0.0),
        Kind::Number => value.is_number(),
        Kind::Boolean => value.is_boolean(),
        Kind::Array(_) => value.is_array(),
        Kind::Object(_) => value.is_object(),
        Kind::Union(options) => options
            .iter()
            .any(|option| kind_admits(&option.kind, value)),
        Kind::Any => true,
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
    /// A value of one of several shapes (`anyOf`/`oneOf` with more than one non-null option, or
    /// a `type` listing several types), in the schema's order.
    Union(Vec<ValueSpec>),
    /// No type given, or a shape the IR does not describe (a recursive `$ref`): any JSON value as
    /// far as the IR knows; the authority still checks it.
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
            Kind::Union(_) => "union",
            Kind::Any => "any",
        }
    }
}

/// The `format`s Quarry claims; the authority checks each (RFC 3339 dates and times, ISO 8601
/// durations, RFC 5321/6531 addresses, RFC 1123/5890 host names, RFC 3986/3987 URIs and IRIs,
/// RFC 4122 UUIDs, JSON pointers, ECMA-262 regexes, RFC 6570 URI templates). A `format` outside
/// this list is refused when the schema is loaded, never ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Date,
    DateTime,
    Time,
    Duration,
    Email,
    IdnEmail,
    Hostname,
    IdnHostname,
    Ipv4,
    Ipv6,
    Uri,
    UriReference,
    Iri,
    IriReference,
    UriTemplate,
    Uuid,
    JsonPointer,
    RelativeJsonPointer,
    Regex,
}

impl Format {
    /// Every claimed format, in the order error messages list them.
    pub const ALL: [Format; 19] = [
        Format::Date,
        Format::DateTime,
        Format::Time,
        Format::Duration,
        Format::Email,
        Format::IdnEmail,
        Format::Hostname,
        Format::IdnHostname,
        Format::Ipv4,
        Format::Ipv6,
        Format::Uri,
        Format::UriReference,
        Format::Iri,
        Format::IriReference,
        Format::UriTemplate,
        Format::Uuid,
        Format::JsonPointer,
        Format::RelativeJsonPointer,
        Format::Regex,
    ];

    /// The format a JSON Schema `format` names, spelled exactly as the specification does.
    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL
            .into_iter()
            .find(|format| format.as_str() == name)
    }

    /// Like [`Format::from_name`], also accepting the YAML form's aliases (`datetime`, `url`).
    pub fn parse(name: &str) -> Option<Format> {
        match name {
            "datetime" => Some(Format::DateTime),
            "url" => Some(Format::Uri),
            _ => Format::from_name(name),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Format::Date => "date",
            Format::DateTime => "date-time",
            Format::Time => "time",
            Format::Duration => "duration",
            Format::Email => "email",
            Format::IdnEmail => "idn-email",
            Format::Hostname => "hostname",
            Format::IdnHostname => "idn-hostname",
            Format::Ipv4 => "ipv4",
            Format::Ipv6 => "ipv6",
            Format::Uri => "uri",
            Format::UriReference => "uri-reference",
            Format::Iri => "iri",
            Format::IriReference => "iri-reference",
            Format::UriTemplate => "uri-template",
            Format::Uuid => "uuid",
            Format::JsonPointer => "json-pointer",
            Format::RelativeJsonPointer => "relative-json-pointer",
            Format::Regex => "regex",
        }
    }
}

/// A loaded schema's parts, before [`Schema::finish`](super::Schema) compiles them: its name,
/// description, top-level fields and the JSON Schema the model sees.
pub(super) type Parts = (String, Option<String>, Vec<FieldSpec>, Value);

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
