//! langextract's word alignment, reproduced for [`super::AlignOrder::Langextract`]: the source
//! and all extractions are tokenized (letter runs, digit runs, symbol runs and slash
//! abbreviations such as `w/o`, lower-cased; whitespace and `_` are no tokens), the extractions
//! are joined with a delimiter token that matches nothing, and Python `difflib`'s
//! `SequenceMatcher(autojunk=False)` matching blocks are computed between the two sequences.
//! A block that starts at an extraction's first token grounds it: `match_exact` when it covers
//! every token, `match_lesser` (a leading part) otherwise, if lesser matches are accepted.
//! Blocks are found longest first and never cross, so alignment is monotonic and each source
//! token grounds at most one extraction. This mirrors `WordAligner.align_extractions` in
//! langextract's `resolver.py` (Apache-2.0); extractions left over go to the fuzzy stage.

use std::collections::HashMap;
use std::ops::Range;

/// A token: its lower-cased text and byte range in the text it came from.
struct Token {
    text: String,
    range: Range<usize>,
}

#[derive(Clone, Copy, PartialEq)]
enum Class {
    Letters,
    Digits,
    Symbols,
    Skip,
}

fn class_of(c: char) -> Class {
    if c.is_whitespace() || c == '_' {
        Class::Skip
    } else if c.is_numeric() {
        Class::Digits
    } else if c.is_alphanumeric() {
        Class::Letters
    } else {
        Class::Symbols
    }
}

/// End of a slash abbreviation (`[A-Za-z0-9]+(/[A-Za-z0-9]+)+`) starting at `start`, if any.
fn slash_abbreviation_end(bytes: &[u8], start: usize) -> Option<usize> {
    let run = |from: usize| {
        bytes[from..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric())
            .count()
    };
    let mut end = start + run(start);
    if end == start {
        return None;
    }
    let mut parts = 1;
    while bytes.get(end) == Some(&b'/') && run(end + 1) > 0 {
        end += 1 + run(end + 1);
        parts += 1;
    }
    (parts > 1).then_some(end)
}

fn tokenize(text: &str) -> Vec<Token> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        let class = class_of(c);
        if class == Class::Skip {
            continue;
        }
        let mut end = start + c.len_utf8();
        if let Some(abbreviation_end) = slash_abbreviation_end(bytes, start) {
            end = abbreviation_end;
            while chars.peek().is_some_and(|&(i, _)| i < end) {
                chars.next();
            }
        } else {
            while let Some(&(i, next)) = chars.peek() {
                if class_of(next) != class {
                    break;
                }
                end = i + next.len_utf8();
                chars.next();
            }
        }
        tokens.push(Token {
            text: text[start..end].to_lowercase(),
            range: start..end,
        });
    }
    tokens
}

/// A matching block: `a[i..i + size] == b[j..j + size]`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Block {
    i: usize,
    j: usize,
    size: usize,
}

/// `difflib.SequenceMatcher(autojunk=False).get_matching_blocks()` over token ids.
fn matching_blocks(a: &[u32], b: &[u32]) -> Vec<Block> {
    let mut b2j: HashMap<u32, Vec<usize>> = HashMap::new();
    for (j, &token) in b.iter().enumerate() {
        b2j.entry(token).or_default().push(j);
    }
    let longest = |alo: usize, ahi: usize, blo: usize, bhi: usize| {
        let mut best = Block {
            i: alo,
            j: blo,
            size: 0,
        };
        let mut j2len: HashMap<usize, usize> = HashMap::new();
        for (i, token) in a.iter().enumerate().take(ahi).skip(alo) {
            let mut next: HashMap<usize, usize> = HashMap::new();
            for &j in b2j.get(token).map_or(&[][..], Vec::as_slice) {
                if j < blo {
                    continue;
                }
                if j >= bhi {
                    break;
                }
                let k = j.checked_sub(1).and_then(|p| j2len.get(&p)).unwrap_or(&0) + 1;
                next.insert(j, k);
                if k > best.size {
                    best = Block {
                        i: i + 1 - k,
                        j: j + 1 - k,
                        size: k,
                    };
                }
            }
            j2len = next;
        }
        best
    };
    let mut queue = vec![(0, a.len(), 0, b.len())];
    let mut blocks = Vec::new();
    while let Some((alo, ahi, blo, bhi)) = queue.pop() {
        let block = longest(alo, ahi, blo, bhi);
        if block.size == 0 {
            continue;
        }
        blocks.push(block);
        if alo < block.i && blo < block.j {
            queue.push((alo, block.i, blo, block.j));
        }
        if block.i + block.size < ahi && block.j + block.size < bhi {
            queue.push((block.i + block.size, ahi, block.j + block.size, bhi));
        }
    }
    blocks.sort();
    let mut collapsed: Vec<Block> = Vec::with_capacity(blocks.len());
    for block in blocks {
        match collapsed.last_mut() {
            Some(last) if last.i + last.size == block.i && last.j + last.size == block.j => {
                last.size += block.size;
            }
            _ => collapsed.push(block),
        }
    }
    collapsed
}

