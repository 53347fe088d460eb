//! Entity resolution: does a newly extracted `(name, type)` name an entity the graph already holds?
//!
//! Candidates are the existing entities of the same type. The stages run in order and the first
//! that decides wins:
//!
//! 1. **Exact** — the name is byte-equal to a candidate's name.
//! 2. **Normalized** — the normalised keys are equal. Normalising lower-cases, folds Latin-1 and
//!    Latin Extended-A diacritics (`Zoë` → `zoe`, `ß` → `ss`, `Ł` → `l`) and drops combining
//!    marks, deletes apostrophes (`O'Brien` → `obrien`), turns `&` into `and`, splits on all other
//!    punctuation and whitespace (a `.` between digits is kept: `3.11`), then joins the tokens
//!    without spaces, so `Node.js` = `NodeJS` and `Java Script` = `JavaScript`. `+` and `#` stay
//!    part of a word (`C++` ≠ `C#` ≠ `C`). Per type:
//!    * organizations: runs of single letters are glued (`I.B.M.` → `ibm`, `S.A.` → `sa`), a
//!      leading `the` is dropped, and up to three trailing legal suffixes (Corp, Corporation, Inc,
//!      Incorporated, Ltd, Limited, LLC, LLP, LP, GmbH, AG, KGaA, SA, SE, NV, BV, plc, Co,
//!      Company, Pty, Pvt, Oy, AB, SpA, Srl, SAS, KK) — so `Acme Corp`, `ACME Corp.` and
//!      `Acme Corporation` all become `acme`;
//!    * persons: leading honorifics (Dr, Mr, Mrs, Ms, Miss, Mx, Prof, Sir, Dame) are dropped;
//!      single letters stay separate tokens, they are initials;
//!    * projects: a leading `project` is dropped (`Project Atlas` = `Atlas`);
//!    * every other type: runs of single letters are glued and a leading `the` is dropped.
//!
//!    A suffix, honorific or `the` is never dropped when it is the only token left.
//! 3. **Similar** — near-duplicates, never across a difference in numbers: the tokens holding
//!    digits must be the same on both sides (`GPT-4` ≠ `GPT-4o`, `Windows 10` ≠ `Windows 11`).
//!    * Persons are matched token by token, never by string similarity, because different people
//!      share surnames and differ by one letter (`Jane`/`John`, `Johnson`/`Johnston`). Both
//!      names need a given name and a surname; generational suffixes (Jr, Sr, II, III, IV) must
//!      agree; surnames must be equal or differ by one adjacent transposition (×0.9); first
//!      names equal, one transposition (×0.9), or an initial of the other (`J.` ~ `John`, ×0.85);
//!      middle names may be omitted on one side (×0.9) or must pair up (an initial ×0.95). The
//!      product must reach [`PERSON_THRESHOLD`].
//!    * Every other type passes when the normalised keys differ by one typo (see below), or when
//!      the content tokens (stop words such as `of`, `the`, `and` aside) pair up one to one, each
//!      pair equal or one typo apart, and the Dice coefficient of the padded character trigrams
//!      of those tokens reaches the type's threshold ([`similarity_threshold`]: organization and
//!      concept 0.80, everything else 0.85). Pairing keeps `Visual Studio` from absorbing
//!      `Visual Studio Code`, and word order free (`University of Oxford` = `Oxford University`).
//!      The reported score is the Dice coefficient.
//!    * One typo: one adjacent transposition in a key of at least 4 characters (`Goolge`), one
//!      inserted or deleted letter when the shorter key has at least 6 (`Kubernets`), or one
//!      substituted letter, not the first, when the key has at least 8 (`Anthropik`). Shorter
//!      keys differ by one letter too often to mean the same thing: `Gambia`/`Zambia`,
//!      `Next.js`/`Nest.js`, `React`/`Preact`.
//!
//!    **Ambiguity:** when two candidates pass and the runner-up scores within
//!    [`AMBIGUITY_MARGIN`] of the best, resolution refuses and answers [`Resolution::New`]: a
//!    duplicate node can be merged later, a wrong merge silently corrupts two entities
//!    (`J. Smith` with both `John Smith` and `Jane Smith` known stays new).
//!
//! When several candidates share an exact name or key, the first inserted wins.
//!
//! Cost: [`ResolverIndex`] normalises each candidate once on insert; exact and normalised lookups
//! are map lookups, the similar stage is one linear pass with a length bound that skips most
//! candidates before any trigram work. Everything is deterministic: no hashing order, no clocks.

