//! Loading entity types from YAML or JSON (`quarry.yaml` with `entity_types: [...]`, or one type)
//! and the load-time rules: every `depends_on` names a field, no dependency cycles, known
//! sources, unique field names, consensus with agents. Each error names the fields involved.
//! Also the lookup of a type's field by name ([`field_spec`]).

use std::collections::HashSet;

use quarry_core::model::{EntityType, EntityTypeError, FieldSpec, Source};
use serde_json::Value;

use crate::error::PipelineError;
use crate::layers::DependencyLayers;

/// Loads and validates entity types from JSON or YAML text: either a document with
/// `entity_types: [...]` or a single entity type.
pub fn load_entity_types(text: &str) -> Result<Vec<EntityType>, EntityTypeError> {
    let document: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(_) => serde_yaml_ng::from_str(text).map_err(|error| invalid("?", error))?,
    };
    let items = match document {
        Value::Object(mut object) if object.contains_key("entity_types") => {
            match object.remove("entity_types") {
                Some(Value::Array(items)) => items,
                _ => {
                    return Err(invalid(
                        "?",
                        "`entity_types` must be a list of entity types",
                    ));
                }
            }
        }
        single @ Value::Object(_) => vec![single],
        _ => {
            return Err(invalid(
                "?",
                "expected an entity type or `entity_types: [...]`",
            ));
        }
    };
    let mut types = Vec::with_capacity(items.len());
    let mut slugs = HashSet::new();
    for item in items {
        let entity_type = entity_type_from_value(item)?;
        if !slugs.insert(entity_type.slug.clone()) {
            return Err(invalid(&entity_type.slug, "the slug is defined twice"));
        }
        types.push(entity_type);
    }
    Ok(types)
}

/// Reads one entity type from parsed JSON (Quarry's shape, or the field-extraction
/// reference's `FieldConfig` shape: see `reference_shape.rs`) and validates it.
pub fn entity_type_from_value(mut value: Value) -> Result<EntityType, EntityTypeError> {
    let slug = value
        .get("slug")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_owned();
    crate::reference_shape::to_quarry_shape(&mut value).map_err(|error| invalid(&slug, error))?;
    check_sources(&slug, &value)?;
    let mut entity_type: EntityType =
        serde_json::from_value(value).map_err(|error| invalid(&slug, error))?;
    // A derived value's inputs are extracted before it.
    for field in &mut entity_type.fields {
        for input in field.derived_from.clone() {
            if !field.depends_on.contains(&input) {
                field.depends_on.push(input);
            }
        }
    }
    validate_entity_type(&entity_type)?;
    Ok(entity_type)
}

/// The load-time rules for an entity type built in code or deserialised elsewhere.
pub fn validate_entity_type(entity_type: &EntityType) -> Result<(), EntityTypeError> {
    let slug = &entity_type.slug;
    if slug.trim().is_empty() {
        return Err(invalid("?", "the slug is empty"));
    }
    if let Some(problem) = slug_problem(slug) {
        return Err(invalid(&slug.escape_debug().to_string(), problem));
    }
    let mut names = HashSet::new();
    for field in &entity_type.fields {
        if field.name.trim().is_empty() {
            return Err(invalid(slug, "a field has an empty name"));
        }
        if !names.insert(field.name.as_str()) {
            return Err(invalid(
                slug,
                format!("field '{}' is defined twice", field.name),
            ));
        }
        if let Some(consensus) = &field.consensus
            && consensus.agents.is_empty()
        {
            return Err(invalid(
                slug,
                format!("field '{}': consensus needs at least one agent", field.name),
            ));
        }
        if !field.derived_from.is_empty() && !field.derived {
            return Err(invalid(
                slug,
                format!(
                    "field '{}': derived_from is for derived fields; add `derived: true`",
                    field.name
                ),
            ));
        }
        if let Some(unknown) = field.derived_from.iter().find(|input| {
            !entity_type.fields.iter().any(|f| &f.name == *input) || **input == field.name
        }) {
            return Err(invalid(
                slug,
                format!(
                    "field '{}': derived_from names '{unknown}', which is not another field of \
                     the type",
                    field.name
                ),
            ));
        }
        for action in &field.actions {
            check_action(entity_type, field, action)?;
        }
        if field.max_steps == 0 {
            return Err(invalid(
                slug,
                format!("field '{}': max_steps must be at least 1", field.name),
            ));
        }
    }
    DependencyLayers::of(entity_type).map(|_| ())
}