/// How one extraction fared in the block pass.
pub(crate) enum BlockMatch {
    /// The extraction has no tokens.
    Empty,
    /// Every token matched: the byte span in the source.
    Exact(Range<usize>),
    /// A leading part matched: the span, and the share of the extraction's tokens it covers.
    Lesser(Range<usize>, f32),
    /// No block starts at the extraction's first token.
    Unmatched,
}

/// The block pass over all `extractions` at once.
pub(crate) fn align_blocks(source: &str, extractions: &[&str]) -> Vec<BlockMatch> {
    let source_tokens = tokenize(source);
    let mut ids: HashMap<String, u32> = HashMap::new();
    let mut id_of = |text: &str| {
        let next = u32::try_from(ids.len()).unwrap_or(u32::MAX);
        *ids.entry(text.to_owned()).or_insert(next)
    };
    let a: Vec<u32> = source_tokens.iter().map(|t| id_of(&t.text)).collect();
    const DELIMITER: u32 = u32::MAX;
    let mut b = Vec::new();
    // Extraction index by the position of its first token in `b`, with its token count.
    let mut starts: HashMap<usize, (usize, usize)> = HashMap::new();
    let mut results: Vec<BlockMatch> = Vec::with_capacity(extractions.len());
    for (index, extraction) in extractions.iter().enumerate() {
        let tokens = tokenize(extraction);
        if tokens.is_empty() {
            results.push(BlockMatch::Empty);
            continue;
        }
        results.push(BlockMatch::Unmatched);
        if !b.is_empty() {
            b.push(DELIMITER);
        }
        starts.insert(b.len(), (index, tokens.len()));
        b.extend(tokens.iter().map(|t| id_of(&t.text)));
    }
    for block in matching_blocks(&a, &b) {
        let Some(&(index, count)) = starts.get(&block.j) else {
            continue;
        };
        let span =
            source_tokens[block.i].range.start..source_tokens[block.i + block.size - 1].range.end;
        results[index] = if block.size >= count {
            BlockMatch::Exact(span)
        } else {
            BlockMatch::Lesser(span, block.size as f32 / count as f32)
        };
    }
    results
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str) -> Vec<String> {
        tokenize(text).into_iter().map(|t| t.text).collect()
    }

    #[test]
    fn tokens_are_letter_digit_and_symbol_runs() {
        assert_eq!(
            texts("Ibuprofen 600mg, w/o food..."),
            ["ibuprofen", "600", "mg", ",", "w/o", "food", "..."]
        );
        assert_eq!(texts("Napro-syn"), ["napro", "-", "syn"]);
    }

    #[test]
    fn blocks_match_difflib() {
        // difflib.SequenceMatcher(None, "abxcd", "abcd").get_matching_blocks()
        let a: Vec<u32> = "abxcd".bytes().map(u32::from).collect();
        let b: Vec<u32> = "abcd".bytes().map(u32::from).collect();
        let blocks: Vec<(usize, usize, usize)> = matching_blocks(&a, &b)
            .into_iter()
            .map(|x| (x.i, x.j, x.size))
            .collect();
        assert_eq!(blocks, [(0, 0, 2), (3, 2, 2)]);
    }

    #[test]
    fn overlapping_extractions_ground_once() {
        let source = "Patient has high blood pressure.";
        let results = align_blocks(source, &["high blood", "blood pressure"]);
        assert!(matches!(&results[0], BlockMatch::Exact(r) if &source[r.clone()] == "high blood"));
        assert!(matches!(results[1], BlockMatch::Unmatched));
    }

    #[test]
    fn leading_part_is_a_lesser_match() {
        let source = "Patient takes Naprosyn daily.";
        let results = align_blocks(source, &["naprosyn 500mg"]);
        assert!(
            matches!(&results[0], BlockMatch::Lesser(r, _) if &source[r.clone()] == "Naprosyn")
        );
    }
}
