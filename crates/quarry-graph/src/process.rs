//! From a [`GraphExtraction`] to one [`GraphWrite`] applied in one transaction (which also ends
//! the episode when asked, see [`write_extraction`]): names validated
//! (non-empty, not absurdly long, a configured type, not on the stoplist), resolved against the
//! project's entities of the same type (exact, normalised, near-duplicate: `ACME Corp.` finds
//! `Acme Corp`), merged within the extraction, relationships mapped onto the merged nodes
//! (endpoints that name nothing in the extraction are skipped and counted), labels normalised.
//!
//! On PostgreSQL the candidates come from the database for every extraction
//! (`Store::resolution_candidates`: same title or name key, and the nearest titles by trigram),
//! so a process keeps no copy of the project's entities and resolves against what any process
//! committed. On SQLite (one process) they come from a per-process cache, described next.
//!
//! Resolution and the write run under one lock per project, so two extractions of the same
//! project never both insert the same new entity; the per-type [`ResolverIndex`] is loaded from
//! the store on first use, kept up to date with what this process inserts, and, at most
//! [`RESOLVER_REFRESH`] old, extended with the entities other processes created since
//! (`Store::entities_created_since`, re-reading [`RESOLVER_OVERLAP`] before the newest one seen,
//! since every process writes times by its own clock and commits a little after).
//!
//! Either way the store's graph write locks the project row and looks the exact (type, title)
//! and the name key up again before inserting, so no process inserts an exact or normalised
//! duplicate of another's entity; a stale cache can at worst miss a near-duplicate match for up
//! to [`RESOLVER_REFRESH`] after another process created it.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::{Duration, Instant};

use quarry_core::model::{
    Entity, EpisodeOutcome, GraphEntityWrite, GraphExtraction, GraphRelationWrite, GraphWrite,
    Lease,
};
use quarry_core::resolve::ResolverIndex;
use quarry_core::store::{ChangeFeed, EntityStore, Store, StoreError};
use tokio::sync::Mutex;

use crate::GraphConfig;

/// Per-project resolution caches, each behind the project's lock.
pub(crate) struct GraphState {
    projects: StdMutex<HashMap<String, Arc<Mutex<ProjectGraph>>>>,
    /// Per project: the prompt's known entities (newest first) and when they were read.
    recent: StdMutex<HashMap<String, (Instant, Vec<Entity>)>>,
}

/// How old a cached resolver may be before it asks the store for entities created since.
pub(crate) const RESOLVER_REFRESH: Duration = Duration::from_millis(250);
/// How far before the newest creation time seen a refresh re-reads.
pub(crate) const RESOLVER_OVERLAP: Duration = Duration::from_secs(5);
/// Entities read per refresh query (more are paged).
const REFRESH_BATCH: usize = 1000;

#[derive(Default)]
struct ProjectGraph {
    /// Per entity type: the project's entities of that type.
    resolvers: HashMap<String, TypeResolver>,
}

/// One type's resolver with what it holds and when it last looked at the store.
struct TypeResolver {
    index: ResolverIndex,
    ids: HashSet<String>,
    /// The newest `created_at` read from the store ("" before any).
    newest: String,
    checked: Instant,
}

impl TypeResolver {
    /// The project's entities of `entity_type`, oldest first (on equal names the first
    /// inserted wins).
    async fn load(
        store: &dyn EntityStore,
        project: &str,
        entity_type: &str,
    ) -> Result<TypeResolver, StoreError> {
        let checked = Instant::now();
        let mut resolver = TypeResolver {
            index: ResolverIndex::new(entity_type),
            ids: HashSet::new(),
            newest: String::new(),
            checked,
        };
        let existing = store
            .list_entities(project, Some(entity_type), usize::MAX)
            .await?;
        for known in existing.iter().rev() {
            resolver.add(known);
        }
        Ok(resolver)
    }

    /// Adds what was created since the newest entity seen (minus the overlap), once per id.
    async fn refresh(
        &mut self,
        store: &dyn ChangeFeed,
        project: &str,
        entity_type: &str,
    ) -> Result<(), StoreError> {
        let checked = Instant::now();
        let mut since = earlier(&self.newest, RESOLVER_OVERLAP);
        loop {
            let batch = store
                .entities_created_since(project, entity_type, &since, REFRESH_BATCH)
                .await?;
            for entity in &batch {
                self.add(entity);
            }
            match batch.last() {
                Some(last) if batch.len() == REFRESH_BATCH && last.created_at > since => {
                    since = last.created_at.clone();
                }
                _ => break,
            }
        }
        self.checked = checked;
        Ok(())
    }

