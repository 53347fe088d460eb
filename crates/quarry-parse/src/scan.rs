//! Scanning shared by the repairing parser and the candidate finder: character classes and
//! fenced code blocks.

use std::ops::Range;

/// Whitespace, including the invisible and typographic spaces models and editors paste in.
pub fn is_space(c: char) -> bool {
    c.is_whitespace() || matches!(c, '\u{200B}' | '\u{FEFF}' | '\u{2060}')
}

/// Any character a model may use to open or close a string.
pub fn is_quote(c: char) -> bool {
    matches!(
        c,
        '"' | '\'' | '`' | '´' | '“' | '”' | '‘' | '’' | '„' | '«' | '»'
    )
}

/// Whether `close` may end a string opened with `open`.
///
/// Straight quotes pair only with themselves: a `'` inside a `"…"` string is an apostrophe.
/// Typographic quotes pair loosely, because models mix “ with " and ` with ´.
pub fn closes(open: char, close: char) -> bool {
    match open {
        '"' => close == '"',
        '\'' => close == '\'',
        '“' | '”' | '„' | '«' | '»' => matches!(close, '”' | '“' | '"' | '»' | '«'),
        '‘' | '’' | '`' | '´' => matches!(close, '’' | '‘' | '`' | '´' | '\''),
        _ => false,
    }
}

/// Characters that may appear in a bare identifier (unquoted key, keyword, function name).
pub fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// Whether `chars[i..]` starts with `pat`.
pub fn starts_with(chars: &[char], i: usize, pat: &str) -> bool {
    (i..)
        .zip(pat.chars())
        .all(|(j, p)| chars.get(j) == Some(&p))
}

/// A fenced code block (```lang … ```); `content` is the byte range between the fence lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fence {
    pub lang: String,
    pub content: Range<usize>,
}

/// Every fenced code block in `raw`, in order; an unclosed last fence runs to the end.
pub fn fenced_blocks(raw: &str) -> Vec<Fence> {
    let mut fences = Vec::new();
    let mut from = 0;
    while let Some(open) = raw[from..].find("```").map(|i| i + from) {
        let mut lang_start = open;
        while raw[lang_start..].starts_with('`') {
            lang_start += 1;
        }
        let lang_end = raw[lang_start..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .map_or(raw.len(), |i| i + lang_start);
        let lang = raw[lang_start..lang_end].to_ascii_lowercase();
        let content_start = lang_end;
        match raw[content_start..].find("```").map(|i| i + content_start) {
            Some(close) => {
                fences.push(Fence {
                    lang,
                    content: content_start..close,
                });
                from = close;
                while raw[from..].starts_with('`') {
                    from += 1;
                }
            }
            None => {
                fences.push(Fence {
                    lang,
                    content: content_start..raw.len(),
                });
                break;
            }
        }
    }
    fences
}
