//! Generated links: random email addresses from RFC 5322's dot-atom and RFC 5321's domain
//! grammar, random URLs from RFC 3986 (schemes, reg-names with `_`, internationalised hosts,
//! ports, paths, queries, fragments), each embedded in random prose with random delimiters;
//! the finder must return exactly their spans. Damaged variants (two dots, a dot at either end
//! of the local part, `_` or a bad label in the domain, a misspelled scheme) must yield no link
//! at all over the damaged token. Seeded, so a failure names a case that reproduces.

use quarry_core::{Match, MatchKind};
use quarry_detect::to_matches;
use quarry_detect::url::{LinkOptions, find_links};

/// A seeded generator (fastrand's wyrand): a failing case is reproduced by its seed.
struct Rng(fastrand::Rng);

impl Rng {
    fn seeded(seed: u64) -> Rng {
        Rng(fastrand::Rng::with_seed(seed))
    }

    fn below(&mut self, n: usize) -> usize {
        self.0.usize(..n)
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    fn string(&mut self, alphabet: &str, len: usize) -> String {
        let chars: Vec<char> = alphabet.chars().collect();
        (0..len).map(|_| chars[self.below(chars.len())]).collect()
    }
}

const ALNUM: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
/// RFC 5322 `atext`, but `/`: `host.de/@x` reads as a URL path, a real ambiguity.
const ATEXT: &str =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-_!#$%&'*=?^`{|}~";
const TLDS: &[&str] = &[
    "com", "org", "net", "de", "io", "co.uk", "com.au", "рф", "xn--p1ai", "museum",
];
const PROSE: &[&str] = &[
    "see",
    "write to",
    "Contact",
    "le site",
    "見て",
    "or",
    "(ref. 12)",
    "—",
];

fn atom(rng: &mut Rng, first: bool) -> String {
    let len = 1 + rng.below(8);
    let mut atom = rng.string(ALNUM, 1);
    if !first || rng.below(2) == 0 {
        atom.push_str(&rng.string(ATEXT, len - 1));
    } else {
        atom.push_str(&rng.string(ALNUM, len - 1));
    }
    atom
}

fn label(rng: &mut Rng, underscore: bool) -> String {
    let len = 1 + rng.below(6);
    let mut label = rng.string(ALNUM, len);
    if rng.below(3) == 0 {
        label.push(if underscore && rng.below(2) == 0 {
            '_'
        } else {
            '-'
        });
        let len = 1 + rng.below(4);
        label.push_str(&rng.string(ALNUM, len));
    }
    if rng.below(6) == 0 {
        // Not CJK: glued to ASCII letters it reads as prose going on (`7.am以获取`).
        label.push_str(rng.pick(&["ü", "é", "ж", "ç"]));
    }
    label
}

fn domain(rng: &mut Rng, underscore: bool) -> String {
    let labels: Vec<String> = (0..1 + rng.below(3))
        .map(|_| label(rng, underscore))
        .collect();
    format!("{}.{}", labels.join("."), rng.pick(TLDS))
}

fn email(rng: &mut Rng) -> String {
    let atoms: Vec<String> = (0..1 + rng.below(3)).map(|i| atom(rng, i == 0)).collect();
    format!("{}@{}", atoms.join("."), domain(rng, false))
}

fn url(rng: &mut Rng) -> String {
    let mut url = format!(
        "{}://{}",
        rng.pick(&["http", "https", "HTTPS", "ftp", "svn+ssh"]),
        domain(rng, true)
    );
    if rng.below(4) == 0 {
        url.push_str(&format!(":{}", 1 + rng.below(65535)));
    }
    for _ in 0..rng.below(3) {
        url.push('/');
        let len = 1 + rng.below(6);
        url.push_str(&rng.string("abcxyz0189-_.~", len));
        url.push(
            rng.pick(&["a", "b", "1", "z"])
                .chars()
                .next()
                .unwrap_or('a'),
        );
    }
    if rng.below(3) == 0 {
        url.push_str(&format!("?q={}&n=1", rng.string(ALNUM, 3)));
    }
    if rng.below(4) == 0 {
        url.push_str(&format!("#{}", rng.string(ALNUM, 4)));
    }
    url
}

/// `link` between random prose and delimiters; the code-point span it occupies.
fn embed(rng: &mut Rng, link: &str) -> (String, (usize, usize)) {
    let (open, close) = [
        (" ", " "),
        (" (", ") "),
        (" <", ">."),
        ("\n", ",\n"),
        (": ", ". "),
        (" \"", "\" "),
        ("：", "。"),
    ][rng.below(7)];
    let before = format!("{}{open}", rng.pick(PROSE));
    let after = format!("{close}{}", rng.pick(PROSE));
    let start = before.chars().count();
    let end = start + link.chars().count();
    (format!("{before}{link}{after}"), (start, end))
}

fn links(text: &str) -> Vec<Match> {
    to_matches(text, find_links(text, &LinkOptions::default()))
}

fn spans_of(found: &[Match], kind: MatchKind) -> Vec<(usize, usize)> {
    found
        .iter()
        .filter(|m| m.kind == kind)
        .map(|m| (m.start, m.end))
        .collect()
}

#[test]
fn generated_addresses_are_found_whole() {
    let mut rng = Rng::seeded(0x114E_0001);
    let mut failures = Vec::new();
    for case in 0..1500 {
        let address = email(&mut rng);
        let address = if rng.below(5) == 0 {
            format!("mailto:{address}")
        } else {
            address
        };
        let (text, span) = embed(&mut rng, &address);
        let found = links(&text);
        if spans_of(&found, MatchKind::Email) != [span] || found.len() != 1 {
            failures.push(format!("case {case}: {text:?} -> {found:?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of 1500 failed:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n")
    );
}

#[test]
fn generated_invalid_addresses_yield_nothing() {
    let mut rng = Rng::seeded(0x114E_0002);
    let mut failures = Vec::new();
    for case in 0..1500 {
        let address = email(&mut rng);
        let (local, domain) = address.split_once('@').unwrap_or_default();
        let damaged = match rng.below(6) {
            0 => format!("{local}..x@{domain}"),
            1 => format!(".{local}@{domain}"),
            2 => format!("{local}.@{domain}"),
            3 => format!("{local}@a_b.{domain}"),
            4 => format!("{local}@-{domain}"),
            _ => format!("{local}@{domain}.123"),
        };
        let (text, span) = embed(&mut rng, &damaged);
        let found = links(&text);
        if found.iter().any(|m| m.start < span.1 && span.0 < m.end) {
            failures.push(format!("case {case}: {text:?} -> {found:?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of 1500 failed:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n")
    );
}

#[test]
fn generated_urls_are_found_whole_and_misspelled_schemes_are_not() {
    let mut rng = Rng::seeded(0x114E_0003);
    let mut failures = Vec::new();
    for case in 0..1500 {
        let link = url(&mut rng);
        let (text, span) = embed(&mut rng, &link);
        let found = links(&text);
        if spans_of(&found, MatchKind::Url) != [span] || found.len() != 1 {
            failures.push(format!("case {case}: {text:?} -> {found:?}"));
        }
        let (_, rest) = link.split_once("://").unwrap_or_default();
        let typo = format!(
            "{}://{rest}",
            rng.pick(&["hppt", "htps", "htttp", "hxxp", "ttps"])
        );
        let (text, _) = embed(&mut rng, &typo);
        let found = links(&text);
        if !found.is_empty() {
            failures.push(format!("case {case} typo: {text:?} -> {found:?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of 3000 failed:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n")
    );
}

/// What may follow an address and makes it the userinfo and host of a URL.
fn url_tail(rng: &mut Rng) -> String {
    let mut tail = String::new();
    if rng.below(3) == 0 {
        tail.push_str(&format!(":{}", 1 + rng.below(65535)));
    }
    match rng.below(3) {
        0 => tail.push_str(&format!("/{}", {
            let len = 1 + rng.below(6);
            rng.string("abcxyz0189-_~", len)
        })),
        1 => tail.push_str(&format!("?q={}", rng.string(ALNUM, 3))),
        _ if tail.is_empty() => tail.push_str(&format!("#{}", rng.string(ALNUM, 4))),
        _ => {}
    }
    tail
}

#[test]
fn generated_addresses_followed_by_a_port_path_query_or_fragment_are_urls() {
    let mut rng = Rng::seeded(0x114E_0004);
    let mut failures = Vec::new();
    for case in 0..1500 {
        let link = format!("{}{}", email(&mut rng), url_tail(&mut rng));
        let (text, span) = embed(&mut rng, &link);
        let found = links(&text);
        if spans_of(&found, MatchKind::Url) != [span] || found.len() != 1 {
            failures.push(format!("case {case}: {text:?} -> {found:?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of 1500 failed:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n")
    );
}

/// Top-level domains of the root zone, as the finder reads them.
fn is_tld(word: &str) -> bool {
    include_str!("../../data/tlds.txt")
        .lines()
        .any(|tld| tld.eq_ignore_ascii_case(word))
}

#[test]
fn generated_hosts_end_at_a_known_top_level_domain() {
    let mut rng = Rng::seeded(0x114E_0005);
    let words: Vec<&str> = [
        "this", "thanks", "and", "then", "but", "there", "which", "Please", "See", "it's",
    ]
    .into_iter()
    .filter(|w| !is_tld(w.trim_end_matches("'s")))
    .collect();
    assert!(words.len() >= 6, "{words:?}");
    let mut failures = Vec::new();
    for case in 0..1500 {
        // ASCII labels: a glued word after a non-ASCII host reads as more of its label.
        let labels: Vec<String> = (0..1 + rng.below(3))
            .map(|_| {
                let len = 2 + rng.below(6);
                rng.string("abcdefghijklmnopqrstuvwxyz0123456789", len)
            })
            .collect();
        let host = format!(
            "{}{}.{}",
            if rng.below(2) == 0 { "www." } else { "" },
            labels.join("."),
            rng.pick(&["com", "org", "net", "de", "io", "co.uk", "com.au"])
        );
        let word = words[rng.below(words.len())];
        let before = format!("{} ", rng.pick(&["see", "Visit", "at", "on"]));
        let text = format!("{before}{host}.{word} is next");
        let span = (
            before.chars().count(),
            before.chars().count() + host.chars().count(),
        );
        let found = links(&text);
        if spans_of(&found, MatchKind::Url) != [span] || found.len() != 1 {
            failures.push(format!("case {case}: {text:?} -> {found:?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of 1500 failed:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n")
    );
}
