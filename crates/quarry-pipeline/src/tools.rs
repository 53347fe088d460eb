//! The field agent's tools, enabled by the field's sources: `search_documents` (hybrid search
//! through the [`Retriever`] over the linked or all documents), `search_entities` (connected or
//! all entities by their words, plus the project's entities nearest in meaning),
//! `get_entity_field` (this entity, its parent or a connected one), `search_web` and
//! `read_web_page` (the `web` source: the page is stored as a document and its text becomes
//! grounding evidence), and `submit_value`, which the field agent checks itself. Every call records what it showed the model: source refs for
//! provenance and the texts a submitted value may be grounded in. The [`FieldContext`] the tools
//! (and the field's agent) start from is here too.

use crate::web_source::{PAGES_READ_FOR_RETRIEVAL, UnreadPage, WebAccess, best_passages};
use quarry_core::model::{
    Correction, Document, Entity, EntityType, FeedbackSummary, FieldSpec, Source, SourceRef,
};
use quarry_core::retrieval::{RetrievalError, Retriever};
use quarry_core::store::{DocumentStore, EntityStore, GraphStore, StoreError};
use quarry_llm::ToolSpec;
use serde_json::{Map, Value, json};

pub(crate) const SEARCH_DOCUMENTS: &str = "search_documents";
pub(crate) const SEARCH_ENTITIES: &str = "search_entities";
pub(crate) const GET_ENTITY_FIELD: &str = "get_entity_field";
pub(crate) const SUBMIT_VALUE: &str = "submit_value";
pub(crate) const SEARCH_WEB: &str = "search_web";
pub(crate) const READ_WEB_PAGE: &str = "read_web_page";
/// Code points of a page's text `read_web_page` shows without a query.
const PAGE_TEXT_SHOWN: usize = 6_000;
/// Passages `read_web_page` shows for a query.
const PAGE_PASSAGES: usize = 4;

const DEFAULT_HITS: usize = 5;
const ENTITY_SCAN_LIMIT: usize = 500;
/// Semantic entity hits below this cosine similarity are not shown (unrelated texts of the
/// hashing embedder score about 0–0.1, paraphrases 0.3 and more).
const MIN_ENTITY_SIMILARITY: f32 = 0.2;
/// Semantic candidates asked for per wanted hit when only connected entities may be shown
/// (project-wide hits are narrowed to the connected ones).
const CONNECTED_OVERFETCH: usize = 10;

/// Why a tool could not run (the field fails; the model is not told).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ToolError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Retrieval(#[from] RetrievalError),
}

/// Everything one field's agent knows before its first turn.
pub(crate) struct FieldContext<'a> {
    pub entity: &'a Entity,
    pub entity_type: &'a EntityType,
    pub field: &'a FieldSpec,
    /// Values of this entity's fields as the run sees them: approved, plus this run's and the
    /// latest pending values of dependencies.
    pub known_values: &'a Map<String, Value>,
    pub parent: Option<&'a Entity>,
    /// Parent first (if any), then up to ten connected entities.
    pub neighbours: &'a [Entity],
    pub feedback_summary: Option<&'a FeedbackSummary>,
    pub rerun_feedback: Option<&'a str>,
    /// The trigger's additional instructions for this field (`POST /v1/workflows`
    /// `instructions`, `quarry run --instructions`).
    pub run_instructions: Option<&'a str>,
    /// The project's corrections that apply to this field (project, type or field scope).
    pub corrections: &'a [Correction],
    /// The web, when a search provider is configured (used when the field's sources say `web`).
    pub web: Option<&'a WebAccess>,
}

/// The store roles a field's agent reads through its tools: the entity and its neighbours
/// (`EntityStore`), the documents of its scope (`DocumentStore`) and entities by id
/// (`GraphStore`). The processes pass their whole store; a test may pass a fake of just these.
pub(crate) trait FieldSources: EntityStore + DocumentStore + GraphStore {}

impl<S: EntityStore + DocumentStore + GraphStore + ?Sized> FieldSources for S {}

