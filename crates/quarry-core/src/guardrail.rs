//! The output guardrail: decides whether a model's (or extractor's) raw output for the `extract`
//! skill may be returned, and if not, says why for every offending value.
//!
//! Checks, in order (contract §7):
//! 1. **JSON validity** — the output parses as JSON (`MalformedOutput`); an empty output fails here.
//! 2. **Schema conformance** — a JSON object whose only field is the target (`SchemaViolation`).
//! 3. **Type correctness** — a string or a list of strings; for `entity` an object whose
//!    `people`, `organizations` (alias `orgs`) and `locations` are lists of strings; missing lists
//!    count as empty (`TypeMismatch`).
//! 4. **Plausibility** — each value has the target's shape: an email address, a URL, an ISO 8601
//!    date (`2024-01-15`, `2024-01`, `2024`, a datetime, or `start/end`), a phone number (5–15
//!    digits), an IP address, a name with letters and no digits (`Implausible`).
//! 5. **Grounding** — each value is found in the source by the [aligner](crate::grounding)
//!    (`Hallucination`). Emails, URLs, IPs and phones must occur verbatim or differ only in case
//!    (phones: in formatting), and not glued to neighbouring characters, so a truncated
//!    `ohn@x.com` is not grounded by `john@x.com`. Names may also match fuzzily (a typo). A date
//!    is normalised, so it rarely occurs verbatim: it is grounded if the ISO string aligns, or if
//!    its year occurs as a word and, when it has a day, that day number occurs too (`15`, `15th`,
//!    `05` or `5`). That is deliberately simple — it does not check the month or that the parts
//!    form one expression.
//!
//! Structural failures (1–3 for the whole output) stop the check; per-value failures are all
//! collected, one reason per value. The guardrail never panics, whatever the input.

use crate::json::type_phrase;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

use crate::grounding::text::for_each_token;
use crate::grounding::{AlignOptions, AlignOrder, Alignment, AlignmentStatus, align_all};
use crate::target::Target;

/// The guardrail's decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// Every value is well-formed and grounded; an empty list is accepted (no match is not a
    /// failure).
    Accepted {
        values: Vec<GroundedValue>,
    },
    Rejected {
        reasons: Vec<Violation>,
    },
}

impl Verdict {
    pub fn is_accepted(&self) -> bool {
        matches!(self, Verdict::Accepted { .. })
    }

    /// The reasons for a rejection; empty when accepted.
    pub fn reasons(&self) -> &[Violation] {
        match self {
            Verdict::Accepted { .. } => &[],
            Verdict::Rejected { reasons } => reasons,
        }
    }
}

/// One accepted value and its evidence in the source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct GroundedValue {
    /// `email`, or for entities `entity.people` / `entity.organizations` / `entity.locations`.
    pub field: String,
    pub value: String,
    pub evidence: Evidence,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Evidence {
    /// The value itself was aligned to this span.
    Aligned { alignment: Alignment },
    /// A date grounded by its parts: the year's span, and the day's when the date has a day.
    DateParts {
        year: Alignment,
        day: Option<Alignment>,
    },
}

/// Which guardrail a value or output failed; `code()` is the contract's failure name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ViolationKind {
    MalformedOutput,
    SchemaViolation,
    TypeMismatch,
    Implausible,
    Hallucination,
}

impl ViolationKind {
    /// The code in the one error-code table (`quarry check` prints it, exit status 1).
    pub fn error_code(self) -> crate::ErrorCode {
        match self {
            ViolationKind::MalformedOutput => crate::ErrorCode::MalformedOutput,
            ViolationKind::SchemaViolation => crate::ErrorCode::SchemaViolation,
            ViolationKind::TypeMismatch => crate::ErrorCode::TypeMismatch,
            ViolationKind::Implausible => crate::ErrorCode::ImplausibleValue,
            ViolationKind::Hallucination => crate::ErrorCode::Hallucination,
        }
    }

    /// The code's stable name, e.g. `Hallucination`.
    pub fn code(self) -> &'static str {
        self.error_code().as_str()
    }
}

