//! The `extract` skill: input validation and the contract's output shape, shared by every host
//! (CLI, JSONL batch, HTTP) so they answer byte-for-byte alike.
//!
//! Output rules (extract-skill-contract.md §5, plus Quarry's decisions where it is silent):
//! - `{"<target>": value}` where value is one string for one distinct value, a list for several
//!   and `[]` for none; repeated values are listed once, in order of first appearance.
//! - email, url, name, ip: the text as written; phone: E.164; date: the ISO calendar date of each
//!   date, datetime or date range (ranges as an ISO interval `start/end`); times and durations
//!   without a date appear only in `matches`.
//! - entity: `{"entity": {"people": [...], "organizations": [...], "locations": [...]}}`, always lists.
//! - with `detail`, a `matches` list of every match with code-point offsets and normalised value.

use chrono::{DateTime, FixedOffset};
use quarry_core::guardrail::{Verdict, check_output};
use quarry_core::{Match, MatchKind, SkillError, Target};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{DetectOptions, detect};

/// Inputs over this many bytes are refused unless the host sets another limit.
pub const DEFAULT_MAX_INPUT_BYTES: usize = 16 * 1024 * 1024;

/// One skill request as it arrives in a JSONL line or an HTTP body. Only `text` is required here;
/// the host supplies defaults for the rest.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct SkillInput {
    pub text: String,
    #[serde(default)]
    pub target: Option<String>,
    /// Reference time for relative dates, RFC 3339.
    #[serde(default)]
    pub now: Option<String>,
    /// Default phone region, ISO 3166 alpha-2.
    #[serde(default)]
    pub region: Option<String>,
    #[serde(default)]
    pub detail: Option<bool>,
}

impl SkillInput {
    /// Parses one request body or JSONL line, which must be a JSON object with a string `text`.
    pub fn from_json(bytes: &[u8]) -> Result<SkillInput, SkillError> {
        let malformed = |detail: String| {
            SkillError::MalformedRequest(format!(
                "expected a JSON object like {{\"text\": \"...\", \"target\": \"email\"}}: {detail}"
            ))
        };
        let value: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|error| malformed(error.to_string()))?;
        if !value.is_object() {
            return Err(malformed(
                "got a JSON value that is not an object".to_owned(),
            ));
        }
        serde_json::from_value(value).map_err(|error| malformed(error.to_string()))
    }
}

/// One guardrail request (`POST /skill/check`, the MCP and browser hosts' `check`): the source
/// text, the target, and the output to check, as the raw text a model answered.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct CheckInput {
    /// The source text the output was extracted from.
    #[cfg_attr(feature = "json-schema", schemars(length(min = 1)))]
    pub text: String,
    /// The skill target the output is for: email, url, date, phone, ip, name or entity.
    #[cfg_attr(
        feature = "json-schema",
        schemars(extend("enum" = Target::ALL.map(Target::as_str)))
    )]
    pub target: String,
    /// The extractor's raw output (JSON text) to check.
    pub output: String,
}

impl CheckInput {
    /// Parses one request body, which must be a JSON object with string `text`, `target` and
    /// `output`.
    pub fn from_json(bytes: &[u8]) -> Result<CheckInput, SkillError> {
        serde_json::from_slice(bytes).map_err(|error| {
            SkillError::MalformedRequest(format!(
                "expected {{\"text\": \"...\", \"target\": \"email\", \"output\": \"{{...}}\"}}: {error}"
            ))
        })
    }
}

/// What the host decided where a request is silent.
#[derive(Debug, Clone)]
pub struct SkillDefaults {
    pub target: Option<Target>,
    pub options: DetectOptions,
    pub detail: bool,
    pub max_input_bytes: usize,
}

impl SkillDefaults {
    pub fn new(now: DateTime<FixedOffset>) -> Self {
        SkillDefaults {
            target: None,
            options: DetectOptions::new(now),
            detail: false,
            max_input_bytes: DEFAULT_MAX_INPUT_BYTES,
        }
    }
}

/// What the skill answers: `{"<target>": value}`, and with `detail` every match as `matches`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct SkillOutput {
    #[serde(flatten)]
    pub found: Found,
    /// Every match with its code-point offsets and normalised value (with `detail` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matches: Option<Vec<Match>>,
}

/// The values of the one target asked for, keyed by the target's name.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Found {
    /// Emails as written.
    Email(OneOrMany),
    /// URLs as written.
    Url(OneOrMany),
    /// ISO calendar dates, ranges as an ISO interval `start/end`.
    Date(OneOrMany),
    /// People, organizations and locations, always three lists.
    Entity(EntityGroups),
    /// Person names as written.
    Name(OneOrMany),
    /// Phone numbers in E.164.
    Phone(OneOrMany),
    /// IP addresses as written.
    Ip(OneOrMany),
}

