//! Which JSON Schema keywords Quarry accepts, and the check that every keyword of every subschema
//! is one of them.
//!
//! A keyword is either enforced (the authority checks it), an annotation (it asserts nothing:
//! `title`, `description`, `default`, …), structure (`$defs`, `$id`, …), or refused with the
//! reason and what to write instead. An unknown keyword is refused too, with the nearest known
//! spelling, the way the YAML form refuses an unknown key: a typo such as `minLenght` must not
//! silently drop a constraint. `x-` extensions are the user's own annotations (Quarry reads
//! `x-grounding`).

use serde_json::{Map, Value};

use super::ir::{Format, SchemaError};

/// What a keyword's value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// One subschema (`not`, `items`, `additionalProperties`, …).
    Schema,
    /// An array of subschemas (`anyOf`, `prefixItems`, …).
    SchemaList,
    /// A map from names to subschemas (`properties`, `$defs`, …).
    SchemaMap,
    /// Checked by the authority (`type`, `minLength`, `required`, …).
    Assertion,
    /// Asserts nothing; shown to the model (`title`, `description`, `examples`, …).
    Annotation,
    /// Identifies or links schemas (`$id`, `$ref`, `$anchor`, …).
    Core,
}

/// Every keyword Quarry accepts, with its role.
const KEYWORDS: &[(&str, Role)] = &[
    // Core.
    ("$schema", Role::Core),
    ("$id", Role::Core),
    ("$ref", Role::Core),
    ("$anchor", Role::Core),
    ("$dynamicRef", Role::Core),
    ("$dynamicAnchor", Role::Core),
    ("$comment", Role::Annotation),
    ("$defs", Role::SchemaMap),
    // Where draft-07 and Pydantic v1 keep their definitions; 2020-12 resolves `$ref`s into it.
    ("definitions", Role::SchemaMap),
    // Applicators.
    ("allOf", Role::SchemaList),
    ("anyOf", Role::SchemaList),
    ("oneOf", Role::SchemaList),
    ("not", Role::Schema),
    ("if", Role::Schema),
    ("then", Role::Schema),
    ("else", Role::Schema),
    ("dependentSchemas", Role::SchemaMap),
    ("prefixItems", Role::SchemaList),
    ("items", Role::Schema),
    ("contains", Role::Schema),
    ("properties", Role::SchemaMap),
    ("patternProperties", Role::SchemaMap),
    ("additionalProperties", Role::Schema),
    ("propertyNames", Role::Schema),
    ("unevaluatedItems", Role::Schema),
    ("unevaluatedProperties", Role::Schema),
    // Validation.
    ("type", Role::Assertion),
    ("enum", Role::Assertion),
    ("const", Role::Assertion),
    ("multipleOf", Role::Assertion),
    ("maximum", Role::Assertion),
    ("exclusiveMaximum", Role::Assertion),
    ("minimum", Role::Assertion),
    ("exclusiveMinimum", Role::Assertion),
    ("maxLength", Role::Assertion),
    ("minLength", Role::Assertion),
    ("pattern", Role::Assertion),
    ("maxItems", Role::Assertion),
    ("minItems", Role::Assertion),
    ("uniqueItems", Role::Assertion),
    ("maxContains", Role::Assertion),
    ("minContains", Role::Assertion),
    ("maxProperties", Role::Assertion),
    ("minProperties", Role::Assertion),
    ("required", Role::Assertion),
    ("dependentRequired", Role::Assertion),
    // Asserted for the claimed formats only; any other format is refused below.
    ("format", Role::Assertion),
    // Meta-data.
    ("title", Role::Annotation),
    ("description", Role::Annotation),
    ("default", Role::Annotation),
    ("deprecated", Role::Annotation),
    ("readOnly", Role::Annotation),
    ("writeOnly", Role::Annotation),
    ("examples", Role::Annotation),
    // OpenAPI 3.0's `nullable: true` beside a `type`: the type admits null (the authority is
    // given `type: [T, "null"]`).
    ("nullable", Role::Assertion),
    // OpenAPI's hint on a `oneOf`/`anyOf` that Pydantic emits for discriminated unions; the
    // options' `const`/`enum` on the property enforce the choice, so the hint adds nothing.
    ("discriminator", Role::Annotation),
];