/// One reason for rejecting the output, naming the value when there is one.
#[derive(Debug, Clone, PartialEq, Error, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[error("{message}")]
pub struct Violation {
    pub kind: ViolationKind,
    /// The offending value, when the violation is about one value.
    pub value: Option<String>,
    /// The human sentence, e.g. `contact@example.com does not appear in source text -
    /// hallucination detected`.
    pub message: String,
    /// For hallucinations, what the aligner found instead (e.g. only part of the value).
    pub detail: Option<String>,
}

impl Violation {
    fn new(kind: ViolationKind, value: Option<&str>, message: String) -> Self {
        Violation {
            kind,
            value: value.map(str::to_owned),
            message,
            detail: None,
        }
    }
}

/// Checks `raw` (the model's output for `target`) against the guardrails, grounding every value
/// in `source`.
pub fn check_output(raw: &str, target: Target, source: &str) -> Verdict {
    let rejected = |violation: Violation| Verdict::Rejected {
        reasons: vec![violation],
    };
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return rejected(Violation::new(
            ViolationKind::MalformedOutput,
            None,
            "output is empty; expected a JSON object".to_owned(),
        ));
    }
    let parsed: Value = match serde_json::from_str(trimmed) {
        Ok(value) => value,
        Err(err) => {
            return rejected(Violation::new(
                ViolationKind::MalformedOutput,
                None,
                format!("output is not valid JSON: {err}"),
            ));
        }
    };
    let key = target.as_str();
    let Value::Object(object) = parsed else {
        return rejected(Violation::new(
            ViolationKind::SchemaViolation,
            None,
            format!(
                "output must be a JSON object with a '{key}' field, got {}",
                type_phrase(&parsed)
            ),
        ));
    };
    let Some(field_value) = object.get(key) else {
        return rejected(Violation::new(
            ViolationKind::SchemaViolation,
            None,
            format!("output is missing the required '{key}' field"),
        ));
    };
    if let Some(extra) = object.keys().find(|k| k.as_str() != key) {
        return rejected(Violation::new(
            ViolationKind::SchemaViolation,
            None,
            format!("output has an unexpected field '{extra}'; it must hold only '{key}'"),
        ));
    }

    let mut reasons = Vec::new();
    let values = match collect_values(target, field_value, &mut reasons) {
        Some(values) => values,
        None => return Verdict::Rejected { reasons },
    };

    // Plausibility first; only plausible values are grounded.
    let mut plausible: Vec<(String, String)> = Vec::new();
    for (field, value) in values {
        if value.trim().is_empty() {
            reasons.push(Violation::new(
                ViolationKind::Implausible,
                Some(&value),
                format!("{field} holds an empty string; omit it instead"),
            ));
        } else if let Some(expected) = implausible(target, &value) {
            reasons.push(Violation::new(
                ViolationKind::Implausible,
                Some(&value),
                format!("{value} is not {expected}"),
            ));
        } else {
            plausible.push((field, value));
        }
    }

    let grounded = ground(target, &plausible, source, &mut reasons);
    if reasons.is_empty() {
        Verdict::Accepted { values: grounded }
    } else {
        Verdict::Rejected { reasons }
    }
}

/// The `(field, value)` pairs of the target field, or `None` (with reasons) when its shape is
/// wrong as a whole. Wrongly typed list items are reported and skipped.
fn collect_values(
    target: Target,
    value: &Value,
    reasons: &mut Vec<Violation>,
) -> Option<Vec<(String, String)>> {
    let key = target.as_str();
    if target == Target::Entity {
        let Value::Object(groups) = value else {
            reasons.push(Violation::new(
                ViolationKind::TypeMismatch,
                None,
                format!(
                    "'entity' must be an object with people, organizations and locations lists, \
                     got {}",
                    type_phrase(value)
                ),
            ));
            return None;
        };
        let mut values = Vec::new();
        for (name, items) in groups {
            let group = match name.as_str() {
                "people" => "people",
                "organizations" | "orgs" => "organizations",
                "locations" => "locations",
                other => {
                    reasons.push(Violation::new(
                        ViolationKind::SchemaViolation,
                        None,
                        format!(
                            "'entity' has an unexpected field '{other}'; expected people, \
                             organizations and locations"
                        ),
                    ));
                    continue;
                }
            };
            let field = format!("entity.{group}");
            match items {
                Value::Array(items) => string_items(&field, items, &mut values, reasons),
                other => reasons.push(Violation::new(
                    ViolationKind::TypeMismatch,
                    None,
                    format!(
                        "'{field}' must be a list of strings, got {}",
                        type_phrase(other)
                    ),
                )),
            }
        }
        return Some(values);
    }
    let mut values = Vec::new();
    match value {
        Value::String(s) => values.push((key.to_owned(), s.clone())),
        Value::Array(items) => string_items(key, items, &mut values, reasons),
        other => {
            let hint = if other.is_null() {
                "; return an empty list when nothing was found"
            } else {
                ""
            };
            reasons.push(Violation::new(
                ViolationKind::TypeMismatch,
                None,
                format!(
                    "'{key}' must be a string or a list of strings, got {}{hint}",
                    type_phrase(other)
                ),
            ));
            return None;
        }
    }
    Some(values)
}