use std::collections::BTreeMap;

/// Persons: the minimum product of the token-rule factors.
pub const PERSON_THRESHOLD: f64 = 0.75;

/// Two passing candidates closer than this are ambiguous and nothing is merged.
pub const AMBIGUITY_MARGIN: f64 = 0.05;

/// An existing entity of the type being resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate<'a> {
    pub id: &'a str,
    pub name: &'a str,
}

/// Which existing entity, if any, a new name refers to, and by which stage.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolution {
    Exact(String),
    Normalized(String),
    Similar { id: String, score: f64 },
    New,
}

impl Resolution {
    /// The id of the entity merged into, `None` for [`Resolution::New`].
    pub fn id(&self) -> Option<&str> {
        match self {
            Resolution::Exact(id) | Resolution::Normalized(id) => Some(id),
            Resolution::Similar { id, .. } => Some(id),
            Resolution::New => None,
        }
    }
}

/// How names of a type are normalised and compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameKind {
    Person,
    Organization,
    Project,
    Other,
}

impl NameKind {
    pub fn of(entity_type: &str) -> Self {
        match entity_type.trim().to_lowercase().as_str() {
            "person" | "people" => NameKind::Person,
            "organization" | "organisation" | "company" | "org" => NameKind::Organization,
            "project" => NameKind::Project,
            _ => NameKind::Other,
        }
    }
}

/// The minimum trigram Dice coefficient of the similar stage for names of `entity_type`
/// (persons: the minimum token-rule score).
pub fn similarity_threshold(entity_type: &str) -> f64 {
    match entity_type.trim().to_lowercase().as_str() {
        "person" | "people" => PERSON_THRESHOLD,
        "organization" | "organisation" | "company" | "org" | "concept" => 0.80,
        _ => 0.85,
    }
}

/// The normalised-stage key of `name` for entities of `entity_type` (see the module doc): two
/// names with the same key name the same entity. Stores keep it beside each entity
/// (`entities.name_key`), so the database can find normalised matches itself.
pub fn name_key(name: &str, entity_type: &str) -> String {
    NormalizedName::new(name, NameKind::of(entity_type)).key
}

