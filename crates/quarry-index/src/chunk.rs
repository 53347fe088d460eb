//! Splitting a document into retrieval chunks: paragraphs first, then sentences, then (for a
//! sentence longer than the maximum) whitespace. Every chunk is a contiguous range of the original
//! text, kept as bytes and as code points, so a hit can be cited without copying text around.

use std::ops::Range;

use quarry_core::offsets::CodePointCursor;

/// Chunk sizes in characters (code points). Paragraphs are packed together while the chunk stays
/// within `target_chars`; a single paragraph up to `max_chars` stays whole; longer ones are split
/// into sentences, and sentences longer than `max_chars` at whitespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkConfig {
    pub target_chars: usize,
    pub max_chars: usize,
}

impl Default for ChunkConfig {
    fn default() -> Self {
        ChunkConfig {
            target_chars: 800,
            max_chars: 1200,
        }
    }
}

/// One chunk of a document, as ranges into the original text (end exclusive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    pub bytes: Range<usize>,
    pub code_points: Range<usize>,
}

impl Chunk {
    /// The chunk's text, sliced from the document it was cut from.
    pub fn text<'t>(&self, document: &'t str) -> &'t str {
        &document[self.bytes.clone()]
    }
}

/// Splits `text` into chunks. Markdown ATX headings (`# Title`) always start a new chunk; blank
/// lines separate paragraphs; whitespace between chunks belongs to no chunk.
pub fn chunk_text(text: &str, config: &ChunkConfig) -> Vec<Chunk> {
    let max = config.max_chars.max(1);
    let target = config.target_chars.clamp(1, max);
    let mut units = Vec::new();
    for block in blocks(text) {
        if char_count(&text[block.range.clone()]) <= max {
            units.push(Unit {
                range: block.range,
                starts_chunk: block.heading,
            });
            continue;
        }
        for (index, sentence) in sentences(text, block.range).into_iter().enumerate() {
            for (piece_index, piece) in hard_split(text, sentence, max).into_iter().enumerate() {
                units.push(Unit {
                    range: piece,
                    starts_chunk: block.heading && index == 0 && piece_index == 0,
                });
            }
        }
    }

    let mut byte_ranges: Vec<Range<usize>> = Vec::new();
    let mut current: Option<(Range<usize>, usize)> = None;
    for unit in units {
        let unit_chars = char_count(&text[unit.range.clone()]);
        current = match current {
            Some((range, chars)) if !unit.starts_chunk => {
                let joined = chars + char_count(&text[range.end..unit.range.start]) + unit_chars;
                if joined <= target {
                    Some((range.start..unit.range.end, joined))
                } else {
                    byte_ranges.push(range);
                    Some((unit.range, unit_chars))
                }
            }
            Some((range, _)) => {
                byte_ranges.push(range);
                Some((unit.range, unit_chars))
            }
            None => Some((unit.range, unit_chars)),
        };
    }
    byte_ranges.extend(current.map(|(range, _)| range));

    let mut cursor = CodePointCursor::new(text);
    byte_ranges
        .into_iter()
        .map(|bytes| {
            let start = cursor.code_point_at(bytes.start);
            let end = cursor.code_point_at(bytes.end);
            Chunk {
                bytes,
                code_points: start..end,
            }
        })
        .collect()
}

struct Block {
    range: Range<usize>,
    heading: bool,
}

struct Unit {
    range: Range<usize>,
    starts_chunk: bool,
}

/// Paragraphs (separated by blank lines) and heading lines, trimmed of surrounding whitespace.
fn blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<Range<usize>> = None;
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let range = line_start..line_start + line.len();
        line_start = range.end;
        let Some(trimmed) = trim(text, range) else {
            blocks.extend(open.take().map(|range| Block {
                range,
                heading: false,
            }));
            continue;
        };
        if is_heading(&text[trimmed.clone()], line) {
            blocks.extend(open.take().map(|range| Block {
                range,
                heading: false,
            }));
            blocks.push(Block {
                range: trimmed,
                heading: true,
            });
            continue;
        }
        open = Some(match open {
            Some(paragraph) => paragraph.start..trimmed.end,
            None => trimmed,
        });
    }
    blocks.extend(open.map(|range| Block {
        range,
        heading: false,
    }));
    blocks
}

/// An ATX heading: at most three spaces of indentation, one to six `#`, then a space or the end.
fn is_heading(trimmed: &str, line: &str) -> bool {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let hashes = trimmed.bytes().take_while(|&b| b == b'#').count();
    indent <= 3
        && (1..=6).contains(&hashes)
        && trimmed[hashes..]
            .chars()
            .next()
            .is_none_or(char::is_whitespace)
}

