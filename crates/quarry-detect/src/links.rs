//! The one scan that finds URLs and email addresses together, so an address is never also
//! reported as a URL and a URL's `user@host` is never reported as an address.
//!
//! linkify's scanners (`scan.rs`) do the core scanning (schemes, authority rules, bracket
//! balancing and trailing punctuation). This module adds what they lack, following
//! linkify-it's conventions:
//! - `mailto:` in front of an address stays inside the span;
//! - scheme-relative links (`//localhost`, `//example.com/x`) keep their `//`;
//! - a scheme preceded by `@` (`test.example@http://vk.com`) is still a link;
//! - email addresses are read from their RFC 5322/5321 grammar (`addr_spec.rs`), not by
//!   linkify, so an invalid one is rejected rather than trimmed, and `user.name+tag@x.com` is
//!   never split into a `user.name` URL and a `+tag@x.com` address; an address inside a URL
//!   (userinfo, path, query, fragment) is part of the URL, and so is an address directly followed
//!   by a port, path, query or fragment (`bob@example.com/files` is a URL, never an address);
//! - hosts linkify misreads are rescanned on a same-length ASCII shadow of the word: RFC 3986
//!   reg-names with `_` after a scheme, internationalised TLDs from the root zone (`рф`, `مصر`)
//!   and a fully qualified host's trailing dot before its path (`http://example.com./x`);
//! - schemes one or two typing errors away from `http`/`https` (`hppt://`) are not links;
//! - a link without a scheme starts at a word boundary (`_example.com`, `path:to:file.pm` are
//!   not links) and is not a clock time (`7.am`);
//! - CJK text, Unicode punctuation and Unicode spaces end a link, since CJK prose has no spaces;
//! - links without a scheme need a known top-level domain (linkify only asks for two letters), and
//!   an invalid port (`google.com:500000`) rejects the whole link; their host ends at a known
//!   top-level domain, so a word glued on with a dot (`example.com.this is`) stays outside.
//!
//! **Linear time:** every pass reads each candidate once and resumes after it (or after the
//! link it became, whichever ends later), never inside it; what a rejected candidate holds is
//! read in one bounded scan; each scan in `scan.rs` is bounded; lookbacks are bounded by the
//! grammar (an address's 64-byte local part, 255-byte domain); and coverage is looked up by
//! binary search. `tests/linear_time.rs` checks it on hostile inputs.

mod addr_spec;
mod chars;
mod options;
mod scan;
mod tld;

use std::ops::Range;

use chars::{ends_link, is_cjk_letter};
pub use options::LinkOptions;
use quarry_core::MatchKind;
use scan::LinkFinder;

use crate::Detection;
use crate::ip::parse_ipv4;

/// Finds URLs and email addresses in `text`, in text order, with canonical values.
///
/// Both kinds are always scanned (so they can exclude each other); `options.urls` and
/// `options.emails` only choose which are returned.
pub fn find_links(text: &str, options: &LinkOptions) -> Vec<Detection> {
    if !options.urls && !options.emails {
        return Vec::new();
    }
    // linkify reads Unicode punctuation and spaces as host letters (`a.com。(b` is one bad
    // authority to it), so it scans a copy where those, and CJK letters glued to ASCII (which
    // end a link), read as ASCII spaces; byte offsets are the same in both texts.
    let shadow = without_hard_terminators(text);
    let scan = Scan {
        text,
        shadow: &shadow,
        finder: LinkFinder {
            url_must_have_scheme: options.url_must_have_scheme,
            iri: options.url_can_be_iri,
        },
        options,
    };
    let mut links: Vec<Link> = Vec::new();
    scan.candidates(&mut links);
    scan.schemes_after_at(&mut links);
    if !options.url_must_have_scheme {
        scan.scheme_relative(&mut links);
    }
    scan.shadowed_hosts(&mut links);
    scan.addresses(&mut links);
    drop_conflicts(&mut links);

    links.sort_by_key(|link| (link.range.start, std::cmp::Reverse(link.range.end)));
    let mut covered_to = 0;
    links.retain(|link| {
        let keep = link.range.start >= covered_to;
        if keep {
            covered_to = link.range.end;
        }
        keep
    });
    links
        .into_iter()
        .filter(|link| match link.kind {
            MatchKind::Email => options.emails,
            _ => options.urls,
        })
        .map(|link| {
            let slice = &text[link.range.clone()];
            let value = match link.kind {
                MatchKind::Email => canonical_email(slice),
                _ => canonical_url(slice),
            };
            Detection {
                range: link.range,
                value,
                kind: link.kind,
            }
        })
        .collect()
}

struct Link {
    range: Range<usize>,
    kind: MatchKind,
}

/// The text and how to read it, shared by the passes of [`find_links`].
struct Scan<'t, 'o> {
    text: &'t str,
    /// `text` as [`without_hard_terminators`] rewrites it, for the candidate scans.
    shadow: &'t str,
    finder: LinkFinder,
    options: &'o LinkOptions,
}

impl Scan<'_, '_> {
    /// linkify's candidates, each validated once.
    fn candidates(&self, links: &mut Vec<Link>) {
        self.each_candidate(0, self.shadow, |range| {
            let accepted_before = links.len();
            let read_to = self.accept(range.clone(), links);
            if links.len() > accepted_before {
                read_to
            } else {
                self.inside_rejected(range, links)
            }
        });
    }

