//! The field agent's tools, enabled by the field's sources: `search_documents` (BM25 over
//! paragraph/sentence chunks of the linked or all documents), `search_entities` (connected or
//! all entities), `get_entity_field` (this entity, its parent or a connected one), and
//! `submit_value`, which the field agent checks itself. Every call records what it showed the
//! model: source refs for provenance and the texts a submitted value may be grounded in.

use std::collections::HashMap;

use quarry_core::model::{Document, Entity, FieldSpec, Source, SourceRef};
use quarry_core::store::{Store, StoreError};
use quarry_llm::ToolSpec;
use serde_json::{Map, Value, json};

pub(crate) const SEARCH_DOCUMENTS: &str = "search_documents";
pub(crate) const SEARCH_ENTITIES: &str = "search_entities";
pub(crate) const GET_ENTITY_FIELD: &str = "get_entity_field";
pub(crate) const SUBMIT_VALUE: &str = "submit_value";

const DEFAULT_HITS: usize = 5;
const ENTITY_SCAN_LIMIT: usize = 500;

/// A stretch of one document, in code points.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Chunk {
    pub document: usize,
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// A small BM25 index over paragraph chunks (long paragraphs split at sentence ends).
pub(crate) struct Bm25 {
    chunks: Vec<Chunk>,
    terms: Vec<HashMap<String, u32>>,
    lengths: Vec<f64>,
    document_frequency: HashMap<String, u32>,
    average_length: f64,
}

const K1: f64 = 1.2;
const B: f64 = 0.75;
const MAX_CHUNK_CHARS: usize = 600;

impl Bm25 {
    pub(crate) fn new(documents: &[&str]) -> Bm25 {
        let chunks: Vec<Chunk> = documents
            .iter()
            .enumerate()
            .flat_map(|(i, text)| chunk(i, text))
            .collect();
        let mut document_frequency: HashMap<String, u32> = HashMap::new();
        let mut terms = Vec::with_capacity(chunks.len());
        let mut lengths = Vec::with_capacity(chunks.len());
        for chunk in &chunks {
            let mut counts: HashMap<String, u32> = HashMap::new();
            let tokens = tokenize(&chunk.text);
            lengths.push(tokens.len() as f64);
            for token in tokens {
                *counts.entry(token).or_default() += 1;
            }
            for term in counts.keys() {
                *document_frequency.entry(term.clone()).or_default() += 1;
            }
            terms.push(counts);
        }
        let average_length = lengths.iter().sum::<f64>() / (lengths.len().max(1) as f64);
        Bm25 {
            chunks,
            terms,
            lengths,
            document_frequency,
            average_length: average_length.max(1.0),
        }
    }

    /// The best chunks for `query`, best first; chunks sharing no term are left out.
    pub(crate) fn search(&self, query: &str, limit: usize) -> Vec<(&Chunk, f64)> {
        let n = self.chunks.len() as f64;
        let query_terms = tokenize(query);
        let mut scored: Vec<(usize, f64)> = (0..self.chunks.len())
            .filter_map(|i| {
                let score: f64 = query_terms
                    .iter()
                    .filter_map(|term| {
                        let tf = f64::from(*self.terms[i].get(term)?);
                        let df = f64::from(self.document_frequency[term]);
                        let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
                        let norm = K1 * (1.0 - B + B * self.lengths[i] / self.average_length);
                        Some(idf * tf * (K1 + 1.0) / (tf + norm))
                    })
                    .sum();
                (score > 0.0).then_some((i, score))
            })
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored
            .into_iter()
            .take(limit)
            .map(|(i, score)| (&self.chunks[i], score))
            .collect()
    }
}

fn tokenize(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|token| !token.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Paragraphs (split at blank lines), long ones split after sentence ends; code-point offsets.
fn chunk(document: usize, text: &str) -> Vec<Chunk> {
    let chars: Vec<char> = text.chars().collect();
    let mut chunks = Vec::new();
    let mut start = 0;
    let mut i = 0;
    let push = |start: usize, end: usize, chunks: &mut Vec<Chunk>| {
        let piece: String = chars[start..end].iter().collect();
        let leading = piece.chars().take_while(|c| c.is_whitespace()).count();
        let trimmed = piece.trim();
        if !trimmed.is_empty() {
            let s = start + leading;
            chunks.push(Chunk {
                document,
                start: s,
                end: s + trimmed.chars().count(),
                text: trimmed.to_owned(),
            });
        }
    };
    while i < chars.len() {
        let paragraph_break = chars[i] == '\n' && chars.get(i + 1) == Some(&'\n');
        let sentence_break = i - start >= MAX_CHUNK_CHARS / 2
            && matches!(chars[i], '.' | '!' | '?' | '。')
            && chars.get(i + 1).is_none_or(|c| c.is_whitespace());
        if paragraph_break || sentence_break || i - start >= MAX_CHUNK_CHARS {
            push(start, i + 1, &mut chunks);
            start = i + 1;
        }
        i += 1;
    }
    push(start, chars.len(), &mut chunks);
    chunks
}

/// What the tools may look at for one field agent, and what they showed it.
pub(crate) struct ToolBox<'a> {
    pub store: &'a dyn Store,
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
    index: Option<(Vec<Document>, Bm25)>,
}

