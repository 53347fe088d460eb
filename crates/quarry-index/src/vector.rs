//! Meaning-based retrieval: the `Embedder` trait, a model-free `HashingEmbedder`, and an
//! in-process flat `VectorIndex` (exact cosine top-k over contiguous `f32` rows).

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};
use std::ops::Range;

use crate::error::IndexError;
use crate::hit::{Filter, Hit};

/// Turns texts into vectors of `dimensions()` floats. Implementations: `HashingEmbedder` (always
/// available, no model); an OpenAI-compatible `/v1/embeddings` client and all-MiniLM-L6-v2 via
/// candle plug in here. Synchronous on purpose: async callers wrap calls in `spawn_blocking`.
pub trait Embedder: Send + Sync {
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, IndexError>;
    fn dimensions(&self) -> usize;
}

/// Deterministic feature hashing of words, word bigrams and character trigrams into a fixed
/// number of signed buckets, L2-normalised. Shared wording and shared word pieces (`invoice` /
/// `invoices`) bring texts close; it knows no synonyms. Same input, same vector, on every machine.
#[derive(Debug, Clone, Copy)]
pub struct HashingEmbedder {
    dimensions: usize,
}

impl Default for HashingEmbedder {
    /// 384 dimensions, the width of all-MiniLM-L6-v2, so stores sized for one fit the other.
    fn default() -> Self {
        HashingEmbedder { dimensions: 384 }
    }
}

/// Function words carry little meaning; they still count, a quarter as much.
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "in", "is",
    "it", "its", "of", "on", "or", "that", "the", "this", "to", "was", "were", "will", "with",
];

const WORD_WEIGHT: f32 = 1.0;
const BIGRAM_WEIGHT: f32 = 0.5;
const TRIGRAM_WEIGHT: f32 = 0.35;

impl HashingEmbedder {
    /// # Panics
    /// If `dimensions` is zero.
    pub fn new(dimensions: usize) -> Self {
        assert!(dimensions > 0, "an embedding needs at least one dimension");
        HashingEmbedder { dimensions }
    }

    pub fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut vector = vec![0.0f32; self.dimensions];
        let lowered = text.to_lowercase();
        let words: Vec<&str> = lowered
            .split(|c: char| !c.is_alphanumeric())
            .filter(|word| !word.is_empty())
            .collect();
        let mut previous: Option<&str> = None;
        let mut padded = String::new();
        for &word in &words {
            let stop = STOPWORDS.contains(&word);
            let scale = if stop { 0.25 } else { 1.0 };
            self.add(&mut vector, &[b"w", word.as_bytes()], WORD_WEIGHT * scale);
            if let Some(previous) = previous {
                let pair = [b"b".as_slice(), previous.as_bytes(), b" ", word.as_bytes()];
                self.add(&mut vector, &pair, BIGRAM_WEIGHT * scale);
            }
            previous = Some(word);
            if stop {
                continue;
            }
            padded.clear();
            padded.push('<');
            padded.push_str(word);
            padded.push('>');
            let boundaries: Vec<usize> = padded
                .char_indices()
                .map(|(i, _)| i)
                .chain([padded.len()])
                .collect();
            for window in boundaries.windows(4) {
                let gram = &padded.as_bytes()[window[0]..window[3]];
                self.add(&mut vector, &[b"c", gram], TRIGRAM_WEIGHT);
            }
        }
        normalize(&mut vector);
        vector
    }

    fn add(&self, vector: &mut [f32], parts: &[&[u8]], weight: f32) {
        let hash = fnv1a(parts);
        let bucket = (hash % self.dimensions as u64) as usize;
        let sign = if hash >> 63 == 0 { 1.0 } else { -1.0 };
        vector[bucket] += sign * weight;
    }
}

impl Embedder for HashingEmbedder {
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, IndexError> {
        Ok(texts.iter().map(|text| self.embed_one(text)).collect())
    }

    fn dimensions(&self) -> usize {
        self.dimensions
    }
}