/// An action does one thing: a webhook to an http(s) URL, or a run of another field.
fn check_action(
    entity_type: &EntityType,
    field: &quarry_core::model::FieldSpec,
    action: &quarry_core::model::FieldAction,
) -> Result<(), EntityTypeError> {
    let slug = &entity_type.slug;
    match (&action.webhook, &action.run_field) {
        (Some(url), None) => {
            let url = url.trim();
            let rest = url
                .strip_prefix("https://")
                .or_else(|| url.strip_prefix("http://"));
            if rest.is_none_or(|rest| rest.is_empty() || rest.starts_with('/')) {
                return Err(invalid(
                    slug,
                    format!(
                        "field '{}': action webhook '{url}' is not an http(s) URL",
                        field.name
                    ),
                ));
            }
        }
        (None, Some(target)) => {
            if target == &field.name || !entity_type.fields.iter().any(|f| &f.name == target) {
                return Err(invalid(
                    slug,
                    format!(
                        "field '{}': action run_field '{target}' is not another field of the type",
                        field.name
                    ),
                ));
            }
        }
        _ => {
            return Err(invalid(
                slug,
                format!(
                    "field '{}': an action has either `webhook: URL` or `run_field: FIELD`",
                    field.name
                ),
            ));
        }
    }
    Ok(())
}