/// Keywords refused everywhere, with the reason and what to write instead.
const REFUSED: &[(&str, &str)] = &[
    (
        "dependencies",
        "is draft-07; in JSON Schema 2020-12 write `dependentRequired` (a list of names) or `dependentSchemas` (a schema)",
    ),
    (
        "additionalItems",
        "is draft-07; in JSON Schema 2020-12 list the tuple in `prefixItems` and the rest in `items`",
    ),
    (
        "$recursiveRef",
        "is draft 2019-09; in JSON Schema 2020-12 write `$dynamicRef`",
    ),
    (
        "$recursiveAnchor",
        "is draft 2019-09; in JSON Schema 2020-12 write `$dynamicAnchor`",
    ),
    (
        "$vocabulary",
        "only has a meaning in a meta-schema; remove it",
    ),
    (
        "contentMediaType",
        "is an annotation JSON Schema 2020-12 does not check, and Quarry does not pretend to; remove it or describe the text with `pattern`",
    ),
    (
        "contentEncoding",
        "is an annotation JSON Schema 2020-12 does not check, and Quarry does not pretend to; remove it or describe the text with `pattern`",
    ),
    (
        "contentSchema",
        "is an annotation JSON Schema 2020-12 does not check, and Quarry does not pretend to; remove it",
    ),
];

/// Keywords refused on the extraction object itself (the top level, and what it reaches through
/// `$ref` and `allOf`): each constrains the object as a whole, while Quarry checks, keeps and
/// retries each field on its own, so such a rule could not be enforced on the merged result.
const REFUSED_AT_TOP: &[&str] = &[
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "minProperties",
    "maxProperties",
    "propertyNames",
    "enum",
    "const",
    "$dynamicRef",
];

/// The role of an accepted keyword.
pub(super) fn role(keyword: &str) -> Option<Role> {
    KEYWORDS
        .iter()
        .find(|(name, _)| *name == keyword)
        .map(|(_, role)| *role)
}

/// Checks every keyword of every subschema of `root` (unreferenced `$defs` included).
pub(super) fn check_document(root: &Value) -> Result<(), SchemaError> {
    walk(root, "", "", &mut |object, path, _| {
        check_object(object, path)
    })
}

/// Refuses the keywords of [`REFUSED_AT_TOP`] on `object`, one of the schemas that apply to the
/// extraction object as a whole.
pub(super) fn check_top_level(object: &Map<String, Value>) -> Result<(), SchemaError> {
    for keyword in REFUSED_AT_TOP {
        if object.contains_key(*keyword) {
            return Err(SchemaError::at(
                "",
                format!(
                    "`{keyword}` on the top-level object is not supported: Quarry checks, keeps and \
                     retries each field on its own, so a rule across fields cannot be enforced; \
                     put `{keyword}` on a field instead"
                ),
            ));
        }
    }
    Ok(())
}

/// What [`walk`] calls on each subschema: its object, readable path and JSON pointer.
pub(super) type Visit<'v> =
    dyn FnMut(&Map<String, Value>, &str, &str) -> Result<(), SchemaError> + 'v;

