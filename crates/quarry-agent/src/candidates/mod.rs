//! Detector-backed decoding: for a field whose type one of Quarry's detectors knows, the model
//! is offered the values the detectors found in the document, as the schema's `enum`, and
//! chooses among them instead of spelling one.
//!
//! Which fields (the field's schema, or its array's items, or a nested object's properties):
//!
//! | schema | detector | offered as |
//! |---|---|---|
//! | `format: email` / `x-detector: email` | e-mail addresses | as written |
//! | `format: uri`, `iri` / `x-detector: url` | URLs | as written when absolute, else normalised |
//! | `format: date` / `x-detector: date` | dates, relative ones resolved against `now` | `YYYY-MM-DD` |
//! | `format: date-time` | dates with a time of day | RFC 3339 with `now`'s offset |
//! | `format: time` | times of day | `HH:MM:SS` with `now`'s offset |
//! | `format: ipv4`, `ipv6` / `x-detector: ip` | IP addresses | normalised |
//! | `x-detector: phone` | phone numbers | as written |
//! | `x-detector: person`, `organization`, `location` | names | as found |
//! | `type: number`, `integer` | number and amount expressions (not digits inside a date, phone, address or URL) | JSON numbers, every reading ("5m" is 5 and 5000000) |
//!
//! `null` is offered too where the field may be absent. A field keeps its own schema when a
//! detector found nothing for it, when it has `enum`, `const`, `pattern`, a `$ref` or a
//! combinator other than "or null", when it says `x-grounding: none` or `x-candidates: false`,
//! or when more than [`MAX_CANDIDATES`] values were found. Candidates that break the field's
//! own bounds (`minLength`, `maximum`, …) are not offered. The reply is still validated against
//! the user's schema and grounded; a chosen value is grounded by the detection it came from.

mod detector;

pub use detector::{DETECTOR_NAMES, Detector, is_detector_name};

use std::collections::HashMap;

use chrono::{DateTime, FixedOffset};
use quarry_core::MatchKind;
use quarry_detect::{Detection, date, email, entity, ip, names, phone, url};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::quantities::Quantities;
use crate::schema::{FieldSpec, Schema};
use crate::span::Span;

/// More values than this for one field and the model is not given a list to choose from.
pub const MAX_CANDIDATES: usize = 64;

/// How a field's value was decoded: what `--explain` says of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum Decoding {
    /// Chosen among the `offered` values (`null` not counted) a detector found in the text.
    Candidates { detector: Detector, offered: usize },
    /// Copied from the document under a token mask: a span of the text by construction.
    GroundedSpan,
    /// Written under the schema's grammar (a format, an enum, bounded digits), grounded after.
    Constrained,
    /// Written by the model as it liked, grounded after.
    #[default]
    Free,
}

/// What one extraction offers the model.
#[derive(Debug, Clone)]
pub(crate) struct Offer {
    /// The schema the model decodes under: the user's, with candidate-backed parts as enums.
    pub schema: Value,
    /// Per top-level field, in schema order: its detector and how many values it offers.
    pub fields: Vec<Option<(Detector, usize)>>,
    /// Every value offered (as text) and where it was found: a chosen value is grounded there.
    pub found: Vec<(String, Span)>,
}

/// What the detectors offer for `schema`'s fields in `document`, relative dates resolved against
/// `now` (without one, only dates the text writes out in full are offered).
pub(crate) fn offer(schema: &Schema, document: &str, now: Option<DateTime<FixedOffset>>) -> Offer {
    let mut finder = Finder {
        text: document,
        now,
        found: HashMap::new(),
        offered: Vec::new(),
        context: None,
        rivals: Vec::new(),
    };
    let mut rewritten = schema.json_schema.clone();
    let mut fields = Vec::with_capacity(schema.fields.len());
    if let Some(properties) = rewritten
        .get_mut("properties")
        .and_then(Value::as_object_mut)
    {
        for field in &schema.fields {
            let Some(property) = properties.get_mut(&field.name) else {
                fields.push(None);
                continue;
            };
            finder.context = Some(field_words(field));
            finder.rivals = schema
                .fields
                .iter()
                .filter(|other| other.name != field.name)
                .map(field_words)
                .collect();
            let (mut value, mut offered) = finder.rewrite(property, field.may_be_null());
            finder.context = None;
            if offered.is_none() && field.spec.is_plain_text() && !field.spec.is_list() {
                let labelled = labelled(document, field);
                if !labelled.is_empty() {
                    offered = Some((Detector::Label, labelled.len()));
                    // Labelled in the text: there, so not null.
                    value = choice_schema(
                        property
                            .as_object()
                            .expect("a plain text field's schema is an object"),
                        "string",
                        false,
                        labelled
                            .iter()
                            .map(|(text, _)| Value::String(text.clone()))
                            .collect(),
                    );
                    finder.offered.extend(labelled);
                }
            }
            *property = value;
            fields.push(offered);
        }
    } else {
        fields.resize(schema.fields.len(), None);
    }
    Offer {
        schema: rewritten,
        fields,
        found: finder.offered,
    }
}