/// Resolves `name` against `candidates` of type `entity_type` in one go. For many names against
/// the same candidates, build a [`ResolverIndex`] once instead.
pub fn resolve(name: &str, entity_type: &str, candidates: &[Candidate<'_>]) -> Resolution {
    let mut index = ResolverIndex::new(entity_type);
    for candidate in candidates {
        index.insert(candidate.id, candidate.name);
    }
    index.resolve(name)
}

/// The existing entities of one type with their names normalised once.
#[derive(Debug, Clone)]
pub struct ResolverIndex {
    kind: NameKind,
    threshold: f64,
    entries: Vec<Entry>,
    by_name: BTreeMap<String, usize>,
    by_key: BTreeMap<String, usize>,
}

#[derive(Debug, Clone)]
struct Entry {
    id: String,
    name: NormalizedName,
}

impl ResolverIndex {
    pub fn new(entity_type: &str) -> Self {
        ResolverIndex {
            kind: NameKind::of(entity_type),
            threshold: similarity_threshold(entity_type),
            entries: Vec::new(),
            by_name: BTreeMap::new(),
            by_key: BTreeMap::new(),
        }
    }

    /// Adds an existing entity (e.g. one just created by a bulk ingest).
    pub fn insert(&mut self, id: impl Into<String>, name: &str) {
        let position = self.entries.len();
        let normalized = NormalizedName::new(name, self.kind);
        self.by_name.entry(name.to_owned()).or_insert(position);
        if !normalized.key.is_empty() {
            self.by_key
                .entry(normalized.key.clone())
                .or_insert(position);
        }
        self.entries.push(Entry {
            id: id.into(),
            name: normalized,
        });
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn resolve(&self, name: &str) -> Resolution {
        if let Some(&position) = self.by_name.get(name) {
            return Resolution::Exact(self.entries[position].id.clone());
        }
        let new = NormalizedName::new(name, self.kind);
        if new.key.is_empty() {
            return Resolution::New;
        }
        if let Some(&position) = self.by_key.get(&new.key) {
            return Resolution::Normalized(self.entries[position].id.clone());
        }
        let mut passing: Vec<(f64, usize)> = self
            .entries
            .iter()
            .enumerate()
            .filter_map(|(position, entry)| {
                self.similarity(&new, &entry.name)
                    .map(|score| (score, position))
            })
            .collect();
        // Best score first; equal scores keep insertion order.
        passing.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let Some(&(best_score, best)) = passing.first() else {
            return Resolution::New;
        };
        let best_id = &self.entries[best].id;
        let ambiguous = passing[1..].iter().any(|&(score, position)| {
            best_score - score < AMBIGUITY_MARGIN && self.entries[position].id != *best_id
        });
        if ambiguous {
            return Resolution::New;
        }
        Resolution::Similar {
            id: best_id.clone(),
            score: best_score,
        }
    }

    /// The similar-stage score of `new` against `existing`, `None` when it does not pass.
    fn similarity(&self, new: &NormalizedName, existing: &NormalizedName) -> Option<f64> {
        if new.numbers != existing.numbers {
            return None;
        }
        if self.kind == NameKind::Person {
            return person_score(&new.tokens, &existing.tokens)
                .filter(|score| *score >= self.threshold);
        }
        let one_typo = is_one_typo(&new.key_chars, &existing.key_chars);
        if !one_typo && dice_upper_bound(&new.trigrams, &existing.trigrams) < self.threshold {
            return None;
        }
        let dice = dice(&new.trigrams, &existing.trigrams);
        if one_typo {
            return Some(dice);
        }
        (dice >= self.threshold && content_tokens_pair_up(&new.tokens, &existing.tokens))
            .then_some(dice)
    }
}

/// A name reduced to what the stages compare.
#[derive(Debug, Clone)]
struct NormalizedName {
    tokens: Vec<String>,
    /// The tokens joined without spaces: the normalised-stage key.
    key: String,
    key_chars: Vec<char>,
    /// Tokens that hold a digit, sorted: these must agree for a near-duplicate.
    numbers: Vec<String>,
    /// Padded character trigrams of the content tokens, packed and sorted, without repeats.
    trigrams: Vec<u64>,
}

impl NormalizedName {
    fn new(name: &str, kind: NameKind) -> Self {
        let tokens = normalize_tokens(name, kind);
        let key: String = tokens.concat();
        let mut numbers: Vec<String> = tokens
            .iter()
            .filter(|token| token.chars().any(|c| c.is_ascii_digit()))
            .cloned()
            .collect();
        numbers.sort();
        let mut trigrams = Vec::new();
        for token in tokens.iter().filter(|token| !is_stop_word(token)) {
            let padded: Vec<char> = std::iter::once('\u{1}')
                .chain(token.chars())
                .chain(std::iter::once('\u{1}'))
                .collect();
            trigrams.extend(
                padded
                    .windows(3)
                    .map(|w| (u64::from(w[0]) << 42) | (u64::from(w[1]) << 21) | u64::from(w[2])),
            );
        }
        trigrams.sort_unstable();
        trigrams.dedup();
        NormalizedName {
            key_chars: key.chars().collect(),
            tokens,
            key,
            numbers,
            trigrams,
        }
    }
}

const LEGAL_SUFFIXES: &[&str] = &[
    "corp",
    "corporation",
    "inc",
    "incorporated",
    "ltd",
    "limited",
    "llc",
    "llp",
    "lp",
    "gmbh",
    "ag",
    "kgaa",
    "sa",
    "se",
    "nv",
    "bv",
    "plc",
    "co",
    "company",
    "pty",
    "pvt",
    "oy",
    "ab",
    "spa",
    "srl",
    "sas",
    "kk",
];

const HONORIFICS: &[&str] = &["dr", "mr", "mrs", "ms", "miss", "mx", "prof", "sir", "dame"];

const GENERATIONAL: &[&str] = &["jr", "sr", "ii", "iii", "iv"];

fn is_stop_word(token: &str) -> bool {
    matches!(
        token,
        "of" | "the" | "and" | "for" | "de" | "du" | "des" | "la" | "le" | "von" | "van" | "der"
    )
}

/// Folded, split and type-trimmed tokens of `name` (see the module doc).
fn normalize_tokens(name: &str, kind: NameKind) -> Vec<String> {
    let mut folded: Vec<char> = Vec::with_capacity(name.len());
    for c in name.chars().flat_map(char::to_lowercase) {
        match fold_diacritic(c) {
            Some(replacement) => folded.extend(replacement.chars()),
            None if is_combining_mark(c) => {}
            None => folded.push(c),
        }
    }
    let mut tokens: Vec<String> = Vec::new();
    let mut word = String::new();
    for (i, &c) in folded.iter().enumerate() {
        let digit_at = |j: Option<usize>| {
            j.and_then(|j| folded.get(j))
                .is_some_and(|c| c.is_ascii_digit())
        };
        let decimal_point = c == '.' && digit_at(i.checked_sub(1)) && digit_at(Some(i + 1));
        if c.is_alphanumeric() || c == '+' || c == '#' || decimal_point {
            word.push(c);
        } else if matches!(c, '\'' | '\u{2019}' | '\u{02bc}' | '`') {
            // Apostrophes join: O'Brien, McDonald's.
        } else {
            if !word.is_empty() {
                tokens.push(std::mem::take(&mut word));
            }
            if c == '&' {
                tokens.push("and".to_owned());
            }
        }
    }
    if !word.is_empty() {
        tokens.push(word);
    }
    match kind {
        NameKind::Person => {
            while tokens.len() > 1 && HONORIFICS.contains(&tokens[0].as_str()) {
                tokens.remove(0);
            }
        }
        NameKind::Organization | NameKind::Project | NameKind::Other => {
            tokens = glue_single_letters(tokens);
            if tokens.len() > 1 && tokens[0] == "the" {
                tokens.remove(0);
            }
            if kind == NameKind::Project && tokens.len() > 1 && tokens[0] == "project" {
                tokens.remove(0);
            }
            if kind == NameKind::Organization {
                for _ in 0..3 {
                    let drop = tokens.len() > 1
                        && tokens
                            .last()
                            .is_some_and(|last| LEGAL_SUFFIXES.contains(&last.as_str()));
                    if !drop {
                        break;
                    }
                    tokens.pop();
                }
            }
        }
    }
    tokens
}

/// `["i", "b", "m"]` → `["ibm"]`: dotted abbreviations read as one word.
fn glue_single_letters(tokens: Vec<String>) -> Vec<String> {
    let mut glued: Vec<String> = Vec::with_capacity(tokens.len());
    let mut previous_single = false;
    for token in tokens {
        let single = token.chars().count() == 1 && token.chars().all(char::is_alphabetic);
        match glued.last_mut() {
            Some(last) if single && previous_single => last.push_str(&token),
            _ => glued.push(token),
        }
        previous_single = single;
    }
    glued
}

fn is_combining_mark(c: char) -> bool {
    matches!(c, '\u{0300}'..='\u{036f}')
}

/// ASCII for a lower-case Latin-1 Supplement or Latin Extended-A letter.
fn fold_diacritic(c: char) -> Option<&'static str> {
    let folded = match c {
        'à'..='å' | 'ā' | 'ă' | 'ą' => "a",
        'æ' => "ae",
        'ç' | 'ć' | 'ĉ' | 'ċ' | 'č' => "c",
        'ď' | 'đ' | 'ð' => "d",
        'è'..='ë' | 'ē' | 'ĕ' | 'ė' | 'ę' | 'ě' => "e",
        'ĝ' | 'ğ' | 'ġ' | 'ģ' => "g",
        'ĥ' | 'ħ' => "h",
        'ì'..='ï' | 'ĩ' | 'ī' | 'ĭ' | 'į' | 'ı' => "i",
        'ĳ' => "ij",
        'ĵ' => "j",
        'ķ' | 'ĸ' => "k",
        'ĺ' | 'ļ' | 'ľ' | 'ŀ' | 'ł' => "l",
        'ñ' | 'ń' | 'ņ' | 'ň' | 'ŉ' | 'ŋ' => "n",
        'ò'..='ö' | 'ø' | 'ō' | 'ŏ' | 'ő' => "o",
        'œ' => "oe",
        'ŕ' | 'ŗ' | 'ř' => "r",
        'ś' | 'ŝ' | 'ş' | 'š' | 'ſ' => "s",
        'ß' => "ss",
        'ţ' | 'ť' | 'ŧ' => "t",
        'þ' => "th",
        'ù'..='ü' | 'ũ' | 'ū' | 'ŭ' | 'ů' | 'ű' | 'ų' => "u",
        'ŵ' => "w",
        'ý' | 'ÿ' | 'ŷ' => "y",
        'ź' | 'ż' | 'ž' => "z",
        _ => return None,
    };
    Some(folded)
}

/// Whether `a` and `b` differ by exactly one typo of the kinds the module doc allows.
fn is_one_typo(a: &[char], b: &[char]) -> bool {
    let (shorter, longer) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let prefix = shorter
        .iter()
        .zip(longer)
        .take_while(|(x, y)| x == y)
        .count();
    match longer.len() - shorter.len() {
        0 => {
            if prefix == shorter.len() {
                return false;
            }
            let transposed = prefix + 1 < shorter.len()
                && shorter[prefix] == longer[prefix + 1]
                && shorter[prefix + 1] == longer[prefix]
                && shorter[prefix + 2..] == longer[prefix + 2..];
            if transposed {
                return shorter.len() >= 4;
            }
            let substituted = shorter[prefix + 1..] == longer[prefix + 1..];
            substituted
                && shorter.len() >= 8
                && prefix > 0
                && shorter[prefix].is_alphabetic()
                && longer[prefix].is_alphabetic()
        }
        1 => {
            shorter.len() >= 6
                && longer[prefix].is_alphabetic()
                && shorter[prefix..] == longer[prefix + 1..]
        }
        _ => false,
    }
}

/// Whether `a` becomes `b` by swapping one pair of neighbouring characters.
fn is_adjacent_transposition(a: &[char], b: &[char]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    prefix + 1 < a.len()
        && a[prefix] == b[prefix + 1]
        && a[prefix + 1] == b[prefix]
        && a[prefix + 2..] == b[prefix + 2..]
}

/// Dice coefficient of two sorted, repeat-free sets.
fn dice(a: &[u64], b: &[u64]) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let (mut i, mut j, mut shared) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += 1;
                i += 1;
                j += 1;
            }
        }
    }
    2.0 * shared as f64 / (a.len() + b.len()) as f64
}