    fn add(&mut self, entity: &Entity) {
        if self.ids.insert(entity.id.clone()) {
            self.index.insert(entity.id.clone(), &entity.title);
        }
        if entity.created_at > self.newest {
            self.newest.clone_from(&entity.created_at);
        }
    }
}

/// `at` (a store time) minus `by`, in the store's format; "" (the beginning) when `at` is empty
/// or unreadable.
fn earlier(at: &str, by: Duration) -> String {
    let Ok(at) = chrono::DateTime::parse_from_rfc3339(at) else {
        return String::new();
    };
    let by = chrono::Duration::from_std(by).unwrap_or(chrono::Duration::zero());
    (at.with_timezone(&chrono::Utc) - by).to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

impl GraphState {
    pub(crate) fn new() -> Self {
        GraphState {
            projects: StdMutex::default(),
            recent: StdMutex::default(),
        }
    }

    fn project(&self, project: &str) -> Arc<Mutex<ProjectGraph>> {
        let mut projects = self
            .projects
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        projects.entry(project.to_owned()).or_default().clone()
    }

    /// The project's known entities if read less than `ttl` ago.
    pub(crate) fn recent(&self, project: &str, ttl: Duration) -> Option<Vec<Entity>> {
        let recent = self
            .recent
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        recent
            .get(project)
            .filter(|(read_at, _)| read_at.elapsed() < ttl)
            .map(|(_, entities)| entities.clone())
    }

    pub(crate) fn set_recent(&self, project: &str, entities: Vec<Entity>) {
        let mut recent = self
            .recent
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        recent.insert(project.to_owned(), (Instant::now(), entities));
    }

    /// Entities this process just inserted go to the front of a cached known list.
    fn push_recent(&self, project: &str, inserted: &[Entity], limit: usize) {
        let mut recent = self
            .recent
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((_, entities)) = recent.get_mut(project) {
            let mut fresh: Vec<Entity> = inserted.iter().rev().cloned().collect();
            fresh.append(entities);
            fresh.truncate(limit);
            *entities = fresh;
        }
    }
}

/// What one extraction wrote.
pub(crate) struct Written {
    pub outcome: EpisodeOutcome,
    pub entities: Vec<Entity>,
}

/// A validated entity, type lower-cased and name trimmed.
struct Valid<'a> {
    name: &'a str,
    entity_type: String,
    notes: Option<&'a str>,
}

/// What a write does with its episode.
#[derive(Debug, Clone, Copy)]
pub(crate) enum EpisodeWrite<'a> {
    /// No episode: entities are linked to nothing.
    None,
    /// Entities are linked to this episode; its status is left alone.
    Link(&'a str),
    /// Entities are linked to the episode of this lease, which is ended `done` with the outcome
    /// in the same transaction ([`Store::complete_episode`], fenced by the lease): nothing or
    /// everything is written.
    Complete(&'a Lease),
}

impl<'a> EpisodeWrite<'a> {
    fn id(self) -> Option<&'a str> {
        match self {
            EpisodeWrite::None => None,
            EpisodeWrite::Link(id) => Some(id),
            EpisodeWrite::Complete(held) => Some(&held.job_id),
        }
    }
}

