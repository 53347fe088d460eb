//! Entity types written the field-extraction reference's way load too: its `FieldConfig` nests
//! the extraction settings under `extraction` and spells keys in camelCase (`agentSlug`,
//! `dependsOn`, `requiresApproval`, `maxSteps`, `consensus.agentSlugs`, `humanInput`,
//! `displayType`, `connection.entityTypeSlug`, `connection.cascadeExtraction.titleField`, …).
//! [`to_quarry_shape`] rewrites such a type into Quarry's flat snake_case shape before it is
//! read; a key given both ways is refused rather than guessed.

use serde_json::{Map, Value};

/// The reference's camelCase keys and Quarry's, at the type level.
const TYPE_KEYS: &[(&str, &str)] = &[
    ("defaultAgent", "default_agent"),
    ("defaultAgentSlug", "default_agent"),
    ("extractOnCreate", "extract_on_create"),
];

/// At the field level (and inside `extraction`).
const FIELD_KEYS: &[(&str, &str)] = &[
    ("agentSlug", "agent"),
    ("dependsOn", "depends_on"),
    ("requiresApproval", "requires_approval"),
    ("maxSteps", "max_steps"),
    ("humanInput", "human_input"),
    ("displayType", "display_type"),
    ("derivedFrom", "derived_from"),
];

/// The keys `extraction` may hold (after renaming).
const EXTRACTION_KEYS: &[&str] = &[
    "instructions",
    "agent",
    "sources",
    "depends_on",
    "required",
    "requires_approval",
    "validation",
    "max_steps",
    "consensus",
    "mode",
    "derived",
    "derived_from",
];

/// Rewrites `entity_type` (parsed JSON) into Quarry's shape; `Err` names what is wrong.
pub(crate) fn to_quarry_shape(entity_type: &mut Value) -> Result<(), String> {
    let Some(object) = entity_type.as_object_mut() else {
        return Ok(());
    };
    rename(object, TYPE_KEYS, "the type")?;
    let Some(Value::Array(fields)) = object.get_mut("fields") else {
        return Ok(());
    };
    for field in fields {
        let Some(field) = field.as_object_mut() else {
            continue;
        };
        let name = field
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_owned();
        let at = format!("field '{name}'");
        rename(field, FIELD_KEYS, &at)?;
        if let Some(extraction) = field.remove("extraction") {
            let Value::Object(mut extraction) = extraction else {
                return Err(format!("{at}: `extraction` must be an object"));
            };
            rename(&mut extraction, FIELD_KEYS, &at)?;
            for (key, value) in extraction {
                if !EXTRACTION_KEYS.contains(&key.as_str()) {
                    return Err(format!(
                        "{at}: unknown key `extraction.{key}`; expected one of {}",
                        EXTRACTION_KEYS.join(", ")
                    ));
                }
                if field.contains_key(&key) {
                    return Err(format!(
                        "{at}: `{key}` is given both in `extraction` and beside it; keep one"
                    ));
                }
                field.insert(key, value);
            }
        }
        if let Some(Value::Object(consensus)) = field.get_mut("consensus") {
            rename(consensus, &[("agentSlugs", "agents")], &at)?;
        }
        if let Some(Value::Object(connection)) = field.get_mut("connection") {
            rename(
                connection,
                &[
                    ("entityTypeSlug", "entity_type"),
                    ("cascadeExtraction", "cascade"),
                ],
                &at,
            )?;
            if let Some(Value::Object(cascade)) = connection.get_mut("cascade") {
                rename(
                    cascade,
                    &[
                        ("titleField", "title_field"),
                        ("autoExtract", "auto_extract"),
                    ],
                    &at,
                )?;
            }
        }
    }
    Ok(())
}

/// Moves each `from` key of `object` to its `to` key; both present is an error.
fn rename(object: &mut Map<String, Value>, keys: &[(&str, &str)], at: &str) -> Result<(), String> {
    for (from, to) in keys {
        if let Some(value) = object.remove(*from) {
            if object.contains_key(*to) {
                return Err(format!(
                    "{at}: `{from}` and `{to}` are the same key; keep one"
                ));
            }
            object.insert((*to).to_owned(), value);
        }
    }
    Ok(())
}
