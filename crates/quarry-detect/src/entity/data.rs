//! Where the entity data (the gazetteer table, about 4.5 MB) comes from. With the cargo feature
//! `embedded-entity-data` (on by default) it is compiled in, as `build.rs` wrote it. Without it
//! the crate is that much smaller — what the browser package wants, so that a page extracting
//! only emails, URLs or dates does not download it — and a host installs the same bytes at run
//! time with [`load`]. Until then `entity` and `name` have no table, and the skill refuses them
//! with `EntityDataNotLoaded` instead of answering with nothing.
//!
//! Installed bytes are checked whole before use ([`decode`]), so no lookup can read out of bounds
//! or probe forever whatever the bytes are. This module reads no file: the host hands it bytes.
//! Lookups reach the table in use through [`gazetteer`].

use std::borrow::Cow;
use std::sync::OnceLock;

use super::gazetteer::{Gazetteer, read_u16, read_u32};
use super::table_format::{ENTRY_BYTES, HEADER_BYTES, HEADER_FIELDS, MAGIC};

/// The table once chosen: the embedded one on first use, or the one [`load`] installed.
static TABLE: OnceLock<Gazetteer> = OnceLock::new();

#[cfg(feature = "embedded-entity-data")]
static EMBEDDED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/entity_data.bin"));

/// Why entity data could not be installed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EntityDataError {
    #[error(
        "entity data is already loaded (or compiled into this build); it can be installed once"
    )]
    AlreadyLoaded,
    #[error(
        "these bytes are not Quarry entity data of format {}: expected them to start with {:?}; \
         load the entity_data.bin built with this module",
        String::from_utf8_lossy(&MAGIC[MAGIC.len() - 2..]),
        String::from_utf8_lossy(MAGIC)
    )]
    NotEntityData,
    #[error("entity data is damaged ({0}); load the entity_data.bin built with this module")]
    Damaged(&'static str),
}

/// Installs entity data from `bytes` (the `entity_data.bin` that `build.rs` writes), after checking
/// it whole. Fails when the bytes are not valid entity data or a table is already in use.
pub fn load(bytes: Vec<u8>) -> Result<(), EntityDataError> {
    if is_loaded() {
        return Err(EntityDataError::AlreadyLoaded);
    }
    let table = decode(Cow::Owned(bytes), Check::Whole)?;
    TABLE.set(table).map_err(|_| EntityDataError::AlreadyLoaded)
}

/// Whether `entity` and `name` have their table: compiled in, or installed with [`load`].
pub fn is_loaded() -> bool {
    cfg!(feature = "embedded-entity-data") || TABLE.get().is_some()
}

/// The table in use: the compiled-in one, the one a host installed, or an empty one (every word
/// unknown) when this build embeds none and nothing was installed yet.
pub(crate) fn gazetteer() -> &'static Gazetteer {
    table()
}

/// The table lookups read.
pub(super) fn table() -> &'static Gazetteer {
    #[cfg(feature = "embedded-entity-data")]
    {
        // The embedded bytes were written by build.rs moments before they were compiled in:
        // reading the header is enough, and costs nothing on the first call.
        TABLE.get_or_init(|| {
            decode(Cow::Borrowed(EMBEDDED), Check::HeaderOnly)
                .expect("build.rs writes valid entity data")
        })
    }
    #[cfg(not(feature = "embedded-entity-data"))]
    {
        /// Knows no word: what lookups see before entity data is installed.
        static EMPTY: Gazetteer = Gazetteer {
            data: Cow::Borrowed(&[0; 4]),
            keys: 0..0,
            entries: 0..0,
            slots: 0..4,
            slot_mask: 0,
            longest_phrase_tokens: 0,
            longest_phrase_bytes: 0,
        };
        TABLE.get().unwrap_or(&EMPTY)
    }
}

/// How much of the bytes [`decode`] checks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Check {
    /// Bytes from outside: every entry and slot, so lookups cannot fail.
    Whole,
    /// Bytes this build wrote: the header and the sizes.
    #[cfg_attr(not(feature = "embedded-entity-data"), allow(dead_code))]
    HeaderOnly,
}