/// FNV-1a (64 bit): stable across platforms and Rust versions, unlike `DefaultHasher`.
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for part in parts {
        for &byte in *part {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}

/// Scales `vector` to unit length; the zero vector stays zero.
pub fn normalize(vector: &mut [f32]) {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        vector.iter_mut().for_each(|x| *x /= norm);
    }
}

/// Dot product with eight independent accumulators, so the compiler can use SIMD lanes.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let (a_chunks, b_chunks) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = a_chunks
        .remainder()
        .iter()
        .zip(b_chunks.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in a_chunks.zip(b_chunks) {
        for lane in 0..8 {
            lanes[lane] += x[lane] * y[lane];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// One chunk as the vector index stores it (its vector is passed beside it).
#[derive(Debug, Clone, PartialEq)]
pub struct VectorRecord<'a> {
    pub chunk_id: u64,
    pub document_id: &'a str,
    pub project: &'a str,
    pub entity_ids: &'a [String],
    pub bytes: Range<usize>,
    pub code_points: Range<usize>,
}

struct ChunkSlot {
    chunk_id: u64,
    document: u32,
    bytes: Range<usize>,
    code_points: Range<usize>,
}

struct DocumentSlot {
    id: String,
    project: u32,
    /// Interned entity ids, sorted.
    entity_ids: Vec<u32>,
}

/// Rows scanned per thread below which a search stays on the calling thread.
const ROWS_PER_THREAD: usize = 16_384;

/// How many quantised candidates per wanted hit are rescored exactly; 8-bit scores are within
/// about 1% of the exact ones, so a small factor keeps the exact top-k.
const RERANK_FACTOR: usize = 4;
const MIN_RERANK: usize = 32;

/// A query with at most `dimensions / SPARSE_FRACTION` non-zero codes is scored sparsely.
const SPARSE_FRACTION: usize = 8;

/// Cosine search over unit vectors stored row by row in one `Vec<f32>`. The scan reads an 8-bit
/// copy of the rows (a quarter of the memory traffic, which is what bounds a flat scan), keeps the
/// best `RERANK_FACTOR × limit` rows, and rescores those exactly in `f32`. Entity links and
/// projects belong to documents, so a filter is resolved once per document, then rows are scanned.
/// Fine up to ~100k chunks; beyond that use an ANN backend behind the same filters.
pub struct VectorIndex {
    dimensions: usize,
    vectors: Vec<f32>,
    /// Row `i` ≈ `codes[i] × scales[i]`, symmetric 8-bit quantisation of the unit vector.
    codes: Vec<i8>,
    scales: Vec<f32>,
    chunks: Vec<ChunkSlot>,
    documents: Vec<DocumentSlot>,
    document_slots: HashMap<String, u32>,
    /// Projects and entity ids are interned: a filter compares integers, not strings, per row.
    projects: Interner,
    entities: Interner,
}

#[derive(Default)]
struct Interner(HashMap<String, u32>);

impl Interner {
    fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.0.get(name) {
            return id;
        }
        let id = self.0.len() as u32;
        self.0.insert(name.to_owned(), id);
        id
    }

    fn get(&self, name: &str) -> Option<u32> {
        self.0.get(name).copied()
    }
}

impl VectorIndex {
    pub fn new(dimensions: usize) -> Self {
        VectorIndex {
            dimensions,
            vectors: Vec::new(),
            codes: Vec::new(),
            scales: Vec::new(),
            chunks: Vec::new(),
            documents: Vec::new(),
            document_slots: HashMap::new(),
            projects: Interner::default(),
            entities: Interner::default(),
        }
    }

    pub fn dimensions(&self) -> usize {
        self.dimensions
    }

    pub fn len(&self) -> usize {
        self.chunks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// Adds one chunk; the vector is normalised on the way in. A document's project and entity
    /// links are those of its latest chunk added.
    pub fn add(&mut self, record: &VectorRecord<'_>, vector: &[f32]) -> Result<(), IndexError> {
        self.check_dimensions(vector)?;
        let document = match self.document_slots.get(record.document_id) {
            Some(&slot) => slot,
            None => {
                let slot = self.documents.len() as u32;
                self.documents.push(DocumentSlot {
                    id: record.document_id.to_owned(),
                    project: 0,
                    entity_ids: Vec::new(),
                });
                self.document_slots
                    .insert(record.document_id.to_owned(), slot);
                slot
            }
        };
        let project = self.projects.intern(record.project);
        let entity_ids = self.intern_entities(record.entity_ids);
        let slot = &mut self.documents[document as usize];
        slot.project = project;
        slot.entity_ids = entity_ids;
        let start = self.vectors.len();
        self.vectors.extend_from_slice(vector);
        normalize(&mut self.vectors[start..]);
        let scale = quantize_into(&self.vectors[start..], &mut self.codes);
        self.scales.push(scale);
        self.chunks.push(ChunkSlot {
            chunk_id: record.chunk_id,
            document,
            bytes: record.bytes.clone(),
            code_points: record.code_points.clone(),
        });
        Ok(())
    }

    /// Replaces the entity links of `document_id`; returns false for an unknown document.
    pub fn set_entity_ids(&mut self, document_id: &str, entity_ids: &[String]) -> bool {
        match self.document_slots.get(document_id) {
            Some(&slot) => {
                self.documents[slot as usize].entity_ids = self.intern_entities(entity_ids);
                true
            }
            None => false,
        }
    }

    fn intern_entities(&mut self, entity_ids: &[String]) -> Vec<u32> {
        let mut ids: Vec<u32> = entity_ids
            .iter()
            .map(|id| self.entities.intern(id))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// Per document slot, whether `filter` lets its chunks through.
    fn allowed_documents(&self, filter: &Filter) -> Vec<bool> {
        let mut allowed = vec![false; self.documents.len()];
        let Some(project) = self.projects.get(&filter.project) else {
            return allowed;
        };
        let entities: Option<Vec<u32>> = filter
            .entity_ids
            .as_ref()
            .map(|ids| ids.iter().filter_map(|id| self.entities.get(id)).collect());
        let passes = |document: &DocumentSlot| {
            document.project == project
                && entities
                    .as_ref()
                    .is_none_or(|wanted| document.entity_ids.iter().any(|id| wanted.contains(id)))
        };
        match &filter.document_ids {
            Some(ids) => {
                for id in ids {
                    if let Some(&slot) = self.document_slots.get(id) {
                        allowed[slot as usize] = passes(&self.documents[slot as usize]);
                    }
                }
            }
            None => {
                for (slot, document) in allowed.iter_mut().zip(&self.documents) {
                    *slot = passes(document);
                }
            }
        }
        allowed
    }

    /// Removes every chunk of `document_id` (compacting the rows); returns how many.
    pub fn delete_document(&mut self, document_id: &str) -> usize {
        let Some(&document) = self.document_slots.get(document_id) else {
            return 0;
        };
        let dims = self.dimensions;
        let mut kept = 0;
        for row in 0..self.chunks.len() {
            if self.chunks[row].document == document {
                continue;
            }
            if kept != row {
                self.vectors
                    .copy_within(row * dims..(row + 1) * dims, kept * dims);
                self.codes
                    .copy_within(row * dims..(row + 1) * dims, kept * dims);
                self.scales.swap(kept, row);
                self.chunks.swap(kept, row);
            }
            kept += 1;
        }
        let removed = self.chunks.len() - kept;
        self.chunks.truncate(kept);
        self.vectors.truncate(kept * dims);
        self.codes.truncate(kept * dims);
        self.scales.truncate(kept);
        removed
    }

    /// The `limit` chunks most similar (cosine) to `query` within `filter`, best first; ties
    /// broken by chunk id. Large indexes are scanned on all available cores.
    pub fn search(
        &self,
        query: &[f32],
        filter: &Filter,
        limit: usize,
    ) -> Result<Vec<Hit>, IndexError> {
        self.check_dimensions(query)?;
        let mut query = query.to_vec();
        normalize(&mut query);
        let mut query_codes = Vec::with_capacity(self.dimensions);
        let query_scale = quantize_into(&query, &mut query_codes);
        let nonzero: Vec<(usize, i32)> = query_codes
            .iter()
            .enumerate()
            .filter(|&(_, &code)| code != 0)
            .map(|(i, &code)| (i, i32::from(code)))
            .collect();
        let quantized = QuantizedQuery {
            codes: &query_codes,
            // Short queries hash into few buckets: visiting only those beats a dense dot product.
            nonzero: (nonzero.len() * SPARSE_FRACTION <= self.dimensions).then_some(&nonzero[..]),
            scale: query_scale,
        };
        let shortlist = limit.saturating_mul(RERANK_FACTOR).max(MIN_RERANK);
        let allowed = self.allowed_documents(filter);
        if limit == 0 || !allowed.contains(&true) {
            return Ok(Vec::new());
        }
        let threads = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .min(self.chunks.len() / ROWS_PER_THREAD)
            .max(1);
        let shortlisted = if threads == 1 {
            self.scan(&quantized, &allowed, 0..self.chunks.len(), shortlist)
        } else {
            let per_thread = self.chunks.len().div_ceil(threads);
            std::thread::scope(|scope| {
                let handles: Vec<_> = (0..threads)
                    .map(|t| {
                        let rows = t * per_thread..((t + 1) * per_thread).min(self.chunks.len());
                        let (query, allowed) = (&quantized, &allowed);
                        scope.spawn(move || self.scan(query, allowed, rows, shortlist))
                    })
                    .collect();
                let mut merged = BinaryHeap::new();
                for handle in handles {
                    for candidate in handle.join().expect("vector scan thread panicked") {
                        push_bounded(&mut merged, candidate, shortlist);
                    }
                }
                merged
            })
        };
        let dims = self.dimensions;
        let mut best = BinaryHeap::with_capacity(limit + 1);
        for candidate in shortlisted {
            let row = candidate.row;
            let exact = Candidate {
                score: dot(&query, &self.vectors[row * dims..(row + 1) * dims]),
                ..candidate
            };
            push_bounded(&mut best, exact, limit);
        }
        let mut ranked = Vec::with_capacity(best.len());
        while let Some(candidate) = best.pop() {
            ranked.push(candidate);
        }
        ranked.reverse();
        Ok(ranked
            .into_iter()
            .map(|candidate| {
                let chunk = &self.chunks[candidate.row];
                Hit {
                    chunk_id: chunk.chunk_id,
                    document_id: self.documents[chunk.document as usize].id.clone(),
                    score: candidate.score,
                    bytes: chunk.bytes.clone(),
                    code_points: chunk.code_points.clone(),
                }
            })
            .collect())
    }

    /// The `limit` best rows of `rows` by quantised score.
    fn scan(
        &self,
        query: &QuantizedQuery<'_>,
        allowed: &[bool],
        rows: Range<usize>,
        limit: usize,
    ) -> BinaryHeap<Candidate> {
        let dims = self.dimensions;
        let mut best = BinaryHeap::with_capacity(limit + 1);
        for row in rows {
            let chunk = &self.chunks[row];
            if !allowed[chunk.document as usize] {
                continue;
            }
            let codes = &self.codes[row * dims..(row + 1) * dims];
            let raw = match query.nonzero {
                Some(nonzero) => nonzero
                    .iter()
                    .map(|&(i, code)| code * i32::from(codes[i]))
                    .sum(),
                None => dot_i8(query.codes, codes),
            };
            let score = raw as f32 * query.scale * self.scales[row];
            let candidate = Candidate {
                score,
                chunk_id: chunk.chunk_id,
                row,
            };
            push_bounded(&mut best, candidate, limit);
        }
        best
    }

    fn check_dimensions(&self, vector: &[f32]) -> Result<(), IndexError> {
        if vector.len() == self.dimensions {
            Ok(())
        } else {
            Err(IndexError::Dimensions {
                expected: self.dimensions,
                got: vector.len(),
            })
        }
    }
}

struct QuantizedQuery<'q> {
    codes: &'q [i8],
    /// `(dimension, code)` of the non-zero codes, when few enough to score sparsely.
    nonzero: Option<&'q [(usize, i32)]>,
    scale: f32,
}

/// Appends the symmetric 8-bit codes of `vector` to `codes` and returns the scale that maps a
/// code back to its value.
fn quantize_into(vector: &[f32], codes: &mut Vec<i8>) -> f32 {
    let max = vector.iter().fold(0.0f32, |max, x| max.max(x.abs()));
    if max == 0.0 {
        codes.extend(std::iter::repeat_n(0, vector.len()));
        return 0.0;
    }
    let scale = max / 127.0;
    codes.extend(vector.iter().map(|x| (x / scale).round() as i8));
    scale
}

/// Integer dot product; integer sums reassociate freely, so this vectorises as written.
fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| i32::from(x) * i32::from(y))
        .sum()
}

