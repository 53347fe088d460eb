//! The word lists (see `data/README.md` for sources and licences) as one case-sensitive lookup
//! table of names, laid out by `build/gazetteer.rs` at build time and probed in place: the first
//! entity call of a process builds nothing. Where the table's bytes come from (compiled in, or
//! installed at run time by a host that loads them separately) is [`super::data`]'s business,
//! and so is the accessor lookups reach the table in use through (`data::gazetteer`).

use std::borrow::Cow;
use std::ops::Range;

use super::table_format::ENTRY_BYTES;
use super::table_hash::table_hash;
use super::tokens::Token;

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

/// The gazetteer table: the entity data's bytes and where its parts lie in them.
pub(crate) struct Gazetteer {
    pub(super) data: Cow<'static, [u8]>,
    pub(super) keys: Range<usize>,
    pub(super) entries: Range<usize>,
    pub(super) slots: Range<usize>,
    /// Slot count minus one (a power of two minus one).
    pub(super) slot_mask: usize,
    /// The most tokens a multi-word phrase spans.
    pub(super) longest_phrase_tokens: usize,
    /// The most bytes a multi-word phrase has.
    pub(super) longest_phrase_bytes: usize,
}

impl Gazetteer {
    /// Flags of an exact word or phrase, 0 when unknown.
    pub fn flags(&self, word: &str) -> Flags {
        let key = word.as_bytes();
        let (keys, entries, slots) = (
            &self.data[self.keys.clone()],
            &self.data[self.entries.clone()],
            &self.data[self.slots.clone()],
        );
        let mut slot = (table_hash(key) as usize) & self.slot_mask;
        loop {
            let entry = read_u32(slots, slot * 4) as usize;
            if entry == 0 {
                return 0;
            }
            let record = (entry - 1) * ENTRY_BYTES;
            let start = read_u32(entries, record) as usize;
            let len = usize::from(read_u16(entries, record + 4));
            if keys.get(start..start + len) == Some(key) {
                return read_u16(entries, record + 6);
            }
            slot = (slot + 1) & self.slot_mask;
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
        let last = (start + self.longest_phrase_tokens).min(tokens.len());
        (start + 1..last).rev().find_map(|end| {
            let phrase = &text[from..tokens[end].range.end];
            (phrase.len() <= self.longest_phrase_bytes
                && phrase.contains(' ')
                && self.is(phrase, PLACE | ORGANIZATION))
            .then_some(start..end + 1)
        })
    }
}

pub(super) fn read_u32(bytes: &[u8], at: usize) -> u32 {
    let mut word = [0; 4];
    word.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(word)
}

pub(super) fn read_u16(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([bytes[at], bytes[at + 1]])
}