struct Finder<'t> {
    text: &'t str,
    now: Option<DateTime<FixedOffset>>,
    /// Each detector's values in text order, found once.
    found: HashMap<Detector, Vec<(Value, Span)>>,
    offered: Vec<(String, Span)>,
    /// The words naming the top-level field being rewritten: its candidates whose context names
    /// it best are the ones offered.
    context: Option<Vec<(String, u32)>>,
    /// The words naming the other top-level fields: a candidate one of them names more strongly
    /// is not offered.
    rivals: Vec<Vec<(String, u32)>>,
}

impl Finder<'_> {
    /// `schema` with its candidate-backed parts as enums, and what the part itself offers.
    fn rewrite(&mut self, schema: &Value, may_be_null: bool) -> (Value, Option<(Detector, usize)>) {
        let unchanged = (schema.clone(), None);
        let Some(object) = schema.as_object() else {
            return unchanged;
        };
        let opted_out = object.get("x-grounding").and_then(Value::as_str) == Some("none")
            || object.get("x-candidates") == Some(&Value::Bool(false));
        let fixed = [
            "enum", "const", "pattern", "$ref", "oneOf", "allOf", "not", "if",
        ]
        .iter()
        .any(|key| object.contains_key(*key));
        if opted_out || fixed {
            return unchanged;
        }
        if let Some(branches) = object.get("anyOf").and_then(Value::as_array) {
            return match or_null(branches) {
                Some(branch) => match self.rewrite(branch, true) {
                    (rewritten, Some(offered)) => (rewritten, Some(offered)),
                    (_, None) => unchanged,
                },
                None => unchanged,
            };
        }
        let (kinds, type_nullable) = kinds(object);
        let nullable = type_nullable || may_be_null;
        let detector = match kinds.as_slice() {
            ["object"] => return (self.object(object), None),
            ["array"] => {
                let Some(items) = object.get("items") else {
                    return unchanged;
                };
                let (items, offered) = self.rewrite(items, false);
                let mut array = object.clone();
                array.insert("items".to_owned(), items);
                return (Value::Object(array), offered);
            }
            ["string"] => Detector::for_string(object),
            ["number"] => Some(Detector::Number),
            ["integer"] => Some(Detector::Integer),
            _ => None,
        };
        let Some(detector) = detector else {
            return unchanged;
        };
        let mut values: Vec<(Value, Span)> = self
            .values(detector)
            .iter()
            .filter(|(value, _)| within_bounds(object, value))
            .cloned()
            .collect();
        // Candidates the text names as this field's are the ones offered, and then without
        // null: the text says the value is there.
        let mut named = false;
        if let Some(words) = &self.context {
            (values, named) = best_named(self.text, words, &self.rivals, values);
        }
        let nullable = nullable && !named;
        let mut choices: Vec<Value> = Vec::new();
        for (value, _) in &values {
            if !choices.contains(value) {
                choices.push(value.clone());
            }
        }
        // Nothing found by a detector that misses little (an address, a URL, an IP address, a
        // phone number), for a field that may be absent: the text does not state it, so null is
        // the only choice rather than a value spelled to fit the format.
        let reliable = matches!(
            detector,
            Detector::Email | Detector::Url | Detector::Ip | Detector::Phone
        );
        if choices.is_empty() && nullable && reliable {
            return (
                choice_schema(object, kinds[0], true, Vec::new()),
                Some((detector, 0)),
            );
        }
        if choices.is_empty() || choices.len() > MAX_CANDIDATES {
            return unchanged;
        }
        for (value, span) in &values {
            let text = match value {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            self.offered.push((text, *span));
        }
        let offered = choices.len();
        (
            choice_schema(object, kinds[0], nullable, choices),
            Some((detector, offered)),
        )
    }

    /// An object schema with each property rewritten (a property's own type says whether it
    /// may be null).
    fn object(&mut self, object: &Map<String, Value>) -> Value {
        let mut rewritten = object.clone();
        if let Some(properties) = rewritten
            .get_mut("properties")
            .and_then(Value::as_object_mut)
        {
            for property in properties.values_mut() {
                *property = self.rewrite(property, false).0;
            }
        }
        Value::Object(rewritten)
    }

    fn values(&mut self, detector: Detector) -> &[(Value, Span)] {
        if !self.found.contains_key(&detector) {
            let values = match self.now {
                Some(now) => find(self.text, detector, now),
                None => independent_of_now(self.text, detector),
            };
            self.found.insert(detector, values);
        }
        &self.found[&detector]
    }
}