fn string_items(
    field: &str,
    items: &[Value],
    values: &mut Vec<(String, String)>,
    reasons: &mut Vec<Violation>,
) {
    for (position, item) in items.iter().enumerate() {
        match item {
            Value::String(s) => values.push((field.to_owned(), s.clone())),
            other => reasons.push(Violation::new(
                ViolationKind::TypeMismatch,
                None,
                format!(
                    "'{field}' item {position} must be a string, got {}",
                    type_phrase(other)
                ),
            )),
        }
    }
}

/// What the value should have been, when it does not look like a `target` value.
fn implausible(target: Target, value: &str) -> Option<&'static str> {
    let value = value.trim();
    let ok = match target {
        Target::Email => plausible_email(value),
        Target::Url => plausible_url(value),
        Target::Date => IsoDate::parse_any(value).is_some(),
        Target::Phone => plausible_phone(value),
        Target::Ip => value.parse::<std::net::IpAddr>().is_ok(),
        Target::Name => plausible_name(value, false),
        Target::Entity => plausible_name(value, true),
    };
    if ok {
        return None;
    }
    Some(match target {
        Target::Email => "a plausible email address",
        Target::Url => "a plausible URL",
        Target::Date => "an ISO 8601 date such as 2024-01-15",
        Target::Phone => "a plausible phone number",
        Target::Ip => "an IPv4 or IPv6 address",
        Target::Name => "a plausible person name",
        Target::Entity => "a plausible entity name",
    })
}

fn plausible_email(value: &str) -> bool {
    let Some((local, domain)) = value.split_once('@') else {
        return false;
    };
    let local_ok = !local.is_empty()
        && local.len() <= 64
        && !local.starts_with('.')
        && !local.ends_with('.')
        && !local.contains("..")
        && local
            .chars()
            .all(|c| c.is_alphanumeric() || "._%+-!#$&'*/=?^`{|}~".contains(c));
    local_ok && plausible_domain(domain, false)
}

/// `example.com`, `mail.example.co.uk`, `xn--bcher-kva.example`; with `allow_port`, `host:8080`.
fn plausible_domain(domain: &str, allow_port: bool) -> bool {
    let host = match (allow_port, domain.rsplit_once(':')) {
        (true, Some((host, port))) if port.chars().all(|c| c.is_ascii_digit()) => host,
        _ => domain,
    };
    let labels: Vec<&str> = host.split('.').collect();
    let label_ok = |label: &&str| {
        !label.is_empty()
            && label.len() <= 63
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label.chars().all(|c| c.is_alphanumeric() || c == '-')
    };
    let Some(tld) = labels.last() else {
        return false;
    };
    let tld_ok = (tld.chars().count() >= 2 && tld.chars().all(char::is_alphabetic))
        || tld.starts_with("xn--");
    labels.len() >= 2 && labels.iter().all(label_ok) && tld_ok
}

