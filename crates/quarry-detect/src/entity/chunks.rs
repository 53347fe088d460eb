//! Candidate names: maximal runs of capitalised tokens, joined across name particles
//! (`Pierre de Marca`), across `of`/`for` after an organization or place lead word
//! (`University of Leicester`, `Isle of Man`) and across multi-word gazetteer phrases.
//!
//! A sentence-initial ordinary word (`The`, `However`, `Born`) is not part of a candidate:
//! capitalisation there says nothing.

use std::ops::Range;

use super::data::gazetteer;
use super::gazetteer::{BIG_CITY, COMMON, COUNTRY, FIRST_NAME, ORGANIZATION, REGION};
use super::rules::{
    HONORIFICS, LOCATION_HEADS, LOCATION_LEADS, NAME_PARTICLES, NOT_NAME_STARTS, NOT_NAMES,
    ORG_HEADS, ORG_LEADS, PERSON_TITLES,
};
use super::tokens::{Shape, Token};

/// Token-index ranges of candidate names, in text order, not overlapping.
pub(crate) fn candidates(text: &str, tokens: &[Token<'_>]) -> Vec<Range<usize>> {
    let phrase_ends = phrase_ends(text, tokens);
    let mut chunks = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if starts_numbered_unit(tokens, i) {
            // `The 139th`, `the 65th Fighter Wing`: a unit named by its number.
            let mut end = i + 1;
            while end < tokens.len() && can_continue(&tokens[end]) {
                end += 1;
            }
            chunks.push(i..end);
            i = end;
            continue;
        }
        if !can_start(&tokens[i]) {
            i += 1;
            continue;
        }
        let mut end = i;
        let mut reach = i + 1;
        loop {
            while end < reach {
                if let Some(phrase_end) = phrase_ends[end] {
                    reach = reach.max(phrase_end);
                }
                end += 1;
            }
            if end < tokens.len()
                && can_continue(&tokens[end])
                && !title_starts_name(tokens, i, end)
            {
                reach = end + 1;
            } else if end + 1 < tokens.len()
                && joins(&tokens[i..end], &tokens[end], &tokens[end + 1])
            {
                reach = end + 2;
            } else if end + 2 < tokens.len()
                && joins_with_the(
                    &tokens[i..end],
                    &tokens[end],
                    &tokens[end + 1],
                    &tokens[end + 2],
                )
            {
                reach = end + 3;
            } else {
                break;
            }
        }
        let start = skip_sentence_initial_word(tokens, i, end, phrase_ends[i].is_some());
        if start < end {
            chunks.push(start..end);
        }
        i = end;
    }
    chunks
}

