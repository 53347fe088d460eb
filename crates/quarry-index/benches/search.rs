//! Hybrid search latency over 100,000 generated chunks of about 300 characters, through
//! `Library` (the `Retriever` the pipeline uses: query embedding, read lock, BM25 + vectors,
//! fusion, hits in code points), plus each side alone and graph-entity search.
//! Run: `cargo bench -p quarry-index --bench search`. Goal: hybrid p50 < 10 ms.

use std::time::{Duration, Instant};

use quarry_core::model::{Document, DocumentKind, Entity};
use quarry_core::retrieval::Retriever;
use quarry_index::{Filter, Library};

const CHUNKS: usize = 100_000;
const QUERIES: usize = 500;
const CHUNK_CHARS: usize = 300;
const LIMIT: usize = 10;

/// xorshift64*: deterministic and dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A vocabulary of pronounceable words, some with accents or CJK, plus common function words.
fn vocabulary(rng: &mut Rng) -> Vec<String> {
    const SYLLABLES: &[&str] = &[
        "ka", "lo", "mi", "ran", "te", "vus", "qui", "do", "ber", "zen", "ü", "é", "sto", "na",
        "pel", "gri", "an", "or", "tis", "mon", "ex", "ra", "fo", "lu",
    ];
    const EXTRA: &[&str] = &["東京", "café", "Zürich", "invoice", "payment", "contract"];
    let mut words: Vec<String> = (0..5_000)
        .map(|_| {
            (0..2 + rng.below(3))
                .map(|_| SYLLABLES[rng.below(SYLLABLES.len())])
                .collect()
        })
        .collect();
    words.extend(EXTRA.iter().map(|word| (*word).to_owned()));
    words
}

const FUNCTION_WORDS: &[&str] = &["the", "of", "and", "to", "in", "a", "is", "for", "with"];

/// Zipf-ish choice: low indexes far more often, as in real text.
fn pick<'v>(rng: &mut Rng, vocabulary: &'v [String]) -> &'v str {
    let u = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
    let index = ((vocabulary.len() as f64).powf(u) - 1.0) as usize;
    &vocabulary[index.min(vocabulary.len() - 1)]
}

fn chunk(rng: &mut Rng, vocabulary: &[String]) -> String {
    let mut text = String::new();
    while text.chars().count() < CHUNK_CHARS {
        let sentence_words = 6 + rng.below(10);
        for i in 0..sentence_words {
            let word = if rng.below(3) == 0 {
                FUNCTION_WORDS[rng.below(FUNCTION_WORDS.len())]
            } else {
                pick(rng, vocabulary)
            };
            if i == 0 {
                let mut chars = word.chars();
                text.extend(chars.next().into_iter().flat_map(char::to_uppercase));
                text.push_str(chars.as_str());
            } else {
                text.push(' ');
                text.push_str(word);
            }
        }
        text.push_str(". ");
    }
    text.trim_end().to_owned()
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index].as_secs_f64() * 1000.0
}

fn time<F: FnMut(&str)>(queries: &[String], mut search: F) -> Vec<Duration> {
    let mut times: Vec<Duration> = queries
        .iter()
        .map(|query| {
            let start = Instant::now();
            search(query);
            start.elapsed()
        })
        .collect();
    times.sort();
    times
}

const ENTITIES: usize = 10_000;
const BATCH: usize = 1_000;

fn document(i: usize, text: String) -> Document {
    Document {
        id: format!("doc-{i}"),
        project_id: "bench".to_owned(),
        title: format!("doc {i}"),
        text,
        kind: DocumentKind::File,
        created_at: String::new(),
    }
}

fn entity(i: usize, title: String, notes: String) -> Entity {
    Entity {
        id: format!("ent-{i}"),
        project_id: "bench".to_owned(),
        entity_type: ["person", "organization", "place", "concept"][i % 4].to_owned(),
        title,
        parent_id: None,
        fields: Default::default(),
        metadata: Default::default(),
        created_at: String::new(),
        updated_at: String::new(),
        mention_count: 1,
        notes: Some(notes),
        last_seen_at: None,
    }
}

