//! The characters of a written phone number: decimal digits in every script the finder reads,
//! plus signs, and the extension that may follow the number.

/// Decimal digits the finder reads: ASCII, fullwidth, Arabic-Indic and Devanagari.
pub(super) const DIGIT_CLASS: &str =
    r"0-9\x{FF10}-\x{FF19}\x{0660}-\x{0669}\x{06F0}-\x{06F9}\x{0966}-\x{096F}";

/// An extension after the number: `ext. 12`, `extension 12`, `x12`, `#12`, `int.12`, `~12`.
pub(super) fn extension_pattern() -> String {
    let digit = DIGIT_CLASS;
    let space = r"[ \x{A0}\t,]*";
    let gap = r"[:.\x{FF0E}]?[ \x{A0}\t,-]*";
    format!(
        r"(?:{space}(?:e?xt(?:ensi(?:o\x{{301}}?|ó))?n?|ｅ?ｘｔｎ?|доб|anexo){gap}(?P<labelled>[{digit}]{{1,20}})#?|{space}(?:[xｘ#＃~～]|int|ｉｎｔ){gap}(?P<marked>[{digit}]{{1,9}})#?|[- ]+(?P<hashed>[{digit}]{{1,6}})#)"
    )
}

pub(super) fn is_plus(c: char) -> bool {
    matches!(c, '+' | '＋')
}

pub(super) fn is_digit(c: char) -> bool {
    digit_value(c).is_some()
}

/// The value of a decimal digit in any script the finder reads.
pub(super) fn digit_value(c: char) -> Option<u32> {
    let zero = match c {
        '0'..='9' => '0',
        '\u{FF10}'..='\u{FF19}' => '\u{FF10}',
        '\u{0660}'..='\u{0669}' => '\u{0660}',
        '\u{06F0}'..='\u{06F9}' => '\u{06F0}',
        '\u{0966}'..='\u{096F}' => '\u{0966}',
        _ => return None,
    };
    Some(c as u32 - zero as u32)
}