/// A scored row. Ordered so that the *worst* candidate is the heap's maximum: lower score is
/// worse, and on equal scores the higher chunk id is worse.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    score: f32,
    chunk_id: u64,
    row: usize,
}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .score
            .total_cmp(&self.score)
            .then(self.chunk_id.cmp(&other.chunk_id))
    }
}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Candidate {}

/// Keeps the `limit` best candidates in a heap whose top is the worst of them.
fn push_bounded(heap: &mut BinaryHeap<Candidate>, candidate: Candidate, limit: usize) {
    if heap.len() < limit {
        heap.push(candidate);
    } else if let Some(mut worst) = heap.peek_mut()
        && candidate < *worst
    {
        *worst = candidate;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cosine(embedder: &HashingEmbedder, a: &str, b: &str) -> f32 {
        dot(&embedder.embed_one(a), &embedder.embed_one(b))
    }

    #[test]
    fn hashing_embedder_puts_paraphrases_closer_than_unrelated_text() {
        let embedder = HashingEmbedder::default();
        let cases = [
            (
                "The invoice from Acme Corp is overdue by thirty days.",
                "Acme Corp's invoices are thirty days overdue.",
                "We hiked up the mountain and watched the sunset.",
            ),
            (
                "Alice moved to Berlin to work on the search engine.",
                "Alice works on a search engine in Berlin now.",
                "Quarterly revenue grew by ten percent in Asia.",
            ),
        ];
        for (text, paraphrase, unrelated) in cases {
            let close = cosine(&embedder, text, paraphrase);
            let far = cosine(&embedder, text, unrelated);
            assert!(close > far + 0.2, "{close} vs {far} for {text:?}");
        }
    }

    #[test]
    fn hashing_embedder_is_deterministic_and_unit_length() {
        let embedder = HashingEmbedder::new(64);
        let a = embedder.embed_one("Grüße aus München, 東京");
        assert_eq!(a, embedder.embed_one("Grüße aus München, 東京"));
        assert_eq!(a.len(), 64);
        assert!((dot(&a, &a) - 1.0).abs() < 1e-5);
        assert!(embedder.embed_one("").iter().all(|&x| x == 0.0));
    }

    fn index_of(texts: &[(u64, &str, &str, &[String])]) -> (HashingEmbedder, VectorIndex) {
        let embedder = HashingEmbedder::default();
        let mut index = VectorIndex::new(embedder.dimensions());
        for &(chunk_id, document_id, project, entity_ids) in texts {
            let record = VectorRecord {
                chunk_id,
                document_id,
                project,
                entity_ids,
                bytes: 0..10,
                code_points: 0..10,
            };
            let text = format!(
                "{document_id} {}",
                ["alpha beta", "gamma delta"][chunk_id as usize % 2]
            );
            index.add(&record, &embedder.embed_one(&text)).unwrap();
        }
        (embedder, index)
    }

    #[test]
    fn vector_search_ranks_and_filters() {
        let acme = ["acme".to_owned()];
        let (embedder, mut index) = index_of(&[
            (1, "doc-a", "p1", &acme),
            (2, "doc-a", "p1", &acme),
            (3, "doc-b", "p1", &[]),
            (4, "doc-c", "p2", &acme),
        ]);
        // Chunk 1 is "doc-a gamma delta", 2 "doc-a alpha beta", 3 "doc-b gamma delta".
        let query = embedder.embed_one("doc-a gamma delta");
        let hits = index.search(&query, &Filter::project("p1"), 10).unwrap();
        assert_eq!(
            hits.iter().map(|h| h.chunk_id).collect::<Vec<_>>(),
            [1, 3, 2]
        );
        let linked = Filter::project("p1").with_entities(["acme"]);
        let hits = index.search(&query, &linked, 10).unwrap();
        assert_eq!(hits.iter().map(|h| h.chunk_id).collect::<Vec<_>>(), [1, 2]);
        assert!(index.set_entity_ids("doc-b", &acme));
        assert_eq!(index.search(&query, &linked, 1).unwrap()[0].chunk_id, 1);
        assert_eq!(index.search(&query, &linked, 10).unwrap().len(), 3);
        assert_eq!(index.delete_document("doc-a"), 2);
        let hits = index.search(&query, &Filter::project("p1"), 10).unwrap();
        assert_eq!(hits.iter().map(|h| h.chunk_id).collect::<Vec<_>>(), [3]);
        assert!(matches!(
            index.search(&[1.0], &linked, 1),
            Err(IndexError::Dimensions { .. })
        ));
    }

    #[test]
    fn equal_scores_break_ties_by_chunk_id() {
        let (embedder, index) =
            index_of(&[(5, "d", "p", &[]), (3, "d", "p", &[]), (1, "d", "p", &[])]);
        let query = embedder.embed_one("d gamma delta");
        let hits = index.search(&query, &Filter::project("p"), 2).unwrap();
        // Chunks 5, 3 and 1 all embed "d gamma delta": the lowest ids win the two places.
        assert_eq!(hits.iter().map(|h| h.chunk_id).collect::<Vec<_>>(), [1, 3]);
    }

    #[test]
    fn quantised_scan_returns_the_exact_top_k() {
        let embedder = HashingEmbedder::new(96);
        let mut index = VectorIndex::new(96);
        let words = [
            "ore", "vein", "mine", "shaft", "gold", "coal", "drill", "rock", "seam",
        ];
        let text = |i: usize| {
            (0..6)
                .map(|j| words[(i * 7 + j * j * 3 + i / 5) % words.len()])
                .collect::<Vec<_>>()
                .join(" ")
                + &format!(" item{}", i % 13)
        };
        let texts: Vec<String> = (0..3000).map(text).collect();
        for (i, text) in texts.iter().enumerate() {
            let record = VectorRecord {
                chunk_id: i as u64,
                document_id: "d",
                project: "p",
                entity_ids: &[],
                bytes: 0..1,
                code_points: 0..1,
            };
            index.add(&record, &embedder.embed_one(text)).unwrap();
        }
        for q in 0..10 {
            let query = embedder.embed_one(&text(q * 31 + 1));
            let mut exact: Vec<(f32, u64)> = texts
                .iter()
                .enumerate()
                .map(|(i, t)| (dot(&query, &embedder.embed_one(t)), i as u64))
                .collect();
            exact.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            let hits = index.search(&query, &Filter::project("p"), 10).unwrap();
            let found: Vec<f32> = hits.iter().map(|hit| hit.score).collect();
            let wanted: Vec<f32> = exact[..10].iter().map(|&(score, _)| score).collect();
            for (f, w) in found.iter().zip(&wanted) {
                assert!((f - w).abs() < 1e-5, "{found:?} vs {wanted:?}");
            }
        }
    }
}