/// The values `detector` finds whatever the time: those found alike against two reference
/// times a year and a half apart (a relative date moves, "24 December 2024" does not).
fn independent_of_now(text: &str, detector: Detector) -> Vec<(Value, Span)> {
    let at = |rfc3339: &str| DateTime::parse_from_rfc3339(rfc3339).expect("a valid time");
    let early = find(text, detector, at("2001-03-14T09:00:00+00:00"));
    let late = find(text, detector, at("2002-09-27T17:00:00+00:00"));
    early
        .into_iter()
        .filter(|found| late.contains(found))
        .collect()
}

/// Characters of the text before a value, and after it, searched for the field's words.
const CONTEXT_BEFORE: usize = 48;
const CONTEXT_AFTER: usize = 24;

/// The words that name a field: its name's (`due_date`, `dueDate` → due, date) and its
/// description's longer words, lower-cased, each with a weight (the name's count double).
fn field_words(field: &FieldSpec) -> Vec<(String, u32)> {
    let mut words: Vec<(String, u32)> = Vec::new();
    let mut add = |word: &str, weight: u32| {
        let word = word.to_lowercase();
        if word.chars().count() >= 3 && !words.iter().any(|(known, _)| *known == word) {
            words.push((word, weight));
        }
    };
    let mut name = String::new();
    for c in field.name.chars() {
        if c.is_uppercase() {
            name.push(' ');
        }
        name.push(if c == '_' || c == '-' { ' ' } else { c });
    }
    for word in name.split_whitespace() {
        add(word, 2);
    }
    if let Some(description) = &field.spec.description {
        for word in description
            .split(|c: char| !c.is_alphanumeric())
            .filter(|word| {
                word.chars().count() >= 4 && !STOPWORDS.contains(&word.to_lowercase().as_str())
            })
        {
            add(word, 1);
        }
    }
    words
}

const STOPWORDS: [&str; 12] = [
    "with", "from", "that", "this", "when", "where", "which", "what", "their", "there", "into",
    "date",
];

/// The text around `span` on its line: up to [`CONTEXT_BEFORE`] characters before it and
/// [`CONTEXT_AFTER`] after, lower-cased.
fn around(document: &str, span: Span) -> (String, String) {
    let head = &document[..span.byte_start];
    let line = head.rsplit('\n').next().unwrap_or(head);
    let skip = line.chars().count().saturating_sub(CONTEXT_BEFORE);
    let mut before: String = line.chars().skip(skip).collect();
    // In a table, the column's header names the value as a label on its line would.
    if let Some(header) = column_header(document, span.byte_start) {
        before = format!("{header}: {}", before.rsplit('|').next().unwrap_or(""));
    }
    let tail = &document[span.byte_end..];
    let after: String = tail
        .split('\n')
        .next()
        .unwrap_or(tail)
        .chars()
        .take(CONTEXT_AFTER)
        .collect();
    (before.to_lowercase(), after.to_lowercase())
}

