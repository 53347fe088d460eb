//! One forward pass that cuts text into number, word and punctuation tokens with byte spans.
//!
//! Whitespace is not a token; each token records the kind of gap before it instead, so the
//! grammar can tell `3pm` from `3 pm` and never joins expressions across a line break.

use super::lexicon::{Lex, MAX_WORD, classify, classify_ascii};

/// The whitespace between a token and the one before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Gap {
    None,
    Space,
    /// A line break, or the start of the text.
    Break,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A run of ASCII digits; `ordinal` when a glued `st|nd|rd|th` follows (kept in the span).
    Num {
        value: u32,
        digits: u8,
        ordinal: bool,
    },
    /// A run of letters; `capital` when its first letter is upper case.
    Word { lex: Lex, capital: bool },
    /// One ASCII punctuation byte, or 0 for any other symbol.
    Punct(u8),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token {
    pub start: usize,
    pub end: usize,
    pub gap: Gap,
    pub kind: Kind,
}

/// Appends the tokens of `text` to `out`.
#[cfg(test)]
pub(crate) fn tokenize(text: &str, out: &mut Vec<Token>) {
    tokenize_window(text, 0, Gap::Break, usize::MAX, out);
}

/// Appends at most `limit` tokens of `text` starting at byte `from` (a token start, whose gap
/// is `gap`) to `out`; returns the byte where tokenizing stopped.
pub(crate) fn tokenize_window(
    text: &str,
    from: usize,
    gap: Gap,
    limit: usize,
    out: &mut Vec<Token>,
) -> usize {
    let bytes = text.as_bytes();
    let mut i = from;
    let mut gap = gap;
    let stop = out.len().saturating_add(limit);
    while i < bytes.len() && out.len() < stop {
        let b = bytes[i];
        let start = i;
        if b.is_ascii_digit() {
            let mut value: u32 = 0;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                value = value
                    .saturating_mul(10)
                    .saturating_add(u32::from(bytes[i] - b'0'));
                i += 1;
            }
            let digits = u8::try_from(i - start).unwrap_or(u8::MAX);
            let ordinal = has_ordinal_suffix(bytes, i);
            if ordinal {
                i += 2;
            }
            out.push(Token {
                start,
                end: i,
                gap,
                kind: Kind::Num {
                    value,
                    digits,
                    ordinal,
                },
            });
            gap = Gap::None;
        } else if b.is_ascii_alphabetic() {
            i += 1;
            while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
                i += 1;
            }
            if i < bytes.len() && bytes[i] >= 0x80 {
                i = end_of_word(text, i);
                push_word(text, start, i, gap, out);
            } else {
                // Words longer than the buffer are never known words.
                let len = i - start;
                let lex = if len <= MAX_WORD {
                    let mut lower = [0u8; MAX_WORD];
                    for (slot, &byte) in lower.iter_mut().zip(&bytes[start..i]) {
                        *slot = byte | 0x20;
                    }
                    classify_ascii(&lower[..len])
                } else {
                    Lex::Other
                };
                out.push(Token {
                    start,
                    end: i,
                    gap,
                    kind: Kind::Word {
                        lex,
                        capital: b.is_ascii_uppercase(),
                    },
                });
            }
            gap = Gap::None;
        } else if b == b' ' {
            // Runs of spaces in one step: the commonest byte after letters.
            i += 1;
            while i < bytes.len() && bytes[i] == b' ' {
                i += 1;
            }
            if gap == Gap::None {
                gap = Gap::Space;
            }
        } else if b < 0x80 {
            i += 1;
            match b {
                b'\n' | b'\r' => gap = Gap::Break,
                b'\t' | 0x0b | 0x0c => {
                    if gap == Gap::None {
                        gap = Gap::Space;
                    }
                }
                _ => {
                    out.push(Token {
                        start,
                        end: i,
                        gap,
                        kind: Kind::Punct(b),
                    });
                    gap = Gap::None;
                }
            }
        } else {
            let c = text[i..].chars().next().unwrap_or('\u{fffd}');
            if c.is_alphabetic() {
                i = end_of_word(text, i);
                push_word(text, start, i, gap, out);
                gap = Gap::None;
            } else {
                i += c.len_utf8();
                if c.is_whitespace() {
                    if gap == Gap::None {
                        gap = Gap::Space;
                    }
                } else {
                    out.push(Token {
                        start,
                        end: i,
                        gap,
                        kind: Kind::Punct(0),
                    });
                    gap = Gap::None;
                }
            }
        }
    }
    i
}

/// `st`, `nd`, `rd` or `th` at `i`, not followed by another letter.
fn has_ordinal_suffix(bytes: &[u8], i: usize) -> bool {
    let Some(pair) = bytes.get(i..i + 2) else {
        return false;
    };
    let pair = [pair[0].to_ascii_lowercase(), pair[1].to_ascii_lowercase()];
    matches!(&pair, b"st" | b"nd" | b"rd" | b"th")
        && !bytes.get(i + 2).is_some_and(u8::is_ascii_alphanumeric)
}

/// The end of the letter run that continues at byte `i` (which may hold non-ASCII letters or
/// combining marks).
fn end_of_word(text: &str, mut i: usize) -> usize {
    for c in text[i..].chars() {
        if c.is_alphabetic() || (!c.is_ascii() && is_mark(c)) {
            i += c.len_utf8();
        } else {
            break;
        }
    }
    i
}

/// Combining marks that Indic scripts use inside words (virama, vowel signs); `is_alphabetic`
/// already covers most of them.
fn is_mark(c: char) -> bool {
    matches!(c, '\u{0300}'..='\u{036f}' | '\u{0900}'..='\u{0dff}')
}

fn push_word(text: &str, start: usize, end: usize, gap: Gap, out: &mut Vec<Token>) {
    let word = &text[start..end];
    let capital = word.chars().next().is_some_and(char::is_uppercase);
    out.push(Token {
        start,
        end,
        gap,
        kind: Kind::Word {
            lex: classify(word),
            capital,
        },
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_numbers_words_and_ordinals() {
        let mut tokens = Vec::new();
        tokenize("Jan 15th,3pm\n2024", &mut tokens);
        let kinds: Vec<Kind> = tokens.iter().map(|t| t.kind).collect();
        assert_eq!(
            kinds,
            vec![
                Kind::Word {
                    lex: Lex::Month(1),
                    capital: true
                },
                Kind::Num {
                    value: 15,
                    digits: 2,
                    ordinal: true
                },
                Kind::Punct(b','),
                Kind::Num {
                    value: 3,
                    digits: 1,
                    ordinal: false
                },
                Kind::Word {
                    lex: Lex::Meridiem(true),
                    capital: false
                },
                Kind::Num {
                    value: 2024,
                    digits: 4,
                    ordinal: false
                },
            ]
        );
        let gaps: Vec<Gap> = tokens.iter().map(|t| t.gap).collect();
        assert_eq!(
            gaps,
            vec![
                Gap::Break,
                Gap::Space,
                Gap::None,
                Gap::None,
                Gap::None,
                Gap::Break
            ]
        );
    }
}