/// The outbound policy at load time: a webhook whose host is seen to be private without
/// resolving it (an IP literal such as `127.0.0.1`, `[::1]` or `169.254.169.254`, or
/// `localhost`) is refused unless `hosts` allows it by name. Names are checked again when a
/// delivery resolves them.
pub fn check_webhook_targets(
    entity_type: &EntityType,
    hosts: &quarry_llm::outbound::HostPolicy,
) -> Result<(), EntityTypeError> {
    for field in &entity_type.fields {
        for url in field
            .actions
            .iter()
            .filter_map(|action| action.webhook.as_deref())
        {
            if let Some(refused) = hosts.literal_url_problem(url) {
                return Err(invalid(
                    &entity_type.slug,
                    format!(
                        "field '{}': action webhook '{url}' is refused: {refused}",
                        field.name
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Longest slug accepted: slugs appear in URLs, file names users derive from them and logs.
pub const MAX_SLUG_CHARS: usize = 64;

/// Why `slug` cannot name an entity type, or `None` when it can. A slug is 1–64 ASCII letters,
/// digits, `_` or `-`, starting with a letter or digit: it travels in URL paths and is shown in
/// logs, so `../`, `/`, spaces, control characters (NUL) and other punctuation are refused.
pub fn slug_problem(slug: &str) -> Option<String> {
    let rule = "a slug is 1-64 ASCII letters, digits, '_' or '-', starting with a letter or digit";
    if slug.len() > MAX_SLUG_CHARS {
        return Some(format!("the slug is {} bytes long; {rule}", slug.len()));
    }
    if !slug.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Some(format!(
            "the slug must start with a letter or digit; {rule}"
        ));
    }
    slug.chars()
        .find(|&c| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .map(|c| format!("the slug contains {:?}; {rule}", c))
}

/// Serde would only say "unknown variant"; this names the field and the known sources.
fn check_sources(slug: &str, value: &Value) -> Result<(), EntityTypeError> {
    let Some(fields) = value.get("fields").and_then(Value::as_array) else {
        return Ok(());
    };
    for field in fields {
        let name = field.get("name").and_then(Value::as_str).unwrap_or("?");
        let Some(sources) = field.get("sources").and_then(Value::as_array) else {
            continue;
        };
        for source in sources {
            let known = source.as_str().is_some_and(|s| Source::parse(s).is_some());
            if !known {
                return Err(invalid(
                    slug,
                    format!(
                        "field '{name}': unknown source {source}; expected one of {}",
                        Source::ALL.map(Source::as_str).join(", ")
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn invalid(slug: &str, message: impl ToString) -> EntityTypeError {
    EntityTypeError::Invalid {
        slug: slug.to_owned(),
        message: message.to_string(),
    }
}

/// The field of `entity_type` called `name`.
pub(crate) fn field_spec<'t>(
    entity_type: &'t EntityType,
    name: &str,
) -> Result<&'t FieldSpec, PipelineError> {
    entity_type
        .fields
        .iter()
        .find(|f| f.name == name)
        .ok_or_else(|| PipelineError::UnknownField {
            entity_type: entity_type.slug.clone(),
            field: name.to_owned(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(yaml: &str) -> Result<Vec<EntityType>, EntityTypeError> {
        load_entity_types(yaml)
    }

    #[test]
    fn an_action_is_a_webhook_or_a_run_of_another_field() {
        let field = |action: &str| {
            format!("slug: c\nfields:\n  - {{name: a, actions: [{action}]}}\n  - {{name: b}}\n")
        };
        load(&field("{on: extracted, run_field: b}")).unwrap();
        load(&field(
            "{on: approved, webhook: \"https://hooks.example/q\"}",
        ))
        .unwrap();
        for (action, message) in [
            ("{on: extracted, run_field: a}", "not another field"),
            ("{on: extracted, run_field: zzz}", "not another field"),
            (
                "{on: rejected}",
                "either `webhook: URL` or `run_field: FIELD`",
            ),
            (
                "{on: rejected, run_field: b, webhook: \"https://x.example\"}",
                "either `webhook: URL` or `run_field: FIELD`",
            ),
            (
                "{on: extracted, webhook: \"file:///etc/passwd\"}",
                "not an http(s) URL",
            ),
        ] {
            let error = load(&field(action)).unwrap_err().to_string();
            assert!(error.contains(message), "{action}: {error}");
        }
    }

    #[test]
    fn derived_from_names_other_fields_of_derived_fields_and_runs_them_first() {
        let types = load(
            "slug: c\nfields:\n  - {name: revenue}\n  - {name: tier, derived: true, \
             derived_from: [revenue]}\n",
        )
        .unwrap();
        assert_eq!(types[0].fields[1].depends_on, ["revenue"]);
        let error = load("slug: c\nfields:\n  - {name: a}\n  - {name: b, derived_from: [a]}\n")
            .unwrap_err()
            .to_string();
        assert!(error.contains("add `derived: true`"), "{error}");
        for inputs in ["[zzz]", "[b]"] {
            let error = load(&format!(
                "slug: c\nfields:\n  - {{name: a}}\n  - {{name: b, derived: true, \
                 derived_from: {inputs}}}\n"
            ))
            .unwrap_err()
            .to_string();
            assert!(error.contains("not another field"), "{inputs}: {error}");
        }
    }

    #[test]
    fn refuses_slugs_that_are_paths_or_carry_control_characters() {
        for bad in [
            "../../etc/passwd",
            "a/b",
            "nul\0byte",
            "-leading-dash",
            "with space",
            "é",
        ] {
            let json = serde_json::json!({"slug": bad, "fields": [{"name": "a"}]});
            let error = entity_type_from_value(json).unwrap_err().to_string();
            assert!(
                error.contains("a slug is 1-64 ASCII letters"),
                "{bad:?}: {error}"
            );
        }
        let long = "a".repeat(MAX_SLUG_CHARS + 1);
        assert!(slug_problem(&long).is_some());
        for good in [
            "company",
            "c",
            "deal_v2",
            "Invoice-2024",
            &"a".repeat(MAX_SLUG_CHARS),
        ] {
            assert_eq!(slug_problem(good), None, "{good}");
        }
    }

    #[test]
    fn loads_a_project_file_with_defaults() {
        let types = load(
            "entity_types:\n  - slug: company\n    fields:\n      - {name: revenue, type: number, \
             sources: [linked-documents]}\n      - {name: tier, depends_on: [revenue]}\n",
        )
        .unwrap();
        assert_eq!(types[0].fields[0].max_steps, 5);
        assert_eq!(types[0].fields[1].depends_on, ["revenue"]);
    }

    #[test]
    fn unknown_dependency_names_both_fields() {
        let error =
            load("slug: c\nfields:\n  - {name: total, depends_on: [subtotal]}\n").unwrap_err();
        assert_eq!(
            error,
            EntityTypeError::UnknownDependency {
                slug: "c".into(),
                field: "total".into(),
                missing: "subtotal".into()
            }
        );
    }

    #[test]
    fn cycle_names_the_fields() {
        let error = load(
            "slug: c\nfields:\n  - {name: a, depends_on: [c]}\n  - {name: b, depends_on: [a]}\n  \
             - {name: c, depends_on: [b]}\n  - {name: d}\n",
        )
        .unwrap_err();
        let EntityTypeError::DependencyCycle { fields, .. } = error else {
            panic!("{error:?}")
        };
        assert_eq!(fields.len(), 4, "{fields:?}");
        assert_eq!(fields.first(), fields.last());
        for name in ["a", "b", "c"] {
            assert!(fields.iter().any(|f| f == name));
        }
    }

    #[test]
    fn unknown_source_names_the_field() {
        let error =
            load("slug: c\nfields:\n  - {name: revenue, sources: [intranet]}\n").unwrap_err();
        let message = error.to_string();
        assert!(message.contains("field 'revenue'"), "{message}");
        assert!(message.contains("\"intranet\""), "{message}");
        assert!(message.contains("all-entities, web"), "{message}");
    }

    #[test]
    fn duplicate_fields_and_empty_consensus_are_invalid() {
        let duplicate = load("slug: c\nfields:\n  - {name: a}\n  - {name: a}\n").unwrap_err();
        assert!(duplicate.to_string().contains("field 'a' is defined twice"));
        let consensus =
            load("slug: c\nfields:\n  - {name: a, consensus: {agents: [], strategy: majority}}\n")
                .unwrap_err();
        assert!(consensus.to_string().contains("field 'a': consensus"));
    }
}