    /// Calls `read` on each candidate linkify finds in `shadow` (the scan text from byte `base`
    /// on), in order. `read` returns where its reading ended; the scan resumes there or after
    /// the candidate, whichever is later, so a fragment read after a link (`x.com#a.com#…`) is
    /// not read again by the next candidate.
    fn each_candidate(
        &self,
        base: usize,
        shadow: &str,
        mut read: impl FnMut(Range<usize>) -> usize,
    ) {
        let mut from = 0;
        while let Some(found) = self.finder.links(&shadow[from..]).next() {
            let range = base + from + found.start..base + from + found.end;
            let read_to = read(range.clone()).max(range.end) - base;
            from = read_to.min(shadow.len());
        }
    }

    /// Links in what follows a rejected candidate's anchor (`foo.bar?u=www.example.com`), and
    /// one whose scheme the candidate ends with (`1.http://example.org/`). The inside is read
    /// in one scan that stops at the candidate's end, so no later candidate reads it again.
    /// Returns where the reading ended.
    fn inside_rejected(&self, range: Range<usize>, links: &mut Vec<Link>) -> usize {
        let mut read_to = range.end;
        let Some(anchor) = anchor_of(&self.text[range.clone()]) else {
            return read_to;
        };
        // The anchor is `.` or `:`, one byte.
        let inside = range.start + anchor + 1;
        self.each_candidate(inside, &self.shadow[inside..range.end], |link| {
            let end = self.accept(link, links);
            read_to = read_to.max(end);
            end
        });
        if !self.shadow[range.end..].starts_with("://") {
            return read_to;
        }
        // The scheme is what follows the candidate's last dot (`1.a.http://x`).
        let base = self.text[range.clone()]
            .rfind('.')
            .map_or(range.start, |dot| range.start + dot + 1);
        let colon = range.end - base;
        match self.finder.scheme_link_at(&self.shadow[base..], colon) {
            Some(url) => read_to.max(self.accept(base + url.start..base + url.end, links)),
            None => read_to,
        }
    }

    /// Validates a candidate whose start linkify may have read through CJK letters, which end
    /// a link before its anchor (`@`, `://` or the first `.`): only the part after the last
    /// such letter is kept. (The shadow text already ends links at every other terminator.)
    /// Returns where the reading ended: the candidate's end or a fragment's after it.
    fn accept(&self, range: Range<usize>, links: &mut Vec<Link>) -> usize {
        let slice = &self.text[range.clone()];
        let anchor = range.start + anchor_of(slice).unwrap_or(0);
        let start = if slice.is_ascii() {
            range.start
        } else {
            self.text[range.start..anchor]
                .char_indices()
                .rev()
                .find(|&(_, c)| ends_link(c))
                .map_or(range.start, |(i, c)| range.start + i + c.len_utf8())
        };
        if start == range.start {
            return self
                .validate(range.clone(), MatchKind::Url, links)
                .map_or(range.end, |end| end.max(range.end));
        }
        let mut read_to = range.end;
        self.each_candidate(start, &self.shadow[start..range.end], |link| {
            let end = self.validate(link.clone(), MatchKind::Url, links);
            read_to = read_to.max(end.unwrap_or(link.end));
            end.unwrap_or(link.end)
        });
        read_to
    }

    /// Records the link or address at `range` when it is one; returns its end then.
    fn validate(
        &self,
        mut range: Range<usize>,
        kind: MatchKind,
        links: &mut Vec<Link>,
    ) -> Option<usize> {
        let slice = &self.text[range.clone()];
        match kind {
            MatchKind::Email => {
                if after_mailto(self.text, range.start) {
                    range.start -= MAILTO.len();
                }
            }
            _ => {
                let before = self.text[..range.start].chars().next_back();
                let authority = match scheme_end(slice) {
                    Some(after_scheme) => {
                        // `_http://x`: linkify-it asks for a boundary before the scheme too.
                        if before == Some('_')
                            || is_misspelled_web_scheme(&slice[..after_scheme - 3])
                            || !top_label_is_plain(host_of(&slice[after_scheme..]))
                        {
                            return None;
                        }
                        &slice[after_scheme..]
                    }
                    None => {
                        let mut host = host_of(slice);
                        let starts_word = before.is_none_or(|c| !continues_host(c));
                        // A host ends at a known top-level domain: in `example.com.this is`,
                        // the sentence went on without a space.
                        if host.len() == slice.len()
                            && !self.fuzzy_host_is_known(host)
                            && let Some(known) = self.known_host_prefix(host)
                        {
                            host = &host[..known];
                            range.end = range.start + known;
                        }
                        if !starts_word
                            || !is_hostname(host)
                            || !self.fuzzy_host_is_known(host)
                            || self.heads_an_address(range.start + host.len())
                        {
                            return None;
                        }
                        &self.text[range.clone()]
                    }
                };
                if !port_is_valid(authority) {
                    return None;
                }
                range.end = self.fragment_after_host(range.clone());
            }
        }
        let end = range.end;
        links.push(Link { range, kind });
        Some(end)
    }