/// Validates, resolves, merges and writes `extraction` for `episode`. `outcome` holds what was
/// already counted (e.g. parts of a reply skipped while parsing); the returned outcome adds this
/// write's counts, and is what a [`EpisodeWrite::Complete`] records.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn write_extraction(
    store: &dyn Store,
    state: &GraphState,
    config: &GraphConfig,
    project: &str,
    episode: EpisodeWrite<'_>,
    extraction: &GraphExtraction,
    source: &str,
    mut outcome: EpisodeOutcome,
) -> Result<Written, StoreError> {
    let types: HashSet<String> = config
        .types
        .iter()
        .map(|t| t.trim().to_lowercase())
        .collect();
    let stoplist: HashSet<String> = config.stoplist.iter().map(|s| stop_key(s)).collect();

    let mut valid: Vec<Valid<'_>> = Vec::with_capacity(extraction.entities.len());
    for entity in &extraction.entities {
        let name = entity.name.trim();
        let entity_type = entity.entity_type.trim().to_lowercase();
        let ok = valid.len() < config.max_entities_per_episode
            && !name.is_empty()
            && name.chars().count() <= config.max_name_chars
            && types.contains(&entity_type)
            && !stoplist.contains(&stop_key(name));
        if !ok {
            outcome.entities_skipped += 1;
            continue;
        }
        let notes = entity
            .notes
            .as_deref()
            .map(str::trim)
            .filter(|n| !n.is_empty());
        valid.push(Valid {
            name,
            entity_type,
            notes,
        });
    }

    let graph = state.project(project);
    let mut graph = graph.lock().await;
    let mut names_by_type: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for entity in &valid {
        names_by_type
            .entry(entity.entity_type.as_str())
            .or_default()
            .push(entity.name.to_owned());
    }
    // Where the store keeps a name index (PostgreSQL) the candidates come from it, fresh for
    // every extraction; otherwise from this process's cache of the type's entities.
    let mut fetched: HashMap<String, ResolverIndex> = HashMap::new();
    for (entity_type, names) in &names_by_type {
        if let Some(candidates) = store
            .resolution_candidates(project, entity_type, names)
            .await?
        {
            let mut index = ResolverIndex::new(entity_type);
            for candidate in &candidates {
                index.insert(candidate.id.clone(), &candidate.title);
            }
            fetched.insert((*entity_type).to_owned(), index);
            continue;
        }
        match graph.resolvers.get_mut(*entity_type) {
            Some(resolver) if resolver.checked.elapsed() >= RESOLVER_REFRESH => {
                resolver.refresh(store, project, entity_type).await?;
            }
            Some(_) => {}
            None => {
                let resolver = TypeResolver::load(store, project, entity_type).await?;
                graph.resolvers.insert((*entity_type).to_owned(), resolver);
            }
        }
    }
    let resolvers: HashMap<String, &ResolverIndex> = graph
        .resolvers
        .iter()
        .map(|(entity_type, resolver)| (entity_type.clone(), &resolver.index))
        .chain(
            fetched
                .iter()
                .map(|(entity_type, index)| (entity_type.clone(), index)),
        )
        .collect();

    let mut nodes = Nodes::default();
    for entity in &valid {
        let resolver = resolvers[&entity.entity_type];
        let index = match nodes.find_typed(resolver, entity.name, &entity.entity_type) {
            Some(index) => index,
            None => nodes.add(resolver, entity, source),
        };
        nodes
            .by_name
            .insert((entity.name.to_owned(), entity.entity_type.clone()), index);
        if nodes.writes[index].notes.is_none() {
            nodes.writes[index].notes = entity.notes.map(str::to_owned);
        }
    }

    let mut relationships: Vec<GraphRelationWrite> = Vec::new();
    let mut seen: HashMap<(usize, usize, String), usize> = HashMap::new();
    for relationship in &extraction.relationships {
        let label = normalize_label(&relationship.label);
        let from = nodes.find(&resolvers, &relationship.from, &relationship.from_type);
        let to = nodes.find(&resolvers, &relationship.to, &relationship.to_type);
        let (Some(from), Some(to)) = (from, to) else {
            outcome.relationships_skipped += 1;
            continue;
        };
        if label.is_empty()
            || from == to
            || relationships.len() >= config.max_relationships_per_episode
        {
            outcome.relationships_skipped += 1;
            continue;
        }
        let notes = relationship
            .notes
            .as_deref()
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_owned);
        match seen.get(&(from, to, label.clone())) {
            Some(&at) => {
                if relationships[at].notes.is_none() {
                    relationships[at].notes = notes;
                }
            }
            None => {
                seen.insert((from, to, label.clone()), relationships.len());
                relationships.push(GraphRelationWrite {
                    from,
                    to,
                    label,
                    notes,
                });
            }
        }
    }

    if nodes.writes.is_empty() {
        drop(graph);
        if let EpisodeWrite::Complete(held) = episode {
            store
                .finish_episode(project, &held.job_id, Some(held), &outcome)
                .await?;
        }
        return Ok(Written {
            outcome,
            entities: Vec::new(),
        });
    }
    let write = GraphWrite {
        entities: nodes.writes,
        relationships,
    };
    // The store writes one entity per node and one relation per relationship.
    outcome.entities_stored = count(write.entities.len());
    outcome.relationships_stored = count(write.relationships.len());
    let applied = {
        match episode {
            EpisodeWrite::Complete(held) => {
                store
                    .complete_episode(project, held, &write, &outcome)
                    .await?
            }
            _ => store.apply_graph(project, episode.id(), &write).await?,
        }
    };
    let mut inserted = Vec::new();
    for ((planned, entity), &new) in write
        .entities
        .iter()
        .zip(&applied.entities)
        .zip(&applied.inserted)
    {
        if planned.existing_id.is_none()
            && let Some(resolver) = graph.resolvers.get_mut(&planned.entity_type)
        {
            resolver.add(entity);
        }
        if new {
            inserted.push(entity.clone());
        }
    }
    drop(graph);
    if !inserted.is_empty() {
        state.push_recent(project, &inserted, config.known_entities);
    }
    Ok(Written {
        outcome,
        entities: applied.entities,
    })
}

