//! The grounding aligner: finds where an extracted string occurs in the source text, so every
//! value Quarry returns can point at its evidence.
//!
//! The cascade, from most to least faithful:
//! 1. **Exact** — the extraction (trimmed) occurs verbatim at word boundaries.
//! 2. **Normalized** — it occurs once case (full Unicode lower-casing), whitespace and
//!    punctuation are ignored: first as the same word sequence (`second of aug` →
//!    `second of Aug.`), then as the same letters with word breaks ignored but the passage still
//!    starting and ending at word boundaries (`1990 s` → `1990s`, `Napro-syn` → `Naprosyn`).
//!    Offsets always refer to the original text.
//! 3. **Exact inside a word** — verbatim, but glued to neighbouring letters (`AFL` in `WAFL`);
//!    used only when nothing above matched anywhere.
//! 4. **Fuzzy** — the tightest passage of source tokens containing at least `fuzzy_threshold` of
//!    the extraction's tokens in order (plurals stemmed, typos credited), with matched tokens
//!    making up at least `fuzzy_min_density` of the passage. See [`fuzzy`].
//! 5. **Lesser** — only a leading part of the extraction occurs (langextract's `match_lesser`),
//!    if `accept_match_lesser`.
//!
//! Order: with [`AlignOrder::PreferForward`] (the default), [`align_all`] prefers an occurrence
//! at or after the end of the previous alignment, so repeated mentions map to successive
//! occurrences, but still grounds an extraction whose only occurrences come earlier (an LLM may
//! list values out of order; refusing to ground a value that is in the text would be a false
//! hallucination). [`AlignOrder::StrictForward`] reproduces langextract's monotonic behaviour.
//!
//! Cost: building the index is linear in the source; each extraction costs a substring search
//! plus index look-ups, and the fuzzy stage is linear in the source for a short extraction.

mod fuzzy;
mod langextract;
pub(crate) mod text;

use std::fmt;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use text::{SourceIndex, is_boundary, normalized_tokens};

/// How an extraction was found in the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub enum AlignmentStatus {
    /// Verbatim.
    #[serde(rename = "match_exact")]
    Exact,
    /// Equal after folding case and ignoring whitespace and punctuation.
    #[serde(rename = "match_normalized")]
    Normalized,
    /// A passage containing enough of the extraction's words; see `score`.
    #[serde(rename = "match_fuzzy")]
    Fuzzy,
    /// Only a leading part of the extraction occurs; the span covers that part.
    #[serde(rename = "match_lesser")]
    Lesser,
}

impl AlignmentStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            AlignmentStatus::Exact => "match_exact",
            AlignmentStatus::Normalized => "match_normalized",
            AlignmentStatus::Fuzzy => "match_fuzzy",
            AlignmentStatus::Lesser => "match_lesser",
        }
    }
}

/// Where an extraction was found. `start`/`end` are code-point offsets (end exclusive) into the
/// source, `byte_start`/`byte_end` the same span in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Alignment {
    pub start: usize,
    pub end: usize,
    pub byte_start: usize,
    pub byte_end: usize,
    pub status: AlignmentStatus,
    /// 1.0 for exact and normalized matches; for fuzzy, the share of the extraction's tokens
    /// matched (typos count partially); for lesser, the share of tokens in the matched prefix.
    pub score: f32,
}

/// Which occurrence [`align_all`] picks when an extraction occurs more than once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AlignOrder {
    /// Always the best, earliest occurrence; extractions are independent.
    Any,
    /// The first occurrence at or after the end of the previous alignment, else the earliest.
    #[default]
    PreferForward,
    /// Only occurrences at or after the end of the previous alignment (langextract's monotonic
    /// alignment); an extraction found only earlier is rejected.
    StrictForward,
    /// langextract's own resolver semantics (see `grounding/langextract.rs`): all extractions
    /// matched at once against the source as token sequences, longest blocks first, so
    /// overlapping or out-of-order extractions stay ungrounded; a match of a leading part is
    /// `match_lesser`; what is left goes to the cascade (fuzzy included) anywhere in the source,
    /// as langextract's fuzzy pass does, without lesser matches.
    Langextract,
}

