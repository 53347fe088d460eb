//! Splits text into word and punctuation tokens with byte ranges, shapes and sentence starts.
//!
//! Periods stay on initials (`W.`), dotted acronyms (`U.S.`) and known abbreviations (`Dr.`,
//! `Inc.`), so those never end a sentence; a possessive `'s` is its own token so that
//! `Google's` yields the name `Google`.

use std::ops::Range;

use super::rules::ABBREVIATIONS;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// Starts with an upper-case letter and has a lower-case letter: `Smith`, `McDonald`.
    Capitalised,
    /// Two or more letters, all upper case: `NATO`, `U.S.`, `II`.
    Upper,
    /// One upper-case letter, with or without a period: `W.`, `C`.
    Initial,
    /// Starts with a lower-case letter: `from`, `eBay`.
    Lower,
    /// Starts with a digit: `1990`, `6PR`.
    Number,
    /// Anything else: punctuation, symbols, the possessive `'s`.
    Punct,
}

#[derive(Debug, Clone)]
pub(crate) struct Token<'t> {
    pub text: &'t str,
    pub range: Range<usize>,
    pub shape: Shape,
    /// The first token of a sentence, where capitalisation says nothing about names.
    pub sentence_start: bool,
}

impl Token<'_> {
    /// Starts with an upper-case letter (Capitalised, Upper or Initial).
    pub fn is_capitalised(&self) -> bool {
        matches!(
            self.shape,
            Shape::Capitalised | Shape::Upper | Shape::Initial
        )
    }

    /// The token without a trailing abbreviation period: `Dr.` → `Dr`.
    pub fn bare(&self) -> &str {
        self.text.strip_suffix('.').unwrap_or(self.text)
    }
}

pub(crate) fn tokenize(text: &str) -> Vec<Token<'_>> {
    let bytes = text.as_bytes();
    let mut tokens: Vec<Token<'_>> = Vec::new();
    let mut next_starts_sentence = true;
    let mut pos = 0;
    while pos < text.len() {
        let c = char_at(text, pos);
        if c.is_whitespace() {
            // A blank line or a line break starts a new sentence (headings, lists).
            if c == '\n' {
                next_starts_sentence = true;
            }
            pos += c.len_utf8();
            continue;
        }
        let start = pos;
        let end = if c.is_alphanumeric() {
            word_end(text, pos)
        } else if (c == '\'' || c == '’') && is_possessive_s(text, pos + c.len_utf8()) {
            pos + c.len_utf8() + 1
        } else {
            pos + c.len_utf8()
        };
        let token_text = &text[start..end];
        let shape = shape_of(token_text);
        tokens.push(Token {
            text: token_text,
            range: start..end,
            shape,
            sentence_start: next_starts_sentence,
        });
        next_starts_sentence = match token_text {
            "." | "!" | "?" | "…" => true,
            // Quotes and brackets after a sentence end keep the next word sentence-initial.
            "\"" | "'" | "“" | "”" | "(" | ")" | "[" | "]" => next_starts_sentence,
            _ => false,
        };
        if token_text == ":" && bytes.get(end) == Some(&b'\n') {
            next_starts_sentence = true;
        }
        pos = end;
    }
    tokens
}

fn char_at(text: &str, pos: usize) -> char {
    text[pos..].chars().next().unwrap_or(' ')
}

/// The end of the word starting at `start`: alphanumerics joined by inner `-`, `&`, or an
/// apostrophe that does not start a possessive `'s`, plus a period for initials, dotted
/// acronyms and known abbreviations.
fn word_end(text: &str, start: usize) -> usize {
    let mut end = start;
    let mut chars = text[start..].char_indices().peekable();
    while let Some((offset, c)) = chars.next() {
        if c.is_alphanumeric() {
            end = start + offset + c.len_utf8();
            continue;
        }
        let joiner = matches!(c, '-' | '&' | '\'' | '’');
        let next_is_alnum = chars.peek().is_some_and(|(_, n)| n.is_alphanumeric());
        let possessive =
            matches!(c, '\'' | '’') && is_possessive_s(text, start + offset + c.len_utf8());
        if joiner && next_is_alnum && !possessive {
            continue;
        }
        break;
    }
    if text[end..].starts_with('.') {
        let word = &text[start..end];
        let single_letter = word.chars().count() == 1 && word.chars().all(char::is_alphabetic);
        if single_letter {
            end += 1;
            // `U.S.`, `U.S.A.`: keep swallowing `X.` pairs.
            while let Some(rest) = text.get(end..) {
                let mut it = rest.chars();
                match (it.next(), it.next()) {
                    (Some(l), Some('.')) if l.is_alphabetic() => end += l.len_utf8() + 1,
                    _ => break,
                }
            }
        } else if ABBREVIATIONS.contains(&word) {
            end += 1;
        }
    }
    end
}

/// Whether `text[pos..]` is `s` followed by a non-alphanumeric character or the end.
fn is_possessive_s(text: &str, pos: usize) -> bool {
    let mut rest = text[pos..].chars();
    rest.next() == Some('s') && !rest.next().is_some_and(char::is_alphanumeric)
}

fn shape_of(token: &str) -> Shape {
    let first = token.chars().next().unwrap_or(' ');
    if first.is_numeric() {
        return Shape::Number;
    }
    if first.is_lowercase() {
        return Shape::Lower;
    }
    if !first.is_uppercase() {
        return Shape::Punct;
    }
    let letters = token.chars().filter(|c| c.is_alphabetic()).count();
    if letters == 1 {
        Shape::Initial
    } else if token.chars().any(char::is_lowercase) {
        Shape::Capitalised
    } else {
        Shape::Upper
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str) -> Vec<&str> {
        tokenize(text).into_iter().map(|t| t.text).collect()
    }

    #[test]
    fn keeps_periods_on_initials_acronyms_and_abbreviations() {
        assert_eq!(
            texts("Dr. James W. Hoyt left the U.S. in May."),
            [
                "Dr.", "James", "W.", "Hoyt", "left", "the", "U.S.", "in", "May", "."
            ]
        );
    }

    #[test]
    fn splits_possessive_but_not_inner_apostrophes() {
        assert_eq!(
            texts("O'Brien's Saxony-Anhalt"),
            ["O'Brien", "'s", "Saxony-Anhalt"]
        );
    }

    #[test]
    fn marks_sentence_starts_after_terminal_punctuation_only() {
        let tokens = tokenize("Mr. Smith came. The end");
        let starts: Vec<bool> = tokens.iter().map(|t| t.sentence_start).collect();
        assert_eq!(starts, [true, false, false, false, true, false]);
    }
}