impl<'a> ToolBox<'a> {
    pub(crate) fn new(
        store: &'a dyn Store,
        project: &'a str,
        entity: &'a Entity,
        field: &'a FieldSpec,
        neighbours: &'a [Entity],
        known_values: &'a Map<String, Value>,
    ) -> ToolBox<'a> {
        ToolBox {
            store,
            project,
            entity,
            sources: &field.sources,
            neighbours,
            known_values,
            retrieved: Vec::new(),
            context_texts: Vec::new(),
            captured: Vec::new(),
            index: None,
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
                description: "Search entities by title and field values.".to_owned(),
                parameters: json!({"type": "object", "required": ["query"], "properties": {
                    "query": {"type": "string"}, "limit": {"type": "integer"}}}),
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
    pub(crate) async fn call(&mut self, name: &str, arguments: &str) -> Result<String, StoreError> {
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
            _ => true,
        }
    }

    async fn search_documents(&mut self, query: &str, limit: usize) -> Result<String, StoreError> {
        if self.index.is_none() {
            let scope = if self.has(Source::AllDocuments) {
                None
            } else {
                Some(self.entity.id.as_str())
            };
            let documents = self.store.documents(self.project, scope).await?;
            let texts: Vec<&str> = documents.iter().map(|d| d.text.as_str()).collect();
            let index = Bm25::new(&texts);
            self.index = Some((documents, index));
        }
        let Some((documents, index)) = &self.index else {
            return Ok("[]".to_owned());
        };
        let mut hits = Vec::new();
        let mut refs = Vec::new();
        let mut shown = Vec::new();
        for (chunk, score) in index.search(query, limit) {
            let document = &documents[chunk.document];
            hits.push(json!({"document_id": document.id, "title": document.title,
                "start": chunk.start, "end": chunk.end, "score": (score * 1000.0).round() / 1000.0,
                "snippet": chunk.text}));
            refs.push(SourceRef::Document {
                document_id: document.id.clone(),
                start: chunk.start,
                end: chunk.end,
                snippet: Some(chunk.text.clone()),
            });
            shown.push(document.clone());
        }
        for document in shown {
            if !self.retrieved.iter().any(|d| d.id == document.id) {
                self.retrieved.push(document);
            }
        }
        refs.into_iter().for_each(|r| self.capture(r));
        if hits.is_empty() {
            return Ok(format!("No passage matches {query:?}. Try other words."));
        }
        Ok(Value::Array(hits).to_string())
    }

    async fn search_entities(&mut self, query: &str, limit: usize) -> Result<String, StoreError> {
        let candidates = if self.has(Source::AllEntities) {
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
        let found: Vec<Entity> = scored
            .into_iter()
            .take(limit)
            .map(|(_, e)| e.clone())
            .collect();
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

    fn entity_id_shown<'s>(&'s self, asked: &'s Option<String>) -> &'s str {
        asked.as_deref().unwrap_or(&self.entity.id)
    }

    fn capture(&mut self, source: SourceRef) {
        if !self.captured.contains(&source) {
            self.captured.push(source);
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bm25_ranks_the_relevant_paragraph_first_with_code_point_offsets() {
        let first =
            "Über GmbH was founded in 1999.\n\nIts annual revenue was $4.5 million in 2023.";
        let second = "Unrelated notes about lunch.";
        let index = Bm25::new(&[first, second]);
        let hits = index.search("annual revenue", 3);
        assert_eq!(hits.len(), 1);
        let chunk = hits[0].0;
        assert_eq!(chunk.document, 0);
        let expected: String = first
            .chars()
            .skip(chunk.start)
            .take(chunk.end - chunk.start)
            .collect();
        assert_eq!(chunk.text, expected);
        assert!(chunk.text.starts_with("Its annual revenue"));
        assert_eq!(chunk.start, 32);
    }

    #[test]
    fn long_paragraphs_split_at_sentences() {
        let sentence = "This sentence is about nothing in particular at all. ";
        let text = sentence.repeat(30);
        let chunks = chunk(0, &text);
        assert!(chunks.len() > 2);
        assert!(chunks.iter().all(|c| c.end - c.start <= MAX_CHUNK_CHARS));
    }
}
