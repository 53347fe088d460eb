//! Generated grounding cases: random texts of distinct words with random punctuation and
//! spacing; each extraction is a run of their words, perturbed the way models perturb quotes
//! (case, spacing, dropped or added punctuation). The aligner must return the span of that run
//! in the original text. Seeded, so a failure names a case that reproduces.

use quarry_core::grounding::{AlignOptions, AlignOrder, AlignmentStatus, align, align_all};

/// A seeded generator (fastrand's wyrand): a failing case is reproduced by its seed.
struct Rng(fastrand::Rng);

impl Rng {
    fn seeded(seed: u64) -> Rng {
        Rng(fastrand::Rng::with_seed(seed))
    }

    fn below(&mut self, n: usize) -> usize {
        self.0.usize(..n)
    }
}

const VOCABULARY: &str = "patient river Naprosyn blood pressure Zürich élan garden fever 600mg \
    market stone Ibuprofen north tablet winter Müller silver report doctor engine harbor \
    cardiac Lisbon orange kidney window follow dosage signal Tokyo bridge velvet 2019 march \
    copper evening hospital valley summit crimson anchor meadow";

/// A text of distinct words, with the code-point span of each word.
fn text(rng: &mut Rng) -> (String, Vec<(usize, usize)>) {
    let mut words: Vec<&str> = VOCABULARY.split_whitespace().collect();
    let len = 5 + rng.below(20);
    let mut out = String::new();
    let mut spans = Vec::new();
    for i in 0..len {
        let word = words.swap_remove(rng.below(words.len()));
        if i > 0 {
            out.push_str([" ", " ", " ", ", ", "  ", "\n", "; ", " - "][rng.below(8)]);
        }
        let start = out.chars().count();
        out.push_str(word);
        spans.push((start, start + word.chars().count()));
    }
    out.push('.');
    (out, spans)
}

/// The run of `words`, perturbed by `kind`.
fn perturbed(words: &[&str], kind: usize) -> String {
    match kind {
        0 => words.join(" "),
        1 => words.join(" ").to_lowercase(),
        2 => words.join(" ").to_uppercase(),
        3 => words.join("  \n "),
        4 => format!("{}.", words.join(" ")),
        _ => format!("\"{}\"", words.join(", ")),
    }
}

fn word_texts(text: &str, spans: &[(usize, usize)]) -> Vec<String> {
    spans
        .iter()
        .map(|&(s, e)| text.chars().skip(s).take(e - s).collect())
        .collect()
}

#[test]
fn perturbed_extractions_ground_to_the_original_words() {
    let mut rng = Rng::seeded(0x6A0D_0001);
    let mut failures = Vec::new();
    let mut checked = 0;
    for case in 0..500 {
        let (source, spans) = text(&mut rng);
        let words = word_texts(&source, &spans);
        let first = rng.below(spans.len());
        let last = first + rng.below((spans.len() - first).min(4));
        let run: Vec<&str> = words[first..=last].iter().map(String::as_str).collect();
        let expected = (spans[first].0, spans[last].1);
        for kind in 0..6 {
            let extraction = perturbed(&run, kind);
            // The text ends with a period: quoted with it, the span may keep it or not.
            let with_period =
                (kind == 4 && last + 1 == spans.len()).then_some((expected.0, expected.1 + 1));
            checked += 1;
            match align(&source, &extraction, &AlignOptions::default()) {
                Ok(found)
                    if (found.start, found.end) == expected
                        || Some((found.start, found.end)) == with_period =>
                {
                    if kind == 0 && run.len() == 1 && found.status != AlignmentStatus::Exact {
                        failures.push(format!("case {case}: {extraction:?} not exact"));
                    }
                }
                other => failures.push(format!(
                    "case {case} kind {kind}: {extraction:?} in {source:?} -> {other:?}, \
                     expected {expected:?}"
                )),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} extractions misaligned:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n")
    );
}

#[test]
fn in_order_extractions_ground_like_langextract() {
    let mut rng = Rng::seeded(0x6A0D_0002);
    let options = AlignOptions {
        order: AlignOrder::Langextract,
        enable_fuzzy_alignment: false,
        accept_match_lesser: true,
        ..AlignOptions::default()
    };
    for case in 0..300 {
        let (source, spans) = text(&mut rng);
        // Non-overlapping runs of one or two words, in text order.
        let mut runs = Vec::new();
        let mut at = rng.below(2);
        while at < spans.len() {
            let len = 1 + rng.below(2).min(spans.len() - at - 1);
            runs.push((at, at + len - 1));
            at += len + rng.below(2);
        }
        // langextract matches punctuation tokens too, so a run is quoted with its own
        // separators, only case and spacing changed.
        let extractions: Vec<String> = runs
            .iter()
            .map(|&(a, b)| {
                let slice: String = source
                    .chars()
                    .skip(spans[a].0)
                    .take(spans[b].1 - spans[a].0)
                    .collect();
                slice
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
                    .to_lowercase()
            })
            .collect();
        let refs: Vec<&str> = extractions.iter().map(String::as_str).collect();
        let results = align_all(&source, &refs, &options);
        for ((a, b), result) in runs.iter().zip(&results) {
            let found = result.as_ref().map(|f| (f.start, f.end)).ok();
            assert_eq!(
                found,
                Some((spans[*a].0, spans[*b].1)),
                "case {case}: {extractions:?} in {source:?}"
            );
        }
        // The last two swapped: langextract aligns monotonically, so one stays ungrounded.
        if refs.len() >= 2 {
            let mut swapped = refs.clone();
            let n = swapped.len();
            swapped.swap(n - 2, n - 1);
            let results = align_all(&source, &swapped, &options);
            let grounded = results[n - 2..].iter().filter(|r| r.is_ok()).count();
            assert_eq!(grounded, 1, "case {case}: {swapped:?} in {source:?}");
        }
    }
}