    /// linkify ends `http://host#frag` before `#` (it only reads on after `/` or `?`); read the
    /// fragment as it reads a path.
    fn fragment_after_host(&self, range: Range<usize>) -> usize {
        let rest = &self.text[range.end..];
        if !rest.starts_with('#') {
            return range.end;
        }
        let end = self
            .finder
            .path_end(rest, |c| c.is_whitespace() || ends_link(c));
        // `#` alone is punctuation after the link.
        if end > 1 { range.end + end } else { range.end }
    }

    /// Whether the host ending at `host_end` is only the head of an address-like token
    /// (`first.name.@x.de`, `a.sk{..x@y.io`): local-part characters run from it to an `@`.
    /// Valid addresses already won over such hosts; this keeps invalid ones from leaving a
    /// URL behind. `/` ends the run, so `example.social/@user` stays a link.
    fn heads_an_address(&self, host_end: usize) -> bool {
        self.text[host_end..]
            .chars()
            .take(65)
            .find(|&c| c == '/' || !(addr_spec::is_atext(c) || c == '.'))
            == Some('@')
    }

    /// The longest leading part of `host` that ends at a known top-level domain, at least two
    /// labels long, when the labels after it are words glued on with a dot.
    fn known_host_prefix(&self, host: &str) -> Option<usize> {
        host.char_indices()
            .filter(|&(_, c)| c == '.')
            .map(|(dot, _)| dot)
            .filter(|&dot| {
                host[dot + 1..].starts_with(|c: char| c.is_alphabetic())
                    && host[..dot].contains('.')
            })
            .rev()
            .find(|&dot| is_hostname(&host[..dot]) && self.fuzzy_host_is_known(&host[..dot]))
    }

