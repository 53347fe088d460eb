//! Model-free named-entity detection: people, organizations and locations.
//!
//! The pipeline is linear in the text: [`tokens`] splits words, [`chunks`] groups capitalised
//! words into candidate names, [`classify`] types each candidate from its words, the
//! [`gazetteer`] lists and its context (the verbs and prepositions around it: [`frames`]),
//! [`lists`] lets coordinated names share a kind, and [`find`] lets confident mentions of a name
//! decide its unsure repeats (`Mitchell Rawlins … Rawlins`).
//!
//! Entity spans follow the WikiGold/CoNLL convention: a person span leaves out a title
//! (`Dr. Jane Smith` → `Jane Smith`); an organization keeps a leading `The` it was written with.
//! An organization followed by `headquarters`, `HQ`, `campus` or `offices` also yields a location
//! covering both words (`Google headquarters`), overlapping the organization.

mod chunks;
mod classify;
mod data;
mod frames;
mod gazetteer;
#[cfg(test)]
mod generated_tests;
mod lists;
mod rules;
mod table_format;
mod table_hash;
mod tokens;

pub use data::{EntityDataError, is_loaded as data_loaded, load as load_data};

use std::collections::HashMap;
use std::ops::Range;

use quarry_core::MatchKind;

use crate::Detection;
use classify::{Classified, Confidence};
use rules::{HONORIFICS, SITE_WORDS};
use tokens::Token;

/// Text is read in windows of about this many bytes, cut at a line break or sentence end, so
/// the tokens and candidates held at once stay bounded however long the document is.
const WINDOW_BYTES: usize = 64 * 1024;
/// Names remembered across windows (for `Mitchell Rawlins … Rawlins`); bounded so memory stays
/// flat on documents with endless distinct names.
const MEMORY_NAMES: usize = 20_000;

/// People, organizations and locations in `text`, in text order, as byte ranges.
pub fn find(text: &str) -> Vec<Detection> {
    let mut memory = DocumentMemory::default();
    let mut detections = Vec::new();
    for window in windows(text, WINDOW_BYTES) {
        let part = &text[window.clone()];
        let tokens = tokens::tokenize(part);
        for (range, kind) in entities(part, &tokens, &mut memory) {
            detections.push(detection(part, &tokens, range.clone(), kind, window.start));
            let site_follows = tokens
                .get(range.end)
                .is_some_and(|t| SITE_WORDS.contains(&t.text));
            if kind == MatchKind::Organization && site_follows {
                let site = range.start..range.end + 1;
                detections.push(detection(
                    part,
                    &tokens,
                    site,
                    MatchKind::Location,
                    window.start,
                ));
            }
        }
    }
    detections
}

/// People in `text` with an honorific written before them included (`Dr. Jane Smith`), for the
/// `name` target.
pub(crate) fn people_with_honorifics(text: &str) -> Vec<Detection> {
    let mut memory = DocumentMemory::default();
    let mut people = Vec::new();
    for window in windows(text, WINDOW_BYTES) {
        let part = &text[window.clone()];
        let tokens = tokens::tokenize(part);
        for (range, kind) in entities(part, &tokens, &mut memory) {
            if kind != MatchKind::Person {
                continue;
            }
            let mut start = range.start;
            while start > 0 && HONORIFICS.contains(&tokens[start - 1].bare()) {
                start -= 1;
            }
            people.push(detection(
                part,
                &tokens,
                start..range.end,
                kind,
                window.start,
            ));
        }
    }
    people
}

fn detection(
    text: &str,
    tokens: &[Token<'_>],
    range: Range<usize>,
    kind: MatchKind,
    offset: usize,
) -> Detection {
    let bytes = tokens[range.start].range.start..tokens[range.end - 1].range.end;
    Detection {
        value: text[bytes.clone()].to_owned(),
        range: bytes.start + offset..bytes.end + offset,
        kind,
    }
}

/// Byte ranges covering `text` of about `size` bytes each, cut after a line break, else after a
/// sentence end, else after whitespace, else at a character boundary.
fn windows(text: &str, size: usize) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= text.len() {
            return None;
        }
        let mut end = (start + size).min(text.len());
        if end < text.len() {
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            let slice = &text[start..end];
            let half = slice.len() / 2;
            let cut = slice
                .rfind('\n')
                .filter(|&i| i >= half)
                .or_else(|| slice.rfind(". ").filter(|&i| i >= half).map(|i| i + 1))
                .or_else(|| slice.rfind(char::is_whitespace).filter(|&i| i >= half));
            if let Some(cut) = cut {
                end = start + cut + 1;
                while !text.is_char_boundary(end) {
                    end += 1;
                }
            }
        }
        let window = start..end;
        start = end;
        Some(window)
    })
}

