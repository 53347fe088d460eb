//! Loading a JSON Schema (draft 2020-12): the keyword check, then the IR (`Schema::finish`
//! compiles the authority from the parts returned here).
//!
//! The IR is Quarry's summary of the schema for the prompt, coercion and grounding; the authority
//! gives the verdict on every keyword (and refuses a `$ref` that does not resolve). So the IR may
//! be approximate where JSON Schema is richer than a field list:
//! - `$ref` is followed through `referencing` (jsonschema's own resolver: `$defs`, `definitions`,
//!   `$id`, `$anchor`), with sibling keywords applied on top — a sibling `description` wins, so
//!   the prompt keeps it; a reference back into itself (a tree) is `Kind::Any` below the cycle;
//! - `allOf` members are merged (fields of every member, Pydantic v1's `allOf: [{"$ref": …}]`);
//! - `anyOf`/`oneOf` with several non-null options is a [`Kind::Union`]; one option plus
//!   `{"type": "null"}` is that option, nullable;
//! - `type: [a, b]` is a union of the types; `if`/`then`/`else`, `not`, `contains`,
//!   `dependent*`, `*Properties`, `prefixItems`, `multipleOf`, `uniqueItems`, … leave no trace in
//!   the IR and are enforced by the authority.

use std::collections::BTreeSet;

use referencing::{Draft, Registry, Resolver};
use serde_json::{Map, Value};

use super::ir::{Bound, FieldSpec, Format, GroundingPolicy, Kind, Parts, SchemaError, ValueSpec};
use super::keywords::join;
use super::{authority, keywords};

/// Nesting below which the IR stops describing (the authority still checks all of it).
const MAX_DEPTH: usize = 48;
/// The base URI of a schema without a root `$id`.
const DEFAULT_BASE: &str = "urn:quarry:schema";

pub(super) fn load(root: &Value) -> Result<Parts, SchemaError> {
    keywords::check_document(root)?;
    let base = root
        .get("$id")
        .and_then(Value::as_str)
        .unwrap_or(DEFAULT_BASE);
    let unresolvable = |error: referencing::Error| authority::unresolved(&error);
    let registry = Registry::new()
        .draft(Draft::Draft202012)
        .retrieve_known_draft_meta_schemas(false)
        .add(base, Draft::Draft202012.create_resource_ref(root))
        .map_err(unresolvable)?
        .prepare()
        .map_err(unresolvable)?;
    let base_uri = referencing::uri::from_str(base).map_err(unresolvable)?;
    let resolver = registry.resolver(base_uri);
    let mut loader = Loader { stack: Vec::new() };
    let built = loader.build(root, &resolver, "", GroundingPolicy::Required, 0, true)?;
    let Kind::Object(fields) = built.spec.kind else {
        return Err(SchemaError::at(
            "",
            "the top level must be an object schema with `properties`",
        ));
    };
    for name in &built.required {
        if !fields.iter().any(|field| &field.name == name) {
            return Err(SchemaError::at(
                name,
                "listed in `required` but not declared in `properties`",
            ));
        }
    }
    let name = root
        .get("title")
        .and_then(Value::as_str)
        .unwrap_or("extraction")
        .to_owned();
    Ok((name, built.spec.description, fields, root.clone()))
}

/// A subschema's IR with what merging needs to know beside it.
struct Built {
    spec: ValueSpec,
    /// Whether the schema says anything about the value's type (`type`, `properties`, `items`,
    /// `enum`, `const`, a `$ref` or combinator that does): an untyped part does not narrow a merge.
    typed: bool,
    /// `required` names, applied to the merged object's fields.
    required: BTreeSet<String>,
}

impl Built {
    fn untyped(grounding: GroundingPolicy) -> Built {
        let mut spec = ValueSpec::new(Kind::Any);
        spec.nullable = true;
        spec.grounding = grounding;
        Built {
            spec,
            typed: false,
            required: BTreeSet::new(),
        }
    }
}

struct Loader {
    /// The subschemas being expanded through `$ref`, by address, to cut cycles.
    stack: Vec<usize>,
}