/// What the tools may look at for one field agent, and what they showed it.
pub(crate) struct ToolBox<'a, S: ?Sized> {
    pub store: &'a S,
    pub retriever: &'a dyn Retriever,
    pub project: &'a str,
    pub entity: &'a Entity,
    pub sources: &'a [Source],
    /// Entities `get_entity_field` may read besides this one: parent and connected.
    pub neighbours: &'a [Entity],
    /// Values of this entity's fields known to the run (approved or this run's dependencies).
    pub known_values: &'a Map<String, Value>,
    /// Documents whose text was shown in search results: grounding evidence.
    pub retrieved: Vec<Document>,
    /// Entity data shown to the model: grounding evidence for values taken from other entities.
    pub context_texts: Vec<String>,
    /// Source refs captured from tool calls, in call order, deduplicated.
    pub captured: Vec<SourceRef>,
    /// Web pages asked for that could not be read, with why, in call order.
    pub unread_pages: Vec<UnreadPage>,
    /// The documents in this field's scope, loaded at the first search hit (titles, snippets).
    documents: Option<Vec<Document>>,
    /// The web, when the field reads it and a search provider is configured.
    web: Option<&'a WebAccess>,
}

impl<'a, S: FieldSources + ?Sized> ToolBox<'a, S> {
    /// The tools of `context`'s field, over its entity and neighbours.
    pub(crate) fn new(
        store: &'a S,
        retriever: &'a dyn Retriever,
        project: &'a str,
        context: &FieldContext<'a>,
    ) -> ToolBox<'a, S> {
        let field: &'a FieldSpec = context.field;
        ToolBox {
            store,
            retriever,
            project,
            entity: context.entity,
            sources: &field.sources,
            neighbours: context.neighbours,
            known_values: context.known_values,
            retrieved: Vec::new(),
            context_texts: Vec::new(),
            captured: Vec::new(),
            unread_pages: Vec::new(),
            documents: None,
            web: context.web.filter(|_| field.sources.contains(&Source::Web)),
        }
    }

    fn has(&self, source: Source) -> bool {
        self.sources.contains(&source)
    }

    /// The tools this field's sources enable, then `submit_value` with `value_schema`.
    pub(crate) fn specs(&self, value_schema: &Value) -> Vec<ToolSpec> {
        let mut specs = Vec::new();
        if self.has(Source::LinkedDocuments) || self.has(Source::AllDocuments) {
            specs.push(ToolSpec {
                name: SEARCH_DOCUMENTS.to_owned(),
                description: "Search the documents for passages about a query. Returns snippets \
                              with the document id and code-point offsets."
                    .to_owned(),
                parameters: json!({"type": "object", "required": ["query"], "properties": {
                    "query": {"type": "string"}, "limit": {"type": "integer"}}}),
            });
        }
        if self.has(Source::ConnectedEntities) || self.has(Source::AllEntities) {
            specs.push(ToolSpec {
                name: SEARCH_ENTITIES.to_owned(),
                description: "Search entities by title and field values, and by meaning."
                    .to_owned(),
                parameters: json!({"type": "object", "required": ["query"], "properties": {
                    "query": {"type": "string"}, "limit": {"type": "integer"}}}),
            });
        }
        if self.web.is_some() {
            specs.push(ToolSpec {
                name: SEARCH_WEB.to_owned(),
                description: "Search the web. Returns pages (url, title, snippet); a snippet is \
                              a lead, not a source: read the page to use it."
                    .to_owned(),
                parameters: json!({"type": "object", "required": ["query"], "properties": {
                    "query": {"type": "string"}, "limit": {"type": "integer"}}}),
            });
            specs.push(ToolSpec {
                name: READ_WEB_PAGE.to_owned(),
                description: "Read a web page (from search_web). With a query, returns its \
                              passages about the query, else the start of its text; the page is \
                              stored as a document you can cite by its document_id."
                    .to_owned(),
                parameters: json!({"type": "object", "required": ["url"], "properties": {
                    "url": {"type": "string"}, "query": {"type": "string"}}}),
            });
        }
        specs.push(ToolSpec {
            name: GET_ENTITY_FIELD.to_owned(),
            description: "Read one field of this entity (omit entity_id), its parent or a \
                          connected entity."
                .to_owned(),
            parameters: json!({"type": "object", "required": ["field"], "properties": {
                "entity_id": {"type": "string"}, "field": {"type": "string"}}}),
        });
        specs.push(ToolSpec {
            name: SUBMIT_VALUE.to_owned(),
            description: "Submit the field's final value with the ids of the documents or \
                          entities it comes from and your confidence. It is checked against the \
                          field type and the sources; if rejected you are told why."
                .to_owned(),
            parameters: value_schema.clone(),
        });
        specs
    }

    /// Runs a non-submit tool; the reply is the tool result text.
    pub(crate) async fn call(&mut self, name: &str, arguments: &str) -> Result<String, ToolError> {
        let arguments: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
        let text = |key: &str| {
            arguments
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let limit = arguments
            .get("limit")
            .and_then(Value::as_u64)
            .map_or(DEFAULT_HITS, |n| n.clamp(1, 20) as usize);
        match name {
            SEARCH_DOCUMENTS if self.specs_allow(name) => match text("query") {
                Some(query) => self.search_documents(&query, limit).await,
                None => Ok("error: `query` (a string) is required".to_owned()),
            },
            SEARCH_ENTITIES if self.specs_allow(name) => match text("query") {
                Some(query) => self.search_entities(&query, limit).await,
                None => Ok("error: `query` (a string) is required".to_owned()),
            },
            SEARCH_WEB if self.specs_allow(name) => match text("query") {
                Some(query) => Ok(self.search_web(&query, limit).await),
                None => Ok("error: `query` (a string) is required".to_owned()),
            },
            READ_WEB_PAGE if self.specs_allow(name) => match text("url") {
                Some(url) => Ok(self.read_web_page(&url, text("query").as_deref()).await),
                None => Ok("error: `url` (a string) is required".to_owned()),
            },
            GET_ENTITY_FIELD => match text("field") {
                Some(field) => Ok(self.get_entity_field(text("entity_id"), &field)),
                None => Ok("error: `field` (a string) is required".to_owned()),
            },
            other => Ok(format!(
                "error: unknown tool '{other}'; use the tools you were given and finish with \
                 `{SUBMIT_VALUE}`"
            )),
        }
    }

    fn specs_allow(&self, name: &str) -> bool {
        match name {
            SEARCH_DOCUMENTS => self.has(Source::LinkedDocuments) || self.has(Source::AllDocuments),
            SEARCH_ENTITIES => self.has(Source::ConnectedEntities) || self.has(Source::AllEntities),
            SEARCH_WEB | READ_WEB_PAGE => self.web.is_some(),
            _ => true,
        }
    }

    /// Documents linked to this entity, or every document of the project when the field's
    /// sources include all documents.
    fn linked_only(&self) -> bool {
        !self.has(Source::AllDocuments)
    }

    async fn search_documents(&mut self, query: &str, limit: usize) -> Result<String, ToolError> {
        let linked_only = self.linked_only();
        let scope = linked_only.then(|| vec![self.entity.id.clone()]);
        let hits = self
            .retriever
            .search_documents(self.project, query, scope.as_deref(), limit)?;
        if hits.is_empty() {
            return Ok(format!("No passage matches {query:?}. Try other words."));
        }
        let known = |documents: &Option<Vec<Document>>, id: &str| {
            documents
                .as_ref()
                .is_some_and(|docs| docs.iter().any(|d| d.id == id))
        };
        // Titles and snippets come from the stored documents of the field's scope; a hit on a
        // document added since they were loaded reloads them once.
        if hits
            .iter()
            .any(|hit| !known(&self.documents, &hit.document_id))
        {
            let entity = linked_only.then_some(self.entity.id.as_str());
            self.documents = Some(self.store.documents(self.project, entity).await?);
        }
        let documents = self.documents.as_deref().unwrap_or_default();
        let mut shown = Vec::new();
        let mut refs = Vec::new();
        let mut out = Vec::new();
        for hit in hits {
            let Some(document) = documents.iter().find(|d| d.id == hit.document_id) else {
                continue;
            };
            let snippet: String = document
                .text
                .chars()
                .skip(hit.start)
                .take(hit.end.saturating_sub(hit.start))
                .collect();
            out.push(json!({"document_id": document.id, "title": document.title,
                "start": hit.start, "end": hit.end,
                "score": (f64::from(hit.score) * 10_000.0).round() / 10_000.0,
                "snippet": snippet}));
            refs.push(SourceRef::Document {
                document_id: document.id.clone(),
                start: hit.start,
                end: hit.end,
                snippet: Some(snippet),
            });
            if !shown.iter().any(|d: &Document| d.id == document.id) {
                shown.push(document.clone());
            }
        }
        for document in shown {
            if !self.retrieved.iter().any(|d| d.id == document.id) {
                self.retrieved.push(document);
            }
        }
        refs.into_iter().for_each(|r| self.capture(r));
        if out.is_empty() {
            return Ok(format!("No passage matches {query:?}. Try other words."));
        }
        Ok(Value::Array(out).to_string())
    }

    /// Connected (or, with all entities as a source, the project's) entities sharing words with
    /// the query, best first; then entities nearest in meaning that were not listed yet, from
    /// the project when all entities are a source, else from the connected ones.
    async fn search_entities(&mut self, query: &str, limit: usize) -> Result<String, ToolError> {
        let all = self.has(Source::AllEntities);
        let candidates = if all {
            self.store
                .list_entities(self.project, None, ENTITY_SCAN_LIMIT)
                .await?
        } else {
            self.store
                .connected_entities(self.project, &self.entity.id, ENTITY_SCAN_LIMIT)
                .await?
        };
        let query_terms = tokenize(query);
        let mut scored: Vec<(usize, &Entity)> = candidates
            .iter()
            .filter(|e| e.id != self.entity.id)
            .map(|e| {
                let haystack = tokenize(&entity_text(e));
                let hits = query_terms.iter().filter(|t| haystack.contains(t)).count();
                (hits, e)
            })
            .filter(|(hits, _)| *hits > 0 || query_terms.is_empty())
            .collect();
        scored.sort_by_key(|(hits, _)| std::cmp::Reverse(*hits));
        let mut found: Vec<Entity> = scored
            .into_iter()
            .take(limit)
            .map(|(_, e)| e.clone())
            .collect();

        if found.len() < limit && !query_terms.is_empty() {
            let wanted = if all {
                limit
            } else {
                limit.saturating_mul(CONNECTED_OVERFETCH)
            };
            let semantic: Vec<String> = self
                .retriever
                .search_entities(self.project, query, None, wanted)?
                .into_iter()
                .filter(|hit| hit.score >= MIN_ENTITY_SIMILARITY)
                .map(|hit| hit.entity_id)
                .filter(|id| *id != self.entity.id && !found.iter().any(|e| e.id == *id))
                .filter(|id| all || candidates.iter().any(|e| e.id == *id))
                .collect();
            let missing: Vec<String> = semantic
                .iter()
                .filter(|id| !candidates.iter().any(|e| e.id == **id))
                .cloned()
                .collect();
            let fetched = if missing.is_empty() {
                Vec::new()
            } else {
                self.store.get_entities(self.project, &missing).await?
            };
            for id in semantic {
                if found.len() >= limit {
                    break;
                }
                let entity = candidates
                    .iter()
                    .chain(&fetched)
                    .find(|e| e.id == id)
                    .cloned();
                found.extend(entity);
            }
        }

        let mut hits = Vec::new();
        for entity in &found {
            hits.push(
                json!({"entity_id": entity.id, "entity_type": entity.entity_type,
                "title": entity.title, "fields": entity.fields}),
            );
            self.context_texts.push(entity_text(entity));
            self.capture(SourceRef::Entity {
                entity_id: entity.id.clone(),
                field: None,
            });
        }
        if hits.is_empty() {
            return Ok(format!("No entity matches {query:?}."));
        }
        Ok(Value::Array(hits).to_string())
    }

    fn get_entity_field(&mut self, entity_id: Option<String>, field: &str) -> String {
        let (id, value) = match entity_id.as_deref() {
            None | Some("") => (
                self.entity.id.clone(),
                self.known_values.get(field).cloned(),
            ),
            Some(id) if id == self.entity.id => {
                (id.to_owned(), self.known_values.get(field).cloned())
            }
            Some(id) => match self.neighbours.iter().find(|e| e.id == id) {
                Some(entity) if field == "title" => {
                    (id.to_owned(), Some(Value::String(entity.title.clone())))
                }
                Some(entity) => (id.to_owned(), entity.fields.get(field).cloned()),
                None => {
                    return format!(
                        "error: entity '{id}' is neither this entity, its parent nor connected \
                         to it"
                    );
                }
            },
        };
        match value {
            Some(value) if !value.is_null() => {
                self.context_texts.push(value_text(&value));
                self.capture(SourceRef::Entity {
                    entity_id: id,
                    field: Some(field.to_owned()),
                });
                json!({"entity_id": self.entity_id_shown(&entity_id), "field": field, "value": value})
                    .to_string()
            }
            _ => format!("Field '{field}' has no value yet."),
        }
    }

    /// Web search results for the model: leads to read, not evidence.
    async fn search_web(&mut self, query: &str, limit: usize) -> String {
        let Some(web) = self.web else {
            return "error: the web is not a source of this field".to_owned();
        };
        match web.search(query, limit).await {
            Ok(hits) if hits.is_empty() => format!("No web page matches {query:?}."),
            Ok(hits) => serde_json::to_string(&hits).unwrap_or_default(),
            Err(error) => format!("error: {error}"),
        }
    }

    /// Reads and stores a page; its text becomes grounding evidence and what is shown is
    /// captured as the page's passages (with its URL).
    pub(crate) async fn read_web_page(&mut self, url: &str, query: Option<&str>) -> String {
        let Some(web) = self.web else {
            return "error: the web is not a source of this field".to_owned();
        };
        let read = match web.read(self.project, url).await {
            Ok(read) => read,
            Err(error) => {
                self.unread_pages.push(UnreadPage::new(url, &error));
                return format!("error: {error}");
            }
        };
        let document = read.document;
        let shown: Vec<(usize, usize, String)> = match query.filter(|q| !q.trim().is_empty()) {
            Some(query) => best_passages(&document.text, query, PAGE_PASSAGES),
            None => {
                let head: String = document.text.chars().take(PAGE_TEXT_SHOWN).collect();
                vec![(0, head.chars().count(), head)]
            }
        };
        let page_url = document.url.clone().unwrap_or_else(|| url.to_owned());
        let passages: Vec<Value> = shown
            .iter()
            .map(|(start, end, text)| json!({"start": start, "end": end, "text": text}))
            .collect();
        let answer = json!({"document_id": document.id, "url": page_url,
            "title": document.title, "fetched_at": document.fetched_at,
            "chars": document.text.chars().count(), "truncated": read.truncated,
            "passages": passages});
        for (start, end, snippet) in shown {
            self.capture(SourceRef::Document {
                document_id: document.id.clone(),
                start,
                end,
                snippet: Some(snippet),
            });
        }
        self.capture(SourceRef::Url { url: page_url });
        if !self.retrieved.iter().any(|d| d.id == document.id) {
            self.retrieved.push(document);
        }
        answer.to_string()
    }

    /// What retrieve-then-extract does with the web: search, then read the first pages found
    /// (those that cannot be read are skipped, and kept in `unread_pages`) and keep their
    /// passages about `query`.
    pub(crate) async fn read_web_results(&mut self, query: &str) -> Result<(), String> {
        let Some(web) = self.web else {
            return Ok(());
        };
        let hits = web.search(query, PAGES_READ_FOR_RETRIEVAL * 2).await?;
        let mut read = 0;
        for hit in hits {
            if read == PAGES_READ_FOR_RETRIEVAL {
                break;
            }
            if !self
                .read_web_page(&hit.url, Some(query))
                .await
                .starts_with("error:")
            {
                read += 1;
            }
        }
        Ok(())
    }

    fn entity_id_shown<'s>(&'s self, asked: &'s Option<String>) -> &'s str {
        asked.as_deref().unwrap_or(&self.entity.id)
    }

    fn capture(&mut self, source: SourceRef) {
        if !self.captured.contains(&source) {
            self.captured.push(source);
        }
    }
}

/// Lowercased alphanumeric words.
fn tokenize(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|token| !token.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// An entity as searchable and groundable text: title and field values.
pub(crate) fn entity_text(entity: &Entity) -> String {
    let mut text = entity.title.clone();
    for (name, value) in &entity.fields {
        text.push('\n');
        text.push_str(name);
        text.push_str(": ");
        text.push_str(&value_text(value));
    }
    text
}

/// A value as plain text: strings without quotes, lists one item a line.
pub(crate) fn value_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(items) => items.iter().map(value_text).collect::<Vec<_>>().join("\n"),
        Value::Object(object) => object
            .iter()
            .map(|(k, v)| format!("{k}: {}", value_text(v)))
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}