/// One distinct value as a string; several, or none, as a list (never null).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

/// The `entity` target's names by kind, each in order of first appearance.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct EntityGroups {
    pub people: Vec<String>,
    pub organizations: Vec<String>,
    pub locations: Vec<String>,
}

/// The matches of one target in one text.
#[derive(Debug, Clone, PartialEq)]
pub struct Extraction {
    pub target: Target,
    pub matches: Vec<Match>,
}

/// Validates `input` against `defaults` and runs the skill. Checks come in the contract's order:
/// the target first (an unknown target fails at once), then the settings, then the text.
pub fn run(input: &SkillInput, defaults: &SkillDefaults) -> Result<SkillOutput, SkillError> {
    let target = match &input.target {
        Some(raw) => raw.parse::<Target>()?,
        None => defaults.target.ok_or(SkillError::MissingTarget)?,
    };
    let mut options = defaults.options.clone();
    if let Some(now) = &input.now {
        options.now = parse_now(now)?;
    }
    if let Some(region) = &input.region {
        options.region = parse_region(region)?;
    }
    let extraction = extract(&input.text, target, &options, defaults.max_input_bytes)?;
    Ok(extraction.output(input.detail.unwrap_or(defaults.detail)))
}

/// Runs the output guardrail on `output` (what a model, or any extractor, answered for `target`
/// on `text`): JSON validity, schema conformance, types, plausibility and grounding.
pub fn check(
    text: &str,
    target: Target,
    output: &str,
    max_input_bytes: usize,
) -> Result<Verdict, SkillError> {
    check_text(text, max_input_bytes)?;
    Ok(check_output(output, target, text))
}

/// Checks the text and finds every value of `target` in it. `entity` and `name` fail with
/// `EntityDataNotLoaded` in a build whose entity data was not loaded yet (see
/// [`crate::entity::load_data`]) rather than answer as if the text named no one.
pub fn extract(
    text: &str,
    target: Target,
    options: &DetectOptions,
    max_input_bytes: usize,
) -> Result<Extraction, SkillError> {
    if matches!(target, Target::Entity | Target::Name) && !crate::entity::data_loaded() {
        return Err(SkillError::EntityDataNotLoaded(target));
    }
    check_text(text, max_input_bytes)?;
    Ok(Extraction {
        target,
        matches: detect(text, target, options),
    })
}

/// Refuses text that is empty (or only whitespace: nothing could be extracted from it) or larger
/// than `max_input_bytes`.
pub fn check_text(text: &str, max_input_bytes: usize) -> Result<(), SkillError> {
    if text.len() > max_input_bytes {
        return Err(SkillError::InputTooLarge {
            size: text.len(),
            limit: max_input_bytes,
        });
    }
    if text.trim().is_empty() {
        return Err(SkillError::EmptyInput);
    }
    Ok(())
}

/// Parses an RFC 3339 reference time such as `2024-01-15T09:30:00Z`.
pub fn parse_now(raw: &str) -> Result<DateTime<FixedOffset>, SkillError> {
    DateTime::parse_from_rfc3339(raw.trim()).map_err(|_| SkillError::InvalidNow(raw.to_owned()))
}

/// Parses a two-letter region code such as `US` or `gb`.
pub fn parse_region(raw: &str) -> Result<phonenumber::country::Id, SkillError> {
    raw.trim()
        .to_ascii_uppercase()
        .parse()
        .map_err(|_| SkillError::InvalidRegion(raw.to_owned()))
}

impl Extraction {
    /// The contract's answer, with `matches` when `detail` is set.
    pub fn output(&self, detail: bool) -> SkillOutput {
        SkillOutput {
            found: self.found(),
            matches: detail.then(|| self.matches.clone()),
        }
    }

    /// [`Extraction::output`] as a JSON value.
    pub fn to_json(&self, detail: bool) -> Value {
        serde_json::to_value(self.output(detail)).expect("the output is strings and numbers")
    }

    fn found(&self) -> Found {
        let texts = || one_or_many(distinct(self.matches.iter().map(|m| m.text.as_str())));
        match self.target {
            Target::Entity => {
                let names = |kind: MatchKind| {
                    distinct(
                        self.matches
                            .iter()
                            .filter(|m| m.kind == kind)
                            .map(|m| m.text.as_str()),
                    )
                };
                Found::Entity(EntityGroups {
                    people: names(MatchKind::Person),
                    organizations: names(MatchKind::Organization),
                    locations: names(MatchKind::Location),
                })
            }
            Target::Date => Found::Date(one_or_many(distinct(
                self.matches.iter().filter_map(calendar_date),
            ))),
            Target::Phone => Found::Phone(one_or_many(distinct(
                self.matches.iter().map(|m| m.value.as_str()),
            ))),
            Target::Email => Found::Email(texts()),
            Target::Url => Found::Url(texts()),
            Target::Name => Found::Name(texts()),
            Target::Ip => Found::Ip(texts()),
        }
    }
}

