//! A deterministic generator of mixed text for benchmarks: business prose in which a chosen share
//! of sentences carries emails, URLs, dates, phone numbers, IP addresses, people and
//! organisations (the rest is filler with numbers, amounts and versions that must not match).
//! A share of 0.25 gives about one value per 100 bytes, denser than most correspondence.

/// A small, fast, seeded PRNG (xorshift64*); benchmarks need repeatability, not cryptography.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const FIRST: &[&str] = &[
    "John", "Sarah", "Michael", "Emma", "David", "Olivia", "Carlos", "Priya", "Wei", "Fatima",
    "James", "Anna", "Lukas", "Sofia", "Kenji", "Amara",
];
const LAST: &[&str] = &[
    "Smith",
    "Johnson",
    "Garcia",
    "Müller",
    "Chen",
    "Patel",
    "Okafor",
    "Rossi",
    "Kowalski",
    "Tanaka",
    "Brown",
    "Silva",
    "Nguyen",
    "Andersson",
];
const ORGS: &[&str] = &[
    "Acme Corp",
    "Globex Inc.",
    "Initech",
    "Google",
    "Microsoft",
    "Anthropic",
    "Stark Industries",
    "Wayne Enterprises",
    "the University of Cambridge",
    "Deutsche Bank",
];
const PLACES: &[&str] = &[
    "London",
    "Paris",
    "New York",
    "Berlin",
    "Tokyo",
    "São Paulo",
    "Toronto",
    "Sydney",
    "Madrid",
];
const MONTHS: &[&str] = &[
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const FILLER: &[&str] = &[
    "Thanks for the update on the quarterly numbers; the team reviewed the draft and has a few comments.",
    "We agreed to move the migration forward once the staging environment is stable again.",
    "Please find the revised proposal attached, including the pricing table and the delivery plan.",
    "The customer reported intermittent timeouts, which we traced to a misconfigured load balancer.",
    "Let me know if the numbers look right to you, otherwise we can discuss them on the call.",
    "Our legal team needs the signed agreement before we can share the production credentials.",
    "The invoice total was 4,250.00 EUR, of which 15% is due on signature and the rest in 30 days.",
    "Version 2.4.1 fixes the memory leak and adds retries for the payment gateway.",
];

/// Roughly `bytes` bytes of mixed text in lines (one paragraph per line), in which
/// `value_share` (0.0–1.0) of the sentences carry values.
pub fn generate(bytes: usize, seed: u64, value_share: f64) -> String {
    let mut rng = Rng::new(seed);
    let mut text = String::with_capacity(bytes + 512);
    while text.len() < bytes {
        paragraph(&mut rng, &mut text, value_share);
        text.push('\n');
    }
    text
}

/// Appends one paragraph of three to six sentences.
pub fn paragraph(rng: &mut Rng, out: &mut String, value_share: f64) {
    for sentence in 0..3 + rng.below(4) {
        if sentence > 0 {
            out.push(' ');
        }
        let first = rng.pick(FIRST);
        let last = rng.pick(LAST);
        let org = rng.pick(ORGS);
        let place = rng.pick(PLACES);
        let month = rng.pick(MONTHS);
        let day = 1 + rng.below(28);
        let year = 2015 + rng.below(12);
        let carries_value = (rng.below(10_000) as f64) < value_share * 10_000.0;
        let kind = if carries_value { rng.below(5) } else { 5 };
        let line = match kind {
            0 => format!(
                "{first} {last} from {org} can be reached at {}.{}@example.com or on +1 415 555 {:04}.",
                first.to_lowercase(),
                last.to_ascii_lowercase(),
                rng.below(10_000)
            ),
            1 => format!(
                "The kickoff in {place} is scheduled for {month} {day}, {year} at {}pm.",
                1 + rng.below(11)
            ),
            2 => format!(
                "See https://docs.example.org/guides/{}/setup?ref=mail for details, or www.example.net/faq.",
                rng.below(500)
            ),
            3 => format!(
                "The server at 10.{}.{}.{} stopped answering on {year}-{:02}-{day:02}, so {first} restarted it.",
                rng.below(256),
                rng.below(256),
                rng.below(256),
                1 + rng.below(12)
            ),
            4 => format!(
                "Call {first} on ({}) 555-{:04} next Tuesday about the {org} contract.",
                200 + rng.below(700),
                rng.below(10_000)
            ),
            _ => rng.pick(FILLER).to_owned(),
        };
        out.push_str(&line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_deterministic_and_roughly_the_requested_size() {
        let a = generate(10_000, 7, 0.25);
        assert_eq!(a, generate(10_000, 7, 0.25));
        assert!(a.len() >= 10_000 && a.len() < 12_000, "len {}", a.len());
        assert!(a.contains('@') && a.contains("https://"));
    }
}
