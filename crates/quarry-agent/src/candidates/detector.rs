//! The detectors whose findings a field's model may choose among ([`Detector`]), and which of
//! them a string schema asks for (`x-detector`, else its `format`); the schema loaders check an
//! `x-detector` name against them.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What found a field's candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Detector {
    Email,
    Url,
    Date,
    DateTime,
    Time,
    Ip,
    Phone,
    Person,
    Organization,
    Location,
    Number,
    Integer,
    /// The text after the field's own name and a colon ("Location: Studio B").
    Label,
}

impl Detector {
    pub fn as_str(self) -> &'static str {
        match self {
            Detector::Email => "email",
            Detector::Url => "url",
            Detector::Date => "date",
            Detector::DateTime => "date-time",
            Detector::Time => "time",
            Detector::Ip => "ip",
            Detector::Phone => "phone",
            Detector::Person => "person",
            Detector::Organization => "organization",
            Detector::Location => "location",
            Detector::Number => "number",
            Detector::Integer => "integer",
            Detector::Label => "label",
        }
    }

    /// The detector a string schema asks for: `x-detector`, else its `format`.
    pub(super) fn for_string(object: &Map<String, Value>) -> Option<Detector> {
        if let Some(named) = object.get("x-detector").and_then(Value::as_str) {
            return match named {
                "email" => Some(Detector::Email),
                "url" | "uri" => Some(Detector::Url),
                "date" => Some(Detector::Date),
                "date-time" | "datetime" => Some(Detector::DateTime),
                "time" => Some(Detector::Time),
                "ip" => Some(Detector::Ip),
                "phone" => Some(Detector::Phone),
                "person" | "name" => Some(Detector::Person),
                "organization" | "organisation" | "company" => Some(Detector::Organization),
                "location" | "place" => Some(Detector::Location),
                _ => None,
            };
        }
        match object.get("format").and_then(Value::as_str)? {
            "email" | "idn-email" => Some(Detector::Email),
            "uri" | "iri" => Some(Detector::Url),
            "date" => Some(Detector::Date),
            "date-time" => Some(Detector::DateTime),
            "time" => Some(Detector::Time),
            "ipv4" | "ipv6" => Some(Detector::Ip),
            _ => None,
        }
    }
}

/// The names `x-detector` accepts, for the schema loader's message.
pub const DETECTOR_NAMES: &str =
    "email, url, date, date-time, time, ip, phone, person, organization, location";

/// Whether `name` is a value `x-detector` accepts.
pub fn is_detector_name(name: &str) -> bool {
    let probe = serde_json::json!({ "x-detector": name });
    probe
        .as_object()
        .is_some_and(|object| Detector::for_string(object).is_some())
}
