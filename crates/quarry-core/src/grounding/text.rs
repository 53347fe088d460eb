//! The source index the aligner searches: normalised word tokens with their original byte
//! offsets, an inverted index from token to positions, and a byte → code-point table.
//!
//! A token is a maximal run of letters, digits and combining marks, except that each character
//! of a script written without spaces (Han, kana, Thai, …) is a token of its own, so text with no
//! spaces still has word-sized units to align. Punctuation and whitespace separate tokens and are
//! otherwise ignored. Tokens are normalised by folding full-width ASCII and lower-casing (full
//! Unicode lower-case mapping), so `ÉCOLE` and `école` are the same token.

use std::cell::OnceCell;
use std::collections::HashMap;

/// One word token of the source, by byte offsets into the original text.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Token {
    pub byte_start: usize,
    pub byte_end: usize,
    /// Interned id of the normalised token text.
    pub id: u32,
}

/// Whether `c` belongs to a script written without spaces between words; each such character is
/// a token by itself.
pub(crate) fn is_unspaced_script(c: char) -> bool {
    matches!(u32::from(c),
        0x0E00..=0x0EFF       // Thai, Lao
        | 0x1000..=0x109F     // Myanmar
        | 0x1780..=0x17FF     // Khmer
        | 0x2E80..=0x2FDF     // CJK radicals
        | 0x3005..=0x3007     // 々 〆 〇
        | 0x3040..=0x30FF     // Hiragana, Katakana
        | 0x31F0..=0x31FF     // Katakana extensions
        | 0x3400..=0x4DBF     // CJK extension A
        | 0x4E00..=0x9FFF     // CJK unified ideographs
        | 0xF900..=0xFAFF     // CJK compatibility ideographs
        | 0xFF66..=0xFF9F     // half-width Katakana
        | 0x20000..=0x2FA1F   // CJK extensions B–F, compatibility supplement
    )
}

fn is_combining_mark(c: char) -> bool {
    matches!(u32::from(c),
        0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F)
}

/// Whether `c` is part of a word (joins its neighbours into one token).
pub(crate) fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || is_combining_mark(c)
}

/// Whether `c` continues a multi-character token (a word character outside unspaced scripts).
fn joins(c: char) -> bool {
    is_word_char(c) && !is_unspaced_script(c)
}

/// Appends the normalised form of `c` to `out`.
pub(crate) fn push_folded(out: &mut String, c: char) {
    let c = match u32::from(c) {
        // Full-width ASCII variants (Ａ, １, …) fold to ASCII.
        code @ 0xFF01..=0xFF5E => char::from_u32(code - 0xFEE0).unwrap_or(c),
        _ => c,
    };
    if c.is_lowercase() || !c.is_alphabetic() {
        out.push(c);
    } else {
        out.extend(c.to_lowercase());
    }
}

/// Whether byte offset `at` of `text` is a word boundary: the characters on either side do not
/// both belong to one multi-character token.
pub(crate) fn is_boundary(text: &str, at: usize) -> bool {
    let before = text[..at].chars().next_back();
    let after = text[at..].chars().next();
    match (before, after) {
        (Some(b), Some(a)) => !(joins(b) && joins(a)),
        _ => true,
    }
}

/// Calls `each(byte_start, byte_end, normalised)` for every token of `text`, in order.
pub(crate) fn for_each_token(text: &str, mut each: impl FnMut(usize, usize, &str)) {
    let mut buffer = String::new();
    let mut start: Option<usize> = None;
    for (at, c) in text.char_indices() {
        if joins(c) {
            if start.is_none() {
                start = Some(at);
                buffer.clear();
            }
            push_folded(&mut buffer, c);
            continue;
        }
        if let Some(s) = start.take() {
            each(s, at, &buffer);
        }
        if is_word_char(c) {
            buffer.clear();
            push_folded(&mut buffer, c);
            each(at, at + c.len_utf8(), &buffer);
        }
    }
    if let Some(s) = start {
        each(s, text.len(), &buffer);
    }
}

/// The normalised tokens of a short text (an extraction), as owned strings.
pub(crate) fn normalized_tokens(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    for_each_token(text, |_, _, token| tokens.push(token.to_owned()));
    tokens
}

/// Maps byte offsets to code-point offsets in O(BLOCK) per query with n / BLOCK memory.
struct CodePointTable {
    /// `before_block[k]` = number of characters starting before byte `k * BLOCK`.
    before_block: Vec<usize>,
}

const BLOCK: usize = 1024;