fn main() {
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let vocabulary = vocabulary(&mut rng);
    let library = Library::hashing().unwrap();

    let start = Instant::now();
    let mut total_chars = 0;
    let mut batch: Vec<(Document, Vec<String>)> = Vec::with_capacity(BATCH);
    let flush = |batch: &mut Vec<(Document, Vec<String>)>| {
        let refs: Vec<(&Document, &[String])> = batch
            .iter()
            .map(|(document, entities)| (document, entities.as_slice()))
            .collect();
        let chunks = library.index_documents(&refs).unwrap();
        assert!(
            chunks.iter().all(|c| c.len() == 1),
            "each generated text is one chunk"
        );
        batch.clear();
    };
    for i in 0..CHUNKS {
        let text = chunk(&mut rng, &vocabulary);
        total_chars += text.chars().count();
        let entities = if i % 10 == 0 {
            vec![format!("e{}", i % 100)]
        } else {
            Vec::new()
        };
        batch.push((document(i, text), entities));
        if batch.len() == BATCH {
            flush(&mut batch);
        }
    }
    flush(&mut batch);
    let build = start.elapsed();
    assert_eq!(library.chunk_count(), CHUNKS);
    println!(
        "built {CHUNKS} chunks (avg {} chars) through Library in {:.1} s ({} per commit)",
        total_chars / CHUNKS,
        build.as_secs_f64(),
        BATCH
    );

    let start = Instant::now();
    for i in 0..ENTITIES {
        let title = (0..2)
            .map(|_| pick(&mut rng, &vocabulary))
            .collect::<Vec<_>>()
            .join(" ");
        let notes = (0..8)
            .map(|_| pick(&mut rng, &vocabulary))
            .collect::<Vec<_>>()
            .join(" ");
        library.index_entity(&entity(i, title, notes)).unwrap();
    }
    println!(
        "indexed {ENTITIES} entities in {:.1} s",
        start.elapsed().as_secs_f64()
    );

    let queries: Vec<String> = (0..QUERIES)
        .map(|_| {
            (0..2 + rng.below(4))
                .map(|_| pick(&mut rng, &vocabulary))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    for query in queries.iter().take(20) {
        library
            .search_documents("bench", query, None, LIMIT)
            .unwrap();
    }

    let mut empty = 0;
    let hybrid = time(&queries, |query| {
        let hits = library
            .search_documents("bench", query, None, LIMIT)
            .unwrap();
        empty += usize::from(hits.is_empty());
    });
    let linked_entities = ["e0".to_owned(), "e50".to_owned()];
    let filtered = time(&queries, |query| {
        library
            .search_documents("bench", query, Some(&linked_entities), LIMIT)
            .unwrap();
    });
    let entities = time(&queries, |query| {
        library
            .search_entities("bench", query, None, LIMIT)
            .unwrap();
    });
    let typed = time(&queries, |query| {
        library
            .search_entities("bench", query, Some("person"), LIMIT)
            .unwrap();
    });
    let candidates = (LIMIT * 3).max(30);
    let filter = Filter::project("bench");
    let index = library.document_index();
    let words = time(&queries, |query| {
        index.search_words(query, &filter, candidates).unwrap();
    });
    let vectors = time(&queries, |query| {
        index.search_vectors(query, &filter, candidates).unwrap();
    });
    drop(index);

    let line = |name: &str, times: &[Duration], note: &str| {
        println!(
            "{name:<40} p50 {:.2} ms  p99 {:.2} ms  {note}",
            percentile(times, 0.5),
            percentile(times, 0.99)
        );
    };
    line(
        "hybrid (Library::search_documents)",
        &hybrid,
        &format!("({QUERIES} queries, limit {LIMIT}, {empty} empty)"),
    );
    line("hybrid, entity filter (2% of chunks)", &filtered, "");
    line("bm25 alone", &words, &format!("(limit {candidates})"));
    line("vector alone", &vectors, &format!("(limit {candidates})"));
    line(
        &format!("entities ({ENTITIES}, by meaning)"),
        &entities,
        &format!("(limit {LIMIT})"),
    );
    line("entities, type filter (25%)", &typed, "");
}