impl Loader {
    fn build(
        &mut self,
        node: &Value,
        resolver: &Resolver<'_>,
        path: &str,
        inherited: GroundingPolicy,
        depth: usize,
        top: bool,
    ) -> Result<Built, SchemaError> {
        let Some(object) = node.as_object() else {
            return match node {
                Value::Bool(_) => Ok(Built::untyped(inherited)),
                _ => Err(SchemaError::at(path, "expected a schema object")),
            };
        };
        if top {
            keywords::check_top_level(object)?;
        }
        let grounding = grounding_policy(object, path)?.unwrap_or(inherited);
        if depth > MAX_DEPTH {
            return Ok(Built::untyped(grounding));
        }
        let resolver = resolver
            .in_subresource(Draft::Draft202012.create_resource_ref(node))
            .map_err(|error| SchemaError::at(path, error.to_string()))?;

        let mut parts = vec![self.own(object, &resolver, path, grounding, depth)?];
        if let Some(reference) = object
            .get("$ref")
            .or_else(|| object.get("$dynamicRef"))
            .and_then(Value::as_str)
        {
            parts.push(self.reference(reference, &resolver, path, grounding, depth, top)?);
        }
        for member in object
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            parts.push(self.build(member, &resolver, path, grounding, depth + 1, top)?);
        }
        let mut built = parts
            .into_iter()
            .reduce(merge)
            .unwrap_or_else(|| Built::untyped(grounding));
        for keyword in ["anyOf", "oneOf"] {
            if let Some(options) = object.get(keyword).and_then(Value::as_array) {
                let union = self.union(options, &resolver, path, grounding, depth)?;
                if let Some(discriminator) = object.get("discriminator") {
                    check_discriminator(discriminator, &union.spec, path)?;
                }
                built = merge(built, union);
            }
        }
        if let Kind::Object(fields) = &mut built.spec.kind {
            for field in fields.iter_mut() {
                field.required |= built.required.contains(&field.name);
            }
        }
        // The node's own words describe it best, even beside a `$ref`.
        if let Some(description) = object.get("description").and_then(Value::as_str) {
            built.spec.description = Some(description.to_owned());
        }
        if let Some(title) = object.get("title").and_then(Value::as_str) {
            built.spec.title = Some(title.to_owned());
        }
        Ok(built)
    }

    /// The IR of `reference`'s target; `Kind::Any` where it refers back into itself.
    fn reference(
        &mut self,
        reference: &str,
        resolver: &Resolver<'_>,
        path: &str,
        grounding: GroundingPolicy,
        depth: usize,
        top: bool,
    ) -> Result<Built, SchemaError> {
        // A reference the IR cannot follow (a `$dynamicRef` to a dynamic anchor) is described as
        // any value; the authority's compile refuses one that resolves nowhere.
        let Ok(resolved) = resolver.lookup(reference) else {
            return Ok(Built::untyped(grounding));
        };
        let (contents, inner, _) = resolved.into_inner();
        let key = std::ptr::from_ref(contents) as usize;
        if self.stack.contains(&key) {
            return Ok(Built::untyped(grounding));
        }
        self.stack.push(key);
        let built = self.build(contents, &inner, path, grounding, depth + 1, top);
        self.stack.pop();
        built
    }

    /// `anyOf`/`oneOf`: null options make the rest nullable; several others are a union.
    fn union(
        &mut self,
        options: &[Value],
        resolver: &Resolver<'_>,
        path: &str,
        grounding: GroundingPolicy,
        depth: usize,
    ) -> Result<Built, SchemaError> {
        let mut nullable = false;
        let mut others = Vec::new();
        for option in options {
            let built = self.build(option, resolver, path, grounding, depth + 1, false)?;
            if built.typed && matches!(built.spec.kind, Kind::Any) && built.spec.nullable {
                nullable = true;
            } else {
                others.push(built);
            }
        }
        let mut built = match others.len() {
            0 => Built::untyped(grounding),
            1 => others.pop().unwrap_or_else(|| Built::untyped(grounding)),
            _ => {
                let mut spec = ValueSpec::new(Kind::Union(
                    others.into_iter().map(|built| built.spec).collect(),
                ));
                spec.grounding = grounding;
                Built {
                    spec,
                    typed: true,
                    required: BTreeSet::new(),
                }
            }
        };
        built.typed = true;
        built.spec.nullable |= nullable;
        Ok(built)
    }

    /// What the node's own keywords say (no `$ref`, `allOf`, `anyOf`, `oneOf`).
    fn own(
        &mut self,
        object: &Map<String, Value>,
        resolver: &Resolver<'_>,
        path: &str,
        grounding: GroundingPolicy,
        depth: usize,
    ) -> Result<Built, SchemaError> {
        let (types, mut nullable) = type_of(object, path)?;
        let mut typed = object.contains_key("type");
        let kind = match types.as_slice() {
            [] => Kind::Any,
            [only] => self.kind(only, object, resolver, path, grounding, depth)?,
            several => Kind::Union(
                several
                    .iter()
                    .map(|name| {
                        let mut option = ValueSpec::new(
                            self.kind(name, object, resolver, path, grounding, depth)?,
                        );
                        option.grounding = grounding;
                        Ok(option)
                    })
                    .collect::<Result<_, SchemaError>>()?,
            ),
        };
        if !typed && !matches!(kind, Kind::Any) {
            typed = true;
        }
        if !typed {
            // No type: null passes unless `enum`/`const` below say otherwise.
            nullable = true;
        }
        let mut spec = ValueSpec::new(kind);
        spec.nullable = nullable;
        spec.grounding = grounding;
        constraints(object, path, &mut spec)?;
        typed |= spec.enum_values.is_some();
        // An untyped `enum`/`const` whose values share a JSON type has that type.
        if let (Kind::Any, Some(values)) = (&spec.kind, &spec.enum_values) {
            spec.kind = common_kind(values).unwrap_or(Kind::Any);
        }
        // `null` passes an `enum`/`const` only when listed, whatever `type` says.
        let listed = object.get("const").map(std::slice::from_ref).or_else(|| {
            object
                .get("enum")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
        });
        if let Some(values) = listed {
            spec.nullable = values.iter().any(Value::is_null);
        }
        // OpenAPI's `nullable: true` lets null through `type` and `enum` alike (see authority.rs).
        spec.nullable |= object.get("nullable") == Some(&Value::Bool(true));
        let required = match object.get("required") {
            Some(Value::Array(names)) => names
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => BTreeSet::new(),
        };
        Ok(Built {
            spec,
            typed,
            required,
        })
    }

    fn kind(
        &mut self,
        type_name: &str,
        object: &Map<String, Value>,
        resolver: &Resolver<'_>,
        path: &str,
        grounding: GroundingPolicy,
        depth: usize,
    ) -> Result<Kind, SchemaError> {
        Ok(match type_name {
            "string" => Kind::String,
            "integer" => Kind::Integer,
            "number" => Kind::Number,
            "boolean" => Kind::Boolean,
            "array" => {
                let items = match object.get("items") {
                    Some(items) => {
                        let child = format!("{path}[]");
                        self.build(items, resolver, &child, grounding, depth + 1, false)?
                            .spec
                    }
                    None => Built::untyped(grounding).spec,
                };
                Kind::Array(Box::new(items))
            }
            "object" => Kind::Object(self.properties(object, resolver, path, grounding, depth)?),
            other => {
                const TYPES: [&str; 7] = [
                    "string", "integer", "number", "boolean", "array", "object", "null",
                ];
                let hint = TYPES
                    .iter()
                    .find(|known| strsim::levenshtein(other, known) <= 2)
                    .map_or_else(String::new, |known| format!("did you mean '{known}'? "));
                return Err(SchemaError::at(
                    path,
                    format!(
                        "unknown type '{other}'; {hint}expected one of {}",
                        TYPES.join(", ")
                    ),
                ));
            }
        })
    }

    fn properties(
        &mut self,
        object: &Map<String, Value>,
        resolver: &Resolver<'_>,
        path: &str,
        grounding: GroundingPolicy,
        depth: usize,
    ) -> Result<Vec<FieldSpec>, SchemaError> {
        let properties = match object.get("properties") {
            None => return Ok(Vec::new()),
            Some(Value::Object(properties)) => properties,
            Some(_) => return Err(SchemaError::at(path, "`properties` must be an object")),
        };
        properties
            .iter()
            .map(|(name, node)| {
                let field_path = join(path, name);
                let built = self.build(node, resolver, &field_path, grounding, depth + 1, false)?;
                Ok(FieldSpec {
                    name: name.clone(),
                    required: false,
                    spec: built.spec,
                })
            })
            .collect()
    }
}

