//! Scores `quarry_parse::repair` on `json_repair.jsonl`: malformed JSON as LLMs emit it, from the
//! test suites of json_repair (Python, MIT) and jsonrepair (JavaScript, ISC); see the corpus README.
//!
//! A record is correct when the repaired value equals `expected` structurally (object key order
//! ignored, integers and floats compared by value); `expected_error` records are correct when the
//! engine refuses (error or null), `expected_empty` ones when it returns nothing, null or "".
//! `json_repair.default_mode.accuracy` (records with `options == {}`) is the headline;
//! `json_repair.canonical_text.accuracy` compares `json.dumps(sort_keys=True)`-style text.

use std::collections::BTreeMap;
use std::path::Path;

use quarry_parse::{RepairOptions, repair};
use serde::Deserialize;
use serde_json::Value;

use crate::corpus::read_jsonl;
use crate::score::{Metric, ratio};

#[derive(Debug, Deserialize)]
struct Record {
    source: String,
    input: String,
    #[serde(default)]
    expected: Value,
    #[serde(default)]
    expected_text: Option<String>,
    #[serde(default)]
    expected_empty: bool,
    #[serde(default)]
    expected_error: bool,
    #[serde(default)]
    options: serde_json::Map<String, Value>,
}

#[derive(Default)]
struct Tally {
    correct: usize,
    records: usize,
}

impl Tally {
    fn add(&mut self, correct: bool) {
        self.records += 1;
        self.correct += usize::from(correct);
    }

    fn metric(&self, name: &str) -> Metric {
        Metric::new(name, ratio(self.correct, self.records), self.records)
    }
}

pub fn evaluate(dir: &Path) -> anyhow::Result<Vec<Metric>> {
    let records: Vec<Record> = read_jsonl(dir, "json_repair.jsonl")?;
    let mut all = Tally::default();
    let mut default_mode = Tally::default();
    let mut canonical = Tally::default();
    let mut by_source: BTreeMap<String, Tally> = BTreeMap::new();
    let verbose = std::env::var_os("QUARRY_EVAL_VERBOSE").is_some();
    for record in &records {
        let options = RepairOptions {
            strict: record.options.get("strict").and_then(Value::as_bool) == Some(true),
        };
        let output = repair(&record.input, options).ok().map(|r| r.value);
        let correct = is_correct(record, output.as_ref());
        if verbose && !correct {
            eprintln!(
                "json_repair miss: input={:?} got={} expected={}",
                record.input,
                output
                    .as_ref()
                    .map_or("<error>".to_string(), Value::to_string),
                record.expected
            );
        }
        all.add(correct);
        if record.options.is_empty() {
            default_mode.add(correct);
        }
        let source = record.source.rsplit('/').next().unwrap_or(&record.source);
        by_source
            .entry(source.to_string())
            .or_default()
            .add(correct);
        if let Some(text) = &record.expected_text {
            let same = if text.is_empty() {
                output.as_ref().is_none_or(is_nothing)
            } else {
                let theirs = serde_json::from_str::<Value>(text).ok();
                output.as_ref().map(canonical_text) == theirs.as_ref().map(canonical_text)
            };
            if verbose && !same {
                eprintln!(
                    "json_repair text miss: input={:?} expected_text={text:?}",
                    record.input
                );
            }
            canonical.add(same);
        }
    }
    let mut metrics = vec![
        all.metric("json_repair.accuracy"),
        default_mode.metric("json_repair.default_mode.accuracy"),
    ];
    for (source, tally) in &by_source {
        metrics.push(tally.metric(&format!("json_repair.{source}.accuracy")));
    }
    metrics.push(canonical.metric("json_repair.canonical_text.accuracy"));
    Ok(metrics)
}

fn is_correct(record: &Record, output: Option<&Value>) -> bool {
    if record.expected_error {
        return output.is_none_or(Value::is_null);
    }
    if record.expected_empty {
        return output.is_none_or(is_nothing);
    }
    output.is_some_and(|value| same_value(value, &record.expected))
}

/// What "upstream returned an empty string" maps to: no value, null, or "".
fn is_nothing(value: &Value) -> bool {
    value.is_null() || value.as_str() == Some("")
}

/// Structural equality: object key order ignored, numbers compared by value.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_value(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_value(v, w)))
        }
        _ => a == b,
    }
}

/// `json.dumps(value, sort_keys=True)` as Python writes it (ASCII escapes, `", "` and `": "`).
fn canonical_text(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => out.push_str(&i.to_string()),
            (_, Some(u), _) => out.push_str(&u.to_string()),
            (_, _, Some(f)) if f.fract() == 0.0 && f.abs() < 1e16 => {
                out.push_str(&format!("{f:.1}"));
            }
            _ => out.push_str(&n.to_string()),
        },
        Value::String(s) => {
            out.push('"');
            for c in s.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                        let mut units = [0u16; 2];
                        for unit in c.encode_utf16(&mut units) {
                            out.push_str(&format!("\\u{unit:04x}"));
                        }
                    }
                    c => out.push(c),
                }
            }
            out.push('"');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::Object(members) => {
            let sorted: BTreeMap<&String, &Value> = members.iter().collect();
            out.push('{');
            for (i, (key, item)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_canonical(&Value::String(key.clone()), out);
                out.push_str(": ");
                write_canonical(item, out);
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_compare_by_value_and_keys_by_set() {
        let a: Value = serde_json::from_str(r#"{"b": 1.0, "a": [2]}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"a": [2.0], "b": 1}"#).unwrap();
        assert!(same_value(&a, &b));
        assert_eq!(canonical_text(&a), r#"{"a": [2], "b": 1.0}"#);
    }
}
