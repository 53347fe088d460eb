//! Loading JSON Schema (a draft 2020-12 subset) into the IR.
//!
//! Supported: `type` (one type, or one type plus `"null"`), `properties`, `required`, `enum`,
//! `const`, `format`, `pattern`, `minimum`/`maximum`/`exclusiveMinimum`/`exclusiveMaximum`,
//! `minLength`/`maxLength`, `minItems`/`maxItems`, `items`, `description`, `$ref` into `$defs`
//! or `definitions`, `anyOf`/`oneOf` of one schema plus `{"type": "null"}` (what pydantic emits
//! for `Optional`), OpenAPI's `nullable: true`, and Quarry's `x-grounding`. Annotations (`title`,
//! `examples`, `default`, `$schema`, `additionalProperties`, …) are ignored. Keywords whose
//! meaning Quarry cannot honour (`allOf`, `not`, `if`, real unions) are errors naming the field,
//! rather than silently unchecked.

use serde_json::{Map, Value};

use super::{
    Bound, FieldSpec, Format, GroundingPolicy, Kind, Pattern, Schema, SchemaError, ValueSpec,
};

const MAX_REF_DEPTH: usize = 32;

pub(super) fn load(root: &Value) -> Result<Schema, SchemaError> {
    let loader = Loader { root };
    let spec = loader.spec(root, "", GroundingPolicy::Required, 0)?;
    let Kind::Object(fields) = spec.kind else {
        return Err(SchemaError::at(
            "",
            "the top level must be an object schema with `properties`",
        ));
    };
    let name = root
        .get("title")
        .and_then(Value::as_str)
        .unwrap_or("extraction")
        .to_owned();
    Schema::finish(name, spec.description, fields, root.clone())
}

struct Loader<'r> {
    root: &'r Value,
}