/// OpenAPI's `discriminator` is only a hint; the union enforces it when every option fixes the
/// named property with `const`/`enum` (as Pydantic writes them). Otherwise it is refused rather
/// than left unchecked.
fn check_discriminator(
    discriminator: &Value,
    union: &ValueSpec,
    path: &str,
) -> Result<(), SchemaError> {
    let Some(property) = discriminator.get("propertyName").and_then(Value::as_str) else {
        return Err(SchemaError::at(
            path,
            "`discriminator` needs a `propertyName` (a string)",
        ));
    };
    let options: Vec<&ValueSpec> = match &union.kind {
        Kind::Union(options) => options.iter().collect(),
        _ => vec![union],
    };
    for (index, option) in options.into_iter().enumerate() {
        let pinned = match &option.kind {
            Kind::Object(fields) => fields
                .iter()
                .any(|field| field.name == property && field.spec.enum_values.is_some()),
            _ => false,
        };
        if !pinned {
            return Err(SchemaError::at(
                path,
                format!(
                    "`discriminator` names '{property}', but option {} does not fix it with \
                     `const` or `enum`; Quarry enforces a discriminator only through the options",
                    index + 1
                ),
            ));
        }
    }
    Ok(())
}

/// The scalar kind every value has, if they share one.
fn common_kind(values: &[Value]) -> Option<Kind> {
    let kind_of = |value: &Value| match value {
        Value::String(_) => Some(Kind::String),
        Value::Bool(_) => Some(Kind::Boolean),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(Kind::Integer),
        Value::Number(_) => Some(Kind::Number),
        _ => None,
    };
    let first = kind_of(values.first()?)?;
    values
        .iter()
        .all(|value| kind_of(value).is_some_and(|kind| kind.as_str() == first.as_str()))
        .then_some(first)
}