/// The nodes of one extraction, merged.
#[derive(Default)]
struct Nodes {
    writes: Vec<GraphEntityWrite>,
    /// (name as written, type) → node.
    by_name: HashMap<(String, String), usize>,
    /// Existing entity id → node.
    by_existing: HashMap<String, usize>,
    /// Per type: the new names of this extraction (id = node index), so `Foo Inc` and `Foo`
    /// named in one reply become one new node.
    fresh: HashMap<String, ResolverIndex>,
}

impl Nodes {
    /// The node `name` of `entity_type` already is: by its written name, the existing entity it
    /// resolves to, or a new name of this extraction it resolves to.
    fn find_typed(&self, resolver: &ResolverIndex, name: &str, entity_type: &str) -> Option<usize> {
        if let Some(&index) = self.by_name.get(&(name.to_owned(), entity_type.to_owned())) {
            return Some(index);
        }
        if let Some(id) = resolver.resolve(name).id() {
            return self.by_existing.get(id).copied();
        }
        let fresh = self.fresh.get(entity_type)?;
        fresh.resolve(name).id().and_then(|id| id.parse().ok())
    }

    fn add(&mut self, resolver: &ResolverIndex, entity: &Valid<'_>, source: &str) -> usize {
        let index = self.writes.len();
        let existing_id = resolver.resolve(entity.name).id().map(str::to_owned);
        match &existing_id {
            Some(id) => {
                self.by_existing.insert(id.clone(), index);
            }
            None => self
                .fresh
                .entry(entity.entity_type.clone())
                .or_insert_with(|| ResolverIndex::new(&entity.entity_type))
                .insert(index.to_string(), entity.name),
        }
        self.writes.push(GraphEntityWrite {
            existing_id,
            name: entity.name.to_owned(),
            entity_type: entity.entity_type.clone(),
            notes: None,
            source: source.to_owned(),
        });
        index
    }

    /// A relationship endpoint: by (name, type) as above; when the type is missing or names no
    /// node, by the name alone if exactly one node has it (case-insensitively).
    fn find(
        &self,
        resolvers: &HashMap<String, &ResolverIndex>,
        name: &str,
        entity_type: &str,
    ) -> Option<usize> {
        let name = name.trim();
        if name.is_empty() {
            return None;
        }
        let entity_type = entity_type.trim().to_lowercase();
        if let Some(resolver) = resolvers.get(&entity_type)
            && let Some(index) = self.find_typed(resolver, name, &entity_type)
        {
            return Some(index);
        }
        let lowered = name.to_lowercase();
        let mut matches = self
            .by_name
            .iter()
            .filter(|((written, _), _)| written.to_lowercase() == lowered)
            .map(|(_, &index)| index)
            .collect::<Vec<_>>();
        matches.sort_unstable();
        matches.dedup();
        match matches.as_slice() {
            [only] => Some(*only),
            _ => None,
        }
    }
}

/// Stoplist comparison key: lower case, surrounding whitespace and punctuation trimmed
/// (`Thanks!` is `thanks`).
fn stop_key(name: &str) -> String {
    name.trim()
        .trim_matches(|c: char| c.is_whitespace() || c.is_ascii_punctuation())
        .to_lowercase()
}

/// A relationship label in snake_case: lower case, spaces and hyphens (and camelCase humps)
/// become `_`, other punctuation is dropped, runs of `_` collapse. `Works On` → `works_on`,
/// `part-of` → `part_of`, `createdBy` → `created_by`, `!!` → `` (skipped).
pub fn normalize_label(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut previous_lower = false;
    for c in raw.trim().chars() {
        if c.is_alphanumeric() {
            if c.is_uppercase() && previous_lower {
                out.push('_');
            }
            previous_lower = c.is_lowercase() || c.is_numeric();
            out.extend(c.to_lowercase());
        } else if c.is_whitespace() || c == '-' || c == '_' {
            if !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
            previous_lower = false;
        }
    }
    while out.ends_with('_') {
        out.pop();
    }
    out
}

pub(crate) fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::normalize_label;

    #[test]
    fn labels_become_snake_case() {
        assert_eq!(normalize_label("works_on"), "works_on");
        assert_eq!(normalize_label(" Works On "), "works_on");
        assert_eq!(normalize_label("part-of"), "part_of");
        assert_eq!(normalize_label("createdBy"), "created_by");
        assert_eq!(normalize_label("LOCATED IN"), "located_in");
        assert_eq!(normalize_label("uses!"), "uses");
        assert_eq!(normalize_label("is  a -- member_of"), "is_a_member_of");
        assert_eq!(normalize_label("?!"), "");
    }
}
