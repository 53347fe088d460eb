//! The compiled-in word lists (see `data/README.md` for sources and licences), built once into
//! one case-sensitive lookup table of names and a phrase automaton for multi-word entries.

use std::collections::HashMap;
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, MatchKind};

/// What the gazetteers know about one word or phrase; a bit set of the constants below.
pub(crate) type Flags = u16;

pub(crate) const FIRST_NAME: Flags = 1;
pub(crate) const SURNAME: Flags = 1 << 1;
/// An ordinary English word (stored in lower case and capitalised).
pub(crate) const COMMON: Flags = 1 << 2;
pub(crate) const COUNTRY: Flags = 1 << 3;
/// A continent, a first-level subdivision (state, province) or a well-known region.
pub(crate) const REGION: Flags = 1 << 4;
pub(crate) const CITY: Flags = 1 << 5;
/// A city of at least [`BIG_CITY_POPULATION`] people: strong enough to beat a first name.
pub(crate) const BIG_CITY: Flags = 1 << 6;
pub(crate) const ORGANIZATION: Flags = 1 << 7;
/// A first name among the most frequent ones (cumulative frequency list head).
pub(crate) const COMMON_FIRST_NAME: Flags = 1 << 8;

pub(crate) const PLACE: Flags = COUNTRY | REGION | CITY;

const BIG_CITY_POPULATION: u64 = 1_000_000;
/// How many first names, from the most frequent, count as [`COMMON_FIRST_NAME`].
const COMMON_FIRST_NAMES: usize = 600;

const FIRST_NAMES: &str = include_str!("../../data/first_names.txt");
const SURNAMES: &str = include_str!("../../data/surnames.txt");
const COMMON_WORDS: &str = include_str!("../../data/common_words.txt");
const COUNTRIES: &str = include_str!("../../data/countries.txt");
const REGIONS: &str = include_str!("../../data/regions.txt");
const PLACES_EXTRA: &str = include_str!("../../data/places_extra.txt");
const CITIES: &str = include_str!("../../data/cities.txt");
const ORGANIZATIONS: &str = include_str!("../../data/organizations.txt");

pub(crate) struct Gazetteer {
    entries: HashMap<Box<str>, Flags>,
    /// Multi-word places and organizations, so that `Trinidad and Tobago` or `Rio de Janeiro`
    /// stay one name although they contain lower-case words.
    phrases: AhoCorasick,
}

static GAZETTEER: LazyLock<Gazetteer> = LazyLock::new(Gazetteer::build);

pub(crate) fn gazetteer() -> &'static Gazetteer {
    &GAZETTEER
}

impl Gazetteer {
    /// Flags of an exact word or phrase, 0 when unknown.
    pub fn flags(&self, word: &str) -> Flags {
        self.entries.get(word).copied().unwrap_or(0)
    }

    pub fn is(&self, word: &str, flags: Flags) -> bool {
        self.flags(word) & flags != 0
    }

    /// Byte ranges of multi-word gazetteer phrases in `text`, leftmost-longest, on word
    /// boundaries.
    pub fn phrases<'a>(
        &'a self,
        text: &'a str,
    ) -> impl Iterator<Item = std::ops::Range<usize>> + 'a {
        self.phrases
            .find_iter(text)
            .map(|m| m.range())
            .filter(move |r| on_word_boundaries(text, r))
    }

    fn build() -> Gazetteer {
        let mut entries: HashMap<Box<str>, Flags> = HashMap::with_capacity(120_000);
        let mut add = |word: &str, flags: Flags| {
            *entries.entry(word.into()).or_default() |= flags;
        };
        for (rank, name) in lines(FIRST_NAMES).enumerate() {
            let common = if rank < COMMON_FIRST_NAMES {
                COMMON_FIRST_NAME
            } else {
                0
            };
            add(name, FIRST_NAME | common);
        }
        for name in lines(SURNAMES) {
            add(name, SURNAME);
        }
        for word in lines(COMMON_WORDS) {
            add(word, COMMON);
            add(&capitalise(word), COMMON);
        }
        for name in lines(COUNTRIES) {
            add(name, COUNTRY);
        }
        for name in lines(REGIONS).chain(lines(PLACES_EXTRA)) {
            add(name, REGION);
        }
        for line in lines(CITIES) {
            let (name, population) = line.split_once('\t').unwrap_or((line, "0"));
            let big = population.parse::<u64>().unwrap_or(0) >= BIG_CITY_POPULATION;
            add(name, if big { CITY | BIG_CITY } else { CITY });
        }
        for name in lines(ORGANIZATIONS) {
            add(name, ORGANIZATION);
        }
        let phrases: Vec<&str> = entries
            .iter()
            .filter(|(name, flags)| *flags & (PLACE | ORGANIZATION) != 0 && name.contains(' '))
            .map(|(name, _)| &**name)
            .collect();
        let phrases = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(phrases)
            .expect("gazetteer phrases form a valid automaton");
        Gazetteer { entries, phrases }
    }
}

/// Non-empty, non-comment lines of a data file.
fn lines(data: &'static str) -> impl Iterator<Item = &'static str> {
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

fn on_word_boundaries(text: &str, range: &std::ops::Range<usize>) -> bool {
    let before = text[..range.start].chars().next_back();
    let after = text[range.end..].chars().next();
    !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
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
    fn finds_multi_word_phrases_on_word_boundaries() {
        let g = gazetteer();
        let text = "From Rio de Janeiro to New Yorkshire.";
        let found: Vec<&str> = g.phrases(text).map(|r| &text[r]).collect();
        assert!(found.contains(&"Rio de Janeiro"), "{found:?}");
        assert!(
            !found.iter().any(|p| p.starts_with("New York")),
            "{found:?}"
        );
    }
}
