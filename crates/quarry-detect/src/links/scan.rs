//! URL candidates: the scanners of linkify 0.11 (© Robin Stocker, MIT OR Apache-2.0), carried
//! here so that each scan is bounded and the whole text is read in linear time.
//!
//! linkify finds a trigger (`:` of `://`, or `.` for links without a scheme), reads back to
//! the start of the scheme or domain and forward over the authority and path. Its domain
//! scanner read the authority to its end even when the host was already invalid, so a run like
//! `a_b.a_b.a_b…` cost a full read per dot. Three changes, none of which changes a link
//! `links.rs` accepts:
//! - an authority whose host is already invalid (`_`, `~`, a label starting with `-`, an
//!   empty label) stops at once: nothing later in it can make it valid again;
//! - a port that holds anything but up to five digits ends the scan without a link
//!   (`links::port_is_valid` would reject it);
//! - a link without a scheme has an authority of at most [`MAX_HOST_AUTHORITY_BYTES`].
//!
//! Only URLs are scanned: email addresses are read from their grammar in `addr_spec.rs`.

use std::ops::Range;

/// Longest authority (host and port) of a link written without a scheme: a host name is at
/// most 253 octets in its ASCII form (RFC 1035 §2.3.4), and a U-label's UTF-8 form takes at
/// most four bytes per character it encodes, so a longer run is no host name.
const MAX_HOST_AUTHORITY_BYTES: usize = 1024;

/// Ports have at most five digits (`links::port_is_valid`).
const MAX_PORT_DIGITS: usize = 5;

/// The shortest link without a scheme (`g.cn`).
const MIN_URL_LENGTH: usize = 4;

const QUOTES: &[char] = &['\'', '"'];

/// How to scan: whether links need a scheme, and whether non-ASCII letters may appear in them.
#[derive(Debug, Clone, Copy)]
pub(super) struct LinkFinder {
    pub url_must_have_scheme: bool,
    pub iri: bool,
}

impl LinkFinder {
    /// Candidates in `text`, in order and not overlapping, as byte ranges.
    pub fn links<'t>(&self, text: &'t str) -> Links<'t> {
        Links {
            text,
            rewind: 0,
            finder: *self,
        }
    }

    /// The link whose scheme ends at `colon` (`text[colon..]` starts with `://`), read exactly
    /// as the scan of [`links`](Self::links) reads it from that trigger.
    pub fn scheme_link_at(&self, text: &str, colon: usize) -> Option<Range<usize>> {
        url_at(text, colon, self.iri)
    }

    /// The link that `//` at the start of `text` begins, read as if `http:` came before it:
    /// its end.
    pub fn scheme_relative_end(&self, text: &str) -> Option<usize> {
        let rest = text.strip_prefix("//")?;
        if rest.is_empty() {
            return None;
        }
        let after_authority = find_authority_end(rest, true, true, true, self.iri).0?;
        let end = find_url_end(&rest[after_authority..], None, self.iri)?;
        (after_authority != 0 || end != 0).then_some(2 + after_authority + end)
    }

    /// Where a path, query or fragment that starts `text` ends, read as linkify reads what
    /// follows an authority; `stop` ends it early. `0` when no character of it can end a link.
    pub fn path_end(&self, text: &str, stop: impl Fn(char) -> bool) -> usize {
        path_end(text, None, self.iri, stop)
    }
}

/// The iterator of [`LinkFinder::links`].
pub(super) struct Links<'t> {
    text: &'t str,
    rewind: usize,
    finder: LinkFinder,
}

