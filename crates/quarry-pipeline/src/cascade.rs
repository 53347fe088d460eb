//! Cascade creation: a list value of a connection field with cascade enabled becomes entities of
//! the target type, deduplicated against existing titles (case-insensitive) and linked to the
//! extracting entity by a relation labelled with the field name and by `parent_id`. This module
//! says what to write; the store writes it with the task's completion.

use quarry_core::model::{CascadeEntity, CascadeWrite, Entity, FieldSpec, NewWorkflow};
use serde_json::{Map, Value, json};

/// One list item: the title of the entity it names and, for object items, its other properties.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CascadeItem {
    pub title: String,
    pub properties: Map<String, Value>,
}

/// The items of a list value: strings, or objects whose `title_field` (else `title` or `name`)
/// is the title. Items without a title and repeats (ignoring case) are dropped.
pub(crate) fn cascade_items(value: &Value, title_field: Option<&str>) -> Vec<CascadeItem> {
    let Some(items) = value.as_array() else {
        return Vec::new();
    };
    let mut out: Vec<CascadeItem> = Vec::new();
    for item in items {
        let parsed = match item {
            Value::String(title) => CascadeItem {
                title: title.trim().to_owned(),
                properties: Map::new(),
            },
            Value::Object(object) => {
                let key = [title_field.unwrap_or("title"), "title", "name"]
                    .into_iter()
                    .find(|key| object.get(*key).is_some_and(Value::is_string));
                let Some(key) = key else { continue };
                let mut properties = object.clone();
                let title = properties
                    .remove(key)
                    .and_then(|v| v.as_str().map(|s| s.trim().to_owned()))
                    .unwrap_or_default();
                CascadeItem { title, properties }
            }
            _ => continue,
        };
        let repeated = out
            .iter()
            .any(|seen| seen.title.to_lowercase() == parsed.title.to_lowercase());
        if !parsed.title.is_empty() && !repeated {
            out.push(parsed);
        }
    }
    out
}

/// What the cascade of `field` writes for `value` extracted on `parent`: nothing unless the field
/// is a connection with cascade enabled and the value names at least one item. The store writes
/// it with the task's completion, behind the lease fence (`CascadeWrite`).
pub(crate) fn cascade_write(
    parent: &Entity,
    field: &FieldSpec,
    value: &Value,
    follow_up: Option<NewWorkflow>,
) -> Option<CascadeWrite> {
    let connection = field.connection.as_ref()?;
    let cascade = connection.cascade.as_ref().filter(|c| c.enabled)?;
    let items: Vec<CascadeEntity> = cascade_items(value, cascade.title_field.as_deref())
        .into_iter()
        .map(|item| {
            let mut metadata = Map::new();
            metadata.insert(
                "cascade".to_owned(),
                json!({"from_entity": parent.id, "field": field.name,
                    "item": Value::Object(item.properties)}),
            );
            CascadeEntity {
                title: item.title,
                metadata,
            }
        })
        .collect();
    (!items.is_empty()).then(|| CascadeWrite {
        parent_id: parent.id.clone(),
        entity_type: connection.entity_type.clone(),
        label: field.name.clone(),
        items,
        follow_up,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_from_strings_and_objects_deduplicated_by_case() {
        let value = json!(["Write tests", {"name": "Ship", "owner": "Ann"}, "write TESTS", 3,
            {"other": "x"}]);
        let items = cascade_items(&value, Some("name"));
        let titles: Vec<&str> = items.iter().map(|i| i.title.as_str()).collect();
        assert_eq!(titles, ["Write tests", "Ship"]);
        assert_eq!(items[1].properties["owner"], "Ann");
    }
}