/// For each token index that starts a multi-word gazetteer phrase, the token index after it
/// (leftmost-longest, not overlapping).
fn phrase_ends(text: &str, tokens: &[Token<'_>]) -> Vec<Option<usize>> {
    let gaz = gazetteer();
    let mut ends = vec![None; tokens.len()];
    let mut t = 0;
    while t < tokens.len() {
        match gaz.phrase_at(text, tokens, t) {
            Some(phrase) => {
                ends[t] = Some(phrase.end);
                t = phrase.end;
            }
            None => t += 1,
        }
    }
    ends
}

fn can_start(token: &Token<'_>) -> bool {
    let gaz = gazetteer();
    match token.shape {
        Shape::Capitalised | Shape::Upper | Shape::Initial => {
            !NOT_NAMES.contains(&token.text) && !NOT_NAME_STARTS.contains(&token.text)
        }
        // `eBay`, `iPod`: only known lower-case-initial organizations.
        Shape::Lower => gaz.is(token.text, ORGANIZATION),
        // `6PR`, `3AW`: broadcast call signs, a name although they start with a digit.
        Shape::Number => is_call_sign(token.text),
        Shape::Punct => false,
    }
}

/// One or two digits then two to four capitals (`6PR`, `2GB`, `3AW`): how Australian and other
/// stations are named. Ordinals, years and amounts never have capitals after the digits.
pub(crate) fn is_call_sign(word: &str) -> bool {
    let digits = word.bytes().take_while(u8::is_ascii_digit).count();
    let letters = &word[digits..];
    (1..=2).contains(&digits)
        && (2..=4).contains(&letters.len())
        && letters.bytes().all(|b| b.is_ascii_uppercase())
}

/// An ordinal (`139th`, `1st`) after `The` (capital: the sentence is about it) or after `the`
/// and before more of a name (`the 65th Fighter Wing`): a military unit, a regiment, a congress.
fn starts_numbered_unit(tokens: &[Token<'_>], i: usize) -> bool {
    let is_ordinal = |t: &Token<'_>| {
        let digits = t.text.bytes().take_while(u8::is_ascii_digit).count();
        digits > 0
            && matches!(
                t.text[digits..].to_ascii_lowercase().as_str(),
                "st" | "nd" | "rd" | "th"
            )
    };
    if i == 0 || !is_ordinal(&tokens[i]) || !matches!(tokens[i - 1].text, "The" | "the") {
        return false;
    }
    // `The 139th along with …`: the number alone names it; else a unit word must end the name
    // (`the 65th Fighter Wing`, not `the 2nd Battle of …` or `the 38th Image Awards`).
    let mut end = i + 1;
    while end < tokens.len() && can_continue(&tokens[end]) {
        end += 1;
    }
    if end == i + 1 {
        return tokens[i - 1].text == "The";
    }
    UNIT_HEADS.contains(&tokens[end - 1].bare())
}

/// Words that end the name of a unit named by its number.
const UNIT_HEADS: &[&str] = &[
    "Wing",
    "Squadron",
    "Group",
    "Regiment",
    "Division",
    "Brigade",
    "Battalion",
    "Corps",
    "Army",
    "Fleet",
    "Infantry",
    "Cavalry",
    "Artillery",
    "Company",
    "Congress",
    "Parliament",
    "Assembly",
    "Legislature",
    "Precinct",
    "District",
];

/// Whether `token` is an ordinal written in digits (`139th`).
pub(crate) fn is_numbered(token: &Token<'_>) -> bool {
    token.shape == Shape::Number && token.text.ends_with(|c: char| c.is_ascii_alphabetic())
}

fn can_continue(token: &Token<'_>) -> bool {
    (token.is_capitalised() || is_elided_particle(token.text))
        && !token.sentence_start
        && !NOT_NAMES.contains(&token.text)
}

/// `d'Orves`, `l'Ouverture`: an elided lower-case particle glued to a capitalised name.
fn is_elided_particle(word: &str) -> bool {
    let mut chars = word.chars();
    matches!(chars.next(), Some('d' | 'l'))
        && matches!(chars.next(), Some('\'' | '’'))
        && chars.next().is_some_and(char::is_uppercase)
}

/// Whether a title at `at` starts a new name inside the run from `start`: `Texas Coach Darrell
/// Royal` is `Texas` and the person `Coach Darrell Royal`, but `Brigadier General X` stays one.
fn title_starts_name(tokens: &[Token<'_>], start: usize, at: usize) -> bool {
    is_title(&tokens[at])
        && !is_title(&tokens[at - 1])
        && tokens
            .get(at + 1)
            .is_some_and(|next| next.shape == Shape::Capitalised)
        && at > start
}

pub(crate) fn is_title(token: &Token<'_>) -> bool {
    let bare = token.bare();
    HONORIFICS.contains(&bare) || PERSON_TITLES.contains(&bare)
}

/// Whether `connector` may join `left` (the chunk so far) to the capitalised `right`.
fn joins(left: &[Token<'_>], connector: &Token<'_>, right: &Token<'_>) -> bool {
    if !can_continue(right) {
        return false;
    }
    let last = left[left.len() - 1].text;
    match connector.text {
        // `Procter & Gamble`, but not `Karl Langdon & Harvey Deegan`.
        "&" => !(left.len() > 1 && gazetteer().is(left[0].text, FIRST_NAME)),
        // `University of X`, `Bank of X`, `Isle of X`, `X University of Y`.
        // Not into a second organization: `Super League for FC Basel`.
        "of" | "for" => {
            (ORG_LEADS.contains(&last) || LOCATION_LEADS.contains(&last))
                && !ORG_HEADS.contains(&right.bare())
        }
        particle if NAME_PARTICLES.contains(&particle) => {
            // Between name-like words only, not after an organization or place lead.
            !ORG_LEADS.contains(&last) && !LOCATION_LEADS.contains(&last)
        }
        _ => false,
    }
}

/// A connector with a lower-case `the` between two parts of one name: `Museum of the Moving
/// Image`, `Church of the Holy Sepulchre` (after a lead word, as `of` alone), and a band's `Bela
/// Fleck and the Flecktones` (`and the` before a plural name).
fn joins_with_the(
    left: &[Token<'_>],
    connector: &Token<'_>,
    the: &Token<'_>,
    right: &Token<'_>,
) -> bool {
    if the.text != "the" || !can_continue(right) {
        return false;
    }
    match connector.text {
        "of" | "for" => joins(left, connector, right),
        "and" => is_plural_name(right) && left.iter().all(|t| t.is_capitalised()),
        _ => false,
    }
}

/// A capitalised plural such as `Longhorns`, `Flecktones` (after `the`, a team or band), not a
/// demonym.
pub(crate) fn is_plural_name(token: &Token<'_>) -> bool {
    let word = token.text;
    token.shape == Shape::Capitalised
        && word.len() > 3
        && word.ends_with('s')
        && !word.ends_with("ss")
        && !word.ends_with("ians")
}

/// The start of the chunk `start..end` after dropping a sentence-initial ordinary word, unless
/// that word is itself a known place or organization, or a first name followed by more name.
fn skip_sentence_initial_word(
    tokens: &[Token<'_>],
    start: usize,
    end: usize,
    starts_phrase: bool,
) -> usize {
    let first = &tokens[start];
    // Whole known phrases (`New Zealand`, `United Nations`) keep their first word.
    if !first.sentence_start || first.shape == Shape::Upper || starts_phrase {
        return start;
    }
    let gaz = gazetteer();
    let flags = gaz.flags(first.text);
    if flags & COMMON == 0 {
        return start;
    }
    let continues = end > start + 1;
    if flags & (COUNTRY | REGION | BIG_CITY | ORGANIZATION) != 0 && !continues {
        return start;
    }
    // `Apple Inc. reported …`, `Bowling Green University …`: the head word makes it a name.
    let last = tokens[end - 1].bare();
    if continues && (ORG_HEADS.contains(&last) || LOCATION_HEADS.contains(&last)) {
        return start;
    }
    if flags & FIRST_NAME != 0 && continues && tokens[start + 1].shape == Shape::Capitalised {
        return start;
    }
    start + 1
}
