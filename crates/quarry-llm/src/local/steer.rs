//! Steering under the mask: where the grammar leaves the model a choice between ending a value
//! and going on, two situations get a push towards ending it.
//!
//! - **A grounded value at a clause boundary.** A small model copying from the document prefers
//!   to copy the next word: "Lee Wong" runs on into "Lee Wong, lee.wong@…" and on to the end of
//!   the sentence, since copying is what it does best. Where the value written so far is found in
//!   the document followed by a clause delimiter (a comma, semicolon, colon, bracket, line
//!   break, the end of a sentence or of the text), the closing quote's logit is raised by
//!   [`VALUE_END_BOOST`]: the model still goes on where it is sure (an address that continues
//!   after its comma), and stops where it was only copying.
//! - **The output budget's end.** In the last [`closing_reserve`] tokens, tokens that close a
//!   string, an object or an array are raised by [`CLOSING_BOOST`], so a reply that
//!   would run out of tokens ends at the grammar's end instead of being cut mid-value.

use llguidance::toktrie::TokenId;

/// Added to a closing quote's logit at a clause boundary of a grounded value (e^4 ≈ 55 times
/// more likely).
pub(crate) const VALUE_END_BOOST: f32 = 4.0;

/// Added to closing tokens' logits near the end of the output budget.
pub(crate) const CLOSING_BOOST: f32 = 30.0;

/// The last tokens of a budget of `budget` in which the reply is steered to its end.
pub(crate) fn closing_reserve(budget: usize) -> usize {
    (budget / 3).clamp(24, 96)
}

/// What steering needs to know of one reply.
pub(crate) struct Steering<'a> {
    /// The first byte of each token's text (0 for none).
    pub first_bytes: &'a [u8],
    /// The grounding source as it appears inside a JSON string (escaped, no quotes).
    pub source: Option<&'a str>,
}

impl Steering<'_> {
    /// Raises the logits of tokens that end the value being written, given the reply's text so
    /// far, when `closing` (the budget is nearly spent) or at a grounded value's clause boundary.
    pub(crate) fn apply(&self, logits: &mut [f32], text: &str, closing: bool) {
        let open = open_string(text);
        if closing {
            for (token, logit) in logits.iter_mut().enumerate() {
                let first = self.first_byte(token as TokenId);
                // Inside a string its closing quote; outside, a closing bracket (a quote there
                // would open another string).
                let ends = match open {
                    Some(_) => first == b'"',
                    None => matches!(first, b'}' | b']'),
                };
                if ends && logit.is_finite() {
                    *logit += CLOSING_BOOST;
                }
            }
            return;
        }
        let (Some(value), Some(source)) = (open, self.source) else {
            return;
        };
        if value.is_empty() || !at_clause_boundary(source, value) {
            return;
        }
        for (token, logit) in logits.iter_mut().enumerate() {
            if self.first_byte(token as TokenId) == b'"' && logit.is_finite() {
                *logit += VALUE_END_BOOST;
            }
        }
    }

    fn first_byte(&self, token: TokenId) -> u8 {
        self.first_bytes.get(token as usize).copied().unwrap_or(0)
    }
}

/// The content of the JSON string `text` ends inside (escapes as written), if it does.
pub(crate) fn open_string(text: &str) -> Option<&str> {
    let mut start = None;
    let mut escaped = false;
    for (at, byte) in text.bytes().enumerate() {
        match (start, byte) {
            (Some(_), _) if escaped => escaped = false,
            (Some(_), b'\\') => escaped = true,
            (Some(_), b'"') => start = None,
            (None, b'"') => start = Some(at + 1),
            _ => {}
        }
    }
    start.map(|start| &text[start..])
}

/// Whether `value` ends a word in `source` somewhere that a clause delimiter follows: a comma,
/// semicolon, colon, bracket, `|`, `!`, `?`, a quote, an escaped line break or tab, a full stop
/// before a line break, or before a space unless it may end an abbreviation ("Ltd. "), a spaced
/// dash, or the end of the text.
pub(crate) fn at_clause_boundary(source: &str, value: &str) -> bool {
    if !value.ends_with(|c: char| c.is_alphanumeric() || c == '.' || c == ')') {
        return false;
    }
    // "Ltd. ", "Dr. ": a full stop after a short capitalised word may be an abbreviation's.
    let last_word = value
        .rsplit(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or_default();
    let abbreviation =
        last_word.chars().count() <= 4 && last_word.starts_with(|c: char| c.is_uppercase());
    source.match_indices(value).any(|(at, _)| {
        let after = &source[at + value.len()..];
        let sentence_end = !abbreviation && (after == "." || after.starts_with(". "));
        after.is_empty()
            || sentence_end
            || after.starts_with([',', ';', ':', '(', ')', '[', ']', '|', '!', '?'])
            || ["\\n", "\\r", "\\t", "\\\"", ".\\n", " - ", " – ", " — "]
                .iter()
                .any(|delimiter| after.starts_with(delimiter))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_is_open_until_its_unescaped_quote() {
        assert_eq!(open_string(r#"{"a": "Lee Wo"#), Some("Lee Wo"));
        assert_eq!(open_string(r#"{"a": "Lee", "b": "#), None);
        assert_eq!(open_string(r#"{"a": "say \"hi"#), Some(r#"say \"hi"#));
        assert_eq!(open_string(r#"{"a": "x\\"#), Some(r"x\\"));
        assert_eq!(open_string(r#"{"a": "x\\", "#), None);
    }

    #[test]
    fn clause_boundaries_are_delimiters_after_a_whole_word() {
        let source = r"Customer Lee Wong, lee@x.io, owes 5 USD.\nAcme Ltd. (London) ships";
        for (value, expected) in [
            ("Lee Wong", true),
            ("Lee Wo", false),
            ("Customer Lee", false),
            ("owes 5 USD", true),
            ("Acme Ltd", false),
            ("Acme Ltd.", false),
            ("Acme", false),
            ("London", true),
            ("ships", true),
        ] {
            assert_eq!(at_clause_boundary(source, value), expected, "{value}");
        }
    }
}