/// Words after which a period never ends a sentence.
const TITLES: &[&str] = &[
    "mr", "mrs", "ms", "dr", "prof", "st", "sr", "jr", "mt", "rev", "gen", "col", "capt", "lt",
    "sgt", "hon", "e.g", "i.e", "vs", "cf", "approx", "ca", "al", "resp", "dept", "est",
];

/// Words after which a period does not end a sentence when a number follows (`No. 5`, `Fig. 2`).
const NUMBERED: &[&str] = &[
    "no", "nos", "fig", "figs", "vol", "vols", "p", "pp", "art", "sec", "ch", "eq", "ref",
];

/// Sentence ranges inside `block`, trimmed. Latin `.`/`!`/`?` end a sentence only before
/// whitespace (so decimals like `3.14` and `e.g.` inside a token never split), and a period after
/// a known abbreviation, after initials (`U.S.`, `J.`) or before a lowercase word does not end one.
/// CJK full stops end a sentence where they stand.
fn sentences(text: &str, block: Range<usize>) -> Vec<Range<usize>> {
    let slice = &text[block.clone()];
    let mut result = Vec::new();
    let mut start = 0;
    let mut chars = slice.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let cjk = matches!(c, '。' | '！' | '？');
        if !cjk && !matches!(c, '.' | '!' | '?') {
            continue;
        }
        let mut end = at + c.len_utf8();
        while let Some(&(next_at, next)) = chars.peek() {
            if matches!(
                next,
                '.' | '!' | '?' | '"' | '\'' | ')' | ']' | '”' | '’' | '»' | '」'
            ) {
                end = next_at + next.len_utf8();
                chars.next();
            } else {
                break;
            }
        }
        if !cjk {
            let followed_by_space = slice[end..].chars().next().is_some_and(char::is_whitespace);
            if !followed_by_space {
                continue;
            }
            let next_word = slice[end..].trim_start().chars().next();
            if c == '.' && !period_ends_sentence(&slice[start..at], next_word) {
                continue;
            }
        }
        result.extend(trim(text, block.start + start..block.start + end));
        start = end;
    }
    result.extend(trim(text, block.start + start..block.end));
    result
}

/// Whether a period right after `before` (the sentence so far) ends the sentence, given the first
/// character of the following word.
fn period_ends_sentence(before: &str, next: Option<char>) -> bool {
    let Some(next) = next else { return true };
    if next.is_lowercase() {
        return false;
    }
    let word_start = before.rfind(char::is_whitespace).map_or(0, |i| {
        i + before[i..].chars().next().map_or(1, char::len_utf8)
    });
    let word = before[word_start..]
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    if word.is_empty() {
        return true;
    }
    if TITLES.contains(&word.as_str()) {
        return false;
    }
    if NUMBERED.contains(&word.as_str()) && next.is_ascii_digit() {
        return false;
    }
    // Initials: "U.S", "J", "a.m" — every dot-separated part is a single letter.
    let initials = word
        .split('.')
        .all(|part| part.chars().count() == 1 && part.chars().all(char::is_alphabetic));
    !initials
}

/// Splits a range longer than `max` characters at the last whitespace that keeps each piece within
/// `max`, or at exactly `max` characters when there is none. Never splits inside a code point.
fn hard_split(text: &str, range: Range<usize>, max: usize) -> Vec<Range<usize>> {
    let mut pieces = Vec::new();
    let mut start = range.start;
    while start < range.end {
        let rest = text[start..range.end].trim_start();
        start = range.end - rest.len();
        let Some((cut, _)) = rest.char_indices().nth(max) else {
            pieces.extend(trim(text, start..range.end));
            break;
        };
        let window = &rest[..cut];
        // Prefer whitespace in the second half of the window, so pieces stay reasonably large.
        let half = window.char_indices().nth(max / 2).map_or(0, |(i, _)| i);
        let split = window[half..]
            .rfind(char::is_whitespace)
            .map_or(cut, |i| half + i);
        let split = if split == 0 { cut } else { split };
        pieces.extend(trim(text, start..start + split));
        start += split;
    }
    pieces
}

/// `range` without leading and trailing whitespace, or `None` when nothing else is left.
fn trim(text: &str, range: Range<usize>) -> Option<Range<usize>> {
    let slice = &text[range.clone()];
    let trimmed_start = slice.trim_start();
    if trimmed_start.is_empty() {
        return None;
    }
    let start = range.start + (slice.len() - trimmed_start.len());
    let end = start + trimmed_start.trim_end().len();
    Some(start..end)
}