/// The header of the Markdown table column the byte `at` is in: the cell at the same position
/// in the first line of the run of `|` lines holding `at`, when `at` is below that line.
fn column_header(document: &str, at: usize) -> Option<String> {
    let line_start = document[..at].rfind('\n').map_or(0, |i| i + 1);
    let line_end = document[at..].find('\n').map_or(document.len(), |i| at + i);
    if !document[line_start..line_end].trim_start().starts_with('|') {
        return None;
    }
    let column = document[line_start..at].matches('|').count();
    let mut header_start = line_start;
    while header_start > 0 {
        let previous_start = document[..header_start - 1]
            .rfind('\n')
            .map_or(0, |i| i + 1);
        if !document[previous_start..header_start - 1]
            .trim_start()
            .starts_with('|')
        {
            break;
        }
        header_start = previous_start;
    }
    if header_start == line_start {
        return None;
    }
    let header_line = document[header_start..].lines().next()?;
    let cell = header_line.split('|').nth(column)?.trim();
    (!cell.is_empty()).then(|| cell.to_owned())
}

/// Whether `text` holds `word` or a word sharing its first five letters ("employs" for
/// "employees", "founder" for "founded").
fn mentions(text: &str, word: &str) -> bool {
    let stem: String = word.chars().take(5).collect();
    text.split(|c: char| !c.is_alphanumeric())
        .any(|written| written.starts_with(&stem) || written == word)
}

/// The last 16 characters of `before` (fewer where that would split a character).
fn near(before: &str) -> &str {
    let mut start = before.len().saturating_sub(16);
    while !before.is_char_boundary(start) {
        start += 1;
    }
    &before[start..]
}

/// How strongly the words around a value name the field: the weights of the field's words
/// found there, doubled for a word right before the value.
fn context_score(words: &[(String, u32)], before: &str, after: &str) -> u32 {
    let near = near(before);
    words
        .iter()
        .map(|(word, weight)| {
            if mentions(near, word) {
                weight * 2
            } else if mentions(before, word) || mentions(after, word) {
                *weight
            } else {
                0
            }
        })
        .sum()
}

/// Of the candidates no other field's words name more strongly, those whose surroundings name
/// the field best, and true, when some do; else all of them and false. "Due date: 2 Nov" beats
/// "Issued: 18 Sep" for `due_date`; "3,150 employees" beats "founded 1919" for `employees`;
/// "Follow-up meeting: on the 28th" goes to `next_meeting`, not to a meeting's `date`.
fn best_named(
    text: &str,
    words: &[(String, u32)],
    rivals: &[Vec<(String, u32)>],
    values: Vec<(Value, Span)>,
) -> (Vec<(Value, Span)>, bool) {
    let scored: Vec<((Value, Span), u32)> = values
        .into_iter()
        .filter_map(|(value, span)| {
            let (before, after) = around(text, span);
            let own = context_score(words, &before, &after);
            // Only a rival named right before the value counts: "Customer Lee Wong,
            // lee.wong@…" does not make the address the customer's.
            let rival = rivals
                .iter()
                .map(|rival| context_score(rival, near(&before), ""))
                .max()
                .unwrap_or(0);
            (rival <= own).then_some(((value, span), own))
        })
        .collect();
    let (values, scores): (Vec<(Value, Span)>, Vec<u32>) = scored.into_iter().unzip();
    let best = scores.iter().copied().max().unwrap_or(0);
    if best == 0 {
        return (values, false);
    }
    let named = values
        .into_iter()
        .zip(scores)
        .filter(|(_, score)| *score == best)
        .map(|(value, _)| value)
        .collect();
    (named, true)
}