impl Iterator for Links<'_> {
    type Item = Range<usize>;

    fn next(&mut self) -> Option<Range<usize>> {
        let slice = &self.text[self.rewind..];
        let bytes = slice.as_bytes();
        let dots = !self.finder.url_must_have_scheme;
        let mut find_from = 0;
        while let Some(i) = bytes[find_from..]
            .iter()
            .position(|&b| b == b':' || (dots && b == b'.'))
        {
            let trigger = find_from + i;
            let found = match bytes[trigger] {
                b':' => url_at(slice, trigger, self.finder.iri),
                _ => domain_at(slice, trigger, self.finder.iri),
            };
            if let Some(range) = found {
                let range = self.rewind + range.start..self.rewind + range.end;
                self.rewind = range.end;
                return Some(range);
            }
            find_from = trigger + 1;
        }
        None
    }
}

/// linkify's `UrlScanner`: a scheme, `://`, an authority and a path.
fn url_at(s: &str, separator: usize, iri: bool) -> Option<Range<usize>> {
    if separator == 0 || !s[separator..].starts_with("://") {
        return None;
    }
    let after_separator = separator + "://".len();
    if after_separator >= s.len() {
        return None;
    }
    let (Some(start), quote) = find_scheme_start(&s[..separator]) else {
        return None;
    };
    let scheme = &s[start..separator];
    let rest = &s[after_separator..];
    let require_host = matches!(scheme, "https" | "http" | "ftp" | "ssh");
    let after_authority = find_authority_end(rest, true, require_host, true, iri).0?;
    let end = find_url_end(&rest[after_authority..], quote, iri)?;
    if after_authority == 0 && end == 0 {
        return None;
    }
    Some(start..after_separator + after_authority + end)
}

/// linkify's `DomainScanner`: a host without a scheme around the dot at `separator`.
fn domain_at(s: &str, separator: usize, iri: bool) -> Option<Range<usize>> {
    if separator == 0 || s.len() < MIN_URL_LENGTH {
        return None;
    }
    let (Some(start), quote) = find_domain_start(&s[..separator], iri) else {
        return None;
    };
    let s = &s[start..];
    let (Some(domain_end), Some(_)) = find_authority_end(s, false, true, true, iri) else {
        return None;
    };
    let end = find_url_end(&s[domain_end..], quote, iri)?;
    Some(start..start + domain_end + end)
}

fn find_scheme_start(s: &str) -> (Option<usize>, Option<char>) {
    let mut first = None;
    let mut special = None;
    let mut quote = None;
    for (i, c) in s.char_indices().rev() {
        match c {
            'a'..='z' | 'A'..='Z' => first = Some(i),
            '0'..='9' => special = Some(i),
            '+' | '-' | '.' => {}
            '@' => return (None, None),
            c if QUOTES.contains(&c) => {
                // A quote before the scheme ends the link at the matching quote.
                quote = Some(c);
                break;
            }
            _ => break,
        }
    }
    // Not `abc://foo` out of `1abc://foo`; `.abc://foo` is fine.
    if let (Some(first), Some(special)) = (first, special)
        && first > 0
        && first - 1 == special
    {
        return (None, quote);
    }
    (first, quote)
}

fn find_domain_start(s: &str, iri: bool) -> (Option<usize>, Option<char>) {
    let mut first = None;
    let mut quote = None;
    for (i, c) in s.char_indices().rev() {
        match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' => first = Some(i),
            '\u{80}'..=char::MAX if iri => first = Some(i),
            // After `/`, `@` or `.` a valid link would already have been found from the
            // trigger before (`https://www.`, an address, the previous dot).
            '/' | '@' | '.' => return (None, None),
            '-' => {
                if first.is_none() {
                    return (None, None); // A label does not end with `-`.
                }
                first = Some(i);
            }
            c if QUOTES.contains(&c) => {
                quote = Some(c);
                break;
            }
            _ => break,
        }
    }
    if let Some(first) = first
        && s[first..].starts_with('-')
    {
        return (None, None); // A label does not start with `-`.
    }
    (first, quote)
}

