//! The compiled-in word lists (see `data/README.md` for sources and licences) as one
//! case-sensitive lookup table of names, laid out by `build/gazetteer.rs` at build time and
//! probed in place: the first entity call of a process builds nothing.

use std::ops::Range;

use super::table_hash::table_hash;
use super::tokens::Token;

include!(concat!(env!("OUT_DIR"), "/gazetteer_layout.rs"));

static KEYS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/gazetteer_keys.bin"));
static ENTRIES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/gazetteer_entries.bin"));
static SLOTS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/gazetteer_slots.bin"));

/// What the gazetteers know about one word or phrase; a bit set of the constants below (the
/// same values as in `build/gazetteer.rs`).
pub(crate) type Flags = u16;

pub(crate) const FIRST_NAME: Flags = 1;
pub(crate) const SURNAME: Flags = 1 << 1;
/// An ordinary English word (stored in lower case and capitalised).
pub(crate) const COMMON: Flags = 1 << 2;
pub(crate) const COUNTRY: Flags = 1 << 3;
/// A continent, a first-level subdivision (state, province) or a well-known region.
pub(crate) const REGION: Flags = 1 << 4;
pub(crate) const CITY: Flags = 1 << 5;
/// A city of at least a million people: strong enough to beat a first name.
pub(crate) const BIG_CITY: Flags = 1 << 6;
pub(crate) const ORGANIZATION: Flags = 1 << 7;
/// A first name among the 600 most frequent ones.
pub(crate) const COMMON_FIRST_NAME: Flags = 1 << 8;
/// The first word of a multi-word place or organization (`Trinidad` of `Trinidad and Tobago`).
pub(crate) const PHRASE_START: Flags = 1 << 9;

pub(crate) const PLACE: Flags = COUNTRY | REGION | CITY;

/// The compiled-in table; a handle so callers read like lookups in a value.
pub(crate) struct Gazetteer;

pub(crate) fn gazetteer() -> &'static Gazetteer {
    &Gazetteer
}

impl Gazetteer {
    /// Flags of an exact word or phrase, 0 when unknown.
    pub fn flags(&self, word: &str) -> Flags {
        let key = word.as_bytes();
        let mut slot = (table_hash(key) as usize) & SLOT_MASK;
        loop {
            let entry = read_u32(SLOTS, slot * 4) as usize;
            if entry == 0 {
                return 0;
            }
            let record = (entry - 1) * 8;
            let start = read_u32(ENTRIES, record) as usize;
            let len = usize::from(read_u16(ENTRIES, record + 4));
            if KEYS.get(start..start + len) == Some(key) {
                return read_u16(ENTRIES, record + 6);
            }
            slot = (slot + 1) & SLOT_MASK;
        }
    }

    pub fn is(&self, word: &str, flags: Flags) -> bool {
        self.flags(word) & flags != 0
    }

    /// The token range of the longest multi-word place or organization starting at token
    /// `start`, if any (`Rio de Janeiro`, `Trinidad and Tobago`): such phrases stay one name
    /// although they contain lower-case words.
    pub fn phrase_at(
        &self,
        text: &str,
        tokens: &[Token<'_>],
        start: usize,
    ) -> Option<Range<usize>> {
        // Listed phrases start with a capital letter: most tokens are not even looked up.
        if !tokens[start].is_capitalised() || !self.is(tokens[start].text, PHRASE_START) {
            return None;
        }
        let from = tokens[start].range.start;
        let last = (start + LONGEST_PHRASE_TOKENS).min(tokens.len());
        (start + 1..last).rev().find_map(|end| {
            let phrase = &text[from..tokens[end].range.end];
            (phrase.len() <= LONGEST_PHRASE_BYTES
                && phrase.contains(' ')
                && self.is(phrase, PLACE | ORGANIZATION))
            .then_some(start..end + 1)
        })
    }
}

fn read_u32(bytes: &[u8], at: usize) -> u32 {
    let mut word = [0; 4];
    word.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(word)
}

fn read_u16(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([bytes[at], bytes[at + 1]])
}

#[cfg(test)]
mod tests {
    use super::*;

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
