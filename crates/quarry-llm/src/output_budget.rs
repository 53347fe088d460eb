//! How many tokens a reply that follows a JSON Schema may need: the output budget of one model
//! turn, sized to what the turn asks for, so a turn of a model that rambles (or loops inside a
//! string) ends long before the context window does.
//!
//! An estimate, generous on purpose: a string without `maxLength` gets room for a sentence or
//! two, an array without `maxItems` for eight items; property names and punctuation are counted.

use serde_json::Value;

/// The fewest tokens a turn is given.
pub const MIN_BUDGET: u32 = 64;
/// The most tokens a turn sized by its schema is given.
pub const MAX_BUDGET: u32 = 2048;

/// Tokens enough for a value of `schema`, with a margin, between [`MIN_BUDGET`] and
/// [`MAX_BUDGET`].
pub fn output_budget(schema: &Value) -> u32 {
    (estimate(schema, 0) + 16).clamp(MIN_BUDGET, MAX_BUDGET)
}

fn estimate(schema: &Value, depth: usize) -> u32 {
    let Some(object) = schema.as_object() else {
        return 64;
    };
    if depth > 8 {
        return 64;
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = object.get(key).and_then(Value::as_array) {
            return branches
                .iter()
                .map(|branch| estimate(branch, depth + 1))
                .max()
                .unwrap_or(64);
        }
    }
    if let Some(values) = object.get("enum").and_then(Value::as_array) {
        return values
            .iter()
            .map(|value| text_tokens(&value.to_string()) + 2)
            .max()
            .unwrap_or(4);
    }
    if let Some(value) = object.get("const") {
        return text_tokens(&value.to_string()) + 2;
    }
    let kinds: Vec<&str> = match object.get("type") {
        Some(Value::String(kind)) => vec![kind.as_str()],
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
        _ if object.contains_key("properties") => vec!["object"],
        _ => Vec::new(),
    };
    let one = |kind: &str| -> u32 {
        match kind {
            "object" => {
                let properties = object.get("properties").and_then(Value::as_object);
                match properties {
                    Some(properties) => {
                        4 + properties
                            .iter()
                            .map(|(name, property)| {
                                text_tokens(name) + 3 + estimate(property, depth + 1)
                            })
                            .sum::<u32>()
                    }
                    None => 128,
                }
            }
            "array" => {
                let items = object
                    .get("items")
                    .map_or(32, |items| estimate(items, depth + 1));
                let count = object
                    .get("maxItems")
                    .and_then(Value::as_u64)
                    .map_or(8, |max| max.min(64) as u32);
                4 + (items + 1) * count
            }
            "string" => match (
                object.get("maxLength").and_then(Value::as_u64),
                object.get("format").and_then(Value::as_str),
            ) {
                (Some(max), _) => (max.min(4096) as u32) / 3 + 4,
                (None, Some("date" | "time" | "date-time" | "duration")) => 16,
                (None, Some(_)) => 32,
                (None, None) => 64,
            },
            "number" | "integer" => 12,
            "boolean" => 4,
            "null" => 2,
            _ => 64,
        }
    };
    kinds.iter().map(|kind| one(kind)).max().unwrap_or(64)
}

/// Tokens of a short text, at about three characters a token.
fn text_tokens(text: &str) -> u32 {
    (text.chars().count() as u32).div_ceil(3)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn small_schemas_get_a_small_budget_and_large_ones_a_bounded_one() {
        let value = json!({"type": "object", "properties": {
            "value": {"type": ["number", "null"]},
            "confidence": {"enum": ["high", "medium", "low"]}}});
        let small = output_budget(&value);
        assert!((MIN_BUDGET..=128).contains(&small), "{small}");
        let names = json!({"type": "array", "items": {"type": "string"}});
        assert!(output_budget(&names) > small);
        let huge = json!({"type": "array", "maxItems": 1000, "items": {"type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}});
        assert_eq!(output_budget(&huge), MAX_BUDGET);
    }
}
