//! Email addresses, including a leading `mailto:` (kept in the span, as linkify-it does) and
//! IPv4-literal domains. The scan is shared with URLs (see [`crate::links`]) so `user@host`
//! inside a URL is not an address.

use crate::Detection;
use crate::links::{LinkOptions, find_links};

/// Finds email addresses; `value` drops `mailto:` and lower-cases the domain.
pub fn find(text: &str) -> Vec<Detection> {
    let options = LinkOptions {
        urls: false,
        ..LinkOptions::default()
    };
    // Links never hold ASCII whitespace, so scanning only the whitespace-delimited words around
    // each `@` finds what a scan of the whole text would, at the cost of a memchr over prose.
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut word_end = 0;
    for (at, _) in text.match_indices('@') {
        if at < word_end {
            continue;
        }
        let word_start = bytes[..at]
            .iter()
            .rposition(u8::is_ascii_whitespace)
            .map_or(0, |i| i + 1);
        word_end = bytes[at..]
            .iter()
            .position(u8::is_ascii_whitespace)
            .map_or(bytes.len(), |i| at + i);
        found.extend(
            find_links(&text[word_start..word_end], &options)
                .into_iter()
                .map(|d| Detection {
                    range: word_start + d.range.start..word_start + d.range.end,
                    ..d
                }),
        );
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<(&str, String)> {
        crate::slices_and_values(text, find(text))
    }

    #[test]
    fn mailto_prefix_is_kept_in_span_and_dropped_from_value() {
        assert_eq!(
            found("<mailto:User@Domain.COM>"),
            [("mailto:User@Domain.COM", "User@domain.com".to_owned())]
        );
    }

    #[test]
    fn url_userinfo_is_not_an_email() {
        assert!(find("http://user:pass@example.com").is_empty());
        assert!(find("test.example@http://vk.com").is_empty());
    }

    #[test]
    fn trailing_period_is_excluded() {
        assert_eq!(
            found("Mail d.j@server1.proseware.com.")[0].0,
            "d.j@server1.proseware.com"
        );
    }

    #[test]
    fn invalid_domains_are_rejected() {
        for text in ["@", "@@@", "a@b-.", "Carol@new_type.com", "root@localhost"] {
            assert!(find(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn adjacent_addresses_are_separate() {
        let texts: Vec<&str> = found("a@example.com @ b@example.com")
            .into_iter()
            .map(|f| f.0)
            .collect();
        assert_eq!(texts, ["a@example.com", "b@example.com"]);
    }

    #[test]
    fn cjk_before_address_is_not_local_part() {
        let text = "请联系bob@example.com谢谢";
        let matches = crate::to_matches(text, find(text));
        assert_eq!((matches[0].start, matches[0].end), (3, 18));
        assert_eq!(matches[0].text, "bob@example.com");
    }
}
