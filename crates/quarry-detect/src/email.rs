//! Email addresses, including a leading `mailto:` (kept in the span, as linkify-it does) and
//! IPv4-literal domains. The scan is shared with URLs (see [`crate::links`]) so `user@host`
//! inside a URL is not an address.

use crate::Detection;
use crate::links::{LinkOptions, find_links};

/// Finds email addresses; `value` drops `mailto:` and lower-cases the domain.
pub fn find(text: &str) -> Vec<Detection> {
    // Most text has no `@` at all; skip the shared scan then.
    if !text.contains('@') {
        return Vec::new();
    }
    let options = LinkOptions {
        urls: false,
        ..LinkOptions::default()
    };
    find_links(text, &options)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<(&str, String)> {
        find(text)
            .into_iter()
            .map(|d| (&text[d.range], d.value))
            .collect()
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