impl Loader<'_> {
    fn resolve<'v>(&'v self, node: &'v Value, path: &str) -> Result<&'v Value, SchemaError> {
        let mut node = node;
        for _ in 0..MAX_REF_DEPTH {
            let Some(reference) = node.get("$ref") else {
                return Ok(node);
            };
            let reference = reference
                .as_str()
                .ok_or_else(|| SchemaError::at(path, "`$ref` must be a string"))?;
            let pointer = reference.strip_prefix('#').ok_or_else(|| {
                SchemaError::at(
                    path,
                    format!("`$ref` '{reference}' is not local; only '#/$defs/...' is supported"),
                )
            })?;
            node = self.root.pointer(pointer).ok_or_else(|| {
                SchemaError::at(path, format!("`$ref` '{reference}' points at nothing"))
            })?;
        }
        Err(SchemaError::at(
            path,
            "`$ref` chain is too deep or recursive; recursive schemas are not supported",
        ))
    }

    fn spec(
        &self,
        node: &Value,
        path: &str,
        inherited: GroundingPolicy,
        depth: usize,
    ) -> Result<ValueSpec, SchemaError> {
        if depth > MAX_REF_DEPTH {
            return Err(SchemaError::at(
                path,
                "schema nests too deeply (recursive `$ref`?)",
            ));
        }
        let node = self.resolve(node, path)?;
        let Some(object) = node.as_object() else {
            if node == &Value::Bool(true) {
                return Ok(ValueSpec::new(Kind::Any));
            }
            return Err(SchemaError::at(path, "expected a schema object"));
        };
        for keyword in ["allOf", "not", "if", "then", "else", "patternProperties"] {
            if object.contains_key(keyword) {
                return Err(SchemaError::at(
                    path,
                    format!("`{keyword}` is not supported; describe the field with one type"),
                ));
            }
        }
        // `anyOf`/`oneOf` of one schema and null: the schema, nullable.
        for keyword in ["anyOf", "oneOf"] {
            if let Some(options) = object.get(keyword) {
                return self.nullable_union(object, keyword, options, path, inherited, depth);
            }
        }

        let grounding = grounding_policy(object, path)?.unwrap_or(inherited);
        let (type_name, mut nullable) = type_of(object, path)?;
        let kind = match type_name.as_deref() {
            Some("string") => Kind::String,
            Some("integer") => Kind::Integer,
            Some("number") => Kind::Number,
            Some("boolean") => Kind::Boolean,
            Some("array") => {
                let items = match object.get("items") {
                    Some(items) => self.spec(items, &format!("{path}[]"), grounding, depth + 1)?,
                    None => ValueSpec::new(Kind::Any),
                };
                Kind::Array(Box::new(items))
            }
            Some("object") => Kind::Object(self.properties(object, path, grounding, depth)?),
            Some("null") => {
                nullable = true;
                Kind::Any
            }
            Some(other) => {
                return Err(SchemaError::at(
                    path,
                    format!(
                        "unknown type '{other}'; expected string, integer, number, boolean, array or object"
                    ),
                ));
            }
            None => Kind::Any,
        };
        if object.get("nullable") == Some(&Value::Bool(true)) {
            nullable = true;
        }
        let mut spec = ValueSpec::new(kind);
        spec.nullable = nullable;
        spec.grounding = grounding;
        spec.description = object
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_owned);
        constraints(object, path, &mut spec)?;
        Ok(spec)
    }

    fn nullable_union(
        &self,
        object: &Map<String, Value>,
        keyword: &str,
        options: &Value,
        path: &str,
        inherited: GroundingPolicy,
        depth: usize,
    ) -> Result<ValueSpec, SchemaError> {
        let options = options
            .as_array()
            .ok_or_else(|| SchemaError::at(path, format!("`{keyword}` must be an array")))?;
        let mut resolved = Vec::with_capacity(options.len());
        for option in options {
            resolved.push(self.resolve(option, path)?);
        }
        let is_null = |v: &Value| v.get("type").and_then(Value::as_str) == Some("null");
        let non_null: Vec<&Value> = resolved.iter().copied().filter(|v| !is_null(v)).collect();
        let [only] = non_null.as_slice() else {
            return Err(SchemaError::at(
                path,
                format!(
                    "`{keyword}` with several non-null alternatives is not supported; use one type (optionally with null)"
                ),
            ));
        };
        let grounding = grounding_policy(object, path)?.unwrap_or(inherited);
        let mut spec = self.spec(only, path, grounding, depth + 1)?;
        spec.nullable |= non_null.len() < resolved.len();
        if let Some(description) = object.get("description").and_then(Value::as_str) {
            spec.description = Some(description.to_owned());
        }
        Ok(spec)
    }

    fn properties(
        &self,
        object: &Map<String, Value>,
        path: &str,
        grounding: GroundingPolicy,
        depth: usize,
    ) -> Result<Vec<FieldSpec>, SchemaError> {
        let required: Vec<&str> = match object.get("required") {
            None => Vec::new(),
            Some(Value::Array(names)) => names
                .iter()
                .map(|name| {
                    name.as_str()
                        .ok_or_else(|| SchemaError::at(path, "`required` must list field names"))
                })
                .collect::<Result<_, _>>()?,
            Some(_) => {
                return Err(SchemaError::at(
                    path,
                    "`required` must be an array of names",
                ));
            }
        };
        let properties = match object.get("properties") {
            None => return Ok(Vec::new()),
            Some(Value::Object(properties)) => properties,
            Some(_) => return Err(SchemaError::at(path, "`properties` must be an object")),
        };
        for name in &required {
            if !properties.contains_key(*name) {
                return Err(SchemaError::at(
                    &join(path, name),
                    "listed in `required` but not declared in `properties`",
                ));
            }
        }
        properties
            .iter()
            .map(|(name, node)| {
                let field_path = join(path, name);
                Ok(FieldSpec {
                    name: name.clone(),
                    required: required.contains(&name.as_str()),
                    spec: self.spec(node, &field_path, grounding, depth + 1)?,
                })
            })
            .collect()
    }
}

pub(super) fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

/// The non-null type and whether null is allowed. No `type` but `properties`/`items` implies
/// object/array.
fn type_of(object: &Map<String, Value>, path: &str) -> Result<(Option<String>, bool), SchemaError> {
    match object.get("type") {
        None if object.contains_key("properties") => Ok((Some("object".into()), false)),
        None if object.contains_key("items") => Ok((Some("array".into()), false)),
        None => Ok((None, false)),
        Some(Value::String(name)) => Ok((Some(name.clone()), false)),
        Some(Value::Array(names)) => {
            let mut nullable = false;
            let mut others = Vec::new();
            for name in names {
                match name.as_str() {
                    Some("null") => nullable = true,
                    Some(name) => others.push(name.to_owned()),
                    None => return Err(SchemaError::at(path, "`type` entries must be strings")),
                }
            }
            match others.len() {
                0 => Ok((Some("null".into()), true)),
                1 => Ok((others.pop(), nullable)),
                _ => Err(SchemaError::at(
                    path,
                    format!(
                        "type {names:?} mixes several types; Quarry supports one type, optionally with \"null\"",
                        names = others
                    ),
                )),
            }
        }
        Some(_) => Err(SchemaError::at(
            path,
            "`type` must be a string or an array of strings",
        )),
    }
}

