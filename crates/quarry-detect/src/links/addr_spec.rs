//! Email addresses read from their grammar around each `@`, so an invalid address is rejected
//! whole instead of being trimmed to a valid-looking tail (`a..b@x.com` is not `b@x.com`).
//!
//! - Local part: RFC 5322 `dot-atom` (atext runs joined by single dots, no leading or trailing
//!   dot), with RFC 6531's UTF-8 letters and digits, at most 64 bytes (RFC 5321 §4.5.3.1.1).
//!   Quoted local parts (`"john doe"@x`) are not read: in prose their quotes are punctuation.
//! - Domain: RFC 5321 `Domain` (LDH labels of at most 63 bytes that neither start nor end with
//!   `-`, RFC 6531 U-labels allowed, a letter-only or `xn--` top label of two or more
//!   characters), or an `address-literal` (`[192.0.2.1]`, `[IPv6:2001:db8::1]`).
//!
//! The scan around one `@` reads at most 64 bytes back and 255 forward, so finding every address
//! stays linear in the text.

use std::ops::Range;

use super::chars::ends_link;
use super::options::LinkOptions;
use crate::ip::parse_ipv4;

const MAX_LOCAL_BYTES: usize = 64;
const MAX_DOMAIN_BYTES: usize = 255;
const MAX_LABEL_BYTES: usize = 63;

/// The address whose `@` is at byte `at`, without any `mailto:` in front.
pub(super) fn address_at(text: &str, at: usize, options: &LinkOptions) -> Option<Range<usize>> {
    let start = local_part_start(text, at)?;
    let end = domain_end(text, at + 1, options)?;
    Some(start..end)
}

/// RFC 5322 `atext`, plus RFC 6531's non-ASCII letters and digits (but not CJK prose or
/// Unicode punctuation, which end a link).
pub(super) fn is_atext(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c)
    } else {
        c.is_alphanumeric() && !ends_link(c)
    }
}

/// `atext` characters that open or quote text far more often than they begin an address:
/// `'bob@x.com'`, `{bob@x.com}`, `/bob@x.com`. They are left out of the span when leading.
fn is_leading_punctuation(c: char) -> bool {
    matches!(
        c,
        '\'' | '`' | '{' | '}' | '|' | '/' | '=' | '?' | '!' | '*' | '^' | '~' | '#'
    )
}

/// Start of the dot-atom that ends at `at`, or `None` when the characters before `@` are not
/// a valid local part (an empty atom, a dot at either end, two dots, another `@`, too long).
fn local_part_start(text: &str, at: usize) -> Option<usize> {
    let mut start = at;
    for (i, c) in text[..at].char_indices().rev() {
        if is_atext(c) || c == '.' {
            start = i;
            if at - start > MAX_LOCAL_BYTES + 1 {
                return None;
            }
        } else if c == '@' {
            return None; // `a@b@example.com`: not an address, whichever `@` is read.
        } else {
            break;
        }
    }
    let mut local = &text[start..at];
    while let Some(c) = local.chars().next().filter(|&c| is_leading_punctuation(c)) {
        local = &local[c.len_utf8()..];
        start += c.len_utf8();
    }
    let valid = !local.is_empty()
        && local.len() <= MAX_LOCAL_BYTES
        && !local.starts_with('.')
        && !local.ends_with('.')
        && !local.contains("..");
    valid.then_some(start)
}

/// End of the domain that starts at `from` (just after `@`), or `None` when it is not one.
fn domain_end(text: &str, from: usize, options: &LinkOptions) -> Option<usize> {
    let rest = &text[from..];
    if rest.starts_with('[') {
        return address_literal_len(rest).map(|len| from + len);
    }
    let mut len = 0;
    for c in rest.chars() {
        let in_domain = c.is_ascii_alphanumeric()
            || c == '-'
            || c == '.'
            || (!c.is_ascii() && c.is_alphanumeric() && !ends_link(c))
            || (options.url_can_be_iri && is_joiner(c));
        if !in_domain {
            break;
        }
        len += c.len_utf8();
        if len > MAX_DOMAIN_BYTES + 1 {
            return None;
        }
    }
    // A dot that ends the run ends the sentence, unless it is the root's (`x@example.com.`
    // followed by more host characters is impossible, so no ambiguity is lost).
    let domain = rest[..len].trim_end_matches('.');
    // `_` or `@` right after: the run was the valid-looking head of something that is not a
    // domain (`Carol@new_type.com`, `a@b.com@c.com`).
    if matches!(rest[len..].chars().next(), Some('_' | '@')) {
        return None;
    }
    is_domain(domain, options).then_some(from + domain.len())
}

/// ZWJ and ZWNJ join the letters of some scripts and never separate words.
pub(super) fn is_joiner(c: char) -> bool {
    matches!(c, '\u{200C}' | '\u{200D}')
}

