//! API keys: `qk_<8 hex>_<43 base62-ish chars>`. The first part (`qk_<8 hex>`) is a public prefix
//! used to find the key; only the SHA-256 of the whole key is stored, compared in constant time.
//! The key itself is shown once, when created.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Every scope a key can carry.
pub const SCOPES: &[&str] = &[
    "entities:read",
    "entities:write",
    "documents:write",
    "extraction:trigger",
    "extraction:submit",
    "extraction:review",
];

/// What each scope of [`SCOPES`] allows, in the same order (`quarry key create --help` lists
/// them).
pub const SCOPE_DESCRIPTIONS: &[(&str, &str)] = &[
    (
        "entities:read",
        "read entity types, entities, results, documents, runs, episodes and the graph",
    ),
    (
        "entities:write",
        "create and change entity types, entities and field locks",
    ),
    ("documents:write", "upload documents and add episodes"),
    (
        "extraction:trigger",
        "start and retry extraction runs, use the extraction chat",
    ),
    (
        "extraction:submit",
        "submit field values as an external agent",
    ),
    ("extraction:review", "approve and reject results"),
];

/// A freshly made key: `secret` is shown once; `prefix` and `hash` are stored.
#[derive(Debug, Clone)]
pub struct NewKey {
    pub secret: String,
    pub prefix: String,
    pub hash: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("unknown scope '{0}'; scopes are {all}", all = SCOPES.join(", "))]
    UnknownScope(String),
    #[error("no scopes given; pass at least one of {}", SCOPES.join(", "))]
    NoScopes,
    #[error("the system random source failed: {0}")]
    Random(String),
}

/// Parses `a,b,c` into known scopes.
pub fn parse_scopes(raw: &str) -> Result<Vec<String>, KeyError> {
    let scopes: Vec<String> = raw
        .split(',')
        .map(str::trim)
        .filter(|scope| !scope.is_empty())
        .map(str::to_owned)
        .collect();
    if scopes.is_empty() {
        return Err(KeyError::NoScopes);
    }
    if let Some(unknown) = scopes.iter().find(|s| !SCOPES.contains(&s.as_str())) {
        return Err(KeyError::UnknownScope(unknown.clone()));
    }
    Ok(scopes)
}

/// Makes a new random key.
pub fn generate() -> Result<NewKey, KeyError> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut bytes = [0u8; 36];
    getrandom::fill(&mut bytes).map_err(|error| KeyError::Random(error.to_string()))?;
    let prefix = format!("qk_{}", hex(&bytes[..4]));
    // 32 bytes → 32 characters from a 62-letter alphabet (~190 bits; the tiny modulo bias is
    // irrelevant at this size).
    let body: String = bytes[4..]
        .iter()
        .map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char)
        .collect();
    let secret = format!("{prefix}_{body}");
    let hash = hash(&secret);
    Ok(NewKey {
        secret,
        prefix,
        hash,
    })
}

/// `bytes` random bytes from the system's source, as lowercase hex (session and CSRF tokens).
pub fn random_hex(bytes: usize) -> Result<String, KeyError> {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer).map_err(|error| KeyError::Random(error.to_string()))?;
    Ok(hex(&buffer))
}

/// The public prefix of a presented key (`qk_xxxxxxxx`), if it has the key's shape.
pub fn prefix_of(presented: &str) -> Option<&str> {
    let prefix = presented.get(..11)?;
    let well_formed = prefix.starts_with("qk_")
        && prefix[3..].bytes().all(|b| b.is_ascii_hexdigit())
        && presented.as_bytes().get(11) == Some(&b'_');
    well_formed.then_some(prefix)
}

/// Hex SHA-256 of a key.
pub fn hash(key: &str) -> String {
    hex(&Sha256::digest(key.as_bytes()))
}

/// Whether `presented` hashes to `stored_hash`, compared in constant time.
pub fn matches(presented: &str, stored_hash: &str) -> bool {
    hash(presented)
        .as_bytes()
        .ct_eq(stored_hash.as_bytes())
        .into()
}

/// Lower-case hex of `bytes` (key prefixes, hashes, tokens, asset ETags).
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scope_is_described_once_in_order() {
        let described: Vec<&str> = SCOPE_DESCRIPTIONS.iter().map(|(scope, _)| *scope).collect();
        assert_eq!(described, SCOPES);
    }

    #[test]
    fn generated_keys_verify_and_others_do_not() {
        let key = generate().unwrap();
        assert_eq!(prefix_of(&key.secret), Some(key.prefix.as_str()));
        assert!(matches(&key.secret, &key.hash));
        let other = generate().unwrap();
        assert_ne!(key.secret, other.secret);
        assert!(!matches(&other.secret, &key.hash));
        assert!(!matches(&format!("{}x", key.secret), &key.hash));
        assert!(
            !key.hash.contains(&key.secret[12..]),
            "only a hash is stored"
        );
    }

    #[test]
    fn random_hex_tokens_are_long_and_differ() {
        let a = random_hex(32).unwrap();
        assert_eq!(a.len(), 64);
        assert!(
            a.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        assert_ne!(a, random_hex(32).unwrap());
    }

    #[test]
    fn malformed_keys_have_no_prefix_and_scopes_are_checked() {
        for bad in [
            "",
            "qk_",
            "sk_12345678_abc",
            "qk_zzzzzzzz_abc",
            "qk_12345678abc",
        ] {
            assert_eq!(prefix_of(bad), None, "{bad}");
        }
        assert_eq!(
            parse_scopes("extraction:submit, entities:read").unwrap(),
            vec!["extraction:submit", "entities:read"]
        );
        assert_eq!(
            parse_scopes("extraction:submit,fax:send").unwrap_err(),
            KeyError::UnknownScope("fax:send".into())
        );
        assert_eq!(parse_scopes(" , ").unwrap_err(), KeyError::NoScopes);
    }
}
