//! Reading the graph: the neighbourhood of an entity, relations followed in both directions
//! (storage is directed; traversal is not).

use std::collections::{HashMap, HashSet};

use quarry_core::model::{Entity, Relation};
use quarry_core::store::{EntityStore, GraphStore, StoreError};
use serde::Serialize;

/// The deepest traversal [`neighbors`] does, whatever is asked.
pub const MAX_DEPTH: usize = 3;

/// An entity reached from the root.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Neighbor {
    pub entity: Entity,
    /// Hops from the root (1 = directly related).
    pub depth: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Neighborhood {
    pub root: Entity,
    /// Reached entities, nearest first; within a hop, those linked by the most-mentioned
    /// relations first.
    pub entities: Vec<Neighbor>,
    /// The relations traversed: those between the root and reached entities.
    pub relations: Vec<Relation>,
}

/// Breadth-first from `entity_id` over relations in both directions, up to `depth` hops (at
/// most [`MAX_DEPTH`]) and `limit` reached entities. `NotFound` when the root is not an entity of
/// `project`.
pub async fn neighbors(
    store: &(impl EntityStore + GraphStore + ?Sized),
    project: &str,
    entity_id: &str,
    depth: usize,
    limit: usize,
) -> Result<Neighborhood, StoreError> {
    let root = store
        .get_entity(project, entity_id)
        .await?
        .ok_or_else(|| StoreError::NotFound {
            what: "entity",
            id: entity_id.to_owned(),
        })?;
    let depth = depth.min(MAX_DEPTH);
    let mut reached: HashMap<String, usize> = HashMap::from([(root.id.clone(), 0)]);
    let mut order: Vec<String> = Vec::new();
    let mut relations: HashMap<String, Relation> = HashMap::new();
    let mut frontier = vec![root.id.clone()];
    'hops: for hop in 1..=depth {
        if frontier.is_empty() || order.len() >= limit {
            break;
        }
        let touching = store.relations_touching(project, &frontier).await?;
        let in_frontier: HashSet<&str> = frontier.iter().map(String::as_str).collect();
        // The best relation (most mentions) reaching each new entity on this hop.
        let mut candidates: HashMap<String, i64> = HashMap::new();
        for relation in &touching {
            for (near, far) in [
                (&relation.from_id, &relation.to_id),
                (&relation.to_id, &relation.from_id),
            ] {
                if in_frontier.contains(near.as_str()) && !reached.contains_key(far) {
                    let best = candidates.entry(far.clone()).or_insert(i64::MIN);
                    *best = (*best).max(relation.mention_count);
                }
            }
        }
        for relation in touching {
            relations.entry(relation.id.clone()).or_insert(relation);
        }
        let mut next: Vec<(String, i64)> = candidates.into_iter().collect();
        next.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        frontier = Vec::new();
        for (id, _) in next {
            if order.len() >= limit {
                break 'hops;
            }
            reached.insert(id.clone(), hop);
            order.push(id.clone());
            frontier.push(id);
        }
    }
    let mut by_id: HashMap<String, Entity> = if order.is_empty() {
        HashMap::new()
    } else {
        store
            .get_entities(project, &order)
            .await?
            .into_iter()
            .map(|entity| (entity.id.clone(), entity))
            .collect()
    };
    let entities: Vec<Neighbor> = order
        .iter()
        .filter_map(|id| {
            by_id.remove(id).map(|entity| Neighbor {
                depth: reached[id],
                entity,
            })
        })
        .collect();
    let kept: HashSet<&str> = std::iter::once(root.id.as_str())
        .chain(entities.iter().map(|n| n.entity.id.as_str()))
        .collect();
    let mut relations: Vec<Relation> = relations
        .into_values()
        .filter(|r| kept.contains(r.from_id.as_str()) && kept.contains(r.to_id.as_str()))
        .collect();
    relations.sort_by(|a, b| {
        b.mention_count
            .cmp(&a.mention_count)
            .then_with(|| a.id.cmp(&b.id))
    });
    Ok(Neighborhood {
        root,
        entities,
        relations,
    })
}
