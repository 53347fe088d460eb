//! Decides whether a candidate name is a person, an organization or a location, from its words
//! (titles, head words, gazetteers, shape) and the words around it (prepositions, `, Texas`).
//! Rules run from the most to the least reliable; the first that fires decides.

use std::ops::Range;

use quarry_core::MatchKind;

use super::chunks::{is_call_sign, is_numbered, is_plural_name, is_title};
use super::data::gazetteer;
use super::frames::frame_kind;
use super::gazetteer::{
    BIG_CITY, COMMON, COMMON_FIRST_NAME, COUNTRY, FIRST_NAME, Flags, ORGANIZATION, PLACE, REGION,
    SURNAME,
};
use super::rules::{
    DEFINITION_VERBS, LOCATION_CUES, LOCATION_HEADS, LOCATION_LEADS, LOCATION_PREFIXES,
    NAME_SUFFIXES, NOT_ORG_ACRONYMS, ORG_CUE_NOUNS, ORG_HEADS, ORG_LEADS, PERSON_CUES,
    PERSON_TITLES, PERSON_VERBS_AFTER, PLACE_NOUNS, TEAM_CUES, TEAM_VERBS_AFTER,
};
use super::tokens::{Shape, Token};

/// How sure a rule is; a weak guess may be overridden by another mention of the same name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Confidence {
    Weak,
    Strong,
}

/// A classified candidate: the token range of the entity (titles and a leading `The` may be
/// trimmed off the candidate) and its kind, or `None` when no rule fired.
#[derive(Debug, Clone)]
pub(crate) struct Classified {
    pub tokens: Range<usize>,
    pub kind: Option<(MatchKind, Confidence)>,
}

