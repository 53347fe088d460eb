//! Generated cases for the entity rules: random invented names (syllables no list knows),
//! random list names and random contexts rendered through each pattern the rules claim, then
//! checked for the exact span and kind. Seeded, so a failure names its case and repeats.

use quarry_core::MatchKind;

use super::data::gazetteer;
use super::find;
use super::frames::{AFTER, BEFORE};
use super::gazetteer::{BIG_CITY, CITY, COUNTRY, FIRST_NAME, ORGANIZATION, SURNAME};
use super::rules::{
    NOT_ORG_ACRONYMS, ORG_CUE_NOUNS, PERSON_TITLES, PERSON_VERBS_AFTER, PLACE_NOUNS, TEAM_CUES,
};

/// Cases per pattern.
const CASES: usize = 200;

/// A seeded generator (fastrand's wyrand): a failing case is reproduced by its seed.
struct Rng(fastrand::Rng);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(fastrand::Rng::with_seed(seed))
    }

    fn below(&mut self, n: usize) -> usize {
        self.0.usize(..n)
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    /// An invented capitalised word that no gazetteer list holds: `Zorvathel`.
    fn invented(&mut self) -> String {
        const ONSETS: &[&str] = &["Z", "Qu", "Vr", "Kh", "Tz", "Xh", "Dv", "Gw"];
        const SYLLABLES: &[&str] = &["orv", "ath", "el", "ix", "umb", "eth", "ald", "yr", "onk"];
        loop {
            let mut word = self.pick(ONSETS).to_owned();
            for _ in 0..2 + self.below(2) {
                word.push_str(self.pick(SYLLABLES));
            }
            if gazetteer().flags(&word) == 0 {
                return word;
            }
        }
    }
}

/// Lines of a data file with `flags` in the gazetteer, for list-based names.
fn listed(data: &'static str, flags: u16) -> Vec<&'static str> {
    data.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split('\t').next().unwrap_or(l))
        .filter(|w| !w.contains(' ') && gazetteer().flags(w) & flags == flags)
        .take(400)
        .collect()
}

fn found(text: &str) -> Vec<(String, MatchKind)> {
    find(text).into_iter().map(|d| (d.value, d.kind)).collect()
}

fn assert_has(text: &str, name: &str, kind: MatchKind) {
    let got = found(text);
    assert!(
        got.iter().any(|(v, k)| v == name && *k == kind),
        "{text:?}: expected {name:?} as {kind:?}, got {got:?}"
    );
}

#[test]
fn generated_call_signs_are_organizations() {
    let mut rng = Rng::new(1);
    for _ in 0..CASES {
        let digits = 1 + rng.below(99);
        let letters: String = (0..2 + rng.below(3))
            .map(|_| char::from(b'A' + rng.below(26) as u8))
            .collect();
        let sign = format!("{digits}{letters}");
        let text = format!("In 1987 the owners sold {sign} to a broadcaster.");
        assert_has(&text, &sign, MatchKind::Organization);
    }
}

#[test]
fn generated_names_after_an_organization_noun_are_organizations() {
    let mut rng = Rng::new(2);
    for _ in 0..CASES {
        let name = match rng.below(3) {
            0 => rng.invented(),
            1 => format!("{} {}", rng.invented(), rng.invented()),
            _ => format!("The {} {}", rng.invented(), rng.invented()),
        };
        let noun = rng.pick(ORG_CUE_NOUNS);
        let text = format!("Last year she toured with the {noun} {name} across Europe.");
        assert_has(&text, &name, MatchKind::Organization);
    }
}

#[test]
fn generated_definitions_type_the_name_they_define() {
    let mut rng = Rng::new(3);
    for _ in 0..CASES {
        let name = rng.invented();
        let (noun, kind) = if rng.below(2) == 0 {
            (rng.pick(PLACE_NOUNS), MatchKind::Location)
        } else {
            (rng.pick(ORG_CUE_NOUNS), MatchKind::Organization)
        };
        let adjective = rng.pick(&["small", "German", "four-piece", "former", "rural", ""]);
        let verb = rng.pick(&["is", "was"]);
        let text = format!("{name} {verb} a {adjective} {noun} with a long history.");
        assert_has(&text, &name, kind);
        // The same definition as an apposition.
        let text = format!("In 1990 {name}, a {adjective} {noun}, changed hands.");
        assert_has(&text, &name, kind);
    }
}

