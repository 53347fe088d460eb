//! URLs: `https://example.org/x`, `www.example.org`, `example.org/x` (known top-level domains
//! only) and scheme-relative `//host/x`. The scan is shared with email addresses (see
//! [`crate::links`]), so an address is never also reported as a URL.

use crate::Detection;
pub use crate::links::{LinkOptions, find_links};

/// Finds URLs with the default [`LinkOptions`]; `value` has a lower-cased scheme and host, and
/// `http://` in front of links written without a scheme.
pub fn find(text: &str) -> Vec<Detection> {
    let options = LinkOptions {
        emails: false,
        ..LinkOptions::default()
    };
    find_links(text, &options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use quarry_core::MatchKind;

    fn texts(text: &str) -> Vec<&str> {
        find(text).into_iter().map(|d| &text[d.range]).collect()
    }

    #[test]
    fn trailing_period_and_closing_bracket_are_excluded() {
        assert_eq!(
            texts("See http://example.com/foo_bar..."),
            ["http://example.com/foo_bar"]
        );
        assert_eq!(texts("[(http://example.org/)]"), ["http://example.org/"]);
        assert_eq!(
            texts("Foo (http://de.wikipedia.org/wiki/A_(B)) Bar"),
            ["http://de.wikipedia.org/wiki/A_(B)"]
        );
    }

    #[test]
    fn email_is_not_duplicated_as_url() {
        assert!(find("john.de@cooso.com.au").is_empty());
        assert!(find("write to mailto:foo_bar@example.com").is_empty());
    }

    #[test]
    fn value_lowercases_scheme_and_host_but_not_path() {
        let found = find("HTTP://GOOGLE.COM/Search?Q=A");
        assert_eq!(found[0].value, "http://google.com/Search?Q=A");
        assert_eq!(found[0].kind, MatchKind::Url);
        assert_eq!(find("Www.Abc.com/X")[0].value, "http://www.abc.com/X");
    }

    #[test]
    fn code_point_offsets_with_non_ascii_text() {
        let text = "Café ☕ — voir https://exemple.fr/été.";
        let matches = crate::to_matches(text, find(text));
        assert_eq!(matches[0].text, "https://exemple.fr/été");
        let chars: String = text
            .chars()
            .skip(matches[0].start)
            .take(matches[0].end - matches[0].start)
            .collect();
        assert_eq!(chars, matches[0].text);
        assert_eq!(matches[0].start, 14);
    }

    #[test]
    fn unbalanced_quote_before_link_ends_it() {
        assert_eq!(
            texts("<a href=\"https://www.example.com/path/\">x</a>"),
            ["https://www.example.com/path/"]
        );
        assert_eq!(
            texts("http://example.org/it's"),
            ["http://example.org/it's"]
        );
    }
}