    /// Whether a link without a scheme names a host people write without one.
    fn fuzzy_host_is_known(&self, host: &str) -> bool {
        // A fully qualified name's root dot (`example.com./x`) does not change its TLD.
        let host = host.strip_suffix('.').unwrap_or(host);
        if host.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
            return self.options.fuzzy_ip && parse_ipv4(host).is_some();
        }
        let Some((rest, tld)) = host.rsplit_once('.') else {
            return false;
        };
        if is_clock_time(rest, tld) {
            return false;
        }
        if !tld.is_ascii() || tld.len() > 4 && tld[..4].eq_ignore_ascii_case("xn--") {
            return tld::is_tld(tld);
        }
        let tld = tld.to_ascii_lowercase();
        if tld.len() == 2 && tld.bytes().all(|b| b.is_ascii_lowercase()) {
            // `main.rs`, `README.md`: a file name, unless it looks like a web address.
            let file_like = FILE_EXTENSION_CCTLDS.contains(&tld.as_str())
                && !rest.contains('.')
                && !rest.eq_ignore_ascii_case("www");
            return in_word_list(&CC_TABLE, CCTLDS, &tld) && !file_like;
        }
        in_word_list(&GENERIC_TABLE, GENERIC_TLDS, &tld)
    }

    /// `test.example@http://vk.com`: linkify refuses a scheme glued to `@`; linkify-it treats
    /// the `@` as punctuation before the link. An `@` inside a link read in this pass starts
    /// none (each link is read once).
    fn schemes_after_at(&self, links: &mut Vec<Link>) {
        let covered = Coverage::of(links);
        let mut found = Vec::new();
        let mut read_to = 0;
        for (at, _) in self.text.match_indices('@') {
            if at < read_to {
                continue;
            }
            let rest = &self.text[at + 1..];
            let scheme_len = rest
                .bytes()
                .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
                .count();
            if scheme_len == 0
                || !rest.as_bytes()[0].is_ascii_alphabetic()
                || !rest[scheme_len..].starts_with("://")
                || covered.contains(at + 1)
            {
                continue;
            }
            let link = self
                .finder
                .scheme_link_at(&self.shadow[at + 1..], scheme_len)
                .filter(|link| link.start == 0);
            if let Some(link) = link {
                read_to = self.accept(at + 1..at + 1 + link.end, &mut found);
            }
        }
        links.append(&mut found);
    }

    /// `//localhost:8080/x`, `//example.com`: a link relative to the page's scheme. A `//`
    /// inside a link read in this pass starts none.
    fn scheme_relative(&self, links: &mut Vec<Link>) {
        let covered = Coverage::of(links);
        let bytes = self.text.as_bytes();
        let mut read_to = 0;
        // The end of the whitespace-delimited token being read, found once per token.
        let mut token_end = 0;
        // `match_indices('/')` runs on memchr; a two-byte pattern would not.
        for (slashes, _) in self.text.match_indices('/') {
            if slashes < read_to || bytes.get(slashes + 1) != Some(&b'/') {
                continue;
            }
            let glued = slashes > 0
                && (bytes[slashes - 1].is_ascii_alphanumeric()
                    || matches!(bytes[slashes - 1], b':' | b'/' | b'_'));
            if glued || covered.contains(slashes) {
                continue;
            }
            if token_end <= slashes {
                token_end = self.text[slashes..]
                    .find(|c: char| c.is_whitespace() || ends_link(c))
                    .map_or(self.text.len(), |i| slashes + i);
            }
            // Read as an `http:` URL would be.
            let Some(len) = self
                .finder
                .scheme_relative_end(&self.text[slashes..token_end])
            else {
                continue;
            };
            let range = slashes..slashes + len;
            read_to = range.end;
            let host = host_of(&self.text[range.start + 2..range.end]);
            if host.eq_ignore_ascii_case("localhost") || self.fuzzy_host_is_known(host) {
                links.push(Link {
                    range,
                    kind: MatchKind::Url,
                });
            }
        }
    }

    /// Email addresses around every `@` (see `addr_spec.rs`); `mailto:` joins the span.
    fn addresses(&self, links: &mut Vec<Link>) {
        let mut after = 0;
        for (at, _) in self.text.match_indices('@') {
            if at < after {
                continue;
            }
            if let Some(range) = addr_spec::address_at(self.text, at, self.options) {
                after = range.end;
                match self.url_with_userinfo(range.clone(), at) {
                    Some(Some(url)) => {
                        after = url.end;
                        links.push(Link {
                            range: url,
                            kind: MatchKind::Url,
                        });
                    }
                    Some(None) => {}
                    None => {
                        self.validate(range, MatchKind::Email, links);
                    }
                }
            }
        }
    }

    /// What an address directly followed by a port, path, query or fragment is: the userinfo
    /// and host of a URL without a scheme (`bob@example.com/files`, `ops@host.example.org:8443/x`),
    /// never an address. `None` for an address; `Some(None)` when the URL is not reported (links
    /// need a scheme, or its host is not one people write without one); `Some(Some(range))`.
    fn url_with_userinfo(&self, address: Range<usize>, at: usize) -> Option<Option<Range<usize>>> {
        if after_mailto(self.text, address.start) {
            return None;
        }
        let rest = &self.text[address.end..];
        let mut end = address.end;
        if let Some(port) = rest.strip_prefix(':') {
            let digits = port.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 || digits > 5 || port[..digits].parse::<u32>().ok()? > 65_535 {
                return None;
            }
            end += 1 + digits;
        }
        let tail = &self.text[end..];
        if tail.starts_with(['/', '?', '#']) {
            end += self
                .finder
                .path_end(tail, |c| c.is_whitespace() || ends_link(c));
        }
        if end == address.end {
            return None;
        }
        let host = &self.text[at + 1..address.end];
        let reported = !self.options.url_must_have_scheme && self.fuzzy_host_is_known(host);
        Some(reported.then_some(address.start..end))
    }

    /// Rescans words whose host linkify misreads, on a shadow copy where each such character
    /// is an ASCII letter of the same byte length, so offsets map back unchanged; the found
    /// links are then validated on the real text like any other.
    fn shadowed_hosts(&self, links: &mut Vec<Link>) {
        let bytes = self.text.as_bytes();
        // Where a word may need a shadow: a non-ASCII character, `_`, or a dot before `/:?#`.
        let is_trigger = |i: usize| {
            let b = bytes[i];
            b >= 0xC0
                || b == b'_'
                || (b == b'.' && matches!(bytes.get(i + 1), Some(b'/' | b':' | b'?' | b'#')))
        };
        let ends_word = |c: char| c.is_whitespace() || ends_link(c);
        let mut sorted = false;
        let mut found = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if !is_trigger(i) {
                i = skip_plain_words(bytes, i + 1, b"_.");
                continue;
            }
            let start = self.text[..i]
                .char_indices()
                .rev()
                .find(|&(_, c)| ends_word(c))
                .map_or(0, |(j, c)| j + c.len_utf8());
            let end = self.text[i..]
                .char_indices()
                .find(|&(_, c)| ends_word(c))
                .map_or(bytes.len(), |(j, _)| i + j);
            // Each word is looked at once, from its first trigger.
            i = end.max(i + 1);
            let word = &self.text[start..end];
            if !word.contains('.') || !might_need_shadow(word) {
                continue;
            }
            if !sorted {
                links.sort_by_key(|link| link.range.start);
                sorted = true;
            }
            if is_covered_range(links, start..end) {
                continue;
            }
            let Some(shadow) = shadow_of(word, self.options.url_can_be_iri) else {
                continue;
            };
            self.each_candidate(start, &shadow, |range| {
                let on_boundaries = self.text.is_char_boundary(range.start)
                    && self.text.is_char_boundary(range.end);
                on_boundaries
                    .then(|| self.validate(range.clone(), MatchKind::Url, &mut found))
                    .flatten()
                    .unwrap_or(range.end)
            });
        }
        links.append(&mut found);
    }
}

/// `text` with every character that ends a link (Unicode spaces and punctuation, CJK
/// punctuation, fullwidth forms: [`ends_link`] but not [`is_cjk_letter`]; and CJK letters glued
/// to an ASCII letter or digit) replaced by ASCII spaces of the same byte length. Only non-ASCII bytes are decoded, and text without such
/// characters (most text) is not copied at all.
fn without_hard_terminators(text: &str) -> std::borrow::Cow<'_, str> {
    let bytes = text.as_bytes();
    let hard_from = |mut i: usize| {
        while i < bytes.len() {
            if bytes[i] < 0x80 {
                i = skip_plain_words(bytes, i + 1, &[]);
                continue;
            }
            let c = text[i..].chars().next().unwrap_or(' ');
            // CJK letters right after `/`, `.` or `//` are a path or IDN host (`/wiki/北京`,
            // `http://例子.cn`); glued to ASCII letters they are the prose going on (`7.am以获取`).
            let glued = i > 0 && bytes[i - 1].is_ascii_alphanumeric();
            if ends_link(c) && (!is_cjk_letter(c) || glued) {
                return Some((i, c.len_utf8()));
            }
            i += c.len_utf8();
        }
        None
    };
    // Most text has no such character: no copy then.
    let Some(mut hard) = hard_from(0) else {
        return std::borrow::Cow::Borrowed(text);
    };
    let mut out = bytes.to_vec();
    loop {
        let (at, len) = hard;
        out[at..at + len].fill(b' ');
        match hard_from(at + len) {
            Some(next) => hard = next,
            None => break,
        }
    }
    // Whole characters were replaced by ASCII spaces, so the bytes are still UTF-8.
    match String::from_utf8(out) {
        Ok(copy) => std::borrow::Cow::Owned(copy),
        Err(_) => std::borrow::Cow::Borrowed(text),
    }
}