/// A plain text field's values where the document labels them: after the field's name and a
/// colon ("Location: Studio B", "Invoice number: INV-7"), up to a clause delimiter, a `|` or
/// the line's end, at most 80 characters; with where each is.
fn labelled(document: &str, field: &FieldSpec) -> Vec<(String, Span)> {
    let words: Vec<String> = field_words(field)
        .into_iter()
        .filter(|(_, weight)| *weight == 2)
        .map(|(word, _)| word)
        .collect();
    if words.is_empty() {
        return Vec::new();
    }
    let label = words.join(" ");
    let mut found: Vec<(String, Span)> = Vec::new();
    let mut line_start = 0;
    for line in document.split_inclusive('\n') {
        let offset = line_start;
        line_start += line.len();
        let lower = line.to_ascii_lowercase();
        let Some(at) = lower.find(&label) else {
            continue;
        };
        let label_end = at + label.len();
        let starts_word = at == 0 || !lower[..at].ends_with(char::is_alphanumeric);
        let Some(rest) = line[label_end..].trim_start().strip_prefix(':') else {
            continue;
        };
        if !starts_word {
            continue;
        }
        let value = rest
            .split(['|', ';', '\n', '\r'])
            .next()
            .unwrap_or("")
            .split(", ")
            .next()
            .unwrap_or("")
            .trim()
            .trim_end_matches(['.', ','])
            .trim();
        if value.is_empty() || value.chars().count() > 80 {
            continue;
        }
        let byte_start = offset + line.len() - rest.len() + rest.find(value).unwrap_or(0);
        let start = document[..byte_start].chars().count();
        let span = Span {
            start,
            end: start + value.chars().count(),
            byte_start,
            byte_end: byte_start + value.len(),
        };
        if !found.iter().any(|(known, _)| known == value) {
            found.push((value.to_owned(), span));
        }
    }
    found.extend(table_cells(document, &label));
    found.dedup_by(|a, b| a.0 == b.0);
    if found.len() > MAX_CANDIDATES {
        found.clear();
    }
    found
}

/// The cells of a Markdown table's column whose header is `label` (case-blind), below the
/// separator row, with where each is.
fn table_cells(document: &str, label: &str) -> Vec<(String, Span)> {
    let mut found = Vec::new();
    let mut column: Option<usize> = None;
    let mut offset = 0;
    for line in document.split_inclusive('\n') {
        let line_start = offset;
        offset += line.len();
        if !line.trim_start().starts_with('|') {
            column = None;
            continue;
        }
        let cells: Vec<&str> = line.split('|').collect();
        let Some(index) = column else {
            column = cells
                .iter()
                .position(|cell| cell.trim().eq_ignore_ascii_case(label));
            continue;
        };
        let Some(cell) = cells.get(index) else {
            continue;
        };
        let value = cell.trim();
        if value.is_empty() || value.chars().all(|c| c == '-' || c == ':') {
            continue;
        }
        let cell_start = line_start + cells[..index].iter().map(|c| c.len() + 1).sum::<usize>();
        let byte_start = cell_start + cell.find(value).unwrap_or(0);
        let start = document[..byte_start].chars().count();
        found.push((
            value.to_owned(),
            Span {
                start,
                end: start + value.chars().count(),
                byte_start,
                byte_end: byte_start + value.len(),
            },
        ));
    }
    found
}

/// A value of `kind` that is one of `choices` (or null), keeping the schema's title and
/// description.
fn choice_schema(
    object: &Map<String, Value>,
    kind: &str,
    nullable: bool,
    mut choices: Vec<Value>,
) -> Value {
    let mut choice = Map::new();
    for key in ["title", "description"] {
        if let Some(value) = object.get(key) {
            choice.insert(key.to_owned(), value.clone());
        }
    }
    if nullable {
        choices.push(Value::Null);
        choice.insert("type".to_owned(), serde_json::json!([kind, "null"]));
    } else {
        choice.insert("type".to_owned(), Value::String(kind.to_owned()));
    }
    choice.insert("enum".to_owned(), Value::Array(choices));
    Value::Object(choice)
}

/// The branch of `anyOf: [X, {type: null}]` that is not null.
fn or_null(branches: &[Value]) -> Option<&Value> {
    let is_null = |branch: &Value| branch.get("type").and_then(Value::as_str) == Some("null");
    match branches {
        [a, b] if is_null(b) && !is_null(a) => Some(a),
        [a, b] if is_null(a) && !is_null(b) => Some(b),
        _ => None,
    }
}

/// The schema's types (`type` as a string or a list) without `null`, and whether null is allowed.
fn kinds(object: &Map<String, Value>) -> (Vec<&str>, bool) {
    let listed: Vec<&str> = match object.get("type") {
        Some(Value::String(kind)) => vec![kind.as_str()],
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
        None if object.contains_key("properties") => vec!["object"],
        _ => Vec::new(),
    };
    let nullable = listed.contains(&"null");
    (
        listed.into_iter().filter(|kind| *kind != "null").collect(),
        nullable,
    )
}