pub(crate) fn classify(text: &str, tokens: &[Token<'_>], chunk: Range<usize>) -> Classified {
    let context = Context::new(tokens, &chunk);
    let end = chunk.end;
    let gaz = gazetteer();
    let strong = |tokens: Range<usize>, kind| Classified {
        tokens,
        kind: Some((kind, Confidence::Strong)),
    };
    let weak = |tokens: Range<usize>, kind| Classified {
        tokens,
        kind: Some((kind, Confidence::Weak)),
    };

    // Organization and place names first: `Bishop Garrigan High School`, `General Motors`.
    let mut start = chunk.start;
    let with_the = start;
    if tokens[start].text == "The" && end - start > 1 {
        start += 1;
    }
    let whole = gaz.flags(&text[tokens[start].range.start..tokens[end - 1].range.end]);
    let core = &tokens[start..end];
    let first = core[0].bare();
    let last = core[core.len() - 1].bare();
    let multi = core.len() > 1;
    // `Bela Fleck and the Flecktones`: a band named after its leader.
    if core
        .windows(3)
        .any(|w| w[0].text == "and" && w[1].text == "the" && is_plural_name(&w[2]))
    {
        return strong(with_the..end, MatchKind::Organization);
    }
    // `The 139th`, `the 65th Fighter Wing`: a unit named by its number.
    if is_numbered(&core[0]) && !is_call_sign(core[0].text) {
        return strong(start..end, MatchKind::Organization);
    }
    if whole & ORGANIZATION != 0 || core.iter().all(|t| is_call_sign(t.text)) {
        return strong(with_the..end, MatchKind::Organization);
    }
    // `band The Used`, `company Caloi`, `Dark Room Notes are a … band`: a noun before the name
    // or in a definition after it says what it is.
    if context.org_cue || context.defined_as == Some(MatchKind::Organization) {
        return strong(with_the..end, MatchKind::Organization);
    }
    let org_named = multi && (ORG_HEADS.contains(&last) || lead_before_of(core, ORG_LEADS));
    let place_defined = context.place_cue || context.defined_as == Some(MatchKind::Location);
    if place_defined && !org_named && !gaz.is(first, FIRST_NAME) {
        return strong(start..end, MatchKind::Location);
    }
    // `played for Boston`, `losing to Tulsa`, `the Montreal Victorias defeated …`: a team, also
    // when it is named after its city, but not a country's name or a person's.
    let person_like = gaz.is(first, FIRST_NAME) && multi;
    if context.team && whole & COUNTRY == 0 && !person_like && !is_title(&core[0]) {
        return strong(with_the..end, MatchKind::Organization);
    }
    if multi && (ORG_HEADS.contains(&last) || lead_before_of(core, ORG_LEADS)) {
        return strong(with_the..end, MatchKind::Organization);
    }
    if whole & PLACE != 0 && (multi || whole & (COUNTRY | REGION | BIG_CITY) != 0) {
        return strong(start..end, MatchKind::Location);
    }
    let place_prefix = LOCATION_PREFIXES.contains(&first);
    if multi
        && (LOCATION_HEADS.contains(&last) || place_prefix || lead_before_of(core, LOCATION_LEADS))
    {
        return strong(start..end, MatchKind::Location);
    }
    if multi && is_team(core) {
        return strong(with_the..end, MatchKind::Organization);
    }
    // `the Devil Rays`, `the St. Louis Eagles`, `The Rolling Stones`: a plural name after `the`
    // names a team or a band (places ending in a plural head word were taken above).
    let after_the = context.after_the || with_the < start;
    if multi && after_the && is_plural_name(&core[core.len() - 1]) && !gaz.is(first, FIRST_NAME) {
        return strong(with_the..end, MatchKind::Organization);
    }

    // Titles announce people: `President Lincoln`, `Brigadier General Gerald A. Daniel`.
    let mut name_start = chunk.start;
    while name_start + 1 < end && is_title(&tokens[name_start]) {
        name_start += 1;
    }
    let titled = name_start > chunk.start || context.after_title;
    // A title before two or more words announces a person even if the first word is also an
    // ordinary word (`Brother Gene Moore`).
    if titled && (!is_common(&tokens[name_start]) || end - name_start > 1) {
        return strong(name_start..end, MatchKind::Person);
    }
    // `headquartered in X`, `works for X`, `founded by X`, `X announced`: the frame around a
    // name no list or head word typed says what it is (not over a listed first name).
    if let Some(kind) = context.frame
        && !gaz.is(first, FIRST_NAME)
    {
        let range = if kind == MatchKind::Organization {
            with_the..end
        } else {
            start..end
        };
        return strong(range, kind);
    }
    if multi {
        return classify_multi_word(core, start..end, &context);
    }

    // One word from here on.
    let token = &core[0];
    let flags = gaz.flags(token.text);
    let name_like = !is_common(token);
    if flags & PLACE != 0 {
        let cue = context.location_cue || context.before_place;
        let strong_place = flags & (COUNTRY | REGION | BIG_CITY) != 0;
        return if strong_place || cue {
            strong(start..end, MatchKind::Location)
        } else if flags & (FIRST_NAME | SURNAME) != 0 {
            weak(start..end, MatchKind::Person)
        } else if name_like {
            weak(start..end, MatchKind::Location)
        } else {
            Classified {
                tokens: start..end,
                kind: None,
            }
        };
    }
    if is_acronym(token) {
        return strong(start..end, MatchKind::Organization);
    }
    // `Hitzig noticed …`: an unknown word before a verb only people do.
    if context.person_verb_follows && name_like && flags & PLACE == 0 && is_latin(token.text) {
        return strong(start..end, MatchKind::Person);
    }
    if (context.after_the || with_the < start) && is_plural_name(token) {
        return weak(with_the..end, MatchKind::Organization);
    }
    if flags & FIRST_NAME != 0
        && (name_like || flags & COMMON_FIRST_NAME != 0 && !token.sentence_start)
    {
        return strong(start..end, MatchKind::Person);
    }
    if context.before_place && name_like {
        return strong(start..end, MatchKind::Location);
    }
    if context.location_cue && name_like && !token.sentence_start {
        return weak(start..end, MatchKind::Location);
    }
    if flags & SURNAME != 0 && name_like {
        return weak(start..end, MatchKind::Person);
    }
    Classified {
        tokens: start..end,
        kind: None,
    }
}

fn classify_multi_word(core: &[Token<'_>], range: Range<usize>, context: &Context) -> Classified {
    let gaz = gazetteer();
    let flags: Vec<Flags> = core.iter().map(|t| gaz.flags(t.text)).collect();
    let last = core.len() - 1;
    let has_suffix = NAME_SUFFIXES.contains(&core[last].text);
    let name_end = if has_suffix { last } else { core.len() };
    let name_like = |t: &Token<'_>| {
        matches!(t.shape, Shape::Capitalised | Shape::Initial) && !is_common(t) && is_latin(t.text)
    };
    let all_name_like = core[..name_end].iter().all(name_like);
    let has_inner_initial = core[1..last].iter().any(|t| t.shape == Shape::Initial);
    let first_name = flags[0] & FIRST_NAME != 0;
    let surname = flags[name_end - 1] & SURNAME != 0;
    let any_place = flags.iter().any(|f| f & PLACE != 0);
    let classified = |kind, confidence| Classified {
        tokens: range.clone(),
        kind: Some((kind, confidence)),
    };

    let initials_or_suffix = (has_inner_initial || has_suffix) && name_like(&core[0]);
    if initials_or_suffix || (first_name && (surname || name_like(&core[name_end - 1]))) {
        return classified(MatchKind::Person, Confidence::Strong);
    }
    let cue = context.location_cue || context.before_place;
    if cue && !first_name && (any_place || all_name_like) && core.len() <= 3 {
        return classified(MatchKind::Location, Confidence::Weak);
    }
    if all_name_like && name_end <= 3 {
        let sure = first_name || surname || context.person_cue;
        let confidence = if sure {
            Confidence::Strong
        } else {
            Confidence::Weak
        };
        return classified(MatchKind::Person, confidence);
    }
    if first_name && name_like(&core[0]) && core.len() <= 3 {
        return classified(MatchKind::Person, Confidence::Weak);
    }
    Classified {
        tokens: range,
        kind: None,
    }
}

/// `University of X`, `Christian Democratic Party of X`, `Isle of X`: a lead word right before
/// `of` or `for`.
fn lead_before_of(core: &[Token<'_>], leads: &[&str]) -> bool {
    core.windows(2)
        .any(|pair| matches!(pair[1].text, "of" | "for") && leads.contains(&pair[0].text))
}

/// `Montreal Victorias`, `Oakland Athletics`: a place followed by a plural nickname.
fn is_team(core: &[Token<'_>]) -> bool {
    let gaz = gazetteer();
    core.len() <= 4
        && gaz.is(core[0].text, PLACE)
        && !gaz.is(core[0].text, FIRST_NAME)
        && !gaz.is(core[core.len() - 1].text, SURNAME)
        && is_plural_name(&core[core.len() - 1])
        && !gaz.is(core[core.len() - 1].text, PLACE)
}

/// An ordinary English word, including hyphenated compounds of them (`All-State`).
fn is_common(token: &Token<'_>) -> bool {
    let gaz = gazetteer();
    gaz.is(token.text, COMMON)
        || token.text.contains('-') && token.text.split('-').all(|part| gaz.is(part, COMMON))
}

/// Written in Latin script; the name rules key on English capitalisation.
fn is_latin(word: &str) -> bool {
    word.chars()
        .all(|c| !c.is_alphabetic() || (c as u32) < 0x250)
}

/// What the words around a candidate say.
struct Context {
    /// Preceded by `in`, `near`, `at`, …
    location_cue: bool,
    /// Preceded by `by`, `said`, …
    person_cue: bool,
    /// Followed by `, <country or region>`: `Poolesville, Maryland`.
    before_place: bool,
    /// Preceded by a lower-case title: `president Lincoln`, `dr. Smith`.
    after_title: bool,
    /// Preceded by a lower-case `the`: `the Longhorns`.
    after_the: bool,
    /// Preceded by a noun naming a kind of organization: `band`, `company`, `label`.
    org_cue: bool,
    /// In a sports context: `played for X`, `losing to X`, `X defeated`.
    team: bool,
    /// Followed by a verb whose subject is a person: `X said`.
    person_verb_follows: bool,
    /// Preceded by a kind of place: `the village of X`, `the district X`.
    place_cue: bool,
    /// What a definition after the name says it is: `X is a municipality …` (a location),
    /// `X are a four-piece band` (an organization).
    defined_as: Option<MatchKind>,
    /// What the verbs and prepositions around the name say it is (`frames.rs`).
    frame: Option<MatchKind>,
}

impl Context {
    fn new(tokens: &[Token<'_>], chunk: &Range<usize>) -> Context {
        let previous = chunk.start.checked_sub(1).map(|i| &tokens[i]);
        let previous_word = previous.map_or("", |t| t.text);
        let is_one_of = |list: &[&str]| list.iter().any(|w| w.eq_ignore_ascii_case(previous_word));
        let gaz = gazetteer();
        let before_place = tokens.get(chunk.end).is_some_and(|t| t.text == ",")
            && tokens
                .get(chunk.end + 1)
                .is_some_and(|t| gaz.is(t.text, COUNTRY | REGION));
        let after_title =
            previous.is_some_and(|t| t.shape == Shape::Lower && is_one_of(PERSON_TITLES));
        // Words before the candidate, nearest first, skipping a lower-case `the`.
        let before: Vec<&str> = tokens[..chunk.start]
            .iter()
            .rev()
            .skip_while(|t| t.text == "the")
            .take(2)
            .map(|t| t.text)
            .collect();
        let team_before = TEAM_CUES.iter().any(|cue| {
            cue.len() <= before.len()
                && cue
                    .iter()
                    .rev()
                    .zip(&before)
                    .all(|(want, got)| want.eq_ignore_ascii_case(got))
        });
        let next_word = tokens.get(chunk.end).map_or("", |t| t.text);
        Context {
            location_cue: is_one_of(LOCATION_CUES),
            person_cue: is_one_of(PERSON_CUES),
            before_place,
            after_title,
            after_the: previous_word == "the",
            org_cue: before.first().is_some_and(|w| ORG_CUE_NOUNS.contains(w)),
            team: team_before || TEAM_VERBS_AFTER.contains(&next_word),
            person_verb_follows: PERSON_VERBS_AFTER.contains(&next_word),
            place_cue: match before.as_slice() {
                [noun, ..] if PLACE_NOUNS.contains(noun) => true,
                ["of", noun, ..] => PLACE_NOUNS.contains(noun),
                _ => false,
            },
            defined_as: definition(&tokens[chunk.end..]),
            frame: frame_kind(tokens, chunk),
        }
    }
}

/// The kind a definition right after a name gives it: `is a municipality in`, `are a four-piece
/// electro band`, `was an American record label`, or an apposition: `, a Brazilian bicycle
/// company`. The first kind noun within a few words after
/// `is a`/`are a` decides; a capitalised word or punctuation other than `-` and `/` ends the search.
fn definition(after: &[Token<'_>]) -> Option<MatchKind> {
    let [verb, article, rest @ ..] = after else {
        return None;
    };
    // `X is a …`, and the apposition `X, a Brazilian bicycle company, …`.
    if !(DEFINITION_VERBS.contains(&verb.text) || verb.text == ",")
        || !matches!(article.text, "a" | "an" | "the")
    {
        return None;
    }
    for token in rest.iter().take(5) {
        let word = token.text;
        if PLACE_NOUNS.contains(&word) {
            return Some(MatchKind::Location);
        }
        if ORG_CUE_NOUNS.contains(&word) {
            return Some(MatchKind::Organization);
        }
        let describing = matches!(token.shape, Shape::Lower | Shape::Number)
            || matches!(word, "-" | "/")
            || token.shape == Shape::Capitalised && is_demonym(word);
        if !describing {
            return None;
        }
    }
    None
}

/// `American`, `French`, `Japanese`: nationality adjectives, which may sit in a definition.
pub(crate) fn is_demonym(word: &str) -> bool {
    ["an", "ese", "ish", "ch", "ic", "i"]
        .iter()
        .any(|ending| word.ends_with(ending))
}

/// `NATO`, `BBC`, `AT&T`, `MTV2`: two to six capitals (digits may follow them), not a known
/// place code such as `USA`, a Roman numeral, or the abbreviation of a thing (`EP`, `VIP`).
fn is_acronym(token: &Token<'_>) -> bool {
    let letters = token.text.chars().filter(|c| c.is_alphabetic()).count();
    let gaz = gazetteer();
    let word = token.text.trim_end_matches(|c: char| c.is_ascii_digit());
    token.shape == Shape::Upper
        && (2..=6).contains(&letters)
        && word.chars().all(|c| c.is_alphabetic() || c == '&')
        && !gaz.is(token.text, PLACE)
        && !gaz.is(&token.text.to_lowercase(), COMMON)
        && !NOT_ORG_ACRONYMS.contains(&token.text)
        && !is_roman_numeral(token.text)
}

/// `II`, `XIV`, `MCMLXXX`: written in capitals like an acronym, but a number.
fn is_roman_numeral(word: &str) -> bool {
    word.chars()
        .all(|c| matches!(c, 'I' | 'V' | 'X' | 'L' | 'C' | 'D' | 'M'))
        && word.len() <= 8
        && !matches!(word, "MCC" | "DC" | "CD" | "MD" | "LDC")
}