fn plausible_url(value: &str) -> bool {
    if value.is_empty() || value.chars().any(char::is_whitespace) {
        return false;
    }
    let rest = match value.split_once("://") {
        Some((scheme, rest)) => {
            let scheme_ok = scheme
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
            if !scheme_ok {
                return false;
            }
            rest
        }
        None => value,
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    if host_port.starts_with('[') {
        // [IPv6]:port
        return host_port
            .split_once(']')
            .is_some_and(|(ip, _)| ip[1..].parse::<std::net::Ipv6Addr>().is_ok());
    }
    let host = host_port
        .rsplit_once(':')
        .map_or(host_port, |(host, _)| host);
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<std::net::Ipv4Addr>().is_ok()
        || plausible_domain(host_port, true)
}

fn plausible_phone(value: &str) -> bool {
    let lower = value.to_lowercase();
    // Drop an extension: "x123", "ext. 123", "extension 123".
    let main = ["extension", "ext.", "ext", "x"]
        .iter()
        .filter_map(|marker| lower.rfind(marker).map(|at| (at, marker.len())))
        .find(|&(at, len)| {
            let tail = lower[at + len..].trim();
            !tail.is_empty() && tail.chars().all(|c| c.is_ascii_digit())
        })
        .map_or(lower.as_str(), |(at, _)| &lower[..at]);
    let mut digits = 0;
    for (position, c) in main.trim().chars().enumerate() {
        match c {
            c if c.is_ascii_digit() || ('０'..='９').contains(&c) => digits += 1,
            '+' if position == 0 => {}
            ' ' | '-' | '(' | ')' | '.' | '/' | '\u{a0}' => {}
            _ => return false,
        }
    }
    (5..=15).contains(&digits)
}

fn plausible_name(value: &str, digits_allowed: bool) -> bool {
    value.chars().count() <= 120
        && value.split_whitespace().count() <= 12
        && value.chars().any(char::is_alphabetic)
        && (digits_allowed || !value.chars().any(|c| c.is_ascii_digit()))
        && !value.contains('@')
        && !value.contains("://")
}

/// The parts of an ISO 8601 date the guardrail grounds: year and optional month and day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct IsoDate {
    year: u32,
    month: Option<u32>,
    day: Option<u32>,
}

impl IsoDate {
    /// `YYYY`, `YYYY-MM`, `YYYY-MM-DD`, optionally followed by `T` or a space and a time; or an
    /// interval `start/end` of those, in which case the start is returned.
    fn parse_any(value: &str) -> Option<IsoDate> {
        match value.split_once('/') {
            Some((start, end)) => {
                let first = IsoDate::parse(start)?;
                IsoDate::parse(end)?;
                Some(first)
            }
            None => IsoDate::parse(value),
        }
    }

