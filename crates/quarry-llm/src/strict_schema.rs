//! OpenAI's strict structured outputs accept a subset of JSON Schema: every object lists all its
//! properties in `required` and says `additionalProperties: false`, and only some keywords are
//! enforced. [`to_strict`] rewrites a user's schema into that subset and [`restore`] maps a reply
//! back, so validation downstream sees values of the user's schema, not of the rewrite.
//!
//! The rewrite: optional properties become required and nullable (`"type": "string"` becomes
//! `["string", "null"]`, a `$ref` or `anyOf` gains a `{"type": "null"}` branch); `oneOf` becomes
//! `anyOf`; an `allOf` of one schema is inlined; keywords strict mode does not enforce
//! (`minLength`, `uniqueItems`, `not`, ...) are moved into the `description` so the model still
//! reads them; vendor (`x-…`) and meta keys (`$schema`, `$id`, `$comment`) are dropped. A schema
//! strict mode cannot express (a free-form object, a tuple, an `allOf` of several schemas, a
//! schema that accepts anything) is refused with the reason, and the caller sends the user's
//! schema as it is with `strict: false`.

use serde_json::{Map, Value, json};

/// Keywords strict mode understands and enforces, kept as they are.
const KEPT: [&str; 15] = [
    "type",
    "description",
    "title",
    "enum",
    "const",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "$ref",
    "format",
];

/// `format` values strict mode enforces; others go into the description.
const FORMATS: [&str; 9] = [
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Dropped without a word: they say nothing about the value to the model.
fn is_meta(key: &str) -> bool {
    key.starts_with("x-") || matches!(key, "$schema" | "$id" | "$comment" | "$anchor")
}

/// `schema` rewritten to OpenAI's strict subset, or why it cannot be.
pub fn to_strict(schema: &Value) -> Result<Value, String> {
    let is_object_root = schema.get("type").and_then(Value::as_str) == Some("object")
        || schema.get("properties").is_some();
    if !is_object_root {
        return Err("strict mode needs an object at the root".into());
    }
    rewrite(schema, "#")
}

fn rewrite(schema: &Value, path: &str) -> Result<Value, String> {
    let Some(node) = schema.as_object() else {
        return Err(format!("{path} is a boolean schema"));
    };
    let mut node = node.clone();
    // An allOf of one schema (Pydantic v1's `allOf: [{$ref}]`) is that schema.
    if let Some(Value::Array(all)) = node.get("allOf") {
        match all.as_slice() {
            [Value::Object(only)] => {
                let only = only.clone();
                node.remove("allOf");
                for (key, value) in only {
                    node.entry(key).or_insert(value);
                }
            }
            _ => return Err(format!("{path} combines several schemas with allOf")),
        }
    }
    if let Some(one_of) = node.remove("oneOf") {
        node.insert("anyOf".into(), one_of);
    }
    let constrains = ["type", "enum", "const", "$ref", "anyOf", "properties"]
        .iter()
        .any(|key| node.contains_key(*key));
    if !constrains {
        return Err(format!("{path} accepts any value"));
    }

    let mut out = Map::new();
    let mut notes = Vec::new();
    for (key, value) in &node {
        match key.as_str() {
            "properties" | "items" | "anyOf" | "$defs" | "definitions" | "additionalProperties" => {
            }
            "format"
                if !value
                    .as_str()
                    .is_some_and(|format| FORMATS.contains(&format)) =>
            {
                notes.push(format!("format {}", compact(value)));
            }
            "required" => {} // rewritten below
            key if KEPT.contains(&key) => {
                out.insert(key.to_owned(), value.clone());
            }
            key if is_meta(key) => {}
            "prefixItems" => return Err(format!("{path} is a tuple (prefixItems)")),
            key => notes.push(format!("{key} {}", compact(value))),
        }
    }

    for defs in ["$defs", "definitions"] {
        if let Some(Value::Object(entries)) = node.get(defs) {
            let mut rewritten = Map::new();
            for (name, entry) in entries {
                rewritten.insert(
                    name.clone(),
                    rewrite(entry, &format!("{path}/{defs}/{name}"))?,
                );
            }
            out.insert(defs.to_owned(), Value::Object(rewritten));
        }
    }

    if let Some(Value::Array(branches)) = node.get("anyOf") {
        let branches = branches
            .iter()
            .enumerate()
            .map(|(index, branch)| rewrite(branch, &format!("{path}/anyOf/{index}")))
            .collect::<Result<Vec<_>, _>>()?;
        out.insert("anyOf".into(), Value::Array(branches));
    }

    match node.get("items") {
        None => {}
        Some(items @ Value::Object(_)) => {
            out.insert("items".into(), rewrite(items, &format!("{path}/items"))?);
        }
        Some(_) => return Err(format!("{path} is a tuple (items as a list)")),
    }

    let is_object = node.get("properties").is_some() || type_includes(&node, "object");
    if is_object {
        let properties = match node.get("properties") {
            Some(Value::Object(properties)) => properties.clone(),
            None => Map::new(),
            Some(_) => return Err(format!("{path}/properties is not an object")),
        };
        let open = !matches!(node.get("additionalProperties"), Some(Value::Bool(false)));
        if properties.is_empty() && open {
            return Err(format!("{path} is a free-form object"));
        }
        let required: Vec<&str> = node
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut rewritten = Map::new();
        for (name, property) in &properties {
            let mut property = rewrite(property, &format!("{path}/properties/{name}"))?;
            if !required.contains(&name.as_str()) {
                property = nullable(property);
            }
            rewritten.insert(name.clone(), property);
        }
        let names: Vec<Value> = properties.keys().map(|name| json!(name)).collect();
        out.insert("properties".into(), Value::Object(rewritten));
        out.insert("required".into(), Value::Array(names));
        out.insert("additionalProperties".into(), Value::Bool(false));
    } else {
        out.remove("required");
    }

    if !notes.is_empty() {
        let also = format!("Also: {}.", notes.join("; "));
        let description = match out.get("description").and_then(Value::as_str) {
            Some(text) if !text.is_empty() => format!("{text} {also}"),
            _ => also,
        };
        out.insert("description".into(), Value::String(description));
    }
    Ok(Value::Object(out))
}

fn type_includes(node: &Map<String, Value>, name: &str) -> bool {
    match node.get("type") {
        Some(Value::String(kind)) => kind == name,
        Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == name),
        _ => false,
    }
}

