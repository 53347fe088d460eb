//! libphonenumber metadata, loaded one territory or one country calling code at a time.
//!
//! The `phonenumber` crate's default database parses every pattern of all 250 territories the
//! first time any number is parsed, about 0.1 s of CPU in every process. `build.rs` splits the
//! same metadata by territory, and this module builds a small [`Database`] the first time a text
//! needs it: first the one territory a number most likely belongs to (the default region, or the
//! main territory of the code after a `+`), and the whole calling code (all 25 territories of +1)
//! only for a number that territory does not validate. Each database has its own regex cache, so
//! numbers from many countries no longer evict each other's compiled patterns.
//! Nothing here may touch the crate's default database (its formatter does, even when given
//! another database); `quarry bench` reports the first call.

use std::sync::OnceLock;

use phonenumber::country::Id;
use phonenumber::metadata::{Database, loader};

include!(concat!(env!("OUT_DIR"), "/phone_metadata_index.rs"));

static JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/phone_metadata.json"));

/// Room for every territory and every calling code (checked by a test).
const SLOTS: usize = 320;

/// One lazily built database per entry of `TERRITORIES`, and per entry of `GROUPS`.
static TERRITORY_DATABASES: [OnceLock<Option<Database>>; SLOTS] =
    [const { OnceLock::new() }; SLOTS];
static GROUP_DATABASES: [OnceLock<Option<Database>>; SLOTS] = [const { OnceLock::new() }; SLOTS];

/// Metadata a number can be checked against: one territory, and its calling code's group.
#[derive(Clone, Copy)]
pub(super) struct Scope {
    territory: usize,
    group: usize,
}

impl Scope {
    /// The territory alone: enough to parse, and to validate most numbers.
    pub fn territory(self) -> Option<&'static Database> {
        build(
            &TERRITORY_DATABASES,
            self.territory,
            self.territory..self.territory + 1,
        )
    }

    /// Every territory of the calling code: a number valid in one of them is valid.
    pub fn group(self) -> Option<&'static Database> {
        let (_, first, count) = GROUPS[self.group];
        if count == 1 {
            return self.territory();
        }
        build(&GROUP_DATABASES, self.group, first..first + count)
    }
}

fn build(
    cache: &'static [OnceLock<Option<Database>>; SLOTS],
    slot: usize,
    territories: std::ops::Range<usize>,
) -> Option<&'static Database> {
    cache
        .get(slot)?
        .get_or_init(|| {
            let parsed: Option<Vec<loader::Metadata>> = TERRITORIES
                .get(territories)?
                .iter()
                .map(|&(_, _, start, end)| serde_json::from_str(&JSON[start..end]).ok())
                .collect();
            Database::from(parsed?).ok()
        })
        .as_ref()
}

/// The scope of calling `code`, starting with its first territory (the main one, in the crate's
/// order), or `None` for an unknown code.
pub(super) fn for_code(code: u16) -> Option<Scope> {
    let group = GROUPS.binary_search_by_key(&code, |&(c, _, _)| c).ok()?;
    let (_, first, _) = GROUPS[group];
    let main = (first..first + GROUPS[group].2)
        .find(|&t| is_main(t))
        .unwrap_or(first);
    Some(Scope {
        territory: main,
        group,
    })
}

/// The scope of `region`: its own territory, then its calling code.
pub(super) fn for_region(region: Id) -> Option<Scope> {
    let id: &str = region.as_ref();
    let at = REGIONS.binary_search_by_key(&id, |&(r, _)| r).ok()?;
    let code = REGIONS[at].1;
    let group = GROUPS.binary_search_by_key(&code, |&(c, _, _)| c).ok()?;
    let (_, first, count) = GROUPS[group];
    let territory = (first..first + count).find(|&t| TERRITORIES[t].0 == id)?;
    Some(Scope { territory, group })
}

/// The calling code `digits` (after a `+` or an international prefix) start with, and its scope.
/// Calling codes are prefix-free, so at most one of the 1–3 digit prefixes is one.
pub(super) fn for_international(digits: &str) -> Option<Scope> {
    (1..=3.min(digits.len())).find_map(|len| for_code(digits.get(..len)?.parse().ok()?))
}

/// Whether territory `t` is the main one of its calling code, read from its JSON without
/// building it.
fn is_main(t: usize) -> bool {
    let (_, _, start, end) = TERRITORIES[t];
    JSON[start..end].contains("\"main_country_for_code\":true")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_territory_and_calling_code_loads() {
        assert!(TERRITORIES.len() <= SLOTS && GROUPS.len() <= SLOTS);
        for &(code, _, _) in GROUPS {
            let scope = for_code(code).expect("a listed code");
            assert!(scope.territory().is_some(), "+{code}");
            assert!(scope.group().is_some(), "+{code}");
        }
    }

    #[test]
    fn regions_and_international_digits_find_their_code() {
        let us = for_region(Id::US).expect("US metadata");
        assert!(us.territory().expect("US").by_id("CA").is_none());
        assert!(us.group().expect("+1").by_id("CA").is_some());
        let gb = for_international("442079460958").expect("+44");
        assert!(gb.territory().expect("GB").by_id("GB").is_some());
        let nanp = for_international("16505550100").expect("+1");
        assert!(nanp.territory().expect("US").by_id("US").is_some());
        assert!(for_international("999").is_none());
        assert!(for_international("").is_none());
    }
}
