//! libphonenumber metadata, loaded one country calling code at a time.
//!
//! The `phonenumber` crate's default database parses every pattern of all 250 territories the
//! first time any number is parsed, about 0.1 s of CPU in every process. `build.rs` splits the
//! same metadata by calling code, and this module builds a small [`Database`] for a code the
//! first time a text needs it (the region's own code, or the code after a `+`). Each has its own
//! regex cache, so numbers from many countries no longer evict each other's compiled patterns.
//! Nothing here may touch the crate's default database (its formatter does, even when given
//! another database); `quarry bench` reports the first call.

use std::sync::OnceLock;

use phonenumber::country::Id;
use phonenumber::metadata::{Database, loader};

include!(concat!(env!("OUT_DIR"), "/phone_metadata_index.rs"));

static JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/phone_metadata.json"));

/// One lazily built database per entry of `GROUPS`.
static DATABASES: [OnceLock<Option<Database>>; 256] = [const { OnceLock::new() }; 256];

/// The territories sharing calling `code` (all of +1 for `1`), or `None` for an unknown code.
pub(super) fn for_code(code: u16) -> Option<&'static Database> {
    let group = GROUPS.binary_search_by_key(&code, |&(c, _, _)| c).ok()?;
    DATABASES
        .get(group)?
        .get_or_init(|| {
            let (_, start, end) = GROUPS[group];
            let territories: Vec<loader::Metadata> =
                serde_json::from_str(&JSON[start..end]).ok()?;
            Database::from(territories).ok()
        })
        .as_ref()
}

/// The territories sharing `region`'s calling code.
pub(super) fn for_region(region: Id) -> Option<&'static Database> {
    let id: &str = region.as_ref();
    let at = REGIONS.binary_search_by_key(&id, |&(r, _)| r).ok()?;
    for_code(REGIONS[at].1)
}

/// The calling code `digits` (after a `+` or an international prefix) start with, and its
/// database. Calling codes are prefix-free, so at most one of the 1–3 digit prefixes is one.
pub(super) fn for_international(digits: &str) -> Option<(u16, &'static Database)> {
    (1..=3.min(digits.len())).find_map(|len| {
        let code: u16 = digits.get(..len)?.parse().ok()?;
        GROUPS
            .binary_search_by_key(&code, |&(c, _, _)| c)
            .ok()
            .and_then(|_| Some((code, for_code(code)?)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_calling_code_loads() {
        assert!(GROUPS.len() <= DATABASES.len());
        for &(code, _, _) in GROUPS {
            assert!(for_code(code).is_some(), "+{code}");
        }
    }

    #[test]
    fn regions_and_international_digits_find_their_code() {
        let us = for_region(Id::US).expect("US metadata");
        assert!(us.by_id("CA").is_some(), "+1 territories load together");
        assert_eq!(for_international("442079460958").map(|(c, _)| c), Some(44));
        assert_eq!(for_international("16505550100").map(|(c, _)| c), Some(1));
        assert!(for_international("999").is_none());
        assert!(for_international("").is_none());
    }
}
