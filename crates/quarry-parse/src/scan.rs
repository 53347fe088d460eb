//! Character classes shared by the repairing parser and the candidate finder.

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