/// The best Dice coefficient two sets of these sizes could reach.
fn dice_upper_bound(a: &[u64], b: &[u64]) -> f64 {
    let total = a.len() + b.len();
    if total == 0 {
        return 1.0;
    }
    2.0 * a.len().min(b.len()) as f64 / total as f64
}

/// Whether the non-stop-word tokens pair up one to one, each pair equal or one typo apart.
fn content_tokens_pair_up(a: &[String], b: &[String]) -> bool {
    let content = |tokens: &[String]| -> Vec<Vec<char>> {
        tokens
            .iter()
            .filter(|token| !is_stop_word(token))
            .map(|token| token.chars().collect())
            .collect()
    };
    let (a, b) = (content(a), content(b));
    if a.len() != b.len() {
        return false;
    }
    let mut used = vec![false; b.len()];
    let mut unmatched = Vec::new();
    for token in &a {
        match (0..b.len()).find(|&j| !used[j] && b[j] == *token) {
            Some(j) => used[j] = true,
            None => unmatched.push(token),
        }
    }
    unmatched.into_iter().all(|token| {
        match (0..b.len()).find(|&j| !used[j] && is_one_typo(token, &b[j])) {
            Some(j) => {
                used[j] = true;
                true
            }
            None => false,
        }
    })
}

