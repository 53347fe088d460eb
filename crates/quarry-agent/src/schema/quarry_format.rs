//! Quarry's compact schema form, written in YAML (or JSON):
//!
//! ```yaml
//! name: invoice                      # optional; default "extraction"
//! description: Supplier invoices.    # optional; shown to the model
//! fields:
//!   invoice_number:
//!     type: string
//!     description: The number printed after "Invoice".
//!     required: true                 # must hold a value; every other field may be null
//!     pattern: "^INV-[0-9]+$"
//!   total: {type: number, minimum: 0, description: Amount due}
//!   currency: {type: string, enum: [USD, EUR, GBP]}
//!   issued: date                     # a bare type name is a whole field spec
//!   contact: email
//!   paid: boolean
//!   summary: {type: string, x-grounding: none}   # inferred, not checked against the text
//!   lines:
//!     type: list
//!     items:
//!       type: object
//!       fields:
//!         description: string
//!         amount: number
//!   tags: {type: list, items: string}
//! ```
//!
//! Types: `string` (alias `text`), `integer` (`int`), `number` (`float`, `amount`), `boolean`
//! (`bool`), `object` (with `fields`), `list` (`array`, with `items`), and every claimed format
//! as a string type: `date`, `datetime` (`date-time`), `time`, `duration`, `email`, `uri`
//! (`url`), `uuid`, `hostname`, `ipv4`, `ipv6`, … (see [`Format`]); and `phone`, `person`,
//! `organization`, `location`: strings whose candidates a detector finds (`x-detector`, also
//! spelled `detector`; see [`crate::candidates`]). A field with `enum` and no type is a string. Constraint keys
//! are JSON Schema's (`minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `minLength`,
//! `maxLength`, `minItems`, `maxItems`, `pattern`, `format`, `enum`); snake_case spellings
//! (`min_length`, …) are accepted too. An unknown key is an error naming the field, so a typo
//! such as `requird` does not silently drop a constraint. `x-grounding: none` on an object or list
//! applies to everything inside it.

use serde_json::{Map, Value};

use super::ir::{FieldSpec, Format, GroundingPolicy, Kind, Parts, SchemaError, ValueSpec};
use super::json_schema::{constraints, grounding_policy};
use super::keywords::join;
use super::render::object_schema;

const FIELD_KEYS: &[&str] = &[
    "type",
    "description",
    "required",
    "nullable",
    "enum",
    "format",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "items",
    "fields",
    "x-grounding",
    "x-detector",
];

const SNAKE_ALIASES: &[(&str, &str)] = &[
    ("min_length", "minLength"),
    ("max_length", "maxLength"),
    ("min_items", "minItems"),
    ("max_items", "maxItems"),
    ("exclusive_minimum", "exclusiveMinimum"),
    ("exclusive_maximum", "exclusiveMaximum"),
    ("grounding", "x-grounding"),
    ("detector", "x-detector"),
];

pub(super) fn load(root: &Value) -> Result<Parts, SchemaError> {
    let object = root.as_object().expect("caller checked for an object");
    for key in object.keys() {
        if !matches!(key.as_str(), "name" | "description" | "fields" | "version") {
            return Err(SchemaError::at(
                "",
                format!("unknown top-level key '{key}'; expected name, description, fields"),
            ));
        }
    }
    let name = match object.get("name") {
        None => "extraction".to_owned(),
        Some(Value::String(name)) => name.clone(),
        Some(_) => return Err(SchemaError::at("", "`name` must be a string")),
    };
    let description = object
        .get("description")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let fields = fields(
        object.get("fields").expect("caller checked for fields"),
        "",
        GroundingPolicy::Required,
    )?;
    let mut json_schema = object_schema(&fields);
    if let Some(map) = json_schema.as_object_mut() {
        map.insert("title".into(), Value::String(name.clone()));
        if let Some(description) = &description {
            map.insert("description".into(), Value::String(description.clone()));
        }
    }
    Ok((name, description, fields, json_schema))
}

fn fields(
    node: &Value,
    path: &str,
    grounding: GroundingPolicy,
) -> Result<Vec<FieldSpec>, SchemaError> {
    let Some(map) = node.as_object() else {
        return Err(SchemaError::at(
            path,
            "`fields` must be a map from field name to field spec",
        ));
    };
    map.iter()
        .map(|(name, node)| {
            let field_path = join(path, name);
            let (spec, required) = field(node, &field_path, grounding)?;
            Ok(FieldSpec {
                name: name.clone(),
                required,
                spec,
            })
        })
        .collect()
}

