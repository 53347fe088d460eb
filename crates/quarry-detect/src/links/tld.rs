//! Top-level domains of the DNS root zone (`data/tlds.txt`), in both their Unicode and `xn--`
//! forms, so `президент.рф`, `موقع.مصر` and `xn--d1abbgf6aiiy.xn--p1ai` are recognised without an
//! IDNA implementation at run time.

use std::collections::HashSet;
use std::sync::OnceLock;

const TLDS: &str = include_str!("../../data/tlds.txt");

/// Longest entry in the list, in bytes; longer labels are rejected before any lookup.
const MAX_TLD_BYTES: usize = 64;

fn table() -> &'static HashSet<&'static str> {
    static TABLE: OnceLock<HashSet<&'static str>> = OnceLock::new();
    TABLE.get_or_init(|| {
        TLDS.lines()
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .collect()
    })
}

/// Whether `label` (any case) is a delegated top-level domain.
pub(crate) fn is_tld(label: &str) -> bool {
    if label.is_empty() || label.len() > MAX_TLD_BYTES {
        return false;
    }
    if label.bytes().all(|b| b.is_ascii_lowercase()) || !label.is_ascii() && is_lower(label) {
        return table().contains(label);
    }
    table().contains(label.to_lowercase().as_str())
}

fn is_lower(label: &str) -> bool {
    label.chars().all(|c| !c.is_uppercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_idn_and_punycode_forms() {
        for tld in [
            "com",
            "COM",
            "am",
            "рф",
            "xn--p1ai",
            "مصر",
            "xn--wgbh1c",
            "中国",
        ] {
            assert!(is_tld(tld), "{tld}");
        }
        for junk in ["coma", "invalid", "json", "", "x", "123"] {
            assert!(!is_tld(junk), "{junk}");
        }
    }
}