/// The person token rule (module doc); `None` when the names cannot be the same person.
fn person_score(a: &[String], b: &[String]) -> Option<f64> {
    let split_generation = |tokens: &[String]| -> (Vec<Vec<char>>, Option<String>) {
        let mut tokens: Vec<String> = tokens.to_vec();
        let generation = tokens
            .last()
            .filter(|last| GENERATIONAL.contains(&last.as_str()))
            .cloned();
        if generation.is_some() {
            tokens.pop();
        }
        (
            tokens.iter().map(|token| token.chars().collect()).collect(),
            generation,
        )
    };
    let (a, generation_a) = split_generation(a);
    let (b, generation_b) = split_generation(b);
    if generation_a != generation_b || a.len() < 2 || b.len() < 2 {
        return None;
    }
    let surname = |x: &[char], y: &[char]| {
        if x == y {
            Some(1.0)
        } else if x.len() >= 5 && is_adjacent_transposition(x, y) {
            Some(0.9)
        } else {
            None
        }
    };
    let given = |x: &[char], y: &[char]| {
        if x == y {
            Some(1.0)
        } else if x.len() == 1 || y.len() == 1 {
            (x[0] == y[0]).then_some(0.85)
        } else if x.len() >= 4 && is_adjacent_transposition(x, y) {
            Some(0.9)
        } else {
            None
        }
    };
    let mut score = surname(&a[a.len() - 1], &b[b.len() - 1])?;
    score *= given(&a[0], &b[0])?;
    let (middle_a, middle_b) = (&a[1..a.len() - 1], &b[1..b.len() - 1]);
    match (middle_a.is_empty(), middle_b.is_empty()) {
        (true, true) => {}
        (true, false) | (false, true) => score *= 0.9,
        (false, false) => {
            if middle_a.len() != middle_b.len() {
                return None;
            }
            for (x, y) in middle_a.iter().zip(middle_b) {
                if x != y {
                    let initial = (x.len() == 1 || y.len() == 1) && x[0] == y[0];
                    if !initial {
                        return None;
                    }
                    score *= 0.95;
                }
            }
        }
    }
    Some(score)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve_in(entity_type: &str, existing: &[&str], name: &str) -> Resolution {
        let ids: Vec<String> = (0..existing.len()).map(|i| format!("e{i}")).collect();
        let candidates: Vec<Candidate<'_>> = existing
            .iter()
            .zip(&ids)
            .map(|(name, id)| Candidate { id, name })
            .collect();
        resolve(name, entity_type, &candidates)
    }

    #[test]
    fn acme_trio_resolves_to_one_entity() {
        let mut index = ResolverIndex::new("organization");
        index.insert("acme", "Acme Corp");
        index.insert("apex", "Apex Inc.");
        assert_eq!(index.resolve("Acme Corp"), Resolution::Exact("acme".into()));
        assert_eq!(
            index.resolve("ACME Corp."),
            Resolution::Normalized("acme".into())
        );
        assert_eq!(
            index.resolve("Acme Corporation"),
            Resolution::Normalized("acme".into())
        );
    }

    #[test]
    fn diacritics_case_and_whitespace_fold() {
        assert_eq!(
            resolve_in("person", &["Zoë Saldaña"], "zoe  SALDANA"),
            Resolution::Normalized("e0".into())
        );
        assert_eq!(
            resolve_in("place", &["Łódź"], "Lodz"),
            Resolution::Normalized("e0".into())
        );
        assert_eq!(
            resolve_in("place", &["Straße"], "Strasse"),
            Resolution::Normalized("e0".into())
        );
        // Decomposed input: e + combining acute.
        assert_eq!(
            resolve_in(
                "organization",
                &["Société Générale"],
                "Socie\u{301}te\u{301} Generale"
            ),
            Resolution::Normalized("e0".into())
        );
    }

    #[test]
    fn people_sharing_a_surname_stay_apart() {
        assert_eq!(
            resolve_in("person", &["John Smith"], "Jane Smith"),
            Resolution::New
        );
        assert_eq!(
            resolve_in("person", &["Mark Johnson"], "Mark Johnston"),
            Resolution::New
        );
        assert_eq!(
            resolve_in("person", &["Ken Griffey Jr."], "Ken Griffey Sr."),
            Resolution::New
        );
        assert_eq!(
            resolve_in("person", &["George H. W. Bush"], "George W. Bush"),
            Resolution::New
        );
    }

    #[test]
    fn an_initial_matches_a_single_compatible_person() {
        let Resolution::Similar { id, score } =
            resolve_in("person", &["John Smith", "Alice Brown"], "J. Smith")
        else {
            panic!("J. Smith should resolve to John Smith");
        };
        assert_eq!(id, "e0");
        assert!((score - 0.85).abs() < 1e-9);
    }

    #[test]
    fn an_initial_shared_by_two_people_is_ambiguous() {
        assert_eq!(
            resolve_in("person", &["John Smith", "Jane Smith"], "J. Smith"),
            Resolution::New
        );
    }

    #[test]
    fn close_scores_for_different_entities_refuse_to_merge() {
        // Both are one deletion away from the new name with the same trigram overlap.
        assert_eq!(
            resolve_in("technology", &["Postgress", "Postgrest"], "Postgres"),
            Resolution::New
        );
    }

    #[test]
    fn typos_merge() {
        assert!(matches!(
            resolve_in("organization", &["Microsoft", "Apple"], "Microsfot"),
            Resolution::Similar { ref id, .. } if id == "e0"
        ));
        assert!(matches!(
            resolve_in("technology", &["Kubernetes"], "Kubernets"),
            Resolution::Similar { ref id, .. } if id == "e0"
        ));
        assert!(matches!(
            resolve_in("person", &["Michael Jordan"], "Micheal Jordan"),
            Resolution::Similar { ref id, .. } if id == "e0"
        ));
    }

    #[test]
    fn similar_but_different_names_stay_new() {
        assert_eq!(
            resolve_in("organization", &["Applied Materials"], "Apple"),
            Resolution::New
        );
        assert_eq!(
            resolve_in("technology", &["Java"], "JavaScript"),
            Resolution::New
        );
        assert_eq!(
            resolve_in("technology", &["GPT-4"], "GPT-4o"),
            Resolution::New
        );
        assert_eq!(resolve_in("technology", &["C++"], "C#"), Resolution::New);
        assert_eq!(
            resolve_in("place", &["Austria"], "Australia"),
            Resolution::New
        );
        assert_eq!(resolve_in("place", &["Gambia"], "Zambia"), Resolution::New);
        assert_eq!(
            resolve_in("technology", &["Visual Studio"], "Visual Studio Code"),
            Resolution::New
        );
    }

    #[test]
    fn nothing_close_is_new() {
        assert_eq!(
            resolve_in("concept", &["Inflation", "Game Theory"], "Photosynthesis"),
            Resolution::New
        );
        assert_eq!(resolve_in("concept", &[], "Anything"), Resolution::New);
        assert_eq!(resolve_in("concept", &["Entropy"], "?!"), Resolution::New);
    }

    #[test]
    fn word_order_and_stop_words_do_not_matter() {
        assert!(matches!(
            resolve_in("organization", &["University of Oxford"], "Oxford University"),
            Resolution::Similar { ref id, .. } if id == "e0"
        ));
    }

    #[test]
    fn dotted_abbreviations_and_ampersands_normalise() {
        assert_eq!(
            resolve_in("organization", &["I.B.M."], "IBM"),
            Resolution::Normalized("e0".into())
        );
        assert_eq!(
            resolve_in(
                "organization",
                &["Johnson & Johnson"],
                "Johnson and Johnson"
            ),
            Resolution::Normalized("e0".into())
        );
        assert_eq!(
            resolve_in("technology", &["Node.js"], "NodeJS"),
            Resolution::Normalized("e0".into())
        );
    }

    #[test]
    fn the_first_inserted_of_equal_keys_wins() {
        assert_eq!(
            resolve_in("organization", &["Acme Inc", "Acme Ltd"], "ACME"),
            Resolution::Normalized("e0".into())
        );
    }
}