fn char_starts(bytes: &[u8]) -> usize {
    // Every char has exactly one byte that is not a continuation byte (0b10xx_xxxx).
    bytes.iter().filter(|&&b| (b as i8) >= -0x40).count()
}

impl CodePointTable {
    fn new(text: &str) -> Self {
        let mut before_block = Vec::with_capacity(text.len() / BLOCK + 1);
        let mut count = 0;
        for chunk in text.as_bytes().chunks(BLOCK) {
            before_block.push(count);
            count += char_starts(chunk);
        }
        before_block.push(count);
        CodePointTable { before_block }
    }

    fn code_point_at(&self, text: &str, byte: usize) -> usize {
        let block = byte / BLOCK;
        self.before_block[block] + char_starts(&text.as_bytes()[block * BLOCK..byte])
    }
}

/// Everything the aligner needs to know about one source text, built once per source.
pub(crate) struct SourceIndex<'s> {
    pub text: &'s str,
    pub tokens: Vec<Token>,
    /// Normalised token texts by id.
    pub vocabulary: Vec<String>,
    ids: HashMap<String, u32>,
    /// Token positions (indices into `tokens`) by token id, ascending.
    pub positions: Vec<Vec<u32>>,
    code_points: CodePointTable,
    compact: OnceCell<Compact>,
}

/// The source's normalised tokens concatenated without separators, for matching text whose
/// spacing or punctuation differs inside words (`1990 s` / `1990s`, `Napro-syn` / `Naprosyn`).
pub(crate) struct Compact {
    pub text: String,
    /// Byte offset in `text` where each token starts.
    pub token_starts: Vec<usize>,
}

impl<'s> SourceIndex<'s> {
    pub fn new(text: &'s str) -> Self {
        let mut ids: HashMap<String, u32> = HashMap::new();
        let mut vocabulary: Vec<String> = Vec::new();
        let mut tokens = Vec::new();
        for_each_token(text, |byte_start, byte_end, normalized| {
            let id = match ids.get(normalized) {
                Some(&id) => id,
                None => {
                    let id = vocabulary.len() as u32;
                    vocabulary.push(normalized.to_owned());
                    ids.insert(normalized.to_owned(), id);
                    id
                }
            };
            tokens.push(Token {
                byte_start,
                byte_end,
                id,
            });
        });
        let mut positions = vec![Vec::new(); vocabulary.len()];
        for (index, token) in tokens.iter().enumerate() {
            positions[token.id as usize].push(index as u32);
        }
        SourceIndex {
            text,
            tokens,
            vocabulary,
            ids,
            positions,
            code_points: CodePointTable::new(text),
            compact: OnceCell::new(),
        }
    }

    /// The id of a normalised token, if the source contains it.
    pub fn id_of(&self, normalized: &str) -> Option<u32> {
        self.ids.get(normalized).copied()
    }

    pub fn code_point_at(&self, byte: usize) -> usize {
        self.code_points.code_point_at(self.text, byte)
    }

    pub fn compact(&self) -> &Compact {
        self.compact.get_or_init(|| {
            let mut text = String::new();
            let mut token_starts = Vec::with_capacity(self.tokens.len());
            for token in &self.tokens {
                token_starts.push(text.len());
                text.push_str(&self.vocabulary[token.id as usize]);
            }
            Compact { text, token_starts }
        })
    }
}

impl Compact {
    /// The token whose compact text starts exactly at `at`.
    pub fn token_starting_at(&self, at: usize) -> Option<usize> {
        self.token_starts.binary_search(&at).ok()
    }

    /// The token whose compact text ends exactly at `at`.
    pub fn token_ending_at(&self, at: usize) -> Option<usize> {
        if at == self.text.len() {
            return self.token_starts.len().checked_sub(1);
        }
        self.token_starts.binary_search(&at).ok()?.checked_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenizes_words_and_unspaced_characters() {
        let mut seen = Vec::new();
        for_each_token("Type-2 ÉCOLE 東京に", |s, e, t| {
            seen.push((s, e, t.to_owned()))
        });
        let texts: Vec<&str> = seen.iter().map(|(_, _, t)| t.as_str()).collect();
        assert_eq!(texts, ["type", "2", "école", "東", "京", "に"]);
        assert_eq!((seen[3].0, seen[3].1), (14, 17));
    }

    #[test]
    fn code_points_across_blocks() {
        let text = "é".repeat(3000);
        let table = CodePointTable::new(&text);
        assert_eq!(table.code_point_at(&text, 0), 0);
        assert_eq!(table.code_point_at(&text, 2048), 1024);
        assert_eq!(table.code_point_at(&text, text.len()), 3000);
    }
}
