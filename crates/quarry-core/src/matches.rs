//! A value found in text, with its span in Unicode code points.

use serde::{Deserialize, Serialize};

/// The kind of a found value; serialised as the `type` of a `--detail` match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum MatchKind {
    Email,
    Url,
    Phone,
    Ip,
    Date,
    #[serde(rename = "datetime")]
    DateTime,
    Time,
    #[serde(rename = "daterange")]
    DateRange,
    Duration,
    /// A recurrence ("every Monday at 4pm"), as an ISO 8601 repeating interval.
    Set,
    Person,
    Organization,
    Location,
}

impl MatchKind {
    pub fn as_str(self) -> &'static str {
        match self {
            MatchKind::Email => "email",
            MatchKind::Url => "url",
            MatchKind::Phone => "phone",
            MatchKind::Ip => "ip",
            MatchKind::Date => "date",
            MatchKind::DateTime => "datetime",
            MatchKind::Time => "time",
            MatchKind::DateRange => "daterange",
            MatchKind::Duration => "duration",
            MatchKind::Set => "set",
            MatchKind::Person => "person",
            MatchKind::Organization => "organization",
            MatchKind::Location => "location",
        }
    }
}

/// One value found in a text. `start`/`end` are Unicode code-point offsets (end exclusive), so
/// `text.chars().skip(start).take(end - start)` is `self.text`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Match {
    pub text: String,
    pub start: usize,
    pub end: usize,
    /// The normalised value: ISO date/datetime, E.164 phone, canonical URL/email, entity name.
    pub value: String,
    #[serde(rename = "type")]
    pub kind: MatchKind,
}