pub(super) fn grounding_policy(
    object: &Map<String, Value>,
    path: &str,
) -> Result<Option<GroundingPolicy>, SchemaError> {
    match object.get("x-grounding") {
        None => Ok(None),
        Some(Value::String(policy)) => match policy.as_str() {
            "none" => Ok(Some(GroundingPolicy::None)),
            "required" | "auto" => Ok(Some(GroundingPolicy::Required)),
            other => Err(SchemaError::at(
                path,
                format!("x-grounding '{other}' is unknown; use \"none\" or \"required\""),
            )),
        },
        Some(Value::Bool(false)) => Ok(Some(GroundingPolicy::None)),
        Some(_) => Err(SchemaError::at(
            path,
            "x-grounding must be \"none\" or \"required\"",
        )),
    }
}

/// Reads the constraint keywords shared by both schema forms.
pub(super) fn constraints(
    object: &Map<String, Value>,
    path: &str,
    spec: &mut ValueSpec,
) -> Result<(), SchemaError> {
    if let Some(values) = object.get("enum") {
        let values = values
            .as_array()
            .ok_or_else(|| SchemaError::at(path, "`enum` must be an array of values"))?;
        if values.is_empty() {
            return Err(SchemaError::at(
                path,
                "`enum` is empty; no value could pass",
            ));
        }
        spec.enum_values = Some(values.iter().filter(|v| !v.is_null()).cloned().collect());
        if values.iter().any(Value::is_null) {
            spec.nullable = true;
        }
    }
    if let Some(value) = object.get("const") {
        spec.enum_values = Some(vec![value.clone()]);
    }
    if let Some(format) = object.get("format") {
        let format = format
            .as_str()
            .ok_or_else(|| SchemaError::at(path, "`format` must be a string"))?;
        spec.format = Format::parse(format);
    }
    if let Some(pattern) = object.get("pattern") {
        let source = pattern
            .as_str()
            .ok_or_else(|| SchemaError::at(path, "`pattern` must be a string"))?;
        let regex = regex::Regex::new(source).map_err(|error| {
            SchemaError::at(
                path,
                format!("`pattern` is not a valid regular expression: {error}"),
            )
        })?;
        spec.pattern = Some(Pattern {
            source: source.to_owned(),
            regex,
        });
    }
    spec.minimum = bound(object, "minimum", "exclusiveMinimum", path)?;
    spec.maximum = bound(object, "maximum", "exclusiveMaximum", path)?;
    spec.min_length = count(object, "minLength", path)?;
    spec.max_length = count(object, "maxLength", path)?;
    spec.min_items = count(object, "minItems", path)?;
    spec.max_items = count(object, "maxItems", path)?;
    Ok(())
}

fn bound(
    object: &Map<String, Value>,
    inclusive: &str,
    exclusive: &str,
    path: &str,
) -> Result<Option<Bound>, SchemaError> {
    let number = |key: &str| -> Result<Option<f64>, SchemaError> {
        match object.get(key) {
            None => Ok(None),
            Some(value) => value
                .as_f64()
                .map(Some)
                .ok_or_else(|| SchemaError::at(path, format!("`{key}` must be a number"))),
        }
    };
    if let Some(value) = number(exclusive)? {
        return Ok(Some(Bound {
            value,
            exclusive: true,
        }));
    }
    Ok(number(inclusive)?.map(|value| Bound {
        value,
        exclusive: false,
    }))
}

fn count(object: &Map<String, Value>, key: &str, path: &str) -> Result<Option<u64>, SchemaError> {
    match object.get(key) {
        None => Ok(None),
        Some(value) => value.as_u64().map(Some).ok_or_else(|| {
            SchemaError::at(path, format!("`{key}` must be a non-negative integer"))
        }),
    }
}