/// Whether `value` keeps the schema's own length and range bounds.
fn within_bounds(object: &Map<String, Value>, value: &Value) -> bool {
    let bound = |key: &str| object.get(key).and_then(Value::as_f64);
    match value {
        Value::String(text) => {
            let length = text.chars().count() as f64;
            bound("minLength").is_none_or(|min| length >= min)
                && bound("maxLength").is_none_or(|max| length <= max)
        }
        Value::Number(number) => {
            let Some(x) = number.as_f64() else {
                return false;
            };
            bound("minimum").is_none_or(|min| x >= min)
                && bound("maximum").is_none_or(|max| x <= max)
                && bound("exclusiveMinimum").is_none_or(|min| x > min)
                && bound("exclusiveMaximum").is_none_or(|max| x < max)
                && bound("multipleOf")
                    .is_none_or(|step| step > 0.0 && ((x / step).round() * step - x).abs() < 1e-9)
        }
        _ => true,
    }
}

/// The values `detector` finds in `text`, in text order, with their spans.
pub(crate) fn find(
    text: &str,
    detector: Detector,
    now: DateTime<FixedOffset>,
) -> Vec<(Value, Span)> {
    let as_written = |detections: Vec<Detection>| -> Vec<(Value, Span)> {
        detections
            .into_iter()
            .map(|d| {
                (
                    Value::String(text[d.range.clone()].to_owned()),
                    span_of(text, &d),
                )
            })
            .collect()
    };
    let normalised = |detections: Vec<Detection>, kind: Option<MatchKind>| -> Vec<(Value, Span)> {
        detections
            .into_iter()
            .filter(|d| kind.is_none_or(|kind| d.kind == kind))
            .map(|d| (Value::String(d.value.clone()), span_of(text, &d)))
            .collect()
    };
    let offset = now.offset().to_string();
    match detector {
        Detector::Email => as_written(email::find(text)),
        Detector::Url => url::find(text)
            .into_iter()
            .map(|d| {
                let written = &text[d.range.clone()];
                let value = if written.contains("://") {
                    written.to_owned()
                } else {
                    d.value.clone()
                };
                (Value::String(value), span_of(text, &d))
            })
            .collect(),
        Detector::Phone => as_written(phone::find(text, region(now))),
        Detector::Ip => normalised(ip::find(text), None),
        Detector::Person => {
            let mut people = normalised(names::find(text), None);
            people.extend(normalised(entity::find(text), Some(MatchKind::Person)));
            people.sort_by_key(|(_, span)| span.start);
            people
        }
        Detector::Organization => normalised(entity::find(text), Some(MatchKind::Organization)),
        Detector::Location => normalised(entity::find(text), Some(MatchKind::Location)),
        Detector::Date => date::find(text, now)
            .into_iter()
            .flat_map(|d| {
                let span = span_of(text, &d);
                calendar_dates(&text[d.range.clone()], &d, now)
                    .into_iter()
                    .map(move |day| (Value::String(day), span))
            })
            .collect(),
        Detector::DateTime => date::find(text, now)
            .into_iter()
            .filter(|d| d.kind == MatchKind::DateTime)
            .map(|d| {
                let value = with_offset(&d.value, &offset);
                (Value::String(value), span_of(text, &d))
            })
            .collect(),
        Detector::Time => date::find(text, now)
            .into_iter()
            .filter_map(|d| {
                let time = match d.kind {
                    MatchKind::Time => d.value.clone(),
                    MatchKind::DateTime => d.value.get(11..)?.to_owned(),
                    _ => return None,
                };
                Some((
                    Value::String(with_offset(&time, &offset)),
                    span_of(text, &d),
                ))
            })
            .collect(),
        Detector::Number | Detector::Integer => numbers(text, detector == Detector::Integer, now),
        // Found per field, by `labelled`.
        Detector::Label => Vec::new(),
    }
}