/// Visits every subschema object below `node` (and `node` itself) with its readable path (`lines[]
/// .amount`, `pet.anyOf[1]`) and its JSON pointer (`/properties/lines/items/…`).
pub(super) fn walk(
    node: &Value,
    path: &str,
    pointer: &str,
    visit: &mut Visit<'_>,
) -> Result<(), SchemaError> {
    let Some(object) = node.as_object() else {
        return Ok(());
    };
    visit(object, path, pointer)?;
    for (keyword, value) in object {
        let pointer = format!("{pointer}/{}", escape(keyword));
        match role(keyword) {
            Some(Role::Schema) => {
                let child = match keyword.as_str() {
                    "items" => format!("{path}[]"),
                    _ => join(path, keyword),
                };
                walk(value, &child, &pointer, visit)?;
            }
            Some(Role::SchemaList) => {
                for (index, item) in value.as_array().into_iter().flatten().enumerate() {
                    let child = match keyword.as_str() {
                        "prefixItems" => format!("{path}[{index}]"),
                        _ => format!("{}[{index}]", join(path, keyword)),
                    };
                    walk(item, &child, &format!("{pointer}/{index}"), visit)?;
                }
            }
            Some(Role::SchemaMap) => {
                for (name, item) in value.as_object().into_iter().flatten() {
                    let child = match keyword.as_str() {
                        "properties" => join(path, name),
                        _ => join(&join(path, keyword), name),
                    };
                    walk(item, &child, &format!("{pointer}/{}", escape(name)), visit)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// `path.name`, or `name` at the top level: a field path as messages name it.
pub(super) fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

fn check_object(object: &Map<String, Value>, path: &str) -> Result<(), SchemaError> {
    if let Some(named) = object.get("x-detector") {
        let known = named
            .as_str()
            .is_some_and(crate::candidates::is_detector_name);
        if !known {
            return Err(SchemaError::at(
                path,
                format!(
                    "`x-detector` is {named}; name one of Quarry's detectors: {}",
                    crate::candidates::DETECTOR_NAMES
                ),
            ));
        }
    }
    for keyword in object.keys() {
        if keyword.starts_with("x-") || role(keyword).is_some() {
            continue;
        }
        if let Some((_, reason)) = REFUSED.iter().find(|(name, _)| name == keyword) {
            return Err(SchemaError::at(path, format!("`{keyword}` {reason}")));
        }
        let hint = match nearest(keyword) {
            Some(known) => format!("did you mean '{known}'?"),
            None => "write a JSON Schema 2020-12 keyword, or prefix your own annotation with `x-`"
                .to_owned(),
        };
        return Err(SchemaError::at(
            path,
            format!("unknown keyword '{keyword}'; {hint}"),
        ));
    }
    if object.get("items").is_some_and(Value::is_array) {
        return Err(SchemaError::at(
            path,
            "`items` is an array (the draft-07 tuple form); in JSON Schema 2020-12 list the tuple in `prefixItems`",
        ));
    }
    if let Some(format) = object.get("format").and_then(Value::as_str)
        && Format::from_name(format).is_none()
    {
        return Err(unknown_format(path, format));
    }
    if object.get("nullable") == Some(&Value::Bool(true)) && !object.contains_key("type") {
        return Err(SchemaError::at(
            path,
            "`nullable` needs a `type` beside it (the OpenAPI 3.0 rule); or write `anyOf: [<schema>, {\"type\": \"null\"}]`",
        ));
    }
    Ok(())
}

/// A `format` Quarry does not check, refused (both schema forms).
pub(super) fn unknown_format(path: &str, format: &str) -> SchemaError {
    SchemaError::at(
        path,
        format!(
            "format '{format}' is not one Quarry checks; use one of {}, or a `pattern`",
            Format::ALL.map(Format::as_str).join(", ")
        ),
    )
}

/// The accepted keyword closest to `keyword`: same letters in another case, or at most two edits
/// away.
fn nearest(keyword: &str) -> Option<&'static str> {
    let lower = keyword.to_ascii_lowercase();
    KEYWORDS
        .iter()
        .map(|(name, _)| *name)
        .chain(REFUSED.iter().map(|(name, _)| *name))
        .map(|name| {
            (
                strsim::levenshtein(&lower, &name.to_ascii_lowercase()),
                name,
            )
        })
        .filter(|(distance, _)| *distance <= 2)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| name)
}