/// Aligner settings. The defaults suit grounding LLM output: fuzzy on, lesser matches off (a
/// value only partly in the text is not grounded).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AlignOptions {
    pub enable_fuzzy_alignment: bool,
    /// Minimum weighted share of the extraction's tokens a fuzzy passage must match.
    pub fuzzy_threshold: f32,
    /// Minimum share of a fuzzy passage's tokens that must be matched tokens.
    pub fuzzy_min_density: f32,
    pub accept_match_lesser: bool,
    pub order: AlignOrder,
}

impl Default for AlignOptions {
    fn default() -> Self {
        AlignOptions {
            enable_fuzzy_alignment: true,
            fuzzy_threshold: 0.75,
            fuzzy_min_density: 1.0 / 3.0,
            accept_match_lesser: false,
            order: AlignOrder::PreferForward,
        }
    }
}

/// Why an extraction could not be grounded, as data; `Display` gives the human sentence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rejection {
    pub extraction: String,
    pub reason: RejectionReason,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RejectionReason {
    /// Not found by any enabled stage.
    NotFound { fuzzy_enabled: bool },
    /// Found, but only before the previous alignment while the order is strict.
    OnlyBeforePrevious,
    /// Only a leading part occurs, and lesser matches are not accepted.
    PartialOnly { matched: String },
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let extraction = &self.extraction;
        match &self.reason {
            RejectionReason::NotFound {
                fuzzy_enabled: true,
            } => write!(
                f,
                "{extraction:?} does not appear in the source text, not even approximately"
            ),
            RejectionReason::NotFound {
                fuzzy_enabled: false,
            } => write!(f, "{extraction:?} does not appear in the source text"),
            RejectionReason::OnlyBeforePrevious => write!(
                f,
                "{extraction:?} appears in the source text only before the previous extraction, \
                 and alignment order is strict"
            ),
            RejectionReason::PartialOnly { matched } => write!(
                f,
                "only part of {extraction:?} appears in the source text ({matched:?}); partial \
                 matches are not accepted"
            ),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Error)]
pub enum AlignError {
    #[error("source text is empty; there is nothing to ground extractions in")]
    EmptySource,
    #[error("extraction is empty or only whitespace; there is nothing to ground")]
    EmptyExtraction,
    #[error("{0}")]
    Rejected(Rejection),
}

impl AlignError {
    /// The rejection, when the extraction was valid but not found.
    pub fn rejection(&self) -> Option<&Rejection> {
        match self {
            AlignError::Rejected(rejection) => Some(rejection),
            _ => None,
        }
    }
}

/// Aligns one extraction against the source.
pub fn align(
    source: &str,
    extraction: &str,
    options: &AlignOptions,
) -> Result<Alignment, AlignError> {
    align_all(source, &[extraction], options)
        .pop()
        .unwrap_or(Err(AlignError::EmptyExtraction))
}

/// Aligns extractions in order against one source (indexed once), one result per extraction.
/// How earlier alignments influence later ones is set by `options.order`.
pub fn align_all(
    source: &str,
    extractions: &[&str],
    options: &AlignOptions,
) -> Vec<Result<Alignment, AlignError>> {
    if source.is_empty() {
        return extractions
            .iter()
            .map(|_| Err(AlignError::EmptySource))
            .collect();
    }
    let index = SourceIndex::new(source);
    if options.order == AlignOrder::Langextract {
        return align_like_langextract(&index, extractions, options);
    }
    let mut aligner = Aligner {
        index: &index,
        options,
        cursor: 0,
        claimed: Vec::new(),
    };
    extractions
        .iter()
        .map(|extraction| aligner.align_next(extraction))
        .collect()
}