/// The calendar days a date detection (`written` in the text) names as `YYYY-MM-DD`: a date, a
/// date-time's day, the day a range is bounded by ("by 24 December", "before next Friday": the
/// day written, read without its preposition), or a range's written ends (not the ends of a
/// range the detector made of a bare year or month).
fn calendar_dates(written: &str, detection: &Detection, now: DateTime<FixedOffset>) -> Vec<String> {
    let day = |value: &str| value.get(..10).filter(|day| is_day(day)).map(str::to_owned);
    match detection.kind {
        MatchKind::Date | MatchKind::DateTime => day(&detection.value).into_iter().collect(),
        MatchKind::DateRange => {
            let bound = written
                .split_once(char::is_whitespace)
                .map(|(_, rest)| date::find(rest, now));
            if let Some([bound]) = bound.as_deref()
                && matches!(bound.kind, MatchKind::Date | MatchKind::DateTime)
            {
                return day(&bound.value).into_iter().collect();
            }
            let Some((start, end)) = detection.value.split_once('/') else {
                return Vec::new();
            };
            let (Some(start), Some(end)) = (day(start), day(end)) else {
                return Vec::new();
            };
            let whole_year = start.ends_with("-01-01") && end.ends_with("-12-31");
            let whole_month = start.ends_with("-01") && start[..7] == end[..7] && end[8..] >= *"28";
            if whole_year || whole_month {
                return Vec::new();
            }
            let today = now.date_naive().format("%Y-%m-%d").to_string();
            let mut days = Vec::new();
            if start != today {
                days.push(start);
            }
            days.push(end);
            days
        }
        _ => Vec::new(),
    }
}

fn is_day(text: &str) -> bool {
    chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").is_ok()
}

/// `value` (a date-time or a time of day) with `offset` when it has none.
fn with_offset(value: &str, offset: &str) -> String {
    let is_date_time = value.len() >= 19 && value.as_bytes()[10] == b'T';
    let after_seconds = value.get(if is_date_time { 19 } else { 8 }..).unwrap_or("");
    if after_seconds.contains(['Z', '+', '-']) {
        value.to_owned()
    } else {
        format!("{value}{offset}")
    }
}

/// Every reading of every number expression that is not part of a longer date with a day (the
/// year of "in March 1998" may be a year founded; the 2025 of "March 3, 2025" is no amount), phone
/// number, e-mail address, URL or IP address.
fn numbers(text: &str, integers_only: bool, now: DateTime<FixedOffset>) -> Vec<(Value, Span)> {
    let quantities = Quantities::scan(text);
    let mut taken: Vec<(usize, usize)> = quantities
        .day_spans()
        .map(|span| (span.byte_start, span.byte_end))
        .collect();
    let mut others: Vec<Detection> = date::find(text, now)
        .into_iter()
        .filter(|d| matches!(d.kind, MatchKind::Date | MatchKind::DateTime))
        .collect();
    others.extend(phone::find(text, region(now)));
    others.extend(email::find(text));
    others.extend(url::find(text));
    others.extend(ip::find(text));
    taken.extend(others.iter().map(|d| (d.range.start, d.range.end)));
    quantities
        .numbers()
        .iter()
        .filter(|(_, span)| {
            !taken.iter().any(|&(start, end)| {
                start <= span.byte_start
                    && span.byte_end <= end
                    && end - start > span.byte_end - span.byte_start
            })
        })
        .filter_map(|&(reading, span)| {
            let integral = reading.fract() == 0.0 && reading.abs() < 9.0e15;
            if integers_only && !integral {
                return None;
            }
            let value = if integral {
                Value::from(reading as i64)
            } else {
                Value::from(serde_json::Number::from_f64(reading)?)
            };
            Some((value, span))
        })
        .collect()
}

/// The phone region numbers without a country code are read in (the detectors' default).
fn region(now: DateTime<FixedOffset>) -> quarry_detect::phone::Region {
    quarry_detect::DetectOptions::new(now).region
}

/// A detection's place in code points and bytes.
fn span_of(text: &str, detection: &Detection) -> Span {
    let start = text[..detection.range.start].chars().count();
    Span {
        start,
        end: start + text[detection.range.clone()].chars().count(),
        byte_start: detection.range.start,
        byte_end: detection.range.end,
    }
}

#[cfg(test)]
mod tests;
