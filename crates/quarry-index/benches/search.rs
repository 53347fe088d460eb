//! Hybrid search latency over generated chunks of about 300 characters (100,000 unless told),
//! through `Library` (the `Retriever` the pipeline uses: query embedding, read lock, BM25 +
//! vectors, fusion, hits in code points), plus each side alone and graph-entity search; the
//! process's resident memory after the index is built and its peak (`VmRSS`/`VmHWM` from
//! `/proc/self/status`, Linux).
//!
//! Two ways to fill the index:
//! - default: `Library::index_documents` in batches of 1,000 one-chunk documents (the write
//!   path), timed;
//! - `--rebuild`: what a server pays at start. The chunks are first written to a SQLite store in a
//!   temp dir as 10-chunk documents (`add_document`, `put_chunks` with hashing embeddings,
//!   `link_document` for 10 % of them; load time printed, not the start-up cost), then the store
//!   is opened again and `Library::rebuild` fills an empty library from it (stored vectors reused,
//!   nothing re-embedded): open + rebuild time is the start-up cost, and `VmHWM` after it includes
//!   the rebuild's peak (all stored chunks read at once beside the new index).
//!
//! Run: `cargo bench -p quarry-index --bench search` (100,000 chunks);
//! `cargo bench -p quarry-index --bench search -- --chunks 1000000` (or
//! `QUARRY_BENCH_CHUNKS=1000000`); add `--rebuild` for the start-up path. Goal: hybrid p50 <
//! 10 ms.

use std::time::{Duration, Instant};

use quarry_core::model::{Document, DocumentKind, Entity, NewEntity, StoredChunk};
use quarry_core::retrieval::Retriever;
use quarry_index::{Embedder, Filter, HASHING_EMBEDDER_NAME, HashingEmbedder, Library};

const DEFAULT_CHUNKS: usize = 100_000;
/// Chunks per stored document in `--rebuild` mode.
const PARAGRAPHS: usize = 10;
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
        url: None,
        fetched_at: None,
    }
}

