//! Hybrid search latency over 100,000 generated chunks of about 300 characters.
//! Run: `cargo bench -p quarry-index --bench search`. Goal: hybrid p50 < 10 ms.

use std::time::{Duration, Instant};

use quarry_index::{Filter, HashingEmbedder, HybridIndex};

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

fn main() {
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let vocabulary = vocabulary(&mut rng);
    let mut index = HybridIndex::in_memory(Box::new(HashingEmbedder::default())).unwrap();

    let start = Instant::now();
    let mut total_chars = 0;
    for i in 0..CHUNKS {
        let text = chunk(&mut rng, &vocabulary);
        total_chars += text.chars().count();
        let entities = if i % 10 == 0 {
            vec![format!("e{}", i % 100)]
        } else {
            Vec::new()
        };
        let chunks = index
            .add_document("bench", &format!("doc-{i}"), &text, &entities)
            .unwrap();
        assert_eq!(chunks.len(), 1, "each generated text is one chunk");
    }
    index.commit().unwrap();
    let build = start.elapsed();
    println!(
        "built {CHUNKS} chunks (avg {} chars) in {:.1} s",
        total_chars / CHUNKS,
        build.as_secs_f64()
    );

    let queries: Vec<String> = (0..QUERIES)
        .map(|_| {
            (0..2 + rng.below(4))
                .map(|_| pick(&mut rng, &vocabulary))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let filter = Filter::project("bench");
    for query in queries.iter().take(20) {
        index.search(query, &filter, LIMIT).unwrap();
    }

    let mut empty = 0;
    let hybrid = time(&queries, |query| {
        empty += usize::from(index.search(query, &filter, LIMIT).unwrap().is_empty());
    });
    let candidates = (LIMIT * 3).max(30);
    let words = time(&queries, |query| {
        index.search_words(query, &filter, candidates).unwrap();
    });
    let vectors = time(&queries, |query| {
        index.search_vectors(query, &filter, candidates).unwrap();
    });
    let linked = Filter::project("bench").with_entities(["e0", "e50"]);
    let filtered = time(&queries, |query| {
        index.search(query, &linked, LIMIT).unwrap();
    });

    println!(
        "hybrid   p50 {:.2} ms  p99 {:.2} ms  ({QUERIES} queries, limit {LIMIT}, {empty} empty)",
        percentile(&hybrid, 0.5),
        percentile(&hybrid, 0.99)
    );
    println!(
        "bm25     p50 {:.2} ms  p99 {:.2} ms  (limit {candidates})",
        percentile(&words, 0.5),
        percentile(&words, 0.99)
    );
    println!(
        "vector   p50 {:.2} ms  p99 {:.2} ms  (limit {candidates})",
        percentile(&vectors, 0.5),
        percentile(&vectors, 0.99)
    );
    println!(
        "hybrid, entity filter (2% of chunks)  p50 {:.2} ms  p99 {:.2} ms",
        percentile(&filtered, 0.5),
        percentile(&filtered, 0.99)
    );
}