    fn parse(value: &str) -> Option<IsoDate> {
        let (date, time) = match value.find(['T', ' ']) {
            Some(at) => (&value[..at], Some(&value[at + 1..])),
            None => (value, None),
        };
        if time.is_some_and(|time| !plausible_time(time)) {
            return None;
        }
        let number = |s: &str, len: usize| {
            (s.len() == len && s.chars().all(|c| c.is_ascii_digit()))
                .then(|| s.parse::<u32>().ok())
                .flatten()
        };
        let mut parts = date.split('-');
        let year = number(parts.next()?, 4)?;
        let month = match parts.next() {
            Some(m) => Some(number(m, 2)?),
            None => None,
        };
        let day = match parts.next() {
            Some(d) => Some(number(d, 2)?),
            None => None,
        };
        if parts.next().is_some() || (time.is_some() && day.is_none()) {
            return None;
        }
        if let Some(month) = month {
            if !(1..=12).contains(&month) {
                return None;
            }
            if day.is_some_and(|day| day == 0 || day > days_in_month(year, month)) {
                return None;
            }
        }
        Some(IsoDate { year, month, day })
    }
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `HH:MM`, `HH:MM:SS`, `HH:MM:SS.fff`, each optionally followed by `Z` or `±HH:MM`.
fn plausible_time(time: &str) -> bool {
    let (clock, zone) = match time.find(['Z', 'z', '+', '-']) {
        Some(at) => (&time[..at], &time[at..]),
        None => (time, ""),
    };
    let zone_ok = zone.is_empty()
        || zone.eq_ignore_ascii_case("z")
        || (zone.len() == 6
            && zone.as_bytes()[3] == b':'
            && zone[1..3]
                .chars()
                .chain(zone[4..].chars())
                .all(|c| c.is_ascii_digit()));
    let clock = clock.split('.').next().unwrap_or("");
    let fields: Vec<&str> = clock.split(':').collect();
    let field_ok = |f: &&str, max: u32| {
        f.len() == 2
            && f.chars().all(|c| c.is_ascii_digit())
            && f.parse::<u32>().is_ok_and(|v| v <= max)
    };
    zone_ok
        && (fields.len() == 2 || fields.len() == 3)
        && field_ok(&fields[0], 23)
        && fields[1..].iter().all(|f| field_ok(f, 59))
}

/// Whether grounding a value of `target` may use the fuzzy aligner.
fn fuzzy_allowed(target: Target) -> bool {
    matches!(target, Target::Name | Target::Entity)
}

/// Pattern-like values (emails, URLs, IPs, phones, ISO dates) must not be a fragment of a longer
/// token in the source: `ohn@x.com` inside `john@x.com`, `x.co` inside `x.com`.
fn glued(source: &str, alignment: &Alignment) -> bool {
    let before = source[..alignment.byte_start].chars().next_back();
    let mut after = source[alignment.byte_end..].chars();
    let next = after.next();
    let next_next = after.next();
    before.is_some_and(|c| c.is_alphanumeric() || "._%+-@/".contains(c))
        || next.is_some_and(|c| c.is_alphanumeric() || c == '@')
        || (next.is_some_and(|c| ".-".contains(c)) && next_next.is_some_and(char::is_alphanumeric))
}

/// Whether an alignment of `value` counts as grounding it for `target`.
fn accepts(target: Target, value: &str, source: &str, alignment: &Alignment) -> bool {
    if fuzzy_allowed(target) {
        return alignment.status != AlignmentStatus::Lesser;
    }
    let slice = &source[alignment.byte_start..alignment.byte_end];
    let same_text = match alignment.status {
        AlignmentStatus::Exact => true,
        // Only case may differ for emails, URLs, IPs and dates; phones may differ in formatting.
        AlignmentStatus::Normalized => {
            target == Target::Phone || slice.to_lowercase() == value.trim().to_lowercase()
        }
        AlignmentStatus::Fuzzy | AlignmentStatus::Lesser => false,
    };
    same_text && !glued(source, alignment)
}

fn ground(
    target: Target,
    values: &[(String, String)],
    source: &str,
    reasons: &mut Vec<Violation>,
) -> Vec<GroundedValue> {
    let options = AlignOptions {
        enable_fuzzy_alignment: fuzzy_allowed(target),
        accept_match_lesser: false,
        order: AlignOrder::Any,
        ..AlignOptions::default()
    };
    let texts: Vec<&str> = values.iter().map(|(_, v)| v.as_str()).collect();
    let results = align_all(source, &texts, &options);
    let mut grounded = Vec::new();
    for ((field, value), result) in values.iter().zip(results) {
        let evidence = match &result {
            Ok(alignment) if accepts(target, value, source, alignment) => Some(Evidence::Aligned {
                alignment: *alignment,
            }),
            _ if target == Target::Date => date_parts(value, source),
            _ => None,
        };
        match evidence {
            Some(evidence) => grounded.push(GroundedValue {
                field: field.clone(),
                value: value.clone(),
                evidence,
            }),
            None => {
                let mut violation = Violation::new(
                    ViolationKind::Hallucination,
                    Some(value),
                    format!("{value} does not appear in source text - hallucination detected"),
                );
                violation.detail = Some(match &result {
                    Ok(alignment) => format!(
                        "the closest passage, {:?}, is only a {} match",
                        &source[alignment.byte_start..alignment.byte_end],
                        alignment.status.as_str()
                    ),
                    Err(err) => err.to_string(),
                });
                reasons.push(violation);
            }
        }
    }
    grounded
}

/// Grounds an ISO date by its year and day appearing as words of the source.
fn date_parts(value: &str, source: &str) -> Option<Evidence> {
    let date = IsoDate::parse_any(value.trim())?;
    let year_text = format!("{:04}", date.year);
    let mut years = Vec::new();
    let mut days = Vec::new();
    for_each_token(source, |start, end, token| {
        if token == year_text {
            years.push((start, end));
        } else if date.day.is_some_and(|day| day_token_matches(token, day)) {
            days.push((start, end));
        }
    });
    let span = |(start, end): (usize, usize)| Alignment {
        start: source[..start].chars().count(),
        end: source[..end].chars().count(),
        byte_start: start,
        byte_end: end,
        status: AlignmentStatus::Exact,
        score: 1.0,
    };
    if date.day.is_none() {
        return years.first().map(|&year| Evidence::DateParts {
            year: span(year),
            day: None,
        });
    }
    // The year and day occurrences closest to each other.
    let (year, day) = years
        .iter()
        .flat_map(|&y| days.iter().map(move |&d| (y, d)))
        .min_by_key(|&(y, d)| y.0.abs_diff(d.0))?;
    Some(Evidence::DateParts {
        year: span(year),
        day: Some(span(day)),
    })
}

/// `15`, `05`, `5`, `15th`, `1st`, `2nd`, `3rd` for the day number.
fn day_token_matches(token: &str, day: u32) -> bool {
    let digits_end = token
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(token.len());
    let (digits, suffix) = token.split_at(digits_end);
    !digits.is_empty()
        && digits.len() <= 2
        && digits.parse::<u32>().is_ok_and(|d| d == day)
        && matches!(suffix, "" | "st" | "nd" | "rd" | "th")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guardrails_verdict_kinds_are_codes_of_the_table() {
        for kind in [
            ViolationKind::MalformedOutput,
            ViolationKind::SchemaViolation,
            ViolationKind::TypeMismatch,
            ViolationKind::Implausible,
            ViolationKind::Hallucination,
        ] {
            assert_eq!(
                crate::ErrorCode::parse(kind.code()),
                Some(kind.error_code())
            );
        }
    }

    fn reasons(raw: &str, target: Target, source: &str) -> Vec<(ViolationKind, String)> {
        check_output(raw, target, source)
            .reasons()
            .iter()
            .map(|v| (v.kind, v.message.clone()))
            .collect()
    }

    // Contract example 7: an email the text never mentions is a hallucination.
    #[test]
    fn guardrail_rejects_hallucinated_email() {
        let verdict = check_output(
            r#"{"email": "contact@example.com"}"#,
            Target::Email,
            "Contact us anytime",
        );
        let reasons = verdict.reasons();
        assert_eq!(reasons.len(), 1);
        assert_eq!(reasons[0].kind, ViolationKind::Hallucination);
        assert_eq!(reasons[0].value.as_deref(), Some("contact@example.com"));
        assert_eq!(
            reasons[0].message,
            "contact@example.com does not appear in source text - hallucination detected"
        );
    }

    #[test]
    fn accepts_grounded_values_with_their_spans() {
        let source = "For support, email us at support@agent.rs or Sales@Agent.rs";
        let verdict = check_output(
            r#"{"email": ["support@agent.rs", "sales@agent.rs"]}"#,
            Target::Email,
            source,
        );
        let Verdict::Accepted { values } = verdict else {
            panic!("rejected: {verdict:?}");
        };
        let Evidence::Aligned { alignment } = &values[1].evidence else {
            panic!("not aligned");
        };
        assert_eq!((alignment.start, alignment.end), (45, 59));
        assert!(check_output(r#"{"email": []}"#, Target::Email, source).is_accepted());
    }

    #[test]
    fn structural_failures_stop_with_one_reason() {
        let source = "Contact: hello@agent.rs";
        assert_eq!(
            reasons("", Target::Email, source)[0].0,
            ViolationKind::MalformedOutput
        );
        assert_eq!(
            reasons("Sure! hello@agent.rs", Target::Email, source)[0].0,
            ViolationKind::MalformedOutput
        );
        assert_eq!(
            reasons(r#"{"emails": []}"#, Target::Email, source),
            [(
                ViolationKind::SchemaViolation,
                "output is missing the required 'email' field".to_owned()
            )]
        );
        assert_eq!(
            reasons("[]", Target::Email, source)[0].0,
            ViolationKind::SchemaViolation
        );
        assert_eq!(
            reasons(r#"{"email": null}"#, Target::Email, source)[0].0,
            ViolationKind::TypeMismatch
        );
        assert_eq!(
            reasons(r#"{"email": ["hello@agent.rs", 7]}"#, Target::Email, source),
            [(
                ViolationKind::TypeMismatch,
                "'email' item 1 must be a string, got a number".to_owned()
            )]
        );
    }

    #[test]
    fn implausible_values_are_named() {
        let source = "Call 555-0100 or visit https://agent.rs on 2024-01-15.";
        assert_eq!(
            reasons(r#"{"email": "agent.rs"}"#, Target::Email, source),
            [(
                ViolationKind::Implausible,
                "agent.rs is not a plausible email address".to_owned()
            )]
        );
        assert_eq!(
            reasons(r#"{"date": "January 15"}"#, Target::Date, source)[0].0,
            ViolationKind::Implausible
        );
        assert_eq!(
            reasons(r#"{"date": "2024-02-30"}"#, Target::Date, source)[0].0,
            ViolationKind::Implausible
        );
        assert!(check_output(r#"{"url": "https://agent.rs"}"#, Target::Url, source).is_accepted());
        assert!(check_output(r#"{"phone": "555-0100"}"#, Target::Phone, source).is_accepted());
        assert_eq!(
            reasons(r#"{"phone": "call me"}"#, Target::Phone, source)[0].0,
            ViolationKind::Implausible
        );
    }

    #[test]
    fn fragments_of_longer_values_are_not_grounded() {
        let source = "Write to john@example.com today.";
        let got = reasons(r#"{"email": "ohn@example.com"}"#, Target::Email, source);
        assert_eq!(got[0].0, ViolationKind::Hallucination);
        let got = reasons(r#"{"url": "example.co"}"#, Target::Url, source);
        assert_eq!(got[0].0, ViolationKind::Hallucination);
    }

    #[test]
    fn dates_ground_by_iso_text_or_year_and_day() {
        let source = "The meeting is scheduled for January 15, 2024 at 3pm";
        let verdict = check_output(r#"{"date": "2024-01-15"}"#, Target::Date, source);
        let Verdict::Accepted { values } = verdict else {
            panic!("rejected: {verdict:?}");
        };
        let Evidence::DateParts { year, day } = &values[0].evidence else {
            panic!("expected date parts");
        };
        assert_eq!((year.start, year.end), (41, 45));
        assert_eq!(day.map(|d| (d.start, d.end)), Some((37, 39)));
        let got = reasons(r#"{"date": "2023-01-15"}"#, Target::Date, source);
        assert_eq!(got[0].0, ViolationKind::Hallucination);
        assert!(
            check_output(r#"{"date": "2024-01-15"}"#, Target::Date, "due 2024-01-15").is_accepted()
        );
    }

    #[test]
    fn entities_check_every_list() {
        let source = "John Smith from Anthropic met with Sarah at Google headquarters";
        let raw = r#"{"entity": {"people": ["John Smith", "Sarah"], "organizations": ["Anthropic", "Google"], "locations": ["Google headquarters"]}}"#;
        assert!(check_output(raw, Target::Entity, source).is_accepted());
        let raw = r#"{"entity": {"people": ["John Smith", "Mary"], "orgs": ["Anthropic"]}}"#;
        let got = reasons(raw, Target::Entity, source);
        assert_eq!(
            got,
            [(
                ViolationKind::Hallucination,
                "Mary does not appear in source text - hallucination detected".to_owned()
            )]
        );
        // A typo in a name is still grounded (fuzzily).
        let raw = r#"{"name": ["Michael Johnsen"]}"#;
        assert!(check_output(raw, Target::Name, "reviewed by Michael Johnson.").is_accepted());
    }

    #[test]
    fn never_panics_on_odd_input() {
        let sources = ["", "é", "東京", "a\u{0301}b", "🇨🇭 x"];
        let outputs = [
            "",
            "{",
            "null",
            "[1,2]",
            r#"{"email": "é@é"}"#,
            r#"{"date": "2024-1-1/"}"#,
            r#"{"url": "http://[::1"}"#,
            r#"{"phone": "x"}"#,
            r#"{"ip": "::1"}"#,
            r#"{"entity": {"people": "x", "foo": [1]}}"#,
            r#"{"date": "2024-01-01T25:00"}"#,
            r#"{"name": ["é", "東京"]}"#,
            &"[".repeat(10_000),
        ];
        for source in sources {
            for output in outputs {
                for target in Target::ALL {
                    let _ = check_output(output, target, source);
                }
            }
        }
    }
}
