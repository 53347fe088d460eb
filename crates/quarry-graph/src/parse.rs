//! Reading a model's reply as a [`GraphExtraction`], leniently: the JSON may sit in a code fence
//! or in prose, be broken (trailing commas, single quotes, truncation — `quarry_parse` repairs
//! it), be written as a tool call, miss either array, use `fromType` or `from_type`, give one
//! object where a list belongs, or hold items that are not objects (skipped and counted). Only a
//! reply with no JSON object at all is a failure.

use quarry_core::model::{ExtractedEntity, ExtractedRelationship, GraphExtraction};
use quarry_parse::{Flag, parse_candidates, total_cost, unwrap_tool_call};
use serde_json::{Map, Value};

/// What a reply held.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParsedReply {
    pub extraction: GraphExtraction,
    /// Entity items that were not objects or had no usable name or type.
    pub entities_skipped: usize,
    /// Relationship items that were not objects or had no endpoints or label.
    pub relationships_skipped: usize,
    /// The repairs the chosen reading needed (fence, prose, syntax fixes).
    pub flags: Vec<Flag>,
}

/// The best reading of `raw`; `Err` with a readable reason when nothing in it is a JSON object.
pub fn parse_reply(raw: &str) -> Result<ParsedReply, String> {
    // Constrained output is usually clean JSON: read it directly, no repair pass.
    if let Ok(value) = serde_json::from_str::<Value>(raw.trim())
        && rank(&value) == Some(0)
    {
        return Ok(from_value(&value));
    }
    // (rank, cost): lower is better; rank 0 = has an `entities`/`relationships` key, 1 = a bare
    // list of entity objects, 2 = some other object (e.g. `{}`: nothing found).
    let mut best: Option<((u8, u32), Value, Vec<Flag>)> = None;
    for candidate in parse_candidates(raw) {
        let mut readings = vec![(candidate.value.clone(), candidate.flags.clone())];
        if let Some(arguments) = unwrap_tool_call(&candidate.value) {
            let mut flags = candidate.flags.clone();
            flags.push(Flag::UnwrappedToolCall);
            readings.push((arguments, flags));
        }
        for (value, flags) in readings {
            let Some(rank) = rank(&value) else { continue };
            let key = (rank, total_cost(&flags));
            if best.as_ref().is_none_or(|(b, _, _)| key < *b) {
                best = Some((key, value, flags));
            }
        }
    }
    let Some((_, value, flags)) = best else {
        return Err(format!(
            "the model's reply holds no JSON object: {}",
            snippet(raw)
        ));
    };
    let mut parsed = from_value(&value);
    parsed.flags = flags;
    Ok(parsed)
}

fn rank(value: &Value) -> Option<u8> {
    match value {
        Value::Object(object) => Some(
            if object.contains_key("entities") || object.contains_key("relationships") {
                0
            } else {
                2
            },
        ),
        Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_object) => Some(1),
        _ => None,
    }
}

/// Reads an already parsed value (an object with `entities`/`relationships`, or a bare list of
/// entities) leniently.
pub fn from_value(value: &Value) -> ParsedReply {
    let mut parsed = ParsedReply::default();
    let (entities, relationships) = match value {
        Value::Object(object) => (
            items(object.get("entities")),
            items(
                object
                    .get("relationships")
                    .or_else(|| object.get("relations")),
            ),
        ),
        Value::Array(list) => (list.iter().collect(), Vec::new()),
        _ => (Vec::new(), Vec::new()),
    };
    for item in entities {
        match item.as_object().and_then(entity) {
            Some(entity) => parsed.extraction.entities.push(entity),
            None => parsed.entities_skipped += 1,
        }
    }
    for item in relationships {
        match item.as_object().and_then(relationship) {
            Some(relationship) => parsed.extraction.relationships.push(relationship),
            None => parsed.relationships_skipped += 1,
        }
    }
    parsed
}

/// A list, one value standing for a list of one, or nothing.
fn items(value: Option<&Value>) -> Vec<&Value> {
    match value {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(list)) => list.iter().collect(),
        Some(other) => vec![other],
    }
}

