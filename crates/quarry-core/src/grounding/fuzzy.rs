//! Fuzzy token alignment: the tightest passage of source tokens that contains enough of the
//! extraction's tokens, in order.
//!
//! Tokens are compared after light stemming (a plural `-s` is dropped) and may differ by a small
//! edit distance (a typo), which earns partial credit. A passage is accepted when the weighted
//! longest common subsequence covers at least `threshold` of the extraction's tokens and the
//! matched tokens make up at least `min_density` of the passage (so scattered hits across a long
//! stretch do not count).
//!
//! Cost: one pass over the source tokens to find the ones similar to some extraction token, a
//! sliding window over those that only runs the O(window · m) dynamic programme where the window
//! could reach the threshold, and an edit-distance pass over the source vocabulary restricted to
//! similar lengths. With m extraction tokens that is O(n + V + hits · m²), linear in the source.

use std::collections::HashMap;

use super::text::SourceIndex;

/// The accepted passage: token range (inclusive end), its weight and coverage.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FuzzyHit {
    pub first_token: usize,
    pub last_token: usize,
    /// Weighted matches divided by the number of extraction tokens, in [0, 1].
    pub coverage: f32,
    density: f32,
}

pub(crate) struct FuzzyParams {
    pub threshold: f32,
    pub min_density: f32,
    /// Only passages starting at or after this byte count as "forward".
    pub cursor: usize,
    /// Passages starting before `cursor` are not considered at all.
    pub strict: bool,
}

const EPSILON: f32 = 1e-4;

/// Light plural stemming, as langextract does: `tablets` → `tablet`, but `glass` stays.
fn stem(token: &str) -> &str {
    let chars = token.chars().count();
    if chars > 3
        && token.ends_with('s')
        && !token.ends_with("ss")
        && !token.chars().any(|c| c.is_numeric())
    {
        &token[..token.len() - 1]
    } else {
        token
    }
}

/// Similarity of two different stems in (0, 1), or 0 when they are not close enough to be a
/// typo of each other. Numbers never match approximately (`2018` is not `2019`).
fn typo_similarity(a: &[char], b: &[char]) -> f32 {
    let longest = a.len().max(b.len());
    let allowed = if longest >= 8 {
        2
    } else if longest >= 5 {
        1
    } else {
        0
    };
    if allowed == 0 || a.len().abs_diff(b.len()) > allowed {
        return 0.0;
    }
    if a.iter().chain(b).any(|c| c.is_numeric()) {
        return 0.0;
    }
    match bounded_edit_distance(a, b, allowed) {
        Some(distance) => 1.0 - distance as f32 / longest as f32,
        None => 0.0,
    }
}

/// Optimal-string-alignment distance (insertions, deletions, substitutions, adjacent
/// transpositions), or `None` when it exceeds `limit`.
fn bounded_edit_distance(a: &[char], b: &[char], limit: usize) -> Option<usize> {
    let width = b.len() + 1;
    let mut rows = vec![vec![0usize; width]; 3];
    for (j, cell) in rows[1].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        let (cur, prev, prev2) = (i % 3, (i + 2) % 3, (i + 1) % 3);
        rows[cur][0] = i;
        let mut row_min = i;
        for j in 1..width {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut value = (rows[prev][j] + 1)
                .min(rows[cur][j - 1] + 1)
                .min(rows[prev][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                value = value.min(rows[prev2][j - 2] + 1);
            }
            rows[cur][j] = value;
            row_min = row_min.min(value);
        }
        if row_min > limit {
            return None;
        }
    }
    let distance = rows[a.len() % 3][b.len()];
    (distance <= limit).then_some(distance)
}

/// For every source token id that resembles some extraction token: `(extraction index, weight)`.
fn similar_tokens(
    index: &SourceIndex<'_>,
    extraction: &[String],
) -> HashMap<u32, Vec<(usize, f32)>> {
    let wanted: Vec<Vec<char>> = extraction
        .iter()
        .map(|t| stem(t).chars().collect())
        .collect();
    let mut similar: HashMap<u32, Vec<(usize, f32)>> = HashMap::new();
    for (id, token) in index.vocabulary.iter().enumerate() {
        let stemmed = stem(token);
        let length = stemmed.chars().count();
        let mut chars: Option<Vec<char>> = None;
        for (j, want) in wanted.iter().enumerate() {
            let weight = if want.len() == length && want.iter().copied().eq(stemmed.chars()) {
                1.0
            } else if want.len().abs_diff(length) <= 2 && want.len().max(length) >= 5 {
                let chars = chars.get_or_insert_with(|| stemmed.chars().collect());
                typo_similarity(want, chars)
            } else {
                0.0
            };
            if weight > 0.0 {
                similar.entry(id as u32).or_default().push((j, weight));
            }
        }
    }
    similar
}