/// The end of an RFC 3986 authority at the start of `s`, and its last dot when it is a host.
fn find_authority_end(
    s: &str,
    mut userinfo_allowed: bool,
    require_host: bool,
    port_allowed: bool,
    iri: bool,
) -> (Option<usize>, Option<usize>) {
    let without_scheme = !userinfo_allowed;
    let mut end = Some(0);
    let mut maybe_last_dot = None;
    let mut last_dot = None;
    let mut number_dots = 0;
    let mut dot_allowed = false;
    let mut hyphen_allowed = false;
    let mut all_numeric = true;
    let mut maybe_host = true;
    let mut host_ended = false;
    // Digits read since a port's `:` (`None` outside a port), and whether punctuation that
    // cannot end a link (`.`, `-`, `:`) followed them.
    let mut port: Option<(usize, bool)> = None;

    for (i, c) in s.char_indices() {
        if without_scheme && i >= MAX_HOST_AUTHORITY_BYTES {
            return (None, None);
        }
        if let Some((digits, closed)) = port {
            // A letter, a sixth digit or a digit after punctuation would be read into the
            // port, which then is not one: no link.
            match c {
                '0'..='9' if !closed && digits < MAX_PORT_DIGITS => {
                    port = Some((digits + 1, false))
                }
                'a'..='z' | 'A'..='Z' | '0'..='9' => return (None, None),
                '\u{80}'..=char::MAX if iri => return (None, None),
                '.' | '-' | ':' => port = Some((digits, true)),
                _ => {}
            }
        }
        let can_be_last = match c {
            'a'..='z' | 'A'..='Z' | '\u{80}'..=char::MAX => {
                if !iri && c > '\u{80}' {
                    break;
                }
                dot_allowed = true;
                hyphen_allowed = true;
                last_dot = maybe_last_dot;
                all_numeric = false;
                if host_ended {
                    maybe_host = false;
                }
                !require_host || !host_ended
            }
            '0'..='9' => {
                dot_allowed = true;
                hyphen_allowed = true;
                if last_dot != maybe_last_dot {
                    last_dot = maybe_last_dot;
                    number_dots += 1;
                }
                if host_ended {
                    maybe_host = false;
                }
                !require_host || !host_ended
            }
            '-' => {
                if !hyphen_allowed {
                    maybe_host = false; // `a.-b.com`
                }
                dot_allowed = false; // `a.b-.com`
                all_numeric = false;
                !require_host
            }
            '.' => {
                if !dot_allowed {
                    host_ended = true; // `.example.com`, `a..com`
                }
                dot_allowed = false;
                hyphen_allowed = false;
                maybe_last_dot = Some(i);
                false
            }
            '_' | '~' => {
                maybe_host = false;
                false
            }
            '!' | '$' | '&' | '\'' | '(' | ')' | '*' | '+' | ',' | ';' | '=' => {
                host_ended = true;
                if !userinfo_allowed && require_host {
                    break;
                }
                false
            }
            ':' => {
                if !userinfo_allowed && !port_allowed {
                    break;
                }
                if !userinfo_allowed && port.is_none() {
                    port = Some((0, false));
                }
                // A port does not move the last dot.
                maybe_last_dot = last_dot;
                false
            }
            '@' => {
                if !userinfo_allowed {
                    return (None, None); // A second `@`.
                }
                // Everything so far was userinfo: start reading the host afresh.
                userinfo_allowed = false;
                maybe_last_dot = None;
                last_dot = None;
                dot_allowed = false;
                hyphen_allowed = false;
                all_numeric = true;
                maybe_host = true;
                host_ended = false;
                false
            }
            '/' => {
                if !require_host {
                    // Schemes without a host stop at delimiters, except a closing slash.
                    end = Some(i);
                }
                break;
            }
            _ => break,
        };
        // Once the host is invalid and no `@` can start it afresh, the answer is `None`.
        if require_host && !maybe_host && !userinfo_allowed {
            return (None, None);
        }
        if can_be_last {
            end = Some(i + c.len_utf8());
        }
    }

    if !require_host {
        return (end, last_dot);
    }
    if !maybe_host {
        return (None, None);
    }
    if all_numeric {
        // An IPv4 address has four numbers.
        if number_dots != 3 {
            return (None, None);
        }
    } else if let Some(last_dot) = last_dot
        && !valid_tld(&s[last_dot + 1..])
    {
        return (None, None); // Not `abc@v1.1`.
    }
    (end, last_dot)
}