/// What earlier windows of the same document decided about names: the kind a name was given
/// with confidence, and the words of confidently found multi-word person names.
#[derive(Default)]
struct DocumentMemory {
    known: HashMap<String, MatchKind>,
    person_words: HashMap<String, MatchKind>,
}

impl DocumentMemory {
    fn remember(map: &mut HashMap<String, MatchKind>, name: &str, kind: MatchKind) {
        if map.len() < MEMORY_NAMES && !map.contains_key(name) {
            map.insert(name.to_owned(), kind);
        }
    }
}

/// Typed entities as token ranges, in text order. `memory` carries names across windows.
fn entities(
    text: &str,
    tokens: &[Token<'_>],
    memory: &mut DocumentMemory,
) -> Vec<(Range<usize>, MatchKind)> {
    let mut classified: Vec<Classified> = chunks::candidates(text, tokens)
        .into_iter()
        .map(|chunk| classify::classify(text, tokens, chunk))
        .collect();
    lists::type_lists(tokens, &mut classified);

    // A name's confident mentions, and the words of confident multi-word person names, decide
    // what its unsure or unknown mentions are.
    let span_text = |c: &Classified| {
        &text[tokens[c.tokens.start].range.start..tokens[c.tokens.end - 1].range.end]
    };
    for c in &classified {
        match c.kind {
            Some((kind, Confidence::Strong)) => {
                DocumentMemory::remember(&mut memory.known, span_text(c), kind);
            }
            Some((MatchKind::Person, Confidence::Weak)) if c.tokens.len() > 1 => {}
            _ => continue,
        }
        if c.kind.is_some_and(|(kind, _)| kind == MatchKind::Person) && c.tokens.len() > 1 {
            for token in &tokens[c.tokens.clone()] {
                if token.shape == tokens::Shape::Capitalised {
                    DocumentMemory::remember(
                        &mut memory.person_words,
                        token.text,
                        MatchKind::Person,
                    );
                }
            }
        }
    }
    classified
        .iter()
        .filter_map(|c| {
            let kind = match c.kind {
                Some((kind, Confidence::Strong)) => Some(kind),
                // A lone word that is the given or family name of a person found earlier in
                // the document refers back to that person (`Mitchell Rawlins … Rawlins`).
                Some((kind, Confidence::Weak)) => Some(
                    memory
                        .known
                        .get(span_text(c))
                        .or_else(|| {
                            (c.tokens.len() == 1)
                                .then(|| memory.person_words.get(span_text(c)))
                                .flatten()
                        })
                        .copied()
                        .unwrap_or(kind),
                ),
                None => memory
                    .known
                    .get(span_text(c))
                    .or_else(|| memory.person_words.get(span_text(c)))
                    .copied(),
            };
            kind.map(|kind| (c.tokens.clone(), kind))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of_kind(text: &str, kind: MatchKind) -> Vec<String> {
        find(text)
            .into_iter()
            .filter(|d| d.kind == kind)
            .map(|d| d.value)
            .collect()
    }

    #[test]
    fn contract_example_people_orgs_and_headquarters_location() {
        let text = "John Smith from Anthropic met with Sarah at Google headquarters";
        assert_eq!(of_kind(text, MatchKind::Person), ["John Smith", "Sarah"]);
        assert_eq!(
            of_kind(text, MatchKind::Organization),
            ["Anthropic", "Google"]
        );
        assert_eq!(of_kind(text, MatchKind::Location), ["Google headquarters"]);
    }

    #[test]
    fn person_span_leaves_out_honorific() {
        let text = "The report was prepared by Dr. Jane Smith and reviewed by Michael Johnson.";
        assert_eq!(
            of_kind(text, MatchKind::Person),
            ["Jane Smith", "Michael Johnson"]
        );
    }

    #[test]
    fn org_suffix_makes_an_unknown_name_an_organization() {
        let text =
            "She joined Brackenridge Widgets Inc. after leaving Westmoor University in 2003.";
        assert_eq!(
            of_kind(text, MatchKind::Organization),
            ["Brackenridge Widgets Inc.", "Westmoor University"]
        );
    }

    #[test]
    fn university_of_place_is_one_organization() {
        let text = "He studied at the University of Leeds.";
        assert_eq!(
            of_kind(text, MatchKind::Organization),
            ["University of Leeds"]
        );
        assert!(of_kind(text, MatchKind::Location).is_empty());
    }

    #[test]
    fn location_cue_and_city_state_pattern_give_locations() {
        let text = "The family settled in Quarrington, Ohio, near Lake Tarnwell.";
        assert_eq!(
            of_kind(text, MatchKind::Location),
            ["Quarrington", "Ohio", "Lake Tarnwell"]
        );
    }

    #[test]
    fn sentence_initial_common_words_are_not_entities() {
        for text in [
            "The weather was fine.",
            "However, nothing happened.",
            "After the war it rained.",
        ] {
            assert!(find(text).is_empty(), "{text}: {:?}", find(text));
        }
    }

    #[test]
    fn sentence_initial_country_is_still_a_location() {
        assert_eq!(
            of_kind("France won the match.", MatchKind::Location),
            ["France"]
        );
    }

    #[test]
    fn acronym_is_an_organization() {
        assert_eq!(
            of_kind(
                "He worked for the WXQB until 1990.",
                MatchKind::Organization
            ),
            ["WXQB"]
        );
    }

    #[test]
    fn repeated_surname_follows_the_full_name() {
        let text = "Kwame Oduya scored twice, and later Oduya scored again.";
        assert_eq!(of_kind(text, MatchKind::Person), ["Kwame Oduya", "Oduya"]);
    }

    #[test]
    fn long_text_is_read_in_windows_with_offsets_and_names_carried_over() {
        let sentence = "Kwame Oduya visited the harbour with friends and wrote about it.\n";
        let mut text = sentence.repeat(WINDOW_BYTES / sentence.len() + 10);
        text.push_str("Later Oduya moved away.");
        let found = find(&text);
        for d in &found {
            assert_eq!(&text[d.range.clone()], d.value);
        }
        let last = found.last().expect("the lone surname at the end");
        assert_eq!(
            (last.value.as_str(), last.kind),
            ("Oduya", MatchKind::Person)
        );
        let per_sentence = found.iter().filter(|d| d.value == "Kwame Oduya").count();
        assert_eq!(per_sentence, WINDOW_BYTES / sentence.len() + 10);
    }

    #[test]
    fn windows_cover_the_text_at_char_boundaries() {
        let text = "Zoë Brontë é ".repeat(20_000);
        let mut next = 0;
        for window in windows(&text, 1000) {
            assert_eq!(window.start, next);
            assert!(text.is_char_boundary(window.end));
            assert!(window.len() <= 1004);
            next = window.end;
        }
        assert_eq!(next, text.len());
    }

    #[test]
    fn code_point_offsets_with_non_ascii_names() {
        let text = "Zoë Brontë met Søren Kierkegaard in København.";
        let matches = crate::to_matches(text, find(text));
        let people: Vec<(usize, usize, &str)> = matches
            .iter()
            .filter(|m| m.kind == MatchKind::Person)
            .map(|m| (m.start, m.end, m.text.as_str()))
            .collect();
        assert_eq!(
            people,
            [(0, 10, "Zoë Brontë"), (15, 32, "Søren Kierkegaard")]
        );
        let places: Vec<(usize, usize)> = matches
            .iter()
            .filter(|m| m.kind == MatchKind::Location)
            .map(|m| (m.start, m.end))
            .collect();
        assert_eq!(places, [(36, 45)]);
    }
}
