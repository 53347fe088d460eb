//! Generated round trips: random JSON values written out with the damage `repair` claims to
//! undo (trailing commas, single quotes, unquoted keys, Python literals, comments, missing
//! closers, fences and prose, newline-separated items), then read back. Each repaired value must
//! equal the original. The generator is seeded, so a failure names a case that reproduces.

use quarry_parse::{RepairOptions, repair};
use serde_json::{Map, Value};

/// A seeded generator (fastrand's wyrand): a failing case is reproduced by its seed.
struct Rng(fastrand::Rng);

impl Rng {
    fn seeded(seed: u64) -> Rng {
        Rng(fastrand::Rng::with_seed(seed))
    }

    fn below(&mut self, n: usize) -> usize {
        self.0.usize(..n)
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

const WORD_CHARS: &[char] = &[
    'a', 'b', 'c', 'x', 'y', 'z', 'Q', '0', '7', '_', ' ', ',', ':', 'é', 'ß', '日', '€', '-', '.',
];

fn word(rng: &mut Rng, identifier: bool) -> String {
    let len = 1 + rng.below(8);
    (0..len)
        .map(|i| {
            if identifier {
                let letters = b"abcdefghijklmnopqrstuvwxyz_";
                let c = letters[rng.below(letters.len())] as char;
                if i > 0 && rng.chance(20) { '1' } else { c }
            } else {
                WORD_CHARS[rng.below(WORD_CHARS.len())]
            }
        })
        .collect()
}

fn value(rng: &mut Rng, depth: usize) -> Value {
    let kinds = if depth >= 3 { 5 } else { 7 };
    match rng.below(kinds) {
        0 => Value::Null,
        1 => Value::Bool(rng.chance(50)),
        2 => Value::from(rng.below(100_000) as i64 - 50_000),
        3 => Value::from((rng.below(20_000) as f64 - 10_000.0) / 8.0),
        4 => Value::String(word(rng, false)),
        5 => Value::Array((0..rng.below(4)).map(|_| value(rng, depth + 1)).collect()),
        _ => {
            let mut map = Map::new();
            for _ in 0..rng.below(4) {
                map.insert(word(rng, true), value(rng, depth + 1));
            }
            Value::Object(map)
        }
    }
}

/// The damage applied while writing a value out.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Damage {
    TrailingCommas,
    SingleQuotes,
    UnquotedKeys,
    PythonLiterals,
    Comments,
    MissingClosers,
    FenceInProse,
    NewlineSeparators,
}

const DAMAGES: [Damage; 8] = [
    Damage::TrailingCommas,
    Damage::SingleQuotes,
    Damage::UnquotedKeys,
    Damage::PythonLiterals,
    Damage::Comments,
    Damage::MissingClosers,
    Damage::FenceInProse,
    Damage::NewlineSeparators,
];

fn write(value: &Value, damage: Damage, out: &mut String) {
    let comment = |out: &mut String| {
        if damage == Damage::Comments {
            out.push_str(" /* note */ ");
        }
    };
    match value {
        Value::Null if damage == Damage::PythonLiterals => out.push_str("None"),
        Value::Bool(true) if damage == Damage::PythonLiterals => out.push_str("True"),
        Value::Bool(false) if damage == Damage::PythonLiterals => out.push_str("False"),
        Value::String(s) if damage == Damage::SingleQuotes => {
            out.push('\'');
            out.push_str(s);
            out.push('\'');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(if damage == Damage::NewlineSeparators {
                        "\n"
                    } else {
                        ", "
                    });
                }
                comment(out);
                write(item, damage, out);
            }
            if damage == Damage::TrailingCommas && !items.is_empty() {
                out.push(',');
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(if damage == Damage::NewlineSeparators {
                        "\n"
                    } else {
                        ", "
                    });
                }
                comment(out);
                if damage == Damage::UnquotedKeys {
                    out.push_str(key);
                } else {
                    out.push_str(&Value::String(key.clone()).to_string());
                }
                out.push_str(": ");
                write(item, damage, out);
            }
            if damage == Damage::TrailingCommas && !map.is_empty() {
                out.push(',');
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn damaged(value: &Value, damage: Damage) -> String {
    let mut out = String::new();
    write(value, damage, &mut out);
    match damage {
        Damage::MissingClosers => out.trim_end_matches([']', '}']).to_string(),
        Damage::FenceInProse => format!("Here is the result:\n```json\n{out}\n```\nDone."),
        _ => out,
    }
}

/// Whether `damage` leaves `value` readable as exactly itself. Strings the damage would make
/// ambiguous are left out: a single-quoted string holding a quote, or a document whose cut
/// closers leave a bare top-level scalar.
fn applies(value: &Value, damage: Damage) -> bool {
    match damage {
        Damage::MissingClosers => matches!(value, Value::Array(_) | Value::Object(_)),
        _ => true,
    }
}

#[test]
fn damaged_values_round_trip() {
    let mut rng = Rng::seeded(0x5EED_0001);
    let mut checked = 0;
    let mut failures = Vec::new();
    for case in 0..600 {
        let original = value(&mut rng, 0);
        for damage in DAMAGES {
            if !applies(&original, damage) {
                continue;
            }
            let text = damaged(&original, damage);
            checked += 1;
            match repair(&text, RepairOptions::default()) {
                Ok(repaired) if repaired.value == original => {}
                other => failures.push(format!(
                    "case {case} {damage:?}: {text:?} -> {:?}, expected {original}",
                    other.map(|r| r.value.to_string())
                )),
            }
        }
    }
    assert!(checked > 3000, "only {checked} cases ran");
    assert!(
        failures.is_empty(),
        "{} of {checked} damaged values did not round-trip:\n{}",
        failures.len(),
        failures[..failures.len().min(15)].join("\n")
    );
}