fn entity(object: &Map<String, Value>) -> Option<ExtractedEntity> {
    let name = text(object, &["name", "entity", "title"])?;
    let entity_type = text(object, &["type", "entityType", "entity_type", "category"])?;
    Some(ExtractedEntity {
        name,
        entity_type,
        notes: notes(object),
    })
}

fn relationship(object: &Map<String, Value>) -> Option<ExtractedRelationship> {
    let (from, from_type) = endpoint(
        object,
        &["from", "source", "subject"],
        &["fromType", "from_type", "sourceType", "source_type"],
    )?;
    let (to, to_type) = endpoint(
        object,
        &["to", "target", "object"],
        &["toType", "to_type", "targetType", "target_type"],
    )?;
    let label = text(
        object,
        &["label", "relation", "relationship", "predicate", "type"],
    )?;
    Some(ExtractedRelationship {
        from,
        from_type,
        to,
        to_type,
        label,
        notes: notes(object),
    })
}

/// An endpoint's name and type (empty when the model left it out); the endpoint may also be
/// written as an object `{"name": …, "type": …}`.
fn endpoint(
    object: &Map<String, Value>,
    name_keys: &[&str],
    type_keys: &[&str],
) -> Option<(String, String)> {
    let raw = name_keys.iter().find_map(|key| object.get(*key))?;
    if let Value::Object(inner) = raw {
        let name = text(inner, &["name", "entity", "title"])?;
        let entity_type = text(inner, &["type", "entityType", "entity_type"])
            .or_else(|| text(object, type_keys))
            .unwrap_or_default();
        return Some((name, entity_type));
    }
    let name = scalar(raw)?;
    Some((name, text(object, type_keys).unwrap_or_default()))
}

/// The first of `keys` holding a non-empty scalar, as text.
fn text(object: &Map<String, Value>, keys: &[&str]) -> Option<String> {
    keys.iter()
        .find_map(|key| object.get(*key).and_then(scalar))
        .filter(|s| !s.trim().is_empty())
}

fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn notes(object: &Map<String, Value>) -> Option<String> {
    let raw = ["notes", "note", "description"]
        .iter()
        .find_map(|key| object.get(*key))?;
    let notes = match raw {
        Value::Null => return None,
        Value::String(s) => s.trim().to_owned(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(scalar)
            .collect::<Vec<_>>()
            .join("; "),
        other => other.to_string(),
    };
    let lowered = notes.to_lowercase();
    (!notes.is_empty() && lowered != "null" && lowered != "none" && lowered != "n/a")
        .then_some(notes)
}

fn snippet(raw: &str) -> String {
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return "(empty reply)".to_owned();
    }
    let mut out: String = trimmed.chars().take(200).collect();
    if trimmed.chars().count() > 200 {
        out.push('…');
    }
    format!("{out:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fenced_and_prose_wrapped_replies_are_read() {
        let raw = "Sure! Here you go:\n```json\n{\"entities\": [{\"name\": \"Alice\", \"type\": \
                   \"person\", \"notes\": null},], \"relationships\": []}\n```\nHope it helps.";
        let parsed = parse_reply(raw).unwrap();
        assert_eq!(parsed.extraction.entities.len(), 1);
        assert_eq!(parsed.extraction.entities[0].name, "Alice");
    }

    #[test]
    fn missing_arrays_odd_keys_and_non_objects() {
        let raw = r#"{"entities": ["Alice", {"name": "Bob", "type": "person"}],
            "relationships": [{"from": "Bob", "from_type": "person", "to": "Acme",
            "to_type": "organization", "label": "works at"}, 3]}"#;
        let parsed = parse_reply(raw).unwrap();
        assert_eq!(parsed.extraction.entities.len(), 1);
        assert_eq!(parsed.entities_skipped, 1);
        assert_eq!(parsed.extraction.relationships.len(), 1);
        assert_eq!(parsed.extraction.relationships[0].from_type, "person");
        assert_eq!(parsed.relationships_skipped, 1);
        let only = parse_reply(r#"{"entities": [{"name": "X", "type": "concept"}]}"#).unwrap();
        assert!(only.extraction.relationships.is_empty());
    }

    #[test]
    fn no_json_is_an_error() {
        let err = parse_reply("I could not find any entities, sorry.").unwrap_err();
        assert!(err.contains("no JSON object"), "{err}");
        assert!(parse_reply("").is_err());
    }
}
