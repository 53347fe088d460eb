//! Full-text retrieval: a tantivy index of chunks scored with BM25. Queries are built from the
//! tokens of the user's text, never parsed as tantivy query syntax, so no query can fail.

use std::collections::BTreeSet;
use std::ops::Range;
use std::path::Path;

use tantivy::collector::{DocSetCollector, TopDocs};
use tantivy::directory::MmapDirectory;
use tantivy::query::{BooleanQuery, ConstScoreQuery, Occur, Query, TermQuery, TermSetQuery};
use tantivy::schema::{
    Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions,
    Value,
};
use tantivy::tokenizer::{
    AsciiFoldingFilter, LowerCaser, RemoveLongFilter, SimpleTokenizer, TextAnalyzer,
};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

use crate::error::IndexError;
use crate::hit::{Filter, Hit};

const TOKENIZER: &str = "quarry";
const WRITER_MEMORY_BYTES: usize = 64 * 1024 * 1024;

/// One chunk as the full-text index stores it. `text` is the chunk's own text (a slice of the
/// document); the ranges locate it in the document.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkRecord<'a> {
    pub chunk_id: u64,
    pub document_id: &'a str,
    pub project: &'a str,
    pub entity_ids: &'a [String],
    pub text: &'a str,
    pub bytes: Range<usize>,
    pub code_points: Range<usize>,
}

#[derive(Clone, Copy)]
struct Fields {
    chunk_id: Field,
    document_id: Field,
    project: Field,
    entity_ids: Field,
    text: Field,
    byte_start: Field,
    byte_end: Field,
    code_point_start: Field,
    code_point_end: Field,
}

/// A BM25 index of chunks, in RAM or in a directory (memory-mapped). Additions and deletions
/// become visible to `search` after `commit`.
pub struct Bm25Index {
    index: Index,
    writer: IndexWriter<TantivyDocument>,
    reader: IndexReader,
    fields: Fields,
}

impl Bm25Index {
    /// An index that lives in memory only (tests, short-lived processes).
    pub fn in_ram() -> Result<Self, IndexError> {
        let (schema, fields) = schema();
        Self::from_index(Index::create_in_ram(schema), fields)
    }