fn is_domain(domain: &str, options: &LinkOptions) -> bool {
    if domain.is_empty() || domain.len() > MAX_DOMAIN_BYTES {
        return false;
    }
    if domain.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        // A bare dotted quad is not RFC 5321 syntax (literals take brackets); linkify-it's
        // `fuzzy_ip` reads it as a host.
        return options.fuzzy_ip && parse_ipv4(domain).is_some();
    }
    let labels: Vec<&str> = domain.split('.').collect();
    if labels.len() < 2 && options.email_domain_must_have_dot {
        return false;
    }
    let labels_valid = labels.iter().all(|label| {
        !label.is_empty()
            && label.len() <= MAX_LABEL_BYTES
            && !label.starts_with('-')
            && !label.ends_with('-')
            && (options.url_can_be_iri || label.is_ascii())
    });
    let top = labels[labels.len() - 1];
    // `get`: the label may hold multi-byte characters, and byte 4 need not be a boundary.
    let top_valid = top
        .get(..4)
        .is_some_and(|prefix| prefix.eq_ignore_ascii_case("xn--"))
        || top.chars().count() >= 2 && top.chars().all(|c| c.is_alphabetic() || is_joiner(c));
    labels_valid && top_valid
}

/// Length of `[IPv4]` or `[IPv6:…]` at the start of `rest` (RFC 5321 §4.1.3).
fn address_literal_len(rest: &str) -> Option<usize> {
    // A literal is ASCII: look for its `]` among the first 64 bytes, on a character boundary.
    let mut window = rest.len().min(64);
    while !rest.is_char_boundary(window) {
        window -= 1;
    }
    let close = rest[..window].find(']')?;
    let inner = &rest[1..close];
    let valid = match inner.get(..5) {
        Some(tag) if tag.eq_ignore_ascii_case("IPv6:") => {
            inner[5..].parse::<std::net::Ipv6Addr>().is_ok()
        }
        _ => parse_ipv4(inner).is_some(),
    };
    valid.then_some(close + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn address(text: &str) -> Option<&str> {
        let at = text.find('@')?;
        address_at(text, at, &LinkOptions::default()).map(|r| &text[r])
    }

    #[test]
    fn dot_atom_local_parts_are_read_whole() {
        assert_eq!(
            address("user.name+tag@example.com"),
            Some("user.name+tag@example.com")
        );
        assert_eq!(
            address("a!b#c$d%e&f'g*h+i/j=k?l^m_n`o{p|q}r~s@example.com"),
            Some("a!b#c$d%e&f'g*h+i/j=k?l^m_n`o{p|q}r~s@example.com")
        );
        assert_eq!(address("'bob@example.com'"), Some("bob@example.com"));
    }

    #[test]
    fn invalid_local_parts_are_rejected_not_trimmed() {
        for text in [
            "a..b@example.com",
            ".a@example.com",
            "a.@example.com",
            "x@a@example.com",
        ] {
            assert_eq!(address(text), None, "{text}");
        }
        let long = format!("{}@example.com", "a".repeat(65));
        assert_eq!(address(&long), None);
    }

    #[test]
    fn invalid_domains_are_rejected_not_trimmed() {
        for text in [
            "Carol@new_type.com",
            "a@b.c_d.com",
            "a@b-.com",
            "a@-b.com",
            "a@example",
            "a@example.c",
            "a@example.123",
            "a@1.2.3.4",
        ] {
            assert_eq!(address(text), None, "{text}");
        }
    }

    #[test]
    fn address_literals_and_idn_domains() {
        assert_eq!(address("j_9@[129.126.118.1]"), Some("j_9@[129.126.118.1]"));
        assert_eq!(
            address("x@[IPv6:2001:db8::1]."),
            Some("x@[IPv6:2001:db8::1]")
        );
        assert_eq!(address("x@[300.1.1.1]"), None);
        assert_eq!(address("иван@почта.рф."), Some("иван@почта.рф"));
        assert_eq!(address("x@example.com.au."), Some("x@example.com.au"));
    }

    /// Found by `cargo fuzz run detect_email`: multi-byte characters where the scanner counts
    /// bytes (a top-level label's first 4 bytes, a literal's first 64) must not panic.
    #[test]
    fn multi_byte_characters_at_byte_limits_do_not_panic() {
        assert_eq!(address("P@.uu2\u{38f}f"), None);
        // An alphabetic top-level label in any script is an IDN TLD candidate: read, not a panic.
        assert_eq!(address("a@b.cc\u{38f}f"), Some("a@b.cc\u{38f}f"));
        let literal = format!("a@[{}", "é".repeat(40));
        assert_eq!(address(&literal), None);
        let closed = format!("a@[{}]", "1".repeat(61));
        assert_eq!(address(&closed), None);
    }
}