/// [`AlignOrder::Langextract`]: the block pass, then the cascade for what it left.
fn align_like_langextract(
    index: &SourceIndex<'_>,
    extractions: &[&str],
    options: &AlignOptions,
) -> Vec<Result<Alignment, AlignError>> {
    let leftover_options = AlignOptions {
        order: AlignOrder::Any,
        accept_match_lesser: false,
        ..*options
    };
    let leftovers = Aligner {
        index,
        options: &leftover_options,
        cursor: 0,
        claimed: Vec::new(),
    };
    let blocks = langextract::align_blocks(index.text, extractions);
    extractions
        .iter()
        .zip(blocks)
        .map(|(extraction, block)| {
            let extraction = extraction.trim();
            match block {
                langextract::BlockMatch::Empty => Err(AlignError::EmptyExtraction),
                langextract::BlockMatch::Exact(span) => {
                    let status = if index.text[span.clone()] == *extraction {
                        AlignmentStatus::Exact
                    } else {
                        AlignmentStatus::Normalized
                    };
                    Ok(leftovers.alignment((span.start, span.end), status, 1.0))
                }
                langextract::BlockMatch::Lesser(span, score) if options.accept_match_lesser => {
                    Ok(leftovers.alignment((span.start, span.end), AlignmentStatus::Lesser, score))
                }
                langextract::BlockMatch::Lesser(span, _) if !options.enable_fuzzy_alignment => {
                    Err(Aligner::reject(
                        extraction,
                        RejectionReason::PartialOnly {
                            matched: index.text[span].to_owned(),
                        },
                    ))
                }
                _ if options.enable_fuzzy_alignment => leftovers.find(extraction, 0),
                _ => Err(Aligner::reject(
                    extraction,
                    RejectionReason::NotFound {
                        fuzzy_enabled: false,
                    },
                )),
            }
        })
        .collect()
}

struct Aligner<'a, 's> {
    index: &'a SourceIndex<'s>,
    options: &'a AlignOptions,
    /// Byte offset where the previous alignment ended.
    cursor: usize,
    /// Byte spans already aligned; a lesser match may not reuse them.
    claimed: Vec<(usize, usize)>,
}

/// The earliest candidate at or after the cursor, and the earliest overall.
#[derive(Default, Clone, Copy)]
struct Picks {
    forward: Option<(usize, usize)>,
    any: Option<(usize, usize)>,
}

impl Picks {
    /// Offers a candidate; candidates must arrive in ascending start order.
    fn offer(&mut self, span: (usize, usize), cursor: usize) {
        if self.any.is_none() {
            self.any = Some(span);
        }
        if self.forward.is_none() && span.0 >= cursor {
            self.forward = Some(span);
        }
    }

    fn done(&self) -> bool {
        self.forward.is_some()
    }
}

impl Aligner<'_, '_> {
    fn align_next(&mut self, raw: &str) -> Result<Alignment, AlignError> {
        let extraction = raw.trim();
        if extraction.is_empty() {
            return Err(AlignError::EmptyExtraction);
        }
        let cursor = match self.options.order {
            AlignOrder::Any => 0,
            _ => self.cursor,
        };
        let found = self.find(extraction, cursor)?;
        if self.options.order != AlignOrder::Any {
            self.cursor = found.byte_end;
        }
        self.claimed.push((found.byte_start, found.byte_end));
        Ok(found)
    }

    fn alignment(&self, span: (usize, usize), status: AlignmentStatus, score: f32) -> Alignment {
        Alignment {
            start: self.index.code_point_at(span.0),
            end: self.index.code_point_at(span.1),
            byte_start: span.0,
            byte_end: span.1,
            status,
            score,
        }
    }

    fn reject(extraction: &str, reason: RejectionReason) -> AlignError {
        AlignError::Rejected(Rejection {
            extraction: extraction.to_owned(),
            reason,
        })
    }