/// One field spec (a map, or a bare type name) and whether it is required.
fn field(
    node: &Value,
    path: &str,
    inherited: GroundingPolicy,
) -> Result<(ValueSpec, bool), SchemaError> {
    let object = match node {
        Value::String(type_name) => {
            let mut object = Map::new();
            object.insert("type".into(), Value::String(type_name.clone()));
            object
        }
        Value::Object(object) => {
            let mut normalised = Map::new();
            for (key, value) in object {
                let key = SNAKE_ALIASES
                    .iter()
                    .find(|(alias, _)| alias == key)
                    .map_or(key.as_str(), |(_, canonical)| canonical);
                if !FIELD_KEYS.contains(&key) {
                    return Err(SchemaError::at(
                        path,
                        format!(
                            "unknown key '{key}'; expected one of {}",
                            FIELD_KEYS.join(", ")
                        ),
                    ));
                }
                normalised.insert(key.to_owned(), value.clone());
            }
            normalised
        }
        _ => {
            return Err(SchemaError::at(
                path,
                "expected a type name (e.g. `string`) or a map with `type`",
            ));
        }
    };
    let required = match object.get("required") {
        None => false,
        Some(Value::Bool(required)) => *required,
        Some(_) => return Err(SchemaError::at(path, "`required` must be true or false")),
    };
    let grounding = grounding_policy(&object, path)?.unwrap_or(inherited);
    let type_name = match object.get("type") {
        Some(Value::String(name)) => name.to_ascii_lowercase(),
        Some(_) => return Err(SchemaError::at(path, "`type` must be a type name")),
        None if object.contains_key("enum") => "string".to_owned(),
        None if object.contains_key("fields") => "object".to_owned(),
        None if object.contains_key("items") => "list".to_owned(),
        None => return Err(SchemaError::at(path, "missing `type`")),
    };
    let mut implied_format = None;
    let mut implied_detector = None;
    let kind = match type_name.as_str() {
        "string" | "text" | "str" => Kind::String,
        "phone" | "person" | "organization" | "location" => {
            implied_detector = Some(type_name.clone());
            Kind::String
        }
        "integer" | "int" => Kind::Integer,
        "number" | "float" | "amount" | "decimal" => Kind::Number,
        "boolean" | "bool" => Kind::Boolean,
        name if Format::parse(name).is_some() => {
            implied_format = Format::parse(name);
            Kind::String
        }
        "object" => {
            let node = object.get("fields").ok_or_else(|| {
                SchemaError::at(path, "an object needs `fields` naming its properties")
            })?;
            Kind::Object(fields(node, path, grounding)?)
        }
        "list" | "array" => {
            let node = object
                .get("items")
                .ok_or_else(|| SchemaError::at(path, "a list needs `items` (a type or a spec)"))?;
            let (items, _) = field(node, &format!("{path}[]"), grounding)?;
            Kind::Array(Box::new(items))
        }
        other => {
            return Err(SchemaError::at(
                path,
                format!(
                    "unknown type '{other}'; expected string, integer, number, boolean, object, list, phone, person, organization, location or a format ({})",
                    Format::ALL.map(Format::as_str).join(", ")
                ),
            ));
        }
    };
    let mut spec = ValueSpec::new(kind);
    spec.grounding = grounding;
    spec.detector = match object.get("x-detector") {
        Some(Value::String(named)) if crate::candidates::is_detector_name(named) => {
            Some(named.clone())
        }
        Some(named) => {
            return Err(SchemaError::at(
                path,
                format!(
                    "`detector` is {named}; name one of Quarry's detectors: {}",
                    crate::candidates::DETECTOR_NAMES
                ),
            ));
        }
        None => implied_detector,
    };
    spec.nullable = object.get("nullable") == Some(&Value::Bool(true));
    spec.description = object
        .get("description")
        .and_then(Value::as_str)
        .map(str::to_owned);
    constraints(&object, path, &mut spec)?;
    if spec.format.is_none() {
        spec.format = implied_format;
    }
    Ok((spec, required))
}