/// The first index at or after `from` that may hold a non-ASCII byte or one of `wanted`,
/// skipping eight bytes at a time over machine words that hold neither (SWAR), so the scans
/// for rare bytes run at memory speed without a `memchr` dependency.
fn skip_plain_words(bytes: &[u8], mut from: usize, wanted: &[u8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let has_zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS != 0;
    while let Some(chunk) = bytes.get(from..from + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        let plain = word & HIGHS == 0
            && wanted
                .iter()
                .all(|&b| !has_zero_byte(word ^ (ONES * u64::from(b))));
        if !plain {
            return from;
        }
        from += 8;
    }
    from
}

/// Cheap test for what [`shadow_of`] would replace.
fn might_need_shadow(word: &str) -> bool {
    let bytes = word.as_bytes();
    !word.is_ascii()
        || bytes.contains(&b'_')
        || bytes
            .windows(2)
            .any(|w| w[0] == b'.' && matches!(w[1], b'/' | b':' | b'?' | b'#'))
}

/// `word` with `_`, non-ASCII letters and a host's trailing dot before `/:?#` replaced by
/// ASCII letters of the same byte length; `None` when nothing needed replacing.
fn shadow_of(word: &str, iri: bool) -> Option<String> {
    let mut shadow = String::with_capacity(word.len());
    let mut changed = false;
    let mut previous = ' ';
    let mut chars = word.chars().peekable();
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        let replace = c == '_'
            || (iri
                && !c.is_ascii()
                && !ends_link(c)
                && (c.is_alphanumeric() || addr_spec::is_joiner(c)))
            || (c == '.'
                && previous.is_alphanumeric()
                && matches!(next, Some('/' | ':' | '?' | '#')));
        if replace {
            shadow.extend(std::iter::repeat_n('a', c.len_utf8()));
            changed = true;
        } else {
            shadow.push(c);
        }
        previous = c;
    }
    changed.then_some(shadow)
}

/// Drops an address that lies inside a URL (its userinfo, path, query or fragment), then every
/// URL that overlaps a remaining address (`user.name` in `user.name+tag@example.com`).
/// Sorted sweeps, so many links cost `n log n`.
fn drop_conflicts(links: &mut Vec<Link>) {
    links.sort_by_key(|link| link.range.start);
    // For each URL in start order, the furthest end of it and every URL before it.
    let mut url_starts = Vec::new();
    let mut furthest_ends = Vec::new();
    for link in links.iter().filter(|l| l.kind != MatchKind::Email) {
        let furthest = furthest_ends
            .last()
            .copied()
            .unwrap_or(0)
            .max(link.range.end);
        url_starts.push(link.range.start);
        furthest_ends.push(furthest);
    }
    links.retain(|link| {
        if link.kind != MatchKind::Email {
            return true;
        }
        let before = url_starts.partition_point(|&start| start < link.range.start);
        before == 0 || furthest_ends[before - 1] < link.range.end
    });
    // Addresses never overlap each other, so in start order their ends ascend too.
    let emails: Vec<Range<usize>> = links
        .iter()
        .filter(|l| l.kind == MatchKind::Email)
        .map(|l| l.range.clone())
        .collect();
    links.retain(|link| {
        if link.kind == MatchKind::Email {
            return true;
        }
        let next = emails.partition_point(|e| e.end <= link.range.start);
        emails.get(next).is_none_or(|e| e.start >= link.range.end)
    });
}

/// Whether a link covers all of `range`; `links` sorted by start.
fn is_covered_range(links: &[Link], range: Range<usize>) -> bool {
    let before = links.partition_point(|link| link.range.start <= range.start);
    links[..before]
        .iter()
        .rev()
        .take(4)
        .any(|link| link.range.end >= range.end)
}

/// Which positions a set of links covers, answered by binary search.
struct Coverage {
    /// Link starts in ascending order.
    starts: Vec<usize>,
    /// For each start, the furthest end of that link and every link before it.
    furthest_ends: Vec<usize>,
}

impl Coverage {
    fn of(links: &[Link]) -> Coverage {
        let mut ranges: Vec<Range<usize>> = links.iter().map(|l| l.range.clone()).collect();
        ranges.sort_by_key(|r| r.start);
        let mut furthest = 0;
        Coverage {
            starts: ranges.iter().map(|r| r.start).collect(),
            furthest_ends: ranges
                .iter()
                .map(|r| {
                    furthest = furthest.max(r.end);
                    furthest
                })
                .collect(),
        }
    }