/// Reads the header and the parts' places; with [`Check::Whole`] also checks that every entry's
/// key lies inside the keys, every slot names an entry, and an empty slot ends every probe.
fn decode(data: Cow<'static, [u8]>, check: Check) -> Result<Gazetteer, EntityDataError> {
    if data.len() < HEADER_BYTES || !data.starts_with(MAGIC) {
        return Err(EntityDataError::NotEntityData);
    }
    let field = |i: usize| read_u32(&data, MAGIC.len() + 4 * i) as usize;
    let [
        key_bytes,
        entry_count,
        slot_count,
        phrase_tokens,
        phrase_bytes,
    ]: [usize; HEADER_FIELDS] = std::array::from_fn(field);
    if !slot_count.is_power_of_two() || entry_count >= slot_count {
        return Err(EntityDataError::Damaged(
            "the slot count is not a power of two above the entry count",
        ));
    }
    let keys = HEADER_BYTES..HEADER_BYTES + key_bytes;
    let entries = keys.end..keys.end + entry_count * ENTRY_BYTES;
    let slots = entries.end..entries.end + slot_count * 4;
    if slots.end != data.len() {
        return Err(EntityDataError::Damaged(
            "its length does not match its header",
        ));
    }
    if check == Check::Whole {
        let entry_bytes = &data[entries.clone()];
        let key_fits = |record: usize| {
            let start = read_u32(entry_bytes, record) as usize;
            start + usize::from(read_u16(entry_bytes, record + 4)) <= key_bytes
        };
        if !(0..entry_count).all(|i| key_fits(i * ENTRY_BYTES)) {
            return Err(EntityDataError::Damaged(
                "an entry's key lies outside the keys",
            ));
        }
        let slot_bytes = &data[slots.clone()];
        let slot_entries = (0..slot_count).map(|i| read_u32(slot_bytes, i * 4) as usize);
        if slot_entries.clone().any(|entry| entry > entry_count) {
            return Err(EntityDataError::Damaged("a slot names no entry"));
        }
        if slot_entries.filter(|&entry| entry != 0).count() > entry_count {
            return Err(EntityDataError::Damaged(
                "more slots are taken than there are entries",
            ));
        }
    }
    Ok(Gazetteer {
        data,
        keys,
        entries,
        slots,
        slot_mask: slot_count - 1,
        longest_phrase_tokens: phrase_tokens,
        longest_phrase_bytes: phrase_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entity::gazetteer::{
        BIG_CITY, COMMON, COUNTRY, FIRST_NAME, ORGANIZATION, REGION, SURNAME,
    };

    /// A small valid table holding `words`, each with flags 1, laid out as build.rs does.
    fn table_bytes(words: &[&str]) -> Vec<u8> {
        let slot_count = (words.len() * 2).next_power_of_two().max(2);
        let mut keys = Vec::new();
        let mut entries = Vec::new();
        let mut slots = vec![0u32; slot_count];
        for (i, word) in words.iter().enumerate() {
            entries.extend_from_slice(&(keys.len() as u32).to_le_bytes());
            entries.extend_from_slice(&(word.len() as u16).to_le_bytes());
            entries.extend_from_slice(&1u16.to_le_bytes());
            keys.extend_from_slice(word.as_bytes());
            let mut slot =
                super::super::table_hash::table_hash(word.as_bytes()) as usize & (slot_count - 1);
            while slots[slot] != 0 {
                slot = (slot + 1) & (slot_count - 1);
            }
            slots[slot] = i as u32 + 1;
        }
        let mut data = MAGIC.to_vec();
        for field in [keys.len(), words.len(), slot_count, 1, 16] {
            data.extend_from_slice(&(field as u32).to_le_bytes());
        }
        data.extend(keys);
        data.extend(entries);
        data.extend(slots.iter().flat_map(|s| s.to_le_bytes()));
        data
    }

    fn decoded(bytes: Vec<u8>) -> Result<Gazetteer, EntityDataError> {
        decode(Cow::Owned(bytes), Check::Whole)
    }

    #[test]
    fn a_valid_table_decodes_and_answers_lookups() {
        let table = decoded(table_bytes(&["Ada", "Lovelace"])).unwrap();
        assert_eq!(table.flags("Ada"), 1);
        assert_eq!(table.flags("Lovelace"), 1);
        assert_eq!(table.flags("Babbage"), 0);
    }

    #[test]
    fn other_bytes_are_refused_by_their_magic() {
        for bytes in [
            Vec::new(),
            b"\0asm\x01\0\0\0".to_vec(),
            b"QRYGAZ00".to_vec(),
        ] {
            assert_eq!(decoded(bytes).err(), Some(EntityDataError::NotEntityData));
        }
    }

    #[test]
    fn truncated_or_padded_data_is_refused() {
        let bytes = table_bytes(&["Ada"]);
        let short = bytes[..bytes.len() - 1].to_vec();
        assert!(matches!(decoded(short), Err(EntityDataError::Damaged(_))));
        let mut long = bytes;
        long.push(0);
        assert!(matches!(decoded(long), Err(EntityDataError::Damaged(_))));
    }

    #[test]
    fn damage_that_would_make_lookups_fail_is_refused() {
        let good = table_bytes(&["Ada", "Lovelace"]);
        let slots_start = good.len() - 4 * 4;
        // A key running past the keys.
        let mut bad_key = good.clone();
        let first_entry = HEADER_BYTES + "AdaLovelace".len();
        bad_key[first_entry + 4..first_entry + 6].copy_from_slice(&500u16.to_le_bytes());
        // A slot naming an entry that does not exist.
        let mut bad_slot = good.clone();
        bad_slot[slots_start..slots_start + 4].copy_from_slice(&9u32.to_le_bytes());
        // Every slot taken: a probe for an unknown word would never end.
        let mut full = good;
        for slot in 0..4 {
            let at = slots_start + 4 * slot;
            full[at..at + 4].copy_from_slice(&1u32.to_le_bytes());
        }
        for bytes in [bad_key, bad_slot, full] {
            assert!(matches!(decoded(bytes), Err(EntityDataError::Damaged(_))));
        }
    }

    #[cfg(feature = "embedded-entity-data")]
    #[test]
    fn the_embedded_data_passes_the_whole_check_and_cannot_be_replaced() {
        let table = decoded(EMBEDDED.to_vec()).unwrap();
        assert_ne!(table.flags("Sarah"), 0);
        assert!(is_loaded());
        assert_eq!(load(EMBEDDED.to_vec()), Err(EntityDataError::AlreadyLoaded));
    }

    #[test]
    fn knows_names_places_and_common_words() {
        let g = gazetteer();
        assert!(g.is("Sarah", FIRST_NAME));
        assert!(g.is("Johnson", SURNAME));
        assert!(g.is("France", COUNTRY));
        assert!(g.is("Texas", REGION));
        assert!(g.is("London", BIG_CITY));
        assert!(g.is("Google", ORGANIZATION));
        assert!(g.is("The", COMMON) && g.is("the", COMMON));
        assert_eq!(g.flags("Xyzzyq"), 0);
    }

    #[test]
    fn finds_multi_word_phrases_on_token_boundaries() {
        let g = gazetteer();
        let text = "From Rio de Janeiro to New Yorkshire.";
        let tokens = super::super::tokens::tokenize(text);
        let found: Vec<&str> = (0..tokens.len())
            .filter_map(|t| g.phrase_at(text, &tokens, t))
            .map(|r| &text[tokens[r.start].range.start..tokens[r.end - 1].range.end])
            .collect();
        assert_eq!(found, ["Rio de Janeiro"]);
    }

    #[test]
    fn every_listed_word_is_found_and_unknown_words_are_not() {
        let g = gazetteer();
        for (word, flag) in [("Zyxwvut", 0), ("", 0), ("sarah", 0)] {
            assert_eq!(g.flags(word), flag, "{word}");
        }
        let surnames = include_str!("../../data/surnames.txt").lines();
        for line in surnames.filter(|l| !l.starts_with('#')).take(2000) {
            assert!(g.is(line.trim_end(), SURNAME), "{line}");
        }
    }
}