/// The ISO calendar date a date-like match names: the date itself, the date part of a datetime,
/// or a date range's ISO interval. Times and durations name no calendar date.
fn calendar_date(found: &Match) -> Option<&str> {
    match found.kind {
        MatchKind::Date | MatchKind::DateRange => Some(found.value.as_str()),
        MatchKind::DateTime => found.value.split('T').next(),
        _ => None,
    }
}

/// Values in order of first appearance, each once.
fn distinct<'a>(values: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    values
        .filter(|value| seen.insert(*value))
        .map(str::to_owned)
        .collect()
}

/// One value as a string, several as a list, none as `[]` (never null).
fn one_or_many(mut values: Vec<String>) -> OneOrMany {
    if values.len() == 1 {
        OneOrMany::One(values.remove(0))
    } else {
        OneOrMany::Many(values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn found(text: &str, value: &str, kind: MatchKind) -> Match {
        Match {
            text: text.to_owned(),
            start: 0,
            end: text.chars().count(),
            value: value.to_owned(),
            kind,
        }
    }

    fn defaults() -> SkillDefaults {
        SkillDefaults::new(parse_now("2024-01-10T12:00:00Z").unwrap())
    }

    #[test]
    fn one_value_is_a_string_several_a_list_none_an_empty_list() {
        let extraction = |matches| Extraction {
            target: Target::Email,
            matches,
        };
        let a = found("a@b.rs", "a@b.rs", MatchKind::Email);
        let c = found("c@d.rs", "c@d.rs", MatchKind::Email);
        assert_eq!(extraction(vec![]).to_json(false), json!({"email": []}));
        assert_eq!(
            extraction(vec![a.clone(), a.clone()]).to_json(false),
            json!({"email": "a@b.rs"})
        );
        assert_eq!(
            extraction(vec![a, c]).to_json(false),
            json!({"email": ["a@b.rs", "c@d.rs"]})
        );
    }

    #[test]
    fn dates_print_their_calendar_date_and_skip_bare_times() {
        let extraction = Extraction {
            target: Target::Date,
            matches: vec![
                found(
                    "January 15, 2024 at 3pm",
                    "2024-01-15T15:00:00",
                    MatchKind::DateTime,
                ),
                found("at 5pm", "17:00:00", MatchKind::Time),
            ],
        };
        assert_eq!(extraction.to_json(false), json!({"date": "2024-01-15"}));
        let detailed = extraction.to_json(true);
        assert_eq!(detailed["matches"][1]["type"], "time");
        assert_eq!(detailed["matches"][0]["value"], "2024-01-15T15:00:00");
    }

    #[test]
    fn entity_output_always_has_three_lists() {
        let extraction = Extraction {
            target: Target::Entity,
            matches: vec![found("Sarah", "Sarah", MatchKind::Person)],
        };
        assert_eq!(
            extraction.to_json(false),
            json!({"entity": {"people": ["Sarah"], "organizations": [], "locations": []}})
        );
    }

    #[test]
    fn requests_must_be_objects_with_a_text() {
        let parsed = SkillInput::from_json(br#"{"text": "a", "target": "url", "x": 1}"#).unwrap();
        assert_eq!(parsed.target.as_deref(), Some("url"));
        for bad in [
            &br#"["text"]"#[..],
            br#"{"target": "url"}"#,
            b"{\"text\": 3}",
            b"nope",
        ] {
            let error = SkillInput::from_json(bad).unwrap_err();
            assert_eq!(
                error.code(),
                "MalformedRequest",
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn input_checks_name_the_problem() {
        let input = |text: &str, target: Option<&str>| SkillInput {
            text: text.to_owned(),
            target: target.map(str::to_owned),
            ..SkillInput::default()
        };
        let run = |input: SkillInput| run(&input, &defaults()).unwrap_err().code();
        assert_eq!(run(input("x", Some("fax"))), "InvalidTarget");
        assert_eq!(run(input("x", None)), "MissingTarget");
        assert_eq!(run(input("  \n", Some("email"))), "EmptyInput");
        let mut bad_now = input("x", Some("date"));
        bad_now.now = Some("yesterday".into());
        assert_eq!(run(bad_now), "InvalidNow");
        let mut bad_region = input("x", Some("phone"));
        bad_region.region = Some("ZZZ".into());
        assert_eq!(run(bad_region), "InvalidRegion");
        let too_big = check_text("abcdef", 3).unwrap_err();
        assert_eq!(too_big.code(), "InputTooLarge");
    }
}