    fn find(&self, extraction: &str, cursor: usize) -> Result<Alignment, AlignError> {
        let strict = self.options.order == AlignOrder::StrictForward;
        let tokens = normalized_tokens(extraction);

        let (exact, inside_word) = self.exact_picks(extraction, cursor);
        let words = self.word_sequence_picks(&tokens, cursor);
        let tiers = [
            (exact, AlignmentStatus::Exact),
            (words, AlignmentStatus::Normalized),
        ];
        // A forward occurrence at any tier beats a backward one at a better tier: order is
        // what tells repeated mentions apart.
        for (picks, status) in tiers {
            if let Some(span) = picks.forward {
                return Ok(self.alignment(span, status, 1.0));
            }
        }
        let letters = self.letter_sequence_picks(&tokens, cursor);
        if let Some(span) = letters.forward {
            return Ok(self.alignment(span, AlignmentStatus::Normalized, 1.0));
        }
        let mut found_before = false;
        for (picks, status) in [
            (exact, AlignmentStatus::Exact),
            (words, AlignmentStatus::Normalized),
            (letters, AlignmentStatus::Normalized),
        ] {
            if let Some(span) = picks.any {
                if strict {
                    found_before = true;
                } else {
                    return Ok(self.alignment(span, status, 1.0));
                }
            }
        }
        if let Some(span) = inside_word.forward {
            return Ok(self.alignment(span, AlignmentStatus::Exact, 1.0));
        }
        if let Some(span) = inside_word.any {
            if strict {
                found_before = true;
            } else {
                return Ok(self.alignment(span, AlignmentStatus::Exact, 1.0));
            }
        }
        if found_before {
            return Err(Self::reject(
                extraction,
                RejectionReason::OnlyBeforePrevious,
            ));
        }

        if self.options.enable_fuzzy_alignment {
            let params = fuzzy::FuzzyParams {
                threshold: self.options.fuzzy_threshold,
                min_density: self.options.fuzzy_min_density,
                cursor,
                strict,
            };
            if let Some(hit) = fuzzy::align_fuzzy(self.index, &tokens, &params) {
                let span = (
                    self.index.tokens[hit.first_token].byte_start,
                    self.index.tokens[hit.last_token].byte_end,
                );
                return Ok(self.alignment(span, AlignmentStatus::Fuzzy, hit.coverage));
            }
        }

        if let Some((span, matched_tokens)) = self.lesser(&tokens, cursor, strict) {
            if self.options.accept_match_lesser {
                let score = matched_tokens as f32 / tokens.len() as f32;
                return Ok(self.alignment(span, AlignmentStatus::Lesser, score));
            }
            let matched = self.index.text[span.0..span.1].to_owned();
            return Err(Self::reject(
                extraction,
                RejectionReason::PartialOnly { matched },
            ));
        }
        Err(Self::reject(
            extraction,
            RejectionReason::NotFound {
                fuzzy_enabled: self.options.enable_fuzzy_alignment,
            },
        ))
    }

    /// Verbatim occurrences, split into those at word boundaries and those inside words.
    fn exact_picks(&self, extraction: &str, cursor: usize) -> (Picks, Picks) {
        let mut bounded = Picks::default();
        let mut inside = Picks::default();
        // From the cursor first, so the common case stops at the first hit.
        self.scan_exact(extraction, cursor, usize::MAX, |span, at_boundaries| {
            if at_boundaries {
                bounded.forward = Some(span);
                return true;
            }
            inside.forward = inside.forward.or(Some(span));
            false
        });
        let (mut bounded_before, mut inside_before) = (None, None);
        if bounded.forward.is_none() && cursor > 0 {
            self.scan_exact(extraction, 0, cursor, |span, at_boundaries| {
                if at_boundaries {
                    bounded_before = Some(span);
                    return true;
                }
                inside_before = inside_before.or(Some(span));
                false
            });
        }
        bounded.any = bounded_before.or(bounded.forward);
        inside.any = inside_before.or(inside.forward);
        (bounded, inside)
    }

    /// Calls `visit(span, at_word_boundaries)` for each verbatim occurrence starting in
    /// `from..until`, ascending, overlapping ones included, until `visit` returns true.
    fn scan_exact(
        &self,
        needle: &str,
        from: usize,
        until: usize,
        mut visit: impl FnMut((usize, usize), bool) -> bool,
    ) {
        let text = self.index.text;
        let mut at = from;
        while let Some(offset) = text.get(at..).and_then(|rest| rest.find(needle)) {
            let start = at + offset;
            if start >= until {
                return;
            }
            let end = start + needle.len();
            if visit(
                (start, end),
                is_boundary(text, start) && is_boundary(text, end),
            ) {
                return;
            }
            at = start + text[start..].chars().next().map_or(1, char::len_utf8);
        }
    }

