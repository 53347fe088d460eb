//! IP addresses: dotted-quad IPv4 (leading zeros allowed, `08.008.08.08` → `8.8.8.8`) and IPv6
//! in any RFC 4291 text form (`::`, `1::1`, `::ffff:1.2.3.4`).
//!
//! An address glued to letters or to a longer dotted number (`v1.2.3.4`, `1.2.3.4.5`,
//! `1111.1.1.1`) is not one; its digits are skipped as a whole so no sub-address is reported.
//!
//! **Linear time:** each scan resumes after the whole run of address characters it read, and
//! IPv4 addresses inside IPv6 ones are dropped in one sorted sweep.

use std::net::Ipv6Addr;

use quarry_core::MatchKind;

use crate::Detection;

/// Finds IPv4 and IPv6 addresses; `value` is the canonical form (IPv4 without leading zeros,
/// IPv6 per RFC 5952: lower-case, longest zero run compressed).
pub fn find(text: &str) -> Vec<Detection> {
    let mut found = find_ipv6(text);
    // `::ffff:1.2.3.4` holds an IPv4 address; the IPv6 span wins. Both lists are in text order
    // and free of overlaps within themselves, so one sweep finds the overlaps.
    let mut v6 = 0;
    let ipv4: Vec<Detection> = find_ipv4(text)
        .into_iter()
        .filter(|v4| {
            while found.get(v6).is_some_and(|d| d.range.end <= v4.range.start) {
                v6 += 1;
            }
            found.get(v6).is_none_or(|d| d.range.start >= v4.range.end)
        })
        .collect();
    found.extend(ipv4);
    found.sort_by_key(|d| d.range.start);
    found
}

fn find_ipv4(text: &str) -> Vec<Detection> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(offset) = text[from..].find('.') {
        let dot = from + offset;
        from = dot + 1;
        if dot == 0 || !bytes[dot - 1].is_ascii_digit() {
            continue;
        }
        // The whole run of digits and dots around this dot is one candidate.
        let start = bytes[..dot]
            .iter()
            .rposition(|b| !b.is_ascii_digit() && *b != b'.')
            .map_or(0, |i| i + 1);
        let run_end = bytes[dot..]
            .iter()
            .position(|b| !b.is_ascii_digit() && *b != b'.')
            .map_or(bytes.len(), |i| dot + i);
        from = run_end.max(from);
        // A sentence may end right after the address: `is 1.2.3.4.`
        let mut end = run_end;
        if bytes[end - 1] == b'.' {
            end -= 1;
        }
        let glued = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_');
        if bytes[start] == b'.'
            || glued(start.checked_sub(1).map(|i| &bytes[i]))
            || glued(bytes.get(run_end))
        {
            continue;
        }
        if let Some(octets) = parse_ipv4(&text[start..end]) {
            found.push(Detection {
                range: start..end,
                value: octets.map(|o| o.to_string()).join("."),
                kind: MatchKind::Ip,
            });
        }
    }
    found
}

fn find_ipv6(text: &str) -> Vec<Detection> {
    let bytes = text.as_bytes();
    let is_part = |b: u8| b.is_ascii_hexdigit() || b == b':' || b == b'.';
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(offset) = text[from..].find(':') {
        let colon = from + offset;
        let start = bytes[..colon]
            .iter()
            .rposition(|&b| !is_part(b))
            .map_or(0, |i| i + 1);
        let run_end = bytes[colon..]
            .iter()
            .position(|&b| !is_part(b))
            .map_or(bytes.len(), |i| colon + i);
        from = run_end;
        let glued = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_');
        if glued(start.checked_sub(1).map(|i| &bytes[i])) || glued(bytes.get(run_end)) {
            continue;
        }
        // Trailing sentence punctuation (`is ::1.` / `is 1::1:`) is not part of the address.
        let mut candidate = &text[start..run_end];
        let mut address = candidate.parse::<Ipv6Addr>();
        if address.is_err() && candidate.len() > 2 && candidate.ends_with(['.', ':']) {
            candidate = &candidate[..candidate.len() - 1];
            address = candidate.parse::<Ipv6Addr>();
        }
        if let Ok(address) = address {
            found.push(Detection {
                range: start..start + candidate.len(),
                value: address.to_string(),
                kind: MatchKind::Ip,
            });
        }
    }
    found
}

/// Parses dotted-quad IPv4, allowing leading zeros (`08.008.08.08`).
pub(crate) fn parse_ipv4(s: &str) -> Option<[u8; 4]> {
    let mut octets = [0u8; 4];
    let mut parts = s.split('.');
    for octet in &mut octets {
        let part = parts.next()?;
        if part.is_empty() || part.len() > 3 || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *octet = part.parse().ok()?;
    }
    parts.next().is_none().then_some(octets)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<(&str, String)> {
        crate::slices_and_values(text, find(text))
    }

    #[test]
    fn leading_zeros_are_normalised() {
        assert_eq!(
            found("08.008.08.08是IP地址"),
            [("08.008.08.08", "8.8.8.8".to_owned())]
        );
    }

    #[test]
    fn octets_above_255_are_rejected() {
        assert!(find("O IP é 256.1.1.1. É nada!").is_empty());
        assert!(find("1.2.3.1000").is_empty());
    }

    #[test]
    fn digits_glued_to_letters_or_longer_numbers_are_rejected() {
        for text in [
            "错误的IP例子1111.1.1.1",
            "v1.2.3.4",
            "1.2.3.4.5",
            "1.2.3.4abc",
            "x.1.2.3.4",
        ] {
            assert!(find(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn prefix_length_and_sentence_end_are_not_part_of_the_address() {
        assert_eq!(found("8.8.8.1/24是IP地址")[0].0, "8.8.8.1");
        assert_eq!(found("My PC IP address is 0.0.0.0.")[0].0, "0.0.0.0");
    }

    #[test]
    fn ipv6_forms_are_found_and_canonicalised() {
        assert_eq!(found("address is ::"), [("::", "::".to_owned())]);
        assert_eq!(found("V6地址是1::1")[0].0, "1::1");
        assert_eq!(
            found("é ABEF:452::FE10"),
            [("ABEF:452::FE10", "abef:452::fe10".to_owned())]
        );
        assert_eq!(found("at ::ffff:1.2.3.4 now")[0].0, "::ffff:1.2.3.4");
        assert_eq!(find("at ::ffff:1.2.3.4 now").len(), 1);
    }

    #[test]
    fn colons_in_prose_and_code_are_not_ipv6() {
        for text in [
            "I say:",
            "我说:",
            "at 10:30:45",
            "std::fmt",
            "Foo::Bar",
            "00:1A:2B:3C:4D:5E",
        ] {
            assert!(find(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn code_point_offsets_after_cjk() {
        let text = "我电脑的V6地址是1::1";
        let matches = crate::to_matches(text, find(text));
        assert_eq!((matches[0].start, matches[0].end), (9, 13));
    }
}