    /// Whether a link holds byte `at`.
    fn contains(&self, at: usize) -> bool {
        let before = self.starts.partition_point(|&start| start <= at);
        before > 0 && self.furthest_ends[before - 1] > at
    }
}

/// Characters that, right before a link without a scheme, show it is the tail of a longer
/// token (`_example.com`, `path:to:file.pm`, `a_b.example.com`), not a link of its own.
fn continues_host(c: char) -> bool {
    (c.is_alphanumeric() && !ends_link(c))
        || matches!(
            c,
            '_' | '-' | '.' | '@' | ':' | '/' | '\\' | '%' | '~' | '&' | '=' | '#' | '$' | '+'
        )
}

/// Whether `host` is a DNS host name (RFC 1123 letters, digits and hyphens, RFC 5890 U-labels):
/// links written without a scheme need one, while `http://a_b.example` is an RFC 3986 reg-name.
fn is_hostname(host: &str) -> bool {
    !host.contains('_')
}

/// Whether a reg-name's last label is free of `_`: `http://a_b.example.com` names a host,
/// `http://example.com_` does not (linkify-it).
fn top_label_is_plain(host: &str) -> bool {
    let host = host.strip_suffix('.').unwrap_or(host);
    !host.rsplit('.').next().unwrap_or(host).contains('_')
}

/// `7.am`, `11.pm`: an hour and a meridiem, which happen to spell an Armenian or Saint Pierre
/// host; `27.pm` is no hour and stays a link.
fn is_clock_time(name: &str, tld: &str) -> bool {
    let hour = name.parse::<u8>().is_ok_and(|h| (1..=12).contains(&h)) && name.len() <= 2;
    hour && (tld.eq_ignore_ascii_case("am") || tld.eq_ignore_ascii_case("pm"))
}

/// Schemes within two edits of `http` or `https` that no registry knows (`hppt`, `httt`,
/// `htps`, `hxxp`): typos or defanged links, not links (linkify-it's `not_links`).
fn is_misspelled_web_scheme(scheme: &str) -> bool {
    if scheme.eq_ignore_ascii_case("https") || scheme.eq_ignore_ascii_case("http") {
        return false;
    }
    let scheme = scheme.to_ascii_lowercase();
    if KNOWN_SCHEMES.contains(&scheme.as_str()) || scheme.len() > 7 {
        return false;
    }
    ["http", "https"]
        .iter()
        .any(|web| edit_distance(scheme.as_bytes(), web.as_bytes()) <= 2)
}

/// URI schemes within two edits of `http` that are real: registered with IANA (`ftp`, `sftp`,
/// `tftp`, `rtsp`, `rtspu`, `rtsps`, `nntp`, `shttp`, `hcp`, `ipp`, `ipps`) or in wide use
/// (`ftps`, `rtmp`, `rtmps`, `smtp`).
const KNOWN_SCHEMES: &[&str] = &[
    "http", "https", "ftp", "ftps", "sftp", "tftp", "rtsp", "rtspu", "rtsps", "rtmp", "rtmps",
    "nntp", "shttp", "hcp", "ipp", "ipps", "smtp",
];

/// Optimal-string-alignment distance (adjacent transpositions count once), for short ASCII.
fn edit_distance(a: &[u8], b: &[u8]) -> usize {
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    rows[0] = (0..=b.len()).collect();
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
}

/// Byte offset in a URL of the character linkify triggered on: the `:` of a leading
/// `scheme://`, else the first dot.
fn anchor_of(link: &str) -> Option<usize> {
    scheme_end(link)
        .map(|after_scheme| after_scheme - 3)
        .or_else(|| link.find('.'))
}

/// The offset just past `scheme://` when `link` starts with a scheme.
fn scheme_end(link: &str) -> Option<usize> {
    let colon = link.find("://")?;
    let scheme = &link.as_bytes()[..colon];
    let is_scheme = !scheme.is_empty()
        && scheme[0].is_ascii_alphabetic()
        && scheme
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    is_scheme.then_some(colon + 3)
}

/// The host of an authority-first string (`user@host:port/path` → `host`).
fn host_of(authority: &str) -> &str {
    let authority = authority.split(['/', '?', '#']).next().unwrap_or(authority);
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if host_port.starts_with('[') {
        return host_port.split_inclusive(']').next().unwrap_or(host_port);
    }
    host_port.split(':').next().unwrap_or(host_port)
}

/// Whether the authority's port, if any, is a number a TCP port can have.
fn port_is_valid(authority: &str) -> bool {
    let authority = authority.split(['/', '?', '#']).next().unwrap_or(authority);
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let after_host = match host_port.strip_prefix('[') {
        Some(literal) => literal.split_once(']').map_or("", |(_, rest)| rest),
        None => host_port.find(':').map_or("", |i| &host_port[i..]),
    };
    match after_host.strip_prefix(':') {
        Some(port) if !port.is_empty() => {
            port.len() <= 5
                && port.bytes().all(|b| b.is_ascii_digit())
                && port.parse::<u32>().is_ok_and(|p| p <= 65535)
        }
        _ => true,
    }
}

