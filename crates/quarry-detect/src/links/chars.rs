//! The characters that end a link although linkify's IRI rules would keep them, and those of
//! them that may also spell a path or host.

/// Characters that end a link even though linkify's IRI rules would keep them: CJK script and
/// punctuation (CJK prose has no spaces), Unicode spaces and general punctuation like `“”…—«»`.
/// Zero-width space, non-joiner and joiner are format characters inside words (linkify-it's
/// separators are spaces, punctuation and controls only), so they stay in the link.
pub(super) fn ends_link(c: char) -> bool {
    matches!(c,
        '\u{A0}' | '\u{AB}' | '\u{BB}' | '\u{2000}'..='\u{200A}' | '\u{200E}'..='\u{206F}'
        | '\u{2E80}'..='\u{9FFF}'
        | '\u{AC00}'..='\u{D7AF}' | '\u{F900}'..='\u{FAFF}' | '\u{FE30}'..='\u{FE4F}'
        | '\u{FF00}'..='\u{FFEF}' | '\u{20000}'..='\u{2FA1F}')
}

/// Ideographs, kana and hangul: the [`ends_link`] characters that may also spell a path or host.
pub(super) fn is_cjk_letter(c: char) -> bool {
    matches!(c,
        '\u{3040}'..='\u{9FFF}' | '\u{AC00}'..='\u{D7AF}' | '\u{F900}'..='\u{FAFF}'
        | '\u{20000}'..='\u{2FA1F}')
}