fn valid_tld(tld: &str) -> bool {
    tld.chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .take(2)
        .count()
        >= 2
}

/// The end of a path or query after an authority (`0` when none starts `s`).
fn find_url_end(s: &str, quote: Option<char>, iri: bool) -> Option<usize> {
    if !s.starts_with('/') && !s.starts_with('?') {
        return Some(0);
    }
    Some(path_end(s, quote, iri, |_| false))
}

/// linkify's end of a URL: brackets balance, delimiters (`.,:;!?*`) and an open quote are not
/// last, and characters that are never in URLs end it.
fn path_end(s: &str, quote: Option<char>, iri: bool, stop: impl Fn(char) -> bool) -> usize {
    let mut round = 0i32;
    let mut square = 0i32;
    let mut curly = 0i32;
    let mut single_quote = false;
    let mut previous_is_url_char = true;
    let mut end = 0;
    for (i, c) in s.char_indices() {
        if stop(c) {
            break;
        }
        let can_be_last = match c {
            '\u{00}'..='\u{1F}' | ' ' | '|' | '"' | '<' | '>' | '`' | '\u{7F}'..='\u{9F}' => break,
            '?' | '!' | '.' | ',' | ':' | ';' | '*' => false,
            // `/!/` keeps its slash; a slash after a character that is not a URL's does not.
            '/' => previous_is_url_char,
            '(' => {
                round += 1;
                false
            }
            ')' => {
                round -= 1;
                if round < 0 {
                    break;
                }
                true
            }
            '[' => {
                square += 1;
                false
            }
            ']' => {
                square -= 1;
                if square < 0 {
                    break;
                }
                true
            }
            '{' => {
                curly += 1;
                false
            }
            '}' => {
                curly -= 1;
                if curly < 0 {
                    break;
                }
                true
            }
            _ if Some(c) == quote => break,
            '\'' => {
                single_quote = !single_quote;
                !single_quote
            }
            '\u{80}'..=char::MAX if !iri => false,
            _ => true,
        };
        if can_be_last {
            end = i + c.len_utf8();
        }
        previous_is_url_char = c.is_ascii() || iri;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<&str> {
        let finder = LinkFinder {
            url_must_have_scheme: false,
            iri: true,
        };
        finder.links(text).map(|r| &text[r]).collect()
    }

    #[test]
    fn reads_links_as_linkify_does() {
        assert_eq!(
            found("see http://a.example/x?q=1. and www.b.org/(c) or 'c.com/x'"),
            ["http://a.example/x?q=1", "www.b.org/(c)", "c.com/x"]
        );
        assert_eq!(
            found("http://user:pw@host.com:8080/p"),
            ["http://user:pw@host.com:8080/p"]
        );
        assert_eq!(found("1.2.3.4/x and 1.2.3/x"), ["1.2.3.4/x"]);
    }

    #[test]
    fn invalid_hosts_stop_the_scan_without_a_link() {
        for text in [
            "a.b_cd",
            "a.b~cd",
            "a.-bc",
            "a..bc",
            "a.com:8a",
            "a.com:123456",
        ] {
            assert_eq!(found(text), Vec::<&str>::new(), "{text}");
        }
        assert_eq!(found("a.com:8080/x"), ["a.com:8080/x"]);
        assert_eq!(found("at a.com:8080."), ["a.com:8080"]);
    }

    #[test]
    fn hosts_longer_than_dns_allows_are_not_links() {
        let long = format!("{}com", "a.".repeat(MAX_HOST_AUTHORITY_BYTES / 2));
        assert!(found(&long).is_empty());
        let fits = format!("{}com", "a.".repeat(100));
        assert_eq!(found(&fits), [fits.as_str()]);
    }
}