/// Lower-cased scheme and host; links written without a scheme get `http://` (as linkify-it
/// normalises them), so the value is always an absolute URL.
fn canonical_url(link: &str) -> String {
    let (scheme, rest) = match scheme_end(link) {
        Some(after) => (link[..after - 3].to_ascii_lowercase(), &link[after..]),
        None => ("http".to_owned(), link.strip_prefix("//").unwrap_or(link)),
    };
    let authority_len = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_len);
    let (userinfo, host_port) = match authority.rfind('@') {
        Some(at) => authority.split_at(at + 1),
        None => ("", authority),
    };
    let url = format!("{scheme}://{userinfo}{}{path}", host_port.to_lowercase());
    // Zero-width characters are kept in the span (they were written there) but are not part
    // of the address a browser would open.
    url.replace(['\u{200B}', '\u{200C}', '\u{200D}'], "")
}

const MAILTO: &str = "mailto:";

/// Whether `mailto:` (any case) is written right before byte `at`.
fn after_mailto(text: &str, at: usize) -> bool {
    let before = &text.as_bytes()[..at];
    before.len() >= MAILTO.len()
        && before[before.len() - MAILTO.len()..].eq_ignore_ascii_case(MAILTO.as_bytes())
}

/// Without `mailto:`, with the domain lower-cased (the local part is case-sensitive).
fn canonical_email(address: &str) -> String {
    let address = match address.get(..7) {
        Some(prefix) if prefix.eq_ignore_ascii_case("mailto:") => &address[7..],
        _ => address,
    };
    match address.rsplit_once('@') {
        Some((local, domain)) => format!("{local}@{}", domain.to_lowercase()),
        None => address.to_owned(),
    }
}

static CC_TABLE: std::sync::OnceLock<std::collections::HashSet<&'static str>> =
    std::sync::OnceLock::new();
static GENERIC_TABLE: std::sync::OnceLock<std::collections::HashSet<&'static str>> =
    std::sync::OnceLock::new();

/// Whether `word` is one of the space-separated `words`, through a table built on first use.
fn in_word_list(
    table: &std::sync::OnceLock<std::collections::HashSet<&'static str>>,
    words: &'static str,
    word: &str,
) -> bool {
    table
        .get_or_init(|| words.split_whitespace().collect())
        .contains(word)
}

/// Country-code TLDs (IANA, 2024).
const CCTLDS: &str = "ac ad ae af ag ai al am ao aq ar as at au aw ax az ba bb bd be bf bg bh bi \
    bj bm bn bo br bs bt bw by bz ca cc cd cf cg ch ci ck cl cm cn co cr cu cv cw cx cy cz de dj \
    dk dm do dz ec ee eg er es et eu fi fj fk fm fo fr ga gb gd ge gf gg gh gi gl gm gn gp gq gr \
    gs gt gu gw gy hk hm hn hr ht hu id ie il im in io iq ir is it je jm jo jp ke kg kh ki km kn \
    kp kr kw ky kz la lb lc li lk lr ls lt lu lv ly ma mc md me mg mh mk ml mm mn mo mp mq mr ms \
    mt mu mv mw mx my mz na nc ne nf ng ni nl no np nr nu nz om pa pe pf pg ph pk pl pm pn pr ps \
    pt pw py qa re ro rs ru rw sa sb sc sd se sg sh si sk sl sm sn so sr ss st su sv sx sy sz tc \
    td tf tg th tj tk tl tm tn to tr tt tv tw tz ua ug uk us uy uz va vc ve vg vi vn vu wf ws ye \
    yt za zm zw";

/// Country codes that are also common file extensions: `main.rs` alone is a file, not a site.
const FILE_EXTENSION_CCTLDS: &[&str] = &["md", "py", "rs", "sh"];