/// Two schemas that both apply (`allOf`, `$ref` beside other keywords): the first's words win,
/// object fields are pooled, and `null` passes only if both let it.
fn merge(first: Built, second: Built) -> Built {
    let (a, b) = (first.spec, second.spec);
    let kind = match (a.kind, b.kind) {
        (Kind::Any, kind) => kind,
        (Kind::Object(mut fields), Kind::Object(more)) => {
            for field in more {
                if let Some(existing) = fields.iter_mut().find(|f| f.name == field.name) {
                    existing.required |= field.required;
                } else {
                    fields.push(field);
                }
            }
            Kind::Object(fields)
        }
        (kind, _) => kind,
    };
    let nullable = match (first.typed, second.typed) {
        (true, true) => a.nullable && b.nullable,
        (true, false) => a.nullable,
        (false, true) => b.nullable,
        (false, false) => a.nullable && b.nullable,
    };
    let grounding = if a.grounding == GroundingPolicy::None || b.grounding == GroundingPolicy::None
    {
        GroundingPolicy::None
    } else {
        GroundingPolicy::Required
    };
    let mut required = first.required;
    required.extend(second.required);
    Built {
        spec: ValueSpec {
            kind,
            nullable,
            title: a.title.or(b.title),
            description: a.description.or(b.description),
            enum_values: a.enum_values.or(b.enum_values),
            format: a.format.or(b.format),
            pattern: a.pattern.or(b.pattern),
            minimum: a.minimum.or(b.minimum),
            maximum: a.maximum.or(b.maximum),
            min_length: a.min_length.or(b.min_length),
            max_length: a.max_length.or(b.max_length),
            min_items: a.min_items.or(b.min_items),
            max_items: a.max_items.or(b.max_items),
            grounding,
            detector: a.detector.or(b.detector),
        },
        typed: first.typed || second.typed,
        required,
    }
}

/// The non-null types and whether null is listed. No `type` but `properties`/`items` implies
/// object/array.
fn type_of(object: &Map<String, Value>, path: &str) -> Result<(Vec<String>, bool), SchemaError> {
    match object.get("type") {
        None if object.contains_key("properties") => Ok((vec!["object".into()], false)),
        None if object.contains_key("items") => Ok((vec!["array".into()], false)),
        None => Ok((Vec::new(), false)),
        Some(Value::String(name)) if name == "null" => Ok((Vec::new(), true)),
        Some(Value::String(name)) => Ok((vec![name.clone()], false)),
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
            Ok((others, nullable))
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

/// Reads the constraint keywords shared by both schema forms into the IR (the authority checks
/// them; the IR shows them to the model and coerces to them).
pub(super) fn constraints(
    object: &Map<String, Value>,
    path: &str,
    spec: &mut ValueSpec,
) -> Result<(), SchemaError> {
    let listed = match (object.get("enum"), object.get("const")) {
        (_, Some(value)) => Some(vec![value.clone()]),
        (Some(Value::Array(values)), None) if values.is_empty() => {
            return Err(SchemaError::at(
                path,
                "`enum` is empty; no value could pass",
            ));
        }
        (Some(Value::Array(values)), None) => Some(values.clone()),
        (Some(_), None) => {
            return Err(SchemaError::at(path, "`enum` must be an array of values"));
        }
        (None, None) => None,
    };
    if let Some(values) = listed {
        spec.nullable |= values.iter().any(Value::is_null);
        spec.enum_values = Some(values.into_iter().filter(|v| !v.is_null()).collect());
    }
    if let Some(format) = object.get("format") {
        let format = format
            .as_str()
            .ok_or_else(|| SchemaError::at(path, "`format` must be a string"))?;
        spec.format =
            Some(Format::parse(format).ok_or_else(|| keywords::unknown_format(path, format))?);
    }
    if let Some(pattern) = object.get("pattern") {
        let source = pattern
            .as_str()
            .ok_or_else(|| SchemaError::at(path, "`pattern` must be a string"))?;
        spec.pattern = Some(source.to_owned());
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
        // JSON Schema counts are mathematical integers: `2.0` is 2.
        Some(value) => value
            .as_u64()
            .or_else(|| {
                value
                    .as_f64()
                    .filter(|n| *n >= 0.0 && n.fract() == 0.0 && *n <= u64::MAX as f64)
                    .map(|n| n as u64)
            })
            .map(Some)
            .ok_or_else(|| {
                SchemaError::at(path, format!("`{key}` must be a non-negative integer"))
            }),
    }
}