fn char_count(text: &str) -> usize {
    text.chars().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts<'t>(text: &'t str, chunks: &[Chunk]) -> Vec<&'t str> {
        chunks.iter().map(|chunk| chunk.text(text)).collect()
    }

    fn sentence_texts(text: &str) -> Vec<&str> {
        sentences(text, 0..text.len())
            .into_iter()
            .map(|range| &text[range])
            .collect()
    }

    #[test]
    fn sentences_respect_abbreviations_and_decimals() {
        let text = "Dr. Smith paid 3.14 dollars, e.g. for tea. The U.S. Army agreed! \
                    See Fig. 2 for details. Is it done? Yes.";
        assert_eq!(
            sentence_texts(text),
            [
                "Dr. Smith paid 3.14 dollars, e.g. for tea.",
                "The U.S. Army agreed!",
                "See Fig. 2 for details.",
                "Is it done?",
                "Yes.",
            ]
        );
    }

    #[test]
    fn sentences_split_cjk_full_stops() {
        assert_eq!(
            sentence_texts("東京に行きます。明日は雨です！ OK."),
            ["東京に行きます。", "明日は雨です！", "OK."]
        );
    }

    #[test]
    fn paragraphs_pack_up_to_the_target() {
        let text = "First paragraph.\n\nSecond one.\n\n\nThird paragraph is longer than the rest.";
        let config = ChunkConfig {
            target_chars: 35,
            max_chars: 60,
        };
        assert_eq!(
            texts(text, &chunk_text(text, &config)),
            [
                "First paragraph.\n\nSecond one.",
                "Third paragraph is longer than the rest."
            ]
        );
    }

    #[test]
    fn headings_start_a_chunk() {
        let text = "Intro text.\n# Title\nBody under the title.\n\n## Next\nMore.";
        let chunks = chunk_text(text, &ChunkConfig::default());
        assert_eq!(
            texts(text, &chunks),
            [
                "Intro text.",
                "# Title\nBody under the title.",
                "## Next\nMore."
            ]
        );
    }

    #[test]
    fn long_paragraphs_split_on_sentences_then_whitespace() {
        // A lowercase word after "here." keeps it in the sentence; hard splits take over.
        let text = "One short sentence. Another short sentence here. \
                    averyveryverylongwordthatcannotbesplitonwhitespaceatall end.";
        let config = ChunkConfig {
            target_chars: 30,
            max_chars: 40,
        };
        let chunks = chunk_text(text, &config);
        assert_eq!(
            texts(text, &chunks),
            [
                "One short sentence.",
                "Another short sentence here.",
                "averyveryverylongwordthatcannotbespliton",
                "whitespaceatall end.",
            ]
        );
        for chunk in &chunks {
            assert!(chunk.text(text).chars().count() <= 40, "{chunk:?}");
        }
    }

    #[test]
    fn offsets_are_bytes_and_code_points_on_multibyte_text() {
        let text = "Café ☕ au lait coûte 3,50 €. Très bon!\n\n東京の天気は晴れです。大阪も晴れ。\n\n\
                    # Überschrift\nGrüße aus München. Das Wetter ist schön 🌞.";
        let config = ChunkConfig {
            target_chars: 20,
            max_chars: 25,
        };
        let chunks = chunk_text(text, &config);
        assert!(chunks.len() > 3);
        let chars: Vec<char> = text.chars().collect();
        for chunk in &chunks {
            let by_code_points: String = chars[chunk.code_points.clone()].iter().collect();
            assert_eq!(by_code_points, chunk.text(text));
            assert!(chunk.text(text).chars().count() <= 25, "{chunk:?}");
        }
        for pair in chunks.windows(2) {
            assert!(pair[0].bytes.end <= pair[1].bytes.start);
        }
    }

    #[test]
    fn never_splits_inside_a_code_point() {
        let text = "🌞".repeat(50);
        let config = ChunkConfig {
            target_chars: 7,
            max_chars: 7,
        };
        let chunks = chunk_text(&text, &config);
        assert_eq!(chunks.len(), 8);
        assert_eq!(chunks[0].code_points, 0..7);
        assert_eq!(chunks[0].bytes, 0..28);
    }

    #[test]
    fn empty_and_blank_text_has_no_chunks() {
        assert!(chunk_text("", &ChunkConfig::default()).is_empty());
        assert!(chunk_text(" \n\n\t ", &ChunkConfig::default()).is_empty());
    }
}
