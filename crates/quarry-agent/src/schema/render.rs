//! Rendering the IR as plain JSON Schema: the schema the model sees for Quarry's form, and the
//! schema the lenient parser coerces to (with `$ref`s resolved and nullability spelled out).

use serde_json::{Map, Value, json};

use super::ir::{FieldSpec, GroundingPolicy, Kind, ValueSpec};

/// Renders fields as the JSON Schema the model sees: non-required fields admit null.
pub(crate) fn object_schema(fields: &[FieldSpec]) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for field in fields {
        properties.insert(
            field.name.clone(),
            value_schema(&field.spec, field.may_be_null()),
        );
        if field.required {
            required.push(Value::String(field.name.clone()));
        }
    }
    json!({"type": "object", "properties": properties, "required": required})
}

fn value_schema(spec: &ValueSpec, nullable: bool) -> Value {
    let mut out = match &spec.kind {
        Kind::Object(fields) => object_schema(fields),
        Kind::Array(items) => {
            json!({"type": "array", "items": value_schema(items, items.nullable)})
        }
        Kind::Union(options) => {
            let mut options: Vec<Value> = options
                .iter()
                .map(|option| value_schema(option, option.nullable))
                .collect();
            if nullable {
                options.push(json!({"type": "null"}));
            }
            json!({"anyOf": options})
        }
        Kind::Any => json!({}),
        kind => json!({"type": kind.as_str()}),
    };
    let map = out.as_object_mut().expect("rendered schemas are objects");
    if let (true, Some(Value::String(type_name))) = (nullable, map.get("type").cloned()) {
        map.insert("type".into(), json!([type_name, "null"]));
    }
    if let Some(title) = &spec.title {
        map.insert("title".into(), Value::String(title.clone()));
    }
    if let Some(description) = &spec.description {
        map.insert("description".into(), Value::String(description.clone()));
    }
    if let Some(values) = &spec.enum_values {
        let mut values = values.clone();
        if nullable {
            values.push(Value::Null);
        }
        map.insert("enum".into(), Value::Array(values));
    }
    if let Some(format) = spec.format {
        map.insert("format".into(), Value::String(format.as_str().into()));
    }
    if let Some(pattern) = &spec.pattern {
        map.insert("pattern".into(), Value::String(pattern.clone()));
    }
    let bounds = [
        (spec.minimum, "minimum", "exclusiveMinimum"),
        (spec.maximum, "maximum", "exclusiveMaximum"),
    ];
    for (bound, inclusive, exclusive) in bounds {
        if let Some(bound) = bound {
            let key = if bound.exclusive {
                exclusive
            } else {
                inclusive
            };
            map.insert(key.into(), json!(bound.value));
        }
    }
    let counts = [
        (spec.min_length, "minLength"),
        (spec.max_length, "maxLength"),
        (spec.min_items, "minItems"),
        (spec.max_items, "maxItems"),
    ];
    for (count, key) in counts {
        if let Some(count) = count {
            map.insert(key.into(), json!(count));
        }
    }
    if spec.grounding == GroundingPolicy::None {
        map.insert("x-grounding".into(), json!("none"));
    }
    if let Some(detector) = &spec.detector {
        map.insert("x-detector".into(), json!(detector));
    }
    out
}
