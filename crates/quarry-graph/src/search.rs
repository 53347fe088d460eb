//! Finding graph entities: by name (case-insensitive substring, exact titles first) and by
//! meaning (the retriever's entity vectors), name matches first. One function, so the CLI and
//! the server answer alike.

use quarry_core::model::Entity;
use quarry_core::retrieval::Retriever;
use quarry_core::store::{GraphStore, StoreError};
use serde::Serialize;

/// How an entity was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum EntityMatch {
    Name,
    Meaning,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct FoundEntity {
    #[serde(flatten)]
    pub entity: Entity,
    #[serde(rename = "match")]
    pub matched: EntityMatch,
    /// Cosine similarity for a meaning match; `None` for a name match.
    pub score: Option<f32>,
}

/// Entities whose names contain `query`, then (when a retriever is given and `query` is not
/// empty) entities nearest in meaning, without repeats, at most `limit`. An empty `query` lists
/// the project's entities (of `entity_type` when given), most mentioned first. A retriever that
/// fails is logged and the name matches are returned.
pub async fn find_entities(
    store: &dyn GraphStore,
    retriever: Option<&dyn Retriever>,
    project: &str,
    query: &str,
    entity_type: Option<&str>,
    limit: usize,
) -> Result<Vec<FoundEntity>, StoreError> {
    let query = query.trim();
    let mut found: Vec<FoundEntity> = store
        .find_entities_by_name(project, query, entity_type, limit)
        .await?
        .into_iter()
        .map(|entity| FoundEntity {
            entity,
            matched: EntityMatch::Name,
            score: None,
        })
        .collect();
    let (Some(retriever), false) = (retriever, query.is_empty()) else {
        return Ok(found);
    };
    if found.len() >= limit {
        return Ok(found);
    }
    let hits = match retriever.search_entities(project, query, entity_type, limit) {
        Ok(hits) => hits,
        Err(error) => {
            tracing::warn!("semantic entity search failed, answering with name matches: {error}");
            return Ok(found);
        }
    };
    let wanted: Vec<String> = hits
        .iter()
        .filter(|hit| !found.iter().any(|f| f.entity.id == hit.entity_id))
        .map(|hit| hit.entity_id.clone())
        .collect();
    let mut entities = store.get_entities(project, &wanted).await?;
    for hit in hits {
        if found.len() >= limit {
            break;
        }
        if let Some(at) = entities.iter().position(|e| e.id == hit.entity_id) {
            found.push(FoundEntity {
                entity: entities.swap_remove(at),
                matched: EntityMatch::Meaning,
                score: Some(hit.score),
            });
        }
    }
    Ok(found)
}
