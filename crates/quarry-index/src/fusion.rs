//! Reciprocal rank fusion: merges ranked hit lists by rank alone, so BM25 scores and cosine
//! similarities never need to be put on one scale.

use std::collections::HashMap;

use crate::hit::Hit;

/// The constant of Cormack et al. (2009): damps the weight of the very first ranks.
pub const RRF_K: f32 = 60.0;

/// Fuses `lists` (each best first) into one list of at most `limit` hits, scored
/// `Σ 1 / (k + rank)` with ranks from 1. Ties go to the hit with the better single best rank,
/// then to the lower chunk id, so the order is deterministic. A hit keeps the document and
/// offsets of its first appearance; its score becomes the fused score.
pub fn reciprocal_rank_fusion(lists: &[Vec<Hit>], k: f32, limit: usize) -> Vec<Hit> {
    struct Fused {
        hit: Hit,
        score: f64,
        best_rank: usize,
    }
    let mut fused: HashMap<u64, Fused> = HashMap::new();
    for list in lists {
        for (index, hit) in list.iter().enumerate() {
            let rank = index + 1;
            let contribution = 1.0 / (f64::from(k) + rank as f64);
            fused
                .entry(hit.chunk_id)
                .and_modify(|entry| {
                    entry.score += contribution;
                    entry.best_rank = entry.best_rank.min(rank);
                })
                .or_insert_with(|| Fused {
                    hit: hit.clone(),
                    score: contribution,
                    best_rank: rank,
                });
        }
    }
    let mut ranked: Vec<Fused> = fused.into_values().collect();
    ranked.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.best_rank.cmp(&b.best_rank))
            .then(a.hit.chunk_id.cmp(&b.hit.chunk_id))
    });
    ranked
        .into_iter()
        .take(limit)
        .map(|entry| Hit {
            score: entry.score as f32,
            ..entry.hit
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(ids: &[u64]) -> Vec<Hit> {
        ids.iter()
            .map(|&chunk_id| Hit {
                chunk_id,
                document_id: format!("doc-{chunk_id}"),
                score: 0.0,
                bytes: 0..1,
                code_points: 0..1,
            })
            .collect()
    }

    fn order(fused: &[Hit]) -> Vec<u64> {
        fused.iter().map(|hit| hit.chunk_id).collect()
    }

    #[test]
    fn fuses_by_reciprocal_rank() {
        // BM25 [1, 3, 2], vectors [3, 4, 1, 5]:
        // 3 = 1/62 + 1/61 ≈ 0.03252, 1 = 1/61 + 1/63 ≈ 0.03227, 4 = 1/62, 2 = 1/63, 5 = 1/64.
        let fused = reciprocal_rank_fusion(&[hits(&[1, 3, 2]), hits(&[3, 4, 1, 5])], RRF_K, 10);
        assert_eq!(order(&fused), [3, 1, 4, 2, 5]);
        assert!((fused[0].score - (1.0 / 62.0 + 1.0 / 61.0)).abs() < 1e-6);
        assert_eq!(fused[0].document_id, "doc-3");
        assert_eq!(
            order(&reciprocal_rank_fusion(&[hits(&[1, 3, 2])], RRF_K, 2)),
            [1, 3]
        );
    }

    #[test]
    fn ties_go_to_the_best_single_rank_then_the_lower_chunk_id() {
        // 7 and 9 both score 1/61 + 1/62; 8 and 6 both score 1/63 with the same best rank.
        let fused = reciprocal_rank_fusion(&[hits(&[9, 7, 8]), hits(&[7, 9, 6])], RRF_K, 3);
        assert_eq!(order(&fused), [7, 9, 6]);
        assert!(reciprocal_rank_fusion(&[], RRF_K, 3).is_empty());
    }
}
