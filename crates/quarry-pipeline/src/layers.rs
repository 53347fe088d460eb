//! Execution layers of an entity type's fields by Kahn's algorithm: layer 0 holds the fields
//! without dependencies, layer n the fields whose dependencies are all in earlier layers. Fields
//! keep their declaration order within a layer, so runs are deterministic.

use std::collections::HashMap;

use quarry_core::model::{EntityType, EntityTypeError, FieldSpec};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DependencyLayers {
    layers: Vec<Vec<String>>,
}

impl DependencyLayers {
    /// The layers of a type's fields, or the first unknown dependency, or a cycle.
    pub fn of(entity_type: &EntityType) -> Result<DependencyLayers, EntityTypeError> {
        DependencyLayers::from_fields(&entity_type.slug, &entity_type.fields)
    }

    pub fn from_fields(
        slug: &str,
        fields: &[FieldSpec],
    ) -> Result<DependencyLayers, EntityTypeError> {
        let index: HashMap<&str, usize> = fields
            .iter()
            .enumerate()
            .map(|(i, field)| (field.name.as_str(), i))
            .collect();
        let mut indegree = vec![0usize; fields.len()];
        let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); fields.len()];
        for (i, field) in fields.iter().enumerate() {
            for dependency in &field.depends_on {
                let Some(&d) = index.get(dependency.as_str()) else {
                    return Err(EntityTypeError::UnknownDependency {
                        slug: slug.to_owned(),
                        field: field.name.clone(),
                        missing: dependency.clone(),
                    });
                };
                indegree[i] += 1;
                dependents[d].push(i);
            }
        }
        let mut layers = Vec::new();
        let mut current: Vec<usize> = (0..fields.len()).filter(|&i| indegree[i] == 0).collect();
        let mut placed = 0;
        while !current.is_empty() {
            placed += current.len();
            let mut next = Vec::new();
            for &i in &current {
                for &dependent in &dependents[i] {
                    indegree[dependent] -= 1;
                    if indegree[dependent] == 0 {
                        next.push(dependent);
                    }
                }
            }
            next.sort_unstable();
            next.dedup();
            layers.push(current.iter().map(|&i| fields[i].name.clone()).collect());
            current = next;
        }
        if placed < fields.len() {
            return Err(EntityTypeError::DependencyCycle {
                slug: slug.to_owned(),
                fields: find_cycle(fields, &index, &indegree),
            });
        }
        Ok(DependencyLayers { layers })
    }

    /// Field names per layer, in execution order.
    pub fn layers(&self) -> &[Vec<String>] {
        &self.layers
    }

    pub fn layer_of(&self, field: &str) -> Option<usize> {
        self.layers
            .iter()
            .position(|layer| layer.iter().any(|name| name == field))
    }
}

/// A cycle among the fields Kahn's algorithm could not place, as `a → b → a`.
fn find_cycle(
    fields: &[FieldSpec],
    index: &HashMap<&str, usize>,
    indegree: &[usize],
) -> Vec<String> {
    // Every unplaced field depends on some unplaced field, so walking dependencies from one of
    // them must revisit a field.
    let Some(start) = (0..fields.len()).find(|&i| indegree[i] > 0) else {
        return Vec::new();
    };
    let mut path = vec![start];
    loop {
        let current = *path.last().unwrap_or(&start);
        let Some(next) = fields[current]
            .depends_on
            .iter()
            .filter_map(|name| index.get(name.as_str()).copied())
            .find(|&d| indegree[d] > 0)
        else {
            return path.iter().map(|&i| fields[i].name.clone()).collect();
        };
        if let Some(position) = path.iter().position(|&i| i == next) {
            let mut cycle: Vec<String> = path[position..]
                .iter()
                .map(|&i| fields[i].name.clone())
                .collect();
            cycle.push(fields[next].name.clone());
            return cycle;
        }
        path.push(next);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(name: &str, depends_on: &[&str]) -> FieldSpec {
        serde_json::from_value(serde_json::json!({"name": name, "depends_on": depends_on})).unwrap()
    }

    #[test]
    fn layers_follow_dependencies_in_declaration_order() {
        let fields = [
            field("summary", &["revenue", "name"]),
            field("name", &[]),
            field("tier", &["summary"]),
            field("revenue", &[]),
            field("risk", &["revenue"]),
        ];
        let layers = DependencyLayers::from_fields("c", &fields).unwrap();
        assert_eq!(
            layers.layers(),
            [
                vec!["name".to_owned(), "revenue".to_owned()],
                vec!["summary".to_owned(), "risk".to_owned()],
                vec!["tier".to_owned()],
            ]
        );
        assert_eq!(layers.layer_of("tier"), Some(2));
    }

    #[test]
    fn self_dependency_is_a_cycle() {
        let error = DependencyLayers::from_fields("c", &[field("a", &["a"])]).unwrap_err();
        assert_eq!(
            error,
            EntityTypeError::DependencyCycle {
                slug: "c".into(),
                fields: vec!["a".into(), "a".into()]
            }
        );
    }
}