/// The best passage for `extraction` (normalised tokens), or `None` if none passes the gates.
pub(crate) fn align_fuzzy(
    index: &SourceIndex<'_>,
    extraction: &[String],
    params: &FuzzyParams,
) -> Option<FuzzyHit> {
    let m = extraction.len();
    if m == 0 || index.tokens.is_empty() {
        return None;
    }
    let similar = similar_tokens(index, extraction);
    if similar.is_empty() {
        return None;
    }
    // Source positions holding a token similar to some extraction token.
    let hits: Vec<(usize, &[(usize, f32)])> = index
        .tokens
        .iter()
        .enumerate()
        .filter(|(_, token)| !params.strict || token.byte_start >= params.cursor)
        .filter_map(|(position, token)| {
            similar
                .get(&token.id)
                .map(|weights| (position, weights.as_slice()))
        })
        .collect();

    let needed = params.threshold * m as f32;
    let min_density = params.min_density.max(1e-3);
    // The longest passage that can still meet the density gate with every token matched.
    let window = ((m as f32 / min_density) + EPSILON).floor().max(m as f32) as usize;

    let mut covered_by = vec![0usize; m];
    let mut covered = 0usize;
    let mut right = 0usize;
    let mut best: Option<(FuzzyHit, bool)> = None;
    let mut row_prev = vec![0f32; m + 1];
    let mut row_cur = vec![0f32; m + 1];
    let mut weights_here = vec![0f32; m];

    for left in 0..hits.len() {
        let start = hits[left].0;
        while right < hits.len() && hits[right].0 < start + window {
            for &(j, _) in hits[right].1 {
                if covered_by[j] == 0 {
                    covered += 1;
                }
                covered_by[j] += 1;
            }
            right += 1;
        }
        // Each matched token weighs at most 1, so `covered` bounds what this window can reach.
        if covered as f32 + EPSILON >= needed {
            let end = (start + window).min(index.tokens.len());
            if let Some(hit) = best_from(
                start,
                end,
                &hits[left..right],
                m,
                needed,
                min_density,
                (&mut row_prev, &mut row_cur, &mut weights_here),
            ) {
                let forward = index.tokens[start].byte_start >= params.cursor;
                if best.as_ref().is_none_or(|(current, current_forward)| {
                    better(&hit, forward, current, *current_forward)
                }) {
                    best = Some((hit, forward));
                }
            }
        }
        for &(j, _) in hits[left].1 {
            covered_by[j] -= 1;
            if covered_by[j] == 0 {
                covered -= 1;
            }
        }
    }
    best.map(|(hit, _)| hit)
}

/// Higher coverage wins, then higher density, then a passage after the cursor; otherwise the
/// earlier passage (already held) stays.
fn better(candidate: &FuzzyHit, forward: bool, current: &FuzzyHit, current_forward: bool) -> bool {
    if (candidate.coverage - current.coverage).abs() > EPSILON {
        return candidate.coverage > current.coverage;
    }
    if (candidate.density - current.density).abs() > EPSILON {
        return candidate.density > current.density;
    }
    forward && !current_forward
}

/// Weighted LCS of the extraction against source tokens `start..end` (a passage that must start
/// at `start`); returns the densest passage that passes both gates, preferring more coverage.
fn best_from(
    start: usize,
    end: usize,
    hits: &[(usize, &[(usize, f32)])],
    m: usize,
    needed: f32,
    min_density: f32,
    rows: (&mut Vec<f32>, &mut Vec<f32>, &mut Vec<f32>),
) -> Option<FuzzyHit> {
    let (prev, cur, weights_here) = rows;
    prev.iter_mut().for_each(|v| *v = 0.0);
    let mut hit_index = 0;
    let mut reached = 0f32;
    let mut best: Option<FuzzyHit> = None;
    for position in start..end {
        weights_here.iter_mut().for_each(|w| *w = 0.0);
        while hit_index < hits.len() && hits[hit_index].0 < position {
            hit_index += 1;
        }
        if hit_index < hits.len() && hits[hit_index].0 == position {
            for &(j, w) in hits[hit_index].1 {
                weights_here[j] = weights_here[j].max(w);
            }
        }
        cur[0] = 0.0;
        for j in 1..=m {
            let mut value = prev[j].max(cur[j - 1]);
            if weights_here[j - 1] > 0.0 {
                value = value.max(prev[j - 1] + weights_here[j - 1]);
            }
            cur[j] = value;
        }
        std::mem::swap(prev, cur);
        let total = prev[m];
        if total > reached + EPSILON {
            reached = total;
            let length = (position - start + 1) as f32;
            let density = total / length;
            if total + EPSILON >= needed && density + EPSILON >= min_density {
                let hit = FuzzyHit {
                    first_token: start,
                    last_token: position,
                    coverage: (total / m as f32).min(1.0),
                    density,
                };
                if best.as_ref().is_none_or(|b| better(&hit, false, b, false)) {
                    best = Some(hit);
                }
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    #[test]
    fn edit_distance_counts_transpositions_once() {
        assert_eq!(
            bounded_edit_distance(&chars("naprosyn"), &chars("naprosin"), 2),
            Some(1)
        );
        assert_eq!(
            bounded_edit_distance(&chars("fever"), &chars("fveer"), 2),
            Some(1)
        );
        assert_eq!(
            bounded_edit_distance(&chars("headache"), &chars("back"), 2),
            None
        );
    }

    #[test]
    fn numbers_never_match_approximately() {
        assert_eq!(typo_similarity(&chars("20189"), &chars("20199")), 0.0);
        assert_eq!(stem("1990s"), "1990s");
        assert_eq!(stem("tablets"), "tablet");
        assert_eq!(stem("glass"), "glass");
    }
}