    /// Opens the index stored in `path`, creating the directory and an empty index when needed.
    pub fn open(path: &Path) -> Result<Self, IndexError> {
        std::fs::create_dir_all(path).map_err(|source| IndexError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let (schema, fields) = schema();
        let index = Index::open_or_create(MmapDirectory::open(path)?, schema)?;
        Self::from_index(index, fields)
    }

    fn from_index(index: Index, fields: Fields) -> Result<Self, IndexError> {
        index.tokenizers().register(TOKENIZER, analyzer());
        let writer = index.writer_with_num_threads(1, WRITER_MEMORY_BYTES)?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        Ok(Bm25Index {
            index,
            writer,
            reader,
            fields,
        })
    }

    pub fn add(&self, chunk: &ChunkRecord<'_>) -> Result<(), IndexError> {
        let f = self.fields;
        let mut doc = TantivyDocument::default();
        doc.add_u64(f.chunk_id, chunk.chunk_id);
        doc.add_text(f.document_id, chunk.document_id);
        doc.add_text(f.project, chunk.project);
        for entity_id in chunk.entity_ids {
            doc.add_text(f.entity_ids, entity_id);
        }
        doc.add_text(f.text, chunk.text);
        doc.add_u64(f.byte_start, chunk.bytes.start as u64);
        doc.add_u64(f.byte_end, chunk.bytes.end as u64);
        doc.add_u64(f.code_point_start, chunk.code_points.start as u64);
        doc.add_u64(f.code_point_end, chunk.code_points.end as u64);
        self.writer.add_document(doc)?;
        Ok(())
    }

    /// Removes every chunk of `document_id` (at the next commit).
    pub fn delete_document(&self, document_id: &str) {
        self.writer
            .delete_term(Term::from_field_text(self.fields.document_id, document_id));
    }

    /// Makes all additions and deletions so far durable and searchable.
    pub fn commit(&mut self) -> Result<(), IndexError> {
        self.writer.commit()?;
        self.reader.reload()?;
        Ok(())
    }

    /// Replaces the entity links of every committed chunk of `document_id`. Tantivy documents are
    /// immutable, so the chunks are re-indexed from their stored text (visible after `commit`).
    /// Returns how many chunks were re-indexed.
    pub fn set_entity_ids(
        &self,
        document_id: &str,
        entity_ids: &[String],
    ) -> Result<usize, IndexError> {
        let f = self.fields;
        let searcher = self.reader.searcher();
        let query = TermQuery::new(
            Term::from_field_text(f.document_id, document_id),
            IndexRecordOption::Basic,
        );
        let mut addresses: Vec<_> = searcher
            .search(&query, &DocSetCollector)?
            .into_iter()
            .collect();
        addresses.sort();
        let mut records = Vec::with_capacity(addresses.len());
        for address in addresses {
            let doc: TantivyDocument = searcher.doc(address)?;
            let chunk_id = u64_field(&doc, f.chunk_id, 0, "chunk_id")?;
            let text_of = |field, name| {
                doc.get_first(field)
                    .and_then(|v| v.as_str())
                    .map(str::to_owned)
                    .ok_or(IndexError::CorruptChunk {
                        chunk_id,
                        field: name,
                    })
            };
            records.push((
                chunk_id,
                text_of(f.project, "project")?,
                text_of(f.text, "text")?,
                ranges(&doc, f, chunk_id)?,
            ));
        }
        self.delete_document(document_id);
        for (chunk_id, project, text, (bytes, code_points)) in &records {
            self.add(&ChunkRecord {
                chunk_id: *chunk_id,
                document_id,
                project,
                entity_ids,
                text,
                bytes: bytes.clone(),
                code_points: code_points.clone(),
            })?;
        }
        Ok(records.len())
    }

    /// The best `limit` chunks for the words of `query` within `filter`, best first; ties broken
    /// by chunk id. A query without any word finds nothing.
    pub fn search(
        &self,
        query: &str,
        filter: &Filter,
        limit: usize,
    ) -> Result<Vec<Hit>, IndexError> {
        let f = self.fields;
        let mut analyzer = self.index.tokenizer_for_field(f.text)?;
        let mut words = BTreeSet::new();
        analyzer.token_stream(query).process(&mut |token| {
            words.insert(token.text.clone());
        });
        if words.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let text_query = BooleanQuery::new(
            words
                .iter()
                .map(|word| {
                    let term = Term::from_field_text(f.text, word);
                    let query: Box<dyn Query> =
                        Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs));
                    (Occur::Should, query)
                })
                .collect(),
        );
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![
            (Occur::Must, Box::new(text_query)),
            (Occur::Must, unscored_any_of(f.project, [&filter.project])),
        ];
        for (field, ids) in [
            (f.entity_ids, &filter.entity_ids),
            (f.document_id, &filter.document_ids),
        ] {
            if let Some(ids) = ids {
                if ids.is_empty() {
                    return Ok(Vec::new());
                }
                clauses.push((Occur::Must, unscored_any_of(field, ids)));
            }
        }
        let searcher = self.reader.searcher();
        let top = searcher.search(
            &BooleanQuery::new(clauses),
            &TopDocs::with_limit(limit).order_by_score(),
        )?;
        let mut hits = Vec::with_capacity(top.len());
        for (score, address) in top {
            let doc: TantivyDocument = searcher.doc(address)?;
            let chunk_id = u64_field(&doc, f.chunk_id, 0, "chunk_id")?;
            let document_id = doc
                .get_first(f.document_id)
                .and_then(|v| v.as_str())
                .ok_or(IndexError::CorruptChunk {
                    chunk_id,
                    field: "document_id",
                })?
                .to_owned();
            let (bytes, code_points) = ranges(&doc, f, chunk_id)?;
            hits.push(Hit {
                chunk_id,
                document_id,
                score,
                bytes,
                code_points,
            });
        }
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(a.chunk_id.cmp(&b.chunk_id))
        });
        Ok(hits)
    }

    /// Number of committed chunks.
    pub fn len(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Matches documents whose `field` holds any of `values`, adding nothing to the score.
fn unscored_any_of<'v>(
    field: Field,
    values: impl IntoIterator<Item = &'v String>,
) -> Box<dyn Query> {
    let terms = values
        .into_iter()
        .map(|value| Term::from_field_text(field, value));
    Box::new(ConstScoreQuery::new(
        Box::new(TermSetQuery::new(terms)),
        0.0,
    ))
}

fn u64_field(
    doc: &TantivyDocument,
    field: Field,
    chunk_id: u64,
    name: &'static str,
) -> Result<u64, IndexError> {
    doc.get_first(field)
        .and_then(|v| v.as_u64())
        .ok_or(IndexError::CorruptChunk {
            chunk_id,
            field: name,
        })
}

fn ranges(
    doc: &TantivyDocument,
    f: Fields,
    chunk_id: u64,
) -> Result<(Range<usize>, Range<usize>), IndexError> {
    let get = |field, name| u64_field(doc, field, chunk_id, name).map(|v| v as usize);
    Ok((
        get(f.byte_start, "byte_start")?..get(f.byte_end, "byte_end")?,
        get(f.code_point_start, "code_point_start")?..get(f.code_point_end, "code_point_end")?,
    ))
}

/// Words: split on non-alphanumerics, long tokens dropped, lowercased, accents folded
/// (`Café` finds `cafe`). No stemming: the vector side covers inflections.
fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .build()
}

fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let text_options = TextOptions::default().set_stored().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(TOKENIZER)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let fields = Fields {
        chunk_id: builder.add_u64_field("chunk_id", INDEXED | STORED),
        document_id: builder.add_text_field("document_id", STRING | STORED),
        project: builder.add_text_field("project", STRING | STORED),
        entity_ids: builder.add_text_field("entity_ids", STRING | STORED),
        text: builder.add_text_field("text", text_options),
        byte_start: builder.add_u64_field("byte_start", STORED),
        byte_end: builder.add_u64_field("byte_end", STORED),
        code_point_start: builder.add_u64_field("code_point_start", STORED),
        code_point_end: builder.add_u64_field("code_point_end", STORED),
    };
    (builder.build(), fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record<'a>(
        chunk_id: u64,
        document_id: &'a str,
        project: &'a str,
        entity_ids: &'a [String],
        text: &'a str,
    ) -> ChunkRecord<'a> {
        ChunkRecord {
            chunk_id,
            document_id,
            project,
            entity_ids,
            text,
            bytes: 0..text.len(),
            code_points: 0..text.chars().count(),
        }
    }

    fn sample() -> Bm25Index {
        let mut index = Bm25Index::in_ram().unwrap();
        let acme = vec!["acme".to_owned()];
        let none: Vec<String> = Vec::new();
        for chunk in [
            record(
                1,
                "doc-a",
                "p1",
                &acme,
                "Acme Corp signed the invoice for 500 widgets.",
            ),
            record(
                2,
                "doc-a",
                "p1",
                &acme,
                "The weather in Zürich was cold and grey.",
            ),
            record(
                3,
                "doc-b",
                "p1",
                &none,
                "Globex paid the invoice late, again.",
            ),
            record(
                4,
                "doc-c",
                "p2",
                &acme,
                "Invoice invoice invoice from another project.",
            ),
        ] {
            index.add(&chunk).unwrap();
        }
        index.commit().unwrap();
        index
    }

    fn ids(hits: &[Hit]) -> Vec<u64> {
        hits.iter().map(|hit| hit.chunk_id).collect()
    }

    #[test]
    fn finds_the_right_chunk() {
        let index = sample();
        let hits = index
            .search("zurich weather", &Filter::project("p1"), 10)
            .unwrap();
        assert_eq!(ids(&hits), [2]);
        assert_eq!(hits[0].document_id, "doc-a");
        assert_eq!(hits[0].code_points, 0..40);
        assert_eq!(hits[0].bytes, 0..41);
    }

    #[test]
    fn respects_project_entity_and_document_filters() {
        let index = sample();
        let all = index.search("invoice", &Filter::project("p1"), 10).unwrap();
        assert_eq!(all.len(), 2, "project p2's chunk stays out: {all:?}");
        let linked = Filter::project("p1").with_entities(["acme"]);
        assert_eq!(ids(&index.search("invoice", &linked, 10).unwrap()), [1]);
        let by_document = Filter::project("p1").with_documents(["doc-b", "doc-x"]);
        assert_eq!(
            ids(&index.search("invoice", &by_document, 10).unwrap()),
            [3]
        );
        let nothing = Filter::project("p1").with_entities(Vec::<String>::new());
        assert!(index.search("invoice", &nothing, 10).unwrap().is_empty());
    }

    #[test]
    fn query_syntax_characters_are_plain_words() {
        let index = sample();
        for query in [
            "\"AND (foo:",
            "invoice AND (text:",
            "*:* OR ~2^3 [a TO",
            "\\",
            "\"\"\"",
            "",
            "   ",
            "-invoice",
        ] {
            let hits = index.search(query, &Filter::project("p1"), 10);
            assert!(hits.is_ok(), "{query:?}: {hits:?}");
        }
        // "AND" is just the word "and": rare, so the Zürich chunk holding it ranks first.
        let hits = index.search("invoice AND (text:", &Filter::project("p1"), 10);
        assert_eq!(ids(&hits.unwrap()), [2, 3, 1]);
    }

    #[test]
    fn relinking_reindexes_from_stored_text() {
        let mut index = sample();
        let globex = vec!["globex".to_owned()];
        assert_eq!(index.set_entity_ids("doc-b", &globex).unwrap(), 1);
        index.commit().unwrap();
        let filter = Filter::project("p1").with_entities(["globex"]);
        assert_eq!(ids(&index.search("invoice", &filter, 10).unwrap()), [3]);
        assert_eq!(index.len(), 4);
    }

    #[test]
    fn persists_in_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        {
            let mut index = Bm25Index::open(dir.path()).unwrap();
            index
                .add(&record(7, "doc", "p", &[], "persistent mmap chunk"))
                .unwrap();
            index.commit().unwrap();
        }
        let index = Bm25Index::open(dir.path()).unwrap();
        assert_eq!(
            ids(&index.search("MMAP", &Filter::project("p"), 5).unwrap()),
            [7]
        );
    }
}