#[test]
fn generated_place_nouns_before_a_name_make_it_a_location() {
    let mut rng = Rng::new(4);
    for _ in 0..CASES {
        let name = rng.invented();
        let noun = rng.pick(PLACE_NOUNS);
        let text = if rng.below(2) == 0 {
            format!("The road leads to the {noun} of {name} and beyond.")
        } else {
            format!("He was born in the {noun} {name} in 1901.")
        };
        assert_has(&text, &name, MatchKind::Location);
    }
}

#[test]
fn generated_teams_named_after_cities_are_organizations_in_sports_context() {
    let mut rng = Rng::new(5);
    let cities = listed(include_str!("../../data/cities.txt"), CITY | BIG_CITY);
    let first_names = listed(include_str!("../../data/first_names.txt"), FIRST_NAME);
    let surnames = listed(include_str!("../../data/surnames.txt"), SURNAME);
    let mut checked = 0;
    for _ in 0..CASES {
        let city = rng.pick(&cities);
        if gazetteer().is(city, COUNTRY | FIRST_NAME) {
            continue;
        }
        let cue = TEAM_CUES[rng.below(TEAM_CUES.len())].join(" ");
        let person = format!("{} {}", rng.pick(&first_names), rng.pick(&surnames));
        let text = format!("In 1999 {person} {cue} {city} in the final.");
        assert_has(&text, city, MatchKind::Organization);
        checked += 1;
    }
    assert!(checked > CASES / 2);
}

#[test]
fn generated_plural_names_after_the_are_teams_or_bands() {
    let mut rng = Rng::new(6);
    for _ in 0..CASES {
        let name = format!("{} {}s", rng.invented(), rng.invented());
        let text = format!("He signed a contract with the {name} in 2003.");
        assert_has(&text, &name, MatchKind::Organization);
    }
}

#[test]
fn generated_unknown_words_before_person_verbs_are_people() {
    let mut rng = Rng::new(7);
    for _ in 0..CASES {
        let name = rng.invented();
        let verb = rng.pick(PERSON_VERBS_AFTER);
        let text = format!("After the match, {name} {verb} that the team had played well.");
        assert_has(&text, &name, MatchKind::Person);
    }
}

#[test]
fn generated_lone_surname_refers_back_to_the_full_name() {
    let mut rng = Rng::new(8);
    let first_names = listed(include_str!("../../data/first_names.txt"), FIRST_NAME);
    for _ in 0..CASES {
        let first = rng.pick(&first_names);
        if PERSON_TITLES.contains(&first) {
            continue; // `Earl`, `Major`: read as a title before the surname, as WikiGold does
        }
        let surname = rng.invented();
        let text = format!(
            "{first} {surname} joined the expedition in May. Two weeks later, {surname} reached the camp."
        );
        let got = found(&text);
        let people: Vec<&str> = got
            .iter()
            .filter(|(_, k)| *k == MatchKind::Person)
            .map(|(v, _)| v.as_str())
            .collect();
        assert_eq!(
            people,
            [format!("{first} {surname}").as_str(), &surname],
            "{text:?}"
        );
    }
}

#[test]
fn generated_titles_stay_outside_person_spans() {
    let mut rng = Rng::new(9);
    let first_names = listed(include_str!("../../data/first_names.txt"), FIRST_NAME);
    for _ in 0..CASES {
        let title = rng.pick(PERSON_TITLES);
        if title.len() < 4 {
            continue; // abbreviations are written with a period, tested by hand
        }
        let name = format!("{} {}", rng.pick(&first_names), rng.invented());
        let text = format!("The ceremony was opened by {title} {name} in the morning.");
        assert_has(&text, &name, MatchKind::Person);
        assert!(
            !found(&text).iter().any(|(v, _)| v.starts_with(title)),
            "{text:?}: {:?}",
            found(&text)
        );
    }
}