/// The schema, also accepting `null`.
fn nullable(schema: Value) -> Value {
    let Value::Object(mut node) = schema else {
        return schema;
    };
    if node.contains_key("$ref") || node.contains_key("const") {
        let description = node.remove("description");
        let mut wrapper = Map::new();
        if let Some(description) = description {
            wrapper.insert("description".into(), description);
        }
        wrapper.insert(
            "anyOf".into(),
            json!([Value::Object(node), {"type": "null"}]),
        );
        return Value::Object(wrapper);
    }
    if let Some(Value::Array(branches)) = node.get_mut("anyOf") {
        if !branches
            .iter()
            .any(|branch| branch.get("type") == Some(&json!("null")))
        {
            branches.push(json!({"type": "null"}));
        }
        return Value::Object(node);
    }
    match node.get_mut("type") {
        Some(Value::String(kind)) if kind != "null" => {
            let kind = kind.clone();
            node.insert("type".into(), json!([kind, "null"]));
        }
        Some(Value::Array(kinds)) if !kinds.contains(&json!("null")) => kinds.push(json!("null")),
        _ => {}
    }
    if let Some(Value::Array(values)) = node.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
    Value::Object(node)
}

fn compact(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// Maps a reply to a [`to_strict`] schema back to the user's `schema`: a `null` for a property
/// the user's schema does not require stands for "omitted" and is removed, at every depth.
pub fn restore(value: &mut Value, schema: &Value) {
    restore_at(value, schema, schema, 0);
}

/// Deeper than this, a hostile or cyclic `$ref` chain is not followed.
const MAX_DEPTH: usize = 64;

fn restore_at(value: &mut Value, schema: &Value, root: &Value, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let schema = resolve(schema, root);
    let Some(node) = schema.as_object() else {
        return;
    };
    if let Some(Value::Array(all)) = node.get("allOf")
        && let [only] = all.as_slice()
    {
        restore_at(value, only, root, depth + 1);
    }
    for combinator in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = node.get(combinator)
            && let Some(branch) = fitting_branch(value, branches, root)
        {
            restore_at(value, branch, root, depth + 1);
        }
    }
    match value {
        Value::Object(fields) => {
            let Some(Value::Object(properties)) = node.get("properties") else {
                return;
            };
            let required: Vec<&str> = node
                .get("required")
                .and_then(Value::as_array)
                .map(|names| names.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            fields.retain(|name, field| {
                !(field.is_null()
                    && properties.contains_key(name)
                    && !required.contains(&name.as_str()))
            });
            for (name, field) in fields.iter_mut() {
                if let Some(property) = properties.get(name) {
                    restore_at(field, property, root, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = node.get("items").filter(|items| items.is_object()) {
                for item in items {
                    restore_at(item, item_schema, root, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// For an object, the first branch whose properties name every key it has; for an array, the
/// first branch with `items`.
fn fitting_branch<'a>(value: &Value, branches: &'a [Value], root: &Value) -> Option<&'a Value> {
    branches.iter().find(|branch| {
        let resolved = resolve(branch, root);
        match value {
            Value::Object(fields) => resolved
                .get("properties")
                .and_then(Value::as_object)
                .is_some_and(|properties| fields.keys().all(|key| properties.contains_key(key))),
            Value::Array(_) => resolved.get("items").is_some(),
            _ => false,
        }
    })
}

/// A local `$ref` (`#/$defs/Name`) followed to its schema; anything else as it is.
fn resolve<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    let mut current = schema;
    for _ in 0..MAX_DEPTH {
        let Some(reference) = current.get("$ref").and_then(Value::as_str) else {
            return current;
        };
        let Some(pointer) = reference.strip_prefix('#') else {
            return current;
        };
        match root.pointer(pointer) {
            Some(target) => current = target,
            None => return current,
        }
    }
    current
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optional_properties_become_required_and_nullable() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 2, "x-grounding": "exact"},
                "born": {"type": "string", "format": "date"},
                "role": {"enum": ["engineer", "mathematician"]},
                "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}
            },
            "required": ["name"]
        });
        let strict = to_strict(&schema).unwrap();
        assert_eq!(
            strict,
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "Also: minLength 2."},
                    "born": {"type": ["string", "null"], "format": "date"},
                    "role": {"enum": ["engineer", "mathematician", null]},
                    "tags": {"type": ["array", "null"], "items": {"type": "string"},
                             "description": "Also: uniqueItems true."}
                },
                "required": ["name", "born", "role", "tags"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn refs_one_of_and_single_all_of() {
        let schema = json!({
            "type": "object",
            "$defs": {"Address": {"type": "object", "properties": {"city": {"type": "string"}}}},
            "properties": {
                "home": {"allOf": [{"$ref": "#/$defs/Address"}], "description": "Where they live"},
                "id": {"oneOf": [{"type": "string"}, {"type": "integer"}]}
            },
            "required": ["id"]
        });
        let strict = to_strict(&schema).unwrap();
        assert_eq!(
            strict["$defs"]["Address"],
            json!({"type": "object", "properties": {"city": {"type": ["string", "null"]}},
                   "required": ["city"], "additionalProperties": false})
        );
        assert_eq!(
            strict["properties"]["home"],
            json!({"description": "Where they live",
                   "anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}]})
        );
        assert_eq!(
            strict["properties"]["id"],
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})
        );
    }

    #[test]
    fn what_strict_mode_cannot_express_is_refused() {
        for (schema, reason) in [
            (
                json!({"type": "array", "items": {"type": "string"}}),
                "root",
            ),
            (
                json!({"type": "object", "properties": {"meta": {"type": "object"}}}),
                "free-form",
            ),
            (
                json!({"type": "object", "properties": {"any": {}}}),
                "any value",
            ),
            (
                json!({"type": "object", "properties": {"pair": {"type": "array",
                    "prefixItems": [{"type": "string"}, {"type": "number"}]}}}),
                "tuple",
            ),
        ] {
            let error = to_strict(&schema).unwrap_err();
            assert!(error.contains(reason), "{error}");
        }
    }

    #[test]
    fn restore_drops_nulls_of_optional_properties_at_every_depth() {
        let schema = json!({
            "type": "object",
            "$defs": {"Line": {"type": "object",
                "properties": {"sku": {"type": "string"}, "note": {"type": "string"}},
                "required": ["sku"]}},
            "properties": {
                "total": {"type": "number"},
                "memo": {"type": "string"},
                "vendor": {"type": ["string", "null"]},
                "lines": {"type": "array", "items": {"$ref": "#/$defs/Line"}}
            },
            "required": ["total", "vendor"]
        });
        let mut reply = json!({
            "total": 10, "memo": null, "vendor": null,
            "lines": [{"sku": "A", "note": null}, {"sku": "B", "note": "gift"}]
        });
        restore(&mut reply, &schema);
        assert_eq!(
            reply,
            json!({"total": 10, "vendor": null,
                   "lines": [{"sku": "A"}, {"sku": "B", "note": "gift"}]})
        );
    }

    #[test]
    fn restore_survives_a_ref_cycle() {
        let schema = json!({"$ref": "#", "properties": {"a": {"$ref": "#"}}});
        let mut value = json!({"a": {"a": null}});
        restore(&mut value, &schema);
        assert_eq!(value, json!({"a": {}}));
    }
}