/// Generic TLDs common enough to link without a scheme (linkify-it's defaults plus popular new
/// ones); `v1.api` or `file.json` should stay text.
const GENERIC_TLDS: &str = "com org net edu gov mil int info biz name pro aero asia coop museum \
    mobi tel travel jobs cat xxx web shop app dev page blog cloud online site website store tech \
    xyz club live news media studio agency company digital network systems solutions software \
    academy today world life link click space fun top art icu vip wiki social email design global";

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<(&str, MatchKind, String)> {
        find_links(text, &LinkOptions::default())
            .into_iter()
            .map(|d| (&text[d.range], d.kind, d.value))
            .collect()
    }

    #[test]
    fn user_info_is_not_an_email() {
        let links = found("see http://user:pass@Example.COM/Path ok");
        assert_eq!(
            links,
            [(
                "http://user:pass@Example.COM/Path",
                MatchKind::Url,
                "http://user:pass@example.com/Path".to_owned()
            )]
        );
    }

    #[test]
    fn cjk_ends_links_on_both_sides() {
        let links = found("请访问https://7.am以获取更多信息。微软的官网是microsoft.com哦");
        let texts: Vec<&str> = links.iter().map(|l| l.0).collect();
        assert_eq!(texts, ["https://7.am", "microsoft.com"]);
    }

    #[test]
    fn cjk_path_and_idn_host_stay_in_the_link() {
        let links = found("见 https://zh.wikipedia.org/wiki/北京 和 http://例子.cn/路径");
        let texts: Vec<&str> = links.iter().map(|l| l.0).collect();
        assert_eq!(
            texts,
            ["https://zh.wikipedia.org/wiki/北京", "http://例子.cn/路径"]
        );
        assert_eq!(
            found("«http://example.com/x…»")[0].0,
            "http://example.com/x"
        );
    }

    #[test]
    fn scheme_after_at_is_a_link_and_not_an_email() {
        let links = found("test.example@http://vk.com");
        assert_eq!(links.len(), 1);
        assert_eq!(links[0].0, "http://vk.com");
    }

    #[test]
    fn scheme_relative_links_keep_slashes() {
        assert_eq!(found("//localhost")[0].0, "//localhost");
        assert_eq!(found("at //example.com/x.")[0].0, "//example.com/x");
        assert!(
            found("google.xxx // known tld")
                .iter()
                .all(|l| l.0 == "google.xxx")
        );
        assert!(found("1abc://example.com").is_empty());
    }

    #[test]
    fn invalid_port_rejects_the_link() {
        assert!(found("google.com:500000 // invalid port").is_empty());
        assert_eq!(
            found("http://localhost:8080/x")[0].0,
            "http://localhost:8080/x"
        );
    }

    #[test]
    fn fuzzy_links_need_a_known_tld() {
        assert_eq!(found("visit www.abc.com.")[0].2, "http://www.abc.com");
        for text in [
            "v1.2.3",
            "config.json",
            "main.rs",
            "1000.2.3.4",
            "node.js",
            "foo.123",
        ] {
            assert!(found(text).is_empty(), "{text}");
        }
        assert_eq!(found("27.pm and s7.am").len(), 2);
    }

    #[test]
    fn bare_ipv4_is_a_url_only_with_fuzzy_ip() {
        let options = LinkOptions {
            fuzzy_ip: true,
            ..LinkOptions::default()
        };
        assert_eq!(find_links("4.4.4.4/x", &options).len(), 1);
        assert!(find_links("1000.2.3.4", &options).is_empty());
        assert!(found("4.4.4.4/x").is_empty());
    }

    #[test]
    fn email_with_ip_literal_domain() {
        let links = found("j_9@[129.126.118.1] is valid");
        assert_eq!(links[0].0, "j_9@[129.126.118.1]");
        assert_eq!(links[0].1, MatchKind::Email);
    }

    #[test]
    fn dot_atom_address_is_not_split_into_url_and_address() {
        let links = found("write to user.name+tag@example.com today");
        assert_eq!(links.len(), 1);
        assert_eq!(links[0].0, "user.name+tag@example.com");
        assert_eq!(links[0].1, MatchKind::Email);
    }

    #[test]
    fn invalid_address_is_not_trimmed_to_a_valid_tail() {
        for text in ["a..b@example.com", "Carol@new_type.com", "foo@bar_baz.com"] {
            assert!(found(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn address_inside_url_is_part_of_the_url() {
        for text in [
            "http://example.com/foo@bar.com",
            "http://example.com/?q=me@you.com",
            "http://example.com/#me@you.com",
            "http://example.com:80@evil.com",
        ] {
            let links = found(text);
            assert_eq!(links.len(), 1, "{text}");
            assert_eq!((links[0].0, links[0].1), (text, MatchKind::Url));
        }
    }

    #[test]
    fn bare_ip_email_domain_only_with_fuzzy_ip() {
        assert!(found("user@1.2.3.4").is_empty());
        let options = LinkOptions {
            fuzzy_ip: true,
            ..LinkOptions::default()
        };
        assert_eq!(find_links("user@1.2.3.4", &options).len(), 1);
        assert_eq!(found("x@[IPv6:2001:db8::1]")[0].0, "x@[IPv6:2001:db8::1]");
    }

    #[test]
    fn internationalised_hosts_and_tlds() {
        for text in [
            "президент.рф",
            "http://президент.рф/",
            "xn--d1abbgf6aiiy.xn--p1ai",
            "موقع.وزارة-الاتصالات.مصر",
        ] {
            assert_eq!(found(text).first().map(|l| l.0), Some(text), "{text}");
        }
    }

    #[test]
    fn zero_width_joiners_stay_inside_the_link() {
        let text = "see http://exa\u{200d}mple.com/pa\u{200d}th now";
        let links = found(text);
        assert_eq!(links[0].0, "http://exa\u{200d}mple.com/pa\u{200d}th");
        assert_eq!(links[0].2, "http://example.com/path");
    }

    #[test]
    fn misspelled_schemes_are_not_links() {
        for text in ["hppt://example.com", "httt://abc.com", "htps://x.org"] {
            assert!(found(text).is_empty(), "{text}");
        }
        for text in [
            "ftp://example.com",
            "svn+ssh://example.com",
            "upi://pay?pa=x",
        ] {
            assert_eq!(found(text).len(), 1, "{text}");
        }
    }

    #[test]
    fn underscores_and_trailing_dots_in_hosts() {
        assert_eq!(
            found("http://a_b.example.com/x")[0].0,
            "http://a_b.example.com/x"
        );
        assert_eq!(
            found("http://example.com./path")[0].0,
            "http://example.com./path"
        );
        assert_eq!(found("www.example.com./x")[0].0, "www.example.com./x");
        assert_eq!(found("example.com.")[0].0, "example.com");
        for text in [
            "a_b.example.com",
            "_example.com",
            "_http://example.com",
            "http://example.com_",
        ] {
            assert!(found(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn clock_times_and_file_paths_are_not_hosts() {
        assert!(found("wake me at 7.am").is_empty());
        assert!(found("path:to:file.pm").is_empty());
        assert_eq!(found("see 27.pm and s7.am").len(), 2);
    }
}