fn entity(project: &str, i: usize, title: String, notes: String) -> Entity {
    Entity {
        id: format!("ent-{i}"),
        project_id: project.to_owned(),
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

/// The default: one-chunk documents through `Library::index_documents`, 1,000 per commit.
fn built(rng: &mut Rng, vocabulary: &[String], chunks: usize) -> (Library, String, Vec<String>) {
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
    for i in 0..chunks {
        let text = chunk(rng, vocabulary);
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
    assert_eq!(library.chunk_count(), chunks);
    println!(
        "built {chunks} chunks (avg {} chars) through Library in {:.1} s ({} per commit)",
        total_chars / chunks,
        build.as_secs_f64(),
        BATCH
    );

    (
        library,
        "bench".to_owned(),
        vec!["e0".to_owned(), "e50".to_owned()],
    )
}

/// `--rebuild`: the chunks written to a SQLite store as `PARAGRAPHS`-chunk documents, then an
/// empty library filled by `Library::rebuild` from the store opened anew (a server's start).
fn rebuilt(rng: &mut Rng, vocabulary: &[String], chunks: usize) -> (Library, String, Vec<String>) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("search.db").display().to_string();
    let (project, linked) = runtime.block_on(async {
        let store = quarry_store::open(&path).await.unwrap();
        let project = store.ensure_project("bench").await.unwrap();
        // Documents j with j % 10 == 0 link to entity j % 100: the two filtered on (0 and 50)
        // cover 2 % of the documents, so 2 % of the chunks.
        let mut linked_to = Vec::with_capacity(10);
        for k in 0..10 {
            let entity = NewEntity {
                entity_type: "concept".to_owned(),
                title: format!("e{}", k * 10),
                ..NewEntity::default()
            };
            linked_to.push(store.create_entity(&project, &entity).await.unwrap().id);
        }
        let embedder = HashingEmbedder::default();
        let start = Instant::now();
        let mut written = 0;
        let mut j = 0;
        while written < chunks {
            let n = PARAGRAPHS.min(chunks - written);
            let paragraphs: Vec<String> = (0..n).map(|_| chunk(rng, vocabulary)).collect();
            let text = paragraphs.join("\n\n");
            let document = store
                .add_document(&project, &format!("doc {j}"), &text)
                .await
                .unwrap();
            let refs: Vec<&str> = paragraphs.iter().map(String::as_str).collect();
            let embeddings = embedder.embed(&refs).unwrap();
            let (mut byte, mut code_point) = (0, 0);
            let mut stored = Vec::with_capacity(n);
            for (ordinal, (paragraph, embedding)) in paragraphs.iter().zip(embeddings).enumerate() {
                let length = paragraph.chars().count();
                stored.push(StoredChunk {
                    document_id: document.id.clone(),
                    ordinal: ordinal as i64,
                    start: code_point,
                    end: code_point + length,
                    byte_start: byte,
                    byte_end: byte + paragraph.len(),
                    embedder: HASHING_EMBEDDER_NAME.to_owned(),
                    embedding,
                });
                byte += paragraph.len() + 2;
                code_point += length + 2;
            }
            store
                .put_chunks(&project, &document.id, &stored)
                .await
                .unwrap();
            if j % 10 == 0 {
                store
                    .link_document(&project, &document.id, &linked_to[(j % 100) / 10])
                    .await
                    .unwrap();
            }
            written += n;
            j += 1;
            if j % 10_000 == 0 {
                eprintln!(
                    "  stored {written} chunks ({:.0} s)",
                    start.elapsed().as_secs_f64()
                );
            }
        }
        println!(
            "stored {chunks} chunks in {j} documents ({PARAGRAPHS} chunks each) in SQLite in {:.1} \
             s (setup, not start-up)",
            start.elapsed().as_secs_f64()
        );
        (project, vec![linked_to[0].clone(), linked_to[5].clone()])
    });
    let (rss, _) = memory_mib();
    let start = Instant::now();
    let library = runtime.block_on(async {
        let store = quarry_store::open(&path).await.unwrap();
        let opened = start.elapsed();
        let library = Library::hashing().unwrap();
        let report = library.rebuild(store.as_ref()).await.unwrap();
        let elapsed = start.elapsed();
        assert_eq!(report.chunks_reused, chunks, "every stored vector reused");
        assert_eq!(report.chunks_embedded, 0);
        println!(
            "start-up: store opened in {:.2} s, Library::rebuild of {} documents / {chunks} \
             chunks (vectors reused) in {:.1} s: {:.1} s in all; resident {rss:.0} MiB before",
            opened.as_secs_f64(),
            report.documents,
            (elapsed - opened).as_secs_f64(),
            elapsed.as_secs_f64(),
        );
        library
    });
    drop(dir);
    (library, project, linked)
}

/// (VmRSS, VmHWM) of this process in MiB, from `/proc/self/status` (0 where unavailable).
fn memory_mib() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| {
                rest.trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<f64>()
                    .ok()
            })
            .map_or(0.0, |kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let chunks = args
        .iter()
        .position(|arg| arg == "--chunks")
        .and_then(|i| args.get(i + 1).cloned())
        .or_else(|| std::env::var("QUARRY_BENCH_CHUNKS").ok())
        .map(|n| {
            n.replace('_', "")
                .parse::<usize>()
                .expect("--chunks takes a number")
        })
        .unwrap_or(DEFAULT_CHUNKS);
    let rebuild = args.iter().any(|arg| arg == "--rebuild");
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let vocabulary = vocabulary(&mut rng);
    let (library, project, linked_entities) = if rebuild {
        rebuilt(&mut rng, &vocabulary, chunks)
    } else {
        built(&mut rng, &vocabulary, chunks)
    };
    let (rss, hwm) = memory_mib();
    println!(
        "memory with {chunks} chunks indexed: resident {rss:.0} MiB, peak {hwm:.0} MiB (VmRSS, \
         VmHWM)"
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
        library
            .index_entity(&entity(&project, i, title, notes))
            .unwrap();
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
            .search_documents(&project, query, None, LIMIT)
            .unwrap();
    }

    let mut empty = 0;
    let hybrid = time(&queries, |query| {
        let hits = library
            .search_documents(&project, query, None, LIMIT)
            .unwrap();
        empty += usize::from(hits.is_empty());
    });
    let filtered = time(&queries, |query| {
        library
            .search_documents(&project, query, Some(&linked_entities[..]), LIMIT)
            .unwrap();
    });
    let entities = time(&queries, |query| {
        library
            .search_entities(&project, query, None, LIMIT)
            .unwrap();
    });
    let typed = time(&queries, |query| {
        library
            .search_entities(&project, query, Some("person"), LIMIT)
            .unwrap();
    });
    let candidates = (LIMIT * 3).max(30);
    let filter = Filter::project(&project);
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