#[test]
fn generated_abbreviations_of_things_are_not_organizations() {
    let mut rng = Rng::new(10);
    for _ in 0..CASES {
        let acronym = rng.pick(NOT_ORG_ACRONYMS);
        let text = format!("In 2004 they finally released the {acronym} on their own.");
        assert!(found(&text).is_empty(), "{text:?}: {:?}", found(&text));
    }
    for numeral in ["II", "III", "XIV", "XXI"] {
        let text = format!("The sequel, Part {numeral}, followed a year later.");
        assert!(
            !found(&text).iter().any(|(v, _)| v == numeral),
            "{text:?}: {:?}",
            found(&text)
        );
    }
}

/// One or two invented words: a name no list knows.
fn invented_name(rng: &mut Rng) -> String {
    if rng.below(2) == 0 {
        rng.invented()
    } else {
        format!("{} {}", rng.invented(), rng.invented())
    }
}

#[test]
fn generated_names_are_typed_by_the_frame_around_them() {
    let mut rng = Rng::new(11);
    for (words, kind) in BEFORE {
        for _ in 0..CASES / 10 {
            let name = invented_name(&mut rng);
            let the = if *kind == MatchKind::Organization && rng.below(2) == 0 {
                "the "
            } else {
                ""
            };
            let lead = rng.pick(&["Last year", "In 2003", "Back then", "By March"]);
            let text = format!(
                "{lead} it turned out she {} {the}{name} again.",
                words.join(" ")
            );
            assert_has(&text, &name, *kind);
        }
    }
    for (words, kind) in AFTER {
        for _ in 0..CASES / 10 {
            let name = invented_name(&mut rng);
            // A possessive is glued to the name, with a straight or a curly apostrophe.
            let frame = words.join(" ");
            let text = match frame.strip_prefix("'s") {
                Some(rest) => {
                    let apostrophe = rng.pick(&["'", "\u{2019}"]);
                    format!("In 2001, {name}{apostrophe}s{rest} was there on a Monday.")
                }
                None => format!("In 2001, {name} {frame} on a Monday."),
            };
            assert_has(&text, &name, *kind);
        }
    }
}

#[test]
fn generated_lists_share_the_kind_of_their_known_members() {
    let mut rng = Rng::new(12);
    // Names as the chunker reads them: starting with a capital letter (`3M` is a number).
    let capitalised = |names: Vec<&'static str>| -> Vec<&'static str> {
        names
            .into_iter()
            .filter(|n| n.starts_with(|c: char| c.is_uppercase()))
            .collect()
    };
    let organizations = capitalised(listed(
        include_str!("../../data/organizations.txt"),
        ORGANIZATION,
    ));
    let cities = capitalised(listed(include_str!("../../data/cities.txt"), BIG_CITY));
    for _ in 0..CASES {
        let (known, kind, context) = if rng.below(2) == 0 {
            (&organizations, MatchKind::Organization, "The partners were")
        } else {
            (&cities, MatchKind::Location, "The tour stopped in")
        };
        let name = rng.invented();
        let mut members = [
            rng.pick(known).to_owned(),
            rng.pick(known).to_owned(),
            name.clone(),
        ];
        let at = rng.below(3);
        members.swap(2, at);
        let last = if rng.below(2) == 0 { " and " } else { ", and " };
        let text = format!(
            "{context} {}, {}{last}{} that year.",
            members[0], members[1], members[2]
        );
        if gazetteer().is(&members[0], FIRST_NAME) {
            continue; // a listed first name reads as a person, as it should
        }
        assert_has(&text, &name, kind);
    }
}

#[test]
fn generated_numbered_units_and_bands_after_a_leader() {
    let mut rng = Rng::new(13);
    for _ in 0..CASES {
        let n = 1 + rng.below(199);
        let suffix = match (n % 10, n % 100) {
            (_, 11..=13) => "th",
            (1, _) => "st",
            (2, _) => "nd",
            (3, _) => "rd",
            _ => "th",
        };
        let unit = rng.pick(&[
            "Fighter Wing",
            "Infantry Regiment",
            "Armored Division",
            "Brigade",
        ]);
        let name = format!("{n}{suffix} {unit}");
        let text = format!("He served with the {name} until the war ended.");
        assert_has(&text, &name, MatchKind::Organization);
        let leader = format!("{} {}", rng.invented(), rng.invented());
        let band = format!("{leader} and the {}s", rng.invented());
        let text = format!("The album was recorded by {band} in one night.");
        assert_has(&text, &band, MatchKind::Organization);
    }
}
