//! Context frames: the verbs, nouns and prepositions around a mention that say what it names,
//! whatever the name is — `headquartered in X` is a place, `works for X` an organization,
//! `founded by X` a person, `X announced` an organization. Each frame is a short word sequence
//! matched case-insensitively right before the name (a lower-case `the` between them is
//! skipped) or right after it. A frame decides only names that no list or stronger rule types.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;

use quarry_core::MatchKind;

use super::tokens::Token;

use MatchKind::{Location as Loc, Organization as Org, Person};

/// Word sequences before a name, and what they make it.
pub(crate) const BEFORE: &[(&[&str], MatchKind)] = &[
    // places
    (&["headquartered", "in"], Loc),
    (&["headquarters", "in"], Loc),
    (&["based", "in"], Loc),
    (&["born", "in"], Loc),
    (&["moved", "to"], Loc),
    (&["relocated", "to"], Loc),
    (&["lives", "in"], Loc),
    (&["lived", "in"], Loc),
    (&["living", "in"], Loc),
    (&["located", "in"], Loc),
    (&["flew", "to"], Loc),
    (&["traveled", "to"], Loc),
    (&["travelled", "to"], Loc),
    (&["emigrated", "to"], Loc),
    (&["returned", "to"], Loc),
    (&["capital", "of"], Loc),
    (&["outskirts", "of"], Loc),
    (&["mayor", "of"], Loc),
    (&["governor", "of"], Loc),
    (&["native", "of"], Loc),
    (&["resident", "of"], Loc),
    (&["north", "of"], Loc),
    (&["south", "of"], Loc),
    (&["east", "of"], Loc),
    (&["west", "of"], Loc),
    // organizations
    (&["works", "for"], Org),
    (&["worked", "for"], Org),
    (&["working", "for"], Org),
    (&["joined"], Org),
    (&["hired", "by"], Org),
    (&["employed", "by"], Org),
    (&["acquired", "by"], Org),
    (&["bought", "by"], Org),
    (&["subsidiary", "of"], Org),
    (&["division", "of"], Org),
    (&["shares", "of"], Org),
    (&["stake", "in"], Org),
    (&["invested", "in"], Org),
    (&["albums", "for"], Org),
    (&["recorded", "for"], Org),
    (&["signed", "to"], Org),
    (&["ceo", "of"], Org),
    (&["chairman", "of"], Org),
    (&["chairwoman", "of"], Org),
    (&["founder", "of"], Org),
    (&["co-founder", "of"], Org),
    (&["cofounder", "of"], Org),
    (&["spokesman", "for"], Org),
    (&["spokeswoman", "for"], Org),
    (&["spokesperson", "for"], Org),
    (&["merger", "with"], Org),
    (&["partnership", "with"], Org),
    (&["member", "of"], Org),
    (&["supporting"], Org),
    (&["touring", "with"], Org),
    // people
    (&["founded", "by"], Person),
    (&["directed", "by"], Person),
    (&["written", "by"], Person),
    (&["produced", "by"], Person),
    (&["coached", "by"], Person),
    (&["interview", "with"], Person),
    (&["son", "of"], Person),
    (&["daughter", "of"], Person),
    (&["wife", "of"], Person),
    (&["husband", "of"], Person),
    (&["widow", "of"], Person),
];

/// Words right after a name, and what they make it (a person's verbs are
/// `rules::PERSON_VERBS_AFTER`).
pub(crate) const AFTER: &[(&[&str], MatchKind)] = &[
    (&["announced"], Org),
    (&["shares"], Org),
    (&["stock"], Org),
    (&["shareholders"], Org),
    (&["employees"], Org),
    (&["acquired"], Org),
    (&["filed", "for", "bankruptcy"], Org),
    (&["residents"], Loc),
    // A person's passive events.
    (&["was", "born"], Person),
    (&["was", "sentenced"], Person),
    (&["was", "arrested"], Person),
    (&["was", "knighted"], Person),
    (&["was", "baptized"], Person),
    (&["was", "baptised"], Person),
    // Possessives: what only a person, an organization or a place has.
    (&["'s", "wife"], Person),
    (&["'s", "husband"], Person),
    (&["'s", "widow"], Person),
    (&["'s", "son"], Person),
    (&["'s", "daughter"], Person),
    (&["'s", "father"], Person),
    (&["'s", "mother"], Person),
    (&["'s", "brother"], Person),
    (&["'s", "sister"], Person),
    (&["'s", "parents"], Person),
    (&["'s", "girlfriend"], Person),
    (&["'s", "boyfriend"], Person),
    (&["'s", "grandson"], Person),
    (&["'s", "granddaughter"], Person),
    (&["'s", "lawyer"], Person),
    (&["'s", "poem"], Person),
    (&["'s", "novel"], Person),
    (&["'s", "memoir"], Person),
    (&["'s", "autobiography"], Person),
    (&["'s", "funeral"], Person),
    (&["'s", "childhood"], Person),
    (&["'s", "headquarters"], Org),
    (&["'s", "shareholders"], Org),
    (&["'s", "subsidiary"], Org),
    (&["'s", "chief", "executive"], Org),
    (&["'s", "board", "of", "directors"], Org),
    (&["'s", "capital"], Loc),
    (&["'s", "population"], Loc),
    (&["'s", "mayor"], Loc),
    (&["'s", "governor"], Loc),
    (&["'s", "coastline"], Loc),
];

/// What the frame around the name at `chunk` says it is, if any.
pub(crate) fn frame_kind(
    tokens: &[Token<'_>],
    chunk: &std::ops::Range<usize>,
) -> Option<MatchKind> {
    // The three words before the name, nearest first, without an allocation per candidate.
    let mut before = [""; 3];
    let mut count = 0;
    for token in tokens[..chunk.start]
        .iter()
        .rev()
        .skip_while(|t| t.text == "the")
        .take(3)
    {
        before[count] = token.text;
        count += 1;
    }
    let before = &before[..count];
    let matches_before = |words: &[&str]| {
        words.len() <= before.len()
            && words
                .iter()
                .rev()
                .zip(before)
                .all(|(want, got)| want.eq_ignore_ascii_case(got))
    };
    // Only the frames whose last word is the word right before the name are tried.
    if let Some(nearest) = before.first()
        && let Some(frames) = by_last_word().get(lowercase(nearest).as_ref())
        && let Some(&index) = frames.iter().find(|&&i| matches_before(BEFORE[i].0))
    {
        return Some(BEFORE[index].1);
    }
    let after = &tokens[chunk.end.min(tokens.len())..];
    AFTER
        .iter()
        .find(|(words, _)| {
            words.len() <= after.len()
                && words.iter().zip(after).all(|(want, got)| {
                    want.eq_ignore_ascii_case(got.text) || *want == "'s" && got.text == "\u{2019}s"
                })
        })
        .map(|&(_, kind)| kind)
}

/// The indexes of [`BEFORE`]'s frames by their last word.
fn by_last_word() -> &'static HashMap<&'static str, Vec<usize>> {
    static TABLE: OnceLock<HashMap<&'static str, Vec<usize>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table: HashMap<&'static str, Vec<usize>> = HashMap::new();
        for (index, (words, _)) in BEFORE.iter().enumerate() {
            if let Some(last) = words.last() {
                table.entry(last).or_default().push(index);
            }
        }
        table
    })
}

/// `word` in lower case, borrowed when it already is.
fn lowercase(word: &str) -> Cow<'_, str> {
    if word.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(word.to_ascii_lowercase())
    } else {
        Cow::Borrowed(word)
    }
}
