//! Lays out the gazetteer (the word lists in `data/`) as an open-addressing hash table the
//! crate probes in place, so no process builds a 120,000-entry map on its first entity call.
//!
//! Writes `entity_data.bin` to `OUT_DIR` in the layout of `src/entity/table_format.rs`: the
//! crate embeds it (feature `embedded-entity-data`), and the browser package ships it as a file
//! of its own that a page loads only when it needs entities or names.
//!
//! The flag values must match the constants in `src/entity/gazetteer.rs`.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use super::table_format::{ENTRY_BYTES, HEADER_BYTES, HEADER_FIELDS, MAGIC};
use super::table_hash::table_hash;

const FIRST_NAME: u16 = 1;
const SURNAME: u16 = 1 << 1;
const COMMON: u16 = 1 << 2;
const COUNTRY: u16 = 1 << 3;
const REGION: u16 = 1 << 4;
const CITY: u16 = 1 << 5;
const BIG_CITY: u16 = 1 << 6;
const ORGANIZATION: u16 = 1 << 7;
const COMMON_FIRST_NAME: u16 = 1 << 8;
const PHRASE_START: u16 = 1 << 9;
const PLACE: u16 = COUNTRY | REGION | CITY;

/// A city of at least this many people is strong enough to beat a first name.
const BIG_CITY_POPULATION: u64 = 1_000_000;
/// How many first names, from the most frequent, count as common.
const COMMON_FIRST_NAMES: usize = 600;

pub fn write(out: &Path) {
    let read = |name: &str| {
        fs::read_to_string(Path::new("data").join(name))
            .unwrap_or_else(|e| panic!("reading data/{name}: {e}"))
    };
    let mut entries: BTreeMap<String, u16> = BTreeMap::new();
    let mut add = |word: &str, flags: u16| {
        *entries.entry(word.to_owned()).or_default() |= flags;
    };
    for (rank, name) in lines(&read("first_names.txt")).enumerate() {
        let common = if rank < COMMON_FIRST_NAMES {
            COMMON_FIRST_NAME
        } else {
            0
        };
        add(name, FIRST_NAME | common);
    }
    for name in lines(&read("surnames.txt")) {
        add(name, SURNAME);
    }
    for word in lines(&read("common_words.txt")) {
        add(word, COMMON);
        add(&capitalise(word), COMMON);
    }
    for name in lines(&read("countries.txt")) {
        add(name, COUNTRY);
    }
    let regions = read("regions.txt");
    let extra = read("places_extra.txt");
    for name in lines(&regions).chain(lines(&extra)) {
        add(name, REGION);
    }
    for line in lines(&read("cities.txt")) {
        let (name, population) = line.split_once('\t').unwrap_or((line, "0"));
        let big = population.parse::<u64>().unwrap_or(0) >= BIG_CITY_POPULATION;
        add(name, if big { CITY | BIG_CITY } else { CITY });
    }
    for name in lines(&read("organizations.txt")) {
        add(name, ORGANIZATION);
    }

    // Multi-word places and organizations are found token by token from their first word.
    let mut longest_phrase = 1;
    let mut longest_phrase_bytes = 0;
    let phrase_firsts: Vec<String> = entries
        .iter()
        .filter(|(name, flags)| *flags & (PLACE | ORGANIZATION) != 0 && name.contains(' '))
        .map(|(name, _)| {
            longest_phrase = longest_phrase.max(token_count(name));
            longest_phrase_bytes = longest_phrase_bytes.max(name.len());
            name.split(' ').next().unwrap_or_default().to_owned()
        })
        .collect();
    for first in phrase_firsts {
        *entries.entry(first).or_default() |= PHRASE_START;
    }

    let slot_count = (entries.len() * 2).next_power_of_two();
    let mask = slot_count - 1;
    let mut keys = Vec::new();
    let mut records = Vec::with_capacity(entries.len() * ENTRY_BYTES);
    let mut slots = vec![0u32; slot_count];
    for (index, (key, flags)) in entries.iter().enumerate() {
        let start = u32::try_from(keys.len()).expect("keys fit in u32");
        let len = u16::try_from(key.len()).expect("a key fits in u16");
        keys.extend_from_slice(key.as_bytes());
        records.extend_from_slice(&start.to_le_bytes());
        records.extend_from_slice(&len.to_le_bytes());
        records.extend_from_slice(&flags.to_le_bytes());
        let mut slot = (table_hash(key.as_bytes()) as usize) & mask;
        while slots[slot] != 0 {
            slot = (slot + 1) & mask;
        }
        slots[slot] = u32::try_from(index + 1).expect("entry count fits in u32");
    }
    let u32_of = |n: usize| u32::try_from(n).expect("the table's sizes fit in u32");
    let header: [u32; HEADER_FIELDS] = [
        u32_of(keys.len()),
        u32_of(entries.len()),
        u32_of(slot_count),
        u32_of(longest_phrase),
        u32_of(longest_phrase_bytes),
    ];
    let mut data = Vec::with_capacity(HEADER_BYTES + keys.len() + records.len() + slot_count * 4);
    data.extend_from_slice(MAGIC);
    data.extend(header.iter().flat_map(|field| field.to_le_bytes()));
    data.extend_from_slice(&keys);
    data.extend_from_slice(&records);
    data.extend(slots.iter().flat_map(|slot| slot.to_le_bytes()));
    fs::write(out.join("entity_data.bin"), data).expect("writing entity_data.bin");
}

/// Tokens the entity tokenizer makes of a phrase: words, plus commas and brackets, generously.
fn token_count(phrase: &str) -> usize {
    phrase.split(' ').count() + phrase.chars().filter(|c| c.is_ascii_punctuation()).count()
}

/// Non-empty, non-comment lines of a data file.
fn lines(data: &str) -> impl Iterator<Item = &str> {
    data.lines()
        .map(str::trim_end)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
}

fn capitalise(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}