    /// Occurrences of the extraction's normalised word sequence.
    fn word_sequence_picks(&self, tokens: &[String], cursor: usize) -> Picks {
        let mut picks = Picks::default();
        let Some(ids) = self.token_ids(tokens) else {
            return picks;
        };
        for (start, end) in self.sequence_occurrences(&ids) {
            picks.offer((start, end), cursor);
            if picks.done() {
                break;
            }
        }
        picks
    }

    fn token_ids(&self, tokens: &[String]) -> Option<Vec<u32>> {
        if tokens.is_empty() {
            return None;
        }
        tokens.iter().map(|t| self.index.id_of(t)).collect()
    }

    /// Byte spans where the token-id sequence `ids` occurs, ascending.
    fn sequence_occurrences<'i>(
        &'i self,
        ids: &'i [u32],
    ) -> impl Iterator<Item = (usize, usize)> + 'i {
        let tokens = &self.index.tokens;
        self.index.positions[ids[0] as usize]
            .iter()
            .map(|&p| p as usize)
            .filter(move |&p| {
                p + ids.len() <= tokens.len()
                    && tokens[p..p + ids.len()]
                        .iter()
                        .zip(ids)
                        .all(|(token, &id)| token.id == id)
            })
            .map(move |p| (tokens[p].byte_start, tokens[p + ids.len() - 1].byte_end))
    }

    /// Occurrences of the extraction's letters with word breaks ignored, starting and ending at
    /// source token boundaries.
    fn letter_sequence_picks(&self, tokens: &[String], cursor: usize) -> Picks {
        let mut picks = Picks::default();
        let needle: String = tokens.concat();
        if needle.is_empty() {
            return picks;
        }
        let compact = self.index.compact();
        let mut at = 0;
        while let Some(offset) = compact.text.get(at..).and_then(|rest| rest.find(&needle)) {
            let start = at + offset;
            let end = start + needle.len();
            if let (Some(first), Some(last)) = (
                compact.token_starting_at(start),
                compact.token_ending_at(end),
            ) {
                let tokens = &self.index.tokens;
                picks.offer((tokens[first].byte_start, tokens[last].byte_end), cursor);
                if picks.done() {
                    break;
                }
            }
            at = start
                + compact.text[start..]
                    .chars()
                    .next()
                    .map_or(1, char::len_utf8);
        }
        picks
    }

    /// The longest proper leading part of the extraction's words that occurs without overlapping
    /// an earlier alignment: `(span, number of tokens matched)`.
    fn lesser(
        &self,
        tokens: &[String],
        cursor: usize,
        strict: bool,
    ) -> Option<((usize, usize), usize)> {
        if tokens.len() < 2 {
            return None;
        }
        let ids = self.token_ids_prefix(tokens);
        for length in (1..tokens.len().min(ids.len() + 1)).rev() {
            let mut picks = Picks::default();
            for span in self.sequence_occurrences(&ids[..length]) {
                if self.claimed.iter().any(|&(s, e)| span.0 < e && s < span.1) {
                    continue;
                }
                picks.offer(span, cursor);
                if picks.done() {
                    break;
                }
            }
            let span = if strict {
                picks.forward
            } else {
                picks.forward.or(picks.any)
            };
            if let Some(span) = span {
                return Some((span, length));
            }
        }
        None
    }

    /// Ids of the extraction's leading tokens up to the first one the source lacks.
    fn token_ids_prefix(&self, tokens: &[String]) -> Vec<u32> {
        tokens.iter().map_while(|t| self.index.id_of(t)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(source: &str, extraction: &str) -> (usize, usize, AlignmentStatus) {
        let found = align(source, extraction, &AlignOptions::default()).unwrap();
        (found.start, found.end, found.status)
    }

    fn slice(source: &str, found: &Alignment) -> String {
        source
            .chars()
            .skip(found.start)
            .take(found.end - found.start)
            .collect()
    }

    #[test]
    fn exact_match_reports_offsets_and_full_score() {
        let source = "Patient is prescribed Naprosyn and prednisone for treatment.";
        let found = align(source, "Naprosyn", &AlignOptions::default()).unwrap();
        assert_eq!((found.start, found.end), (22, 30));
        assert_eq!((found.byte_start, found.byte_end), (22, 30));
        assert_eq!(found.status, AlignmentStatus::Exact);
        assert_eq!(found.score, 1.0);
    }

    #[test]
    fn case_insensitive_match_maps_to_original_case() {
        let source = "I'll go back second of Aug.";
        assert_eq!(
            span(source, "second of aug"),
            (13, 26, AlignmentStatus::Normalized)
        );
        // Full Unicode case folding, not only ASCII.
        assert_eq!(
            span("Rue de l'ÉCOLE", "l'école"),
            (7, 14, AlignmentStatus::Normalized)
        );
    }

    #[test]
    fn whitespace_and_punctuation_differences_map_to_original_offsets() {
        let source = "Diagnosis: Type 2  diabetes, and the 1990s.";
        let found = align(source, "type-2 diabetes", &AlignOptions::default()).unwrap();
        assert_eq!(slice(source, &found), "Type 2  diabetes");
        assert_eq!(found.status, AlignmentStatus::Normalized);
        let found = align(source, "1990 s", &AlignOptions::default()).unwrap();
        assert_eq!(slice(source, &found), "1990s");
        let found = align(
            "Patient is prescribed Napro-syn.",
            "Naprosyn",
            &AlignOptions::default(),
        )
        .unwrap();
        assert_eq!((found.start, found.end), (22, 31));
    }

    #[test]
    fn fuzzy_match_tolerates_a_typo_and_plurals() {
        let source = "The patient was given naprosyn tablets twice daily for pain.";
        let found = align(source, "Naprosin tablet", &AlignOptions::default()).unwrap();
        assert_eq!(found.status, AlignmentStatus::Fuzzy);
        assert_eq!(slice(source, &found), "naprosyn tablets");
        assert!(
            found.score > 0.75 && found.score < 1.0,
            "score {}",
            found.score
        );
    }

    #[test]
    fn fuzzy_passage_below_threshold_is_rejected() {
        let source = "Patient reports back pain and a fever.";
        let err = align(source, "headache and fever", &AlignOptions::default()).unwrap_err();
        assert!(matches!(err, AlignError::Rejected(_)));
    }

    #[test]
    fn rejection_names_the_extraction_and_why() {
        let options = AlignOptions {
            enable_fuzzy_alignment: false,
            ..AlignOptions::default()
        };
        let source = "Patient is prescribed Naprosyn and prednisone for treatment.";
        let err = align(source, "aspirin", &options).unwrap_err();
        assert_eq!(
            err.to_string(),
            "\"aspirin\" does not appear in the source text"
        );
        assert_eq!(
            err.rejection().unwrap().reason,
            RejectionReason::NotFound {
                fuzzy_enabled: false
            }
        );
        let err = align(source, "Naprosyn allergy", &options).unwrap_err();
        assert!(
            err.to_string()
                .contains("only part of \"Naprosyn allergy\""),
            "{err}"
        );
    }

    #[test]
    fn empty_inputs_are_errors() {
        let options = AlignOptions::default();
        assert_eq!(
            align("", "Naprosyn", &options),
            Err(AlignError::EmptySource)
        );
        assert_eq!(
            align("text", "  ", &options),
            Err(AlignError::EmptyExtraction)
        );
    }

    #[test]
    fn lesser_match_when_accepted_covers_the_leading_words() {
        let options = AlignOptions {
            enable_fuzzy_alignment: false,
            accept_match_lesser: true,
            ..AlignOptions::default()
        };
        let found = align(
            "Patient takes Naprosyn daily.",
            "Naprosyn allergy",
            &options,
        )
        .unwrap();
        assert_eq!(
            (found.start, found.end, found.status),
            (14, 22, AlignmentStatus::Lesser)
        );
        assert_eq!(found.score, 0.5);
    }

    #[test]
    fn repeated_mentions_align_to_successive_occurrences() {
        let source = "Sembach Air Base, Germany, 1 June 1985; Lindsey Air Station, Germany.";
        let found: Vec<_> = align_all(
            source,
            &["Germany", "Lindsey Air Station", "Germany"],
            &AlignOptions::default(),
        )
        .into_iter()
        .map(|r| r.unwrap().start)
        .collect();
        assert_eq!(found, [18, 40, 61]);
    }

    #[test]
    fn word_boundaries_beat_substrings_inside_words() {
        let source = "Updates of all four WAFL matches & AFL Results.";
        assert_eq!(span(source, "AFL"), (35, 38, AlignmentStatus::Exact));
        // Inside a word is still found when nothing better exists.
        assert_eq!(span("the WAFL", "AFL"), (5, 8, AlignmentStatus::Exact));
    }

    #[test]
    fn order_is_preferred_but_strict_order_is_optional() {
        let source = "Patient has high blood pressure.";
        let results = align_all(
            source,
            &["high blood", "blood pressure"],
            &AlignOptions::default(),
        );
        assert_eq!(results[1].as_ref().unwrap().start, 17);
        let strict = AlignOptions {
            order: AlignOrder::StrictForward,
            enable_fuzzy_alignment: false,
            ..AlignOptions::default()
        };
        let results = align_all(source, &["high blood", "blood pressure"], &strict);
        assert_eq!(results[0].as_ref().unwrap().start, 12);
        let err = results[1].as_ref().unwrap_err();
        assert_eq!(
            err.rejection().unwrap().reason,
            RejectionReason::OnlyBeforePrevious
        );
    }

    // Broke: text without spaces had no tokens smaller than a whole sentence.
    #[test]
    fn grounding_cjk_without_spaces() {
        let source = "我们明天在北京大学附属医院见面。电话号码是一二三。";
        let found = align(source, "北京大学", &AlignOptions::default()).unwrap();
        assert_eq!(
            (found.start, found.end, found.status),
            (5, 9, AlignmentStatus::Exact)
        );
        assert_eq!((found.byte_start, found.byte_end), (15, 27));
        let found = align(source, "北京大学 附属医院", &AlignOptions::default()).unwrap();
        assert_eq!(
            (found.start, found.end, found.status),
            (5, 13, AlignmentStatus::Normalized)
        );
        let found = align(source, "北京大学医院", &AlignOptions::default()).unwrap();
        assert_eq!(found.status, AlignmentStatus::Fuzzy);
        assert_eq!(slice(source, &found), "北京大学附属医院");
    }

    #[test]
    fn offsets_are_code_points_not_bytes() {
        let source = "Café ☕ — rendez-vous à Zürich 🇨🇭 demain.";
        let found = align(source, "Zürich", &AlignOptions::default()).unwrap();
        assert_eq!((found.start, found.end), (23, 29));
        assert_eq!(&source[found.byte_start..found.byte_end], "Zürich");
        assert_eq!(slice(source, &found), "Zürich");
        let found = align(source, "demain", &AlignOptions::default()).unwrap();
        assert_eq!(slice(source, &found), "demain");
    }

    #[test]
    fn a_megabyte_source_aligns_every_stage() {
        let filler = "the quick brown fox jumps over the lazy dog near riverside park. ";
        let mut source = filler.repeat(1_000_000 / filler.len());
        source.push_str("Dr. Ada Lovelace wrote the first program for the analytical engine.");
        source.push_str(&filler.repeat(20));
        let options = AlignOptions::default();
        let extractions = [
            "Ada Lovelace",
            "analytical ENGINE",
            "first programs for the analytic engine",
            "Charles Babbage",
        ];
        let results = align_all(&source, &extractions, &options);
        assert_eq!(results[0].as_ref().unwrap().status, AlignmentStatus::Exact);
        assert_eq!(
            results[1].as_ref().unwrap().status,
            AlignmentStatus::Normalized
        );
        let fuzzy = results[2].as_ref().unwrap();
        assert_eq!(fuzzy.status, AlignmentStatus::Fuzzy);
        assert_eq!(
            &source[fuzzy.byte_start..fuzzy.byte_end],
            "first program for the analytical engine"
        );
        assert!(results[3].is_err());
    }

    #[test]
    fn statuses_serialise_like_langextract() {
        let json = serde_json::to_string(&AlignmentStatus::Normalized).unwrap();
        assert_eq!(json, "\"match_normalized\"");
        let back: AlignmentStatus = serde_json::from_str("\"match_lesser\"").unwrap();
        assert_eq!(back, AlignmentStatus::Lesser);
    }
}
