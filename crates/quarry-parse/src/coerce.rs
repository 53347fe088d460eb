//! Type-directed coercion: fitting a parsed value to a JSON Schema subset (`type`, `properties`,
//! `required`, `items`, `enum`, `format: date | date-time`, nullable type arrays, `anyOf` /
//! `oneOf` of simple types), recording each conversion as a flag and each misfit as an error.

use quarry_core::json::type_phrase;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::dates::{normalize_date, normalize_date_time};
use crate::flags::{Flag, total_cost};
use crate::repair::read_document;

/// A value fitted to a schema, with what it took and what still does not fit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Parsed {
    pub value: Value,
    pub flags: Vec<Flag>,
    /// Sum of the flag costs; lower is better.
    pub score: u32,
    pub errors: Vec<CoercionError>,
}

/// A part of the value that could not be fitted to the schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CoercionError {
    /// Where, as a JSONPath such as `$.items[2].price`.
    pub path: String,
    pub message: String,
}

/// Fits `value` to `schema`. Never fails: misfits are kept as they are and reported in `errors`.
pub fn coerce(value: &Value, schema: &Value) -> Parsed {
    let mut coercer = Coercer::default();
    let value = coercer.fit(value, schema, "$");
    coercer.finish(value)
}

#[derive(Default)]
struct Coercer {
    flags: Vec<Flag>,
    errors: Vec<CoercionError>,
}

impl Coercer {
    fn finish(self, value: Value) -> Parsed {
        Parsed {
            value,
            score: total_cost(&self.flags),
            flags: self.flags,
            errors: self.errors,
        }
    }

    fn error(&mut self, path: &str, message: String) {
        self.flags.push(Flag::Unfitted);
        self.errors.push(CoercionError {
            path: path.to_string(),
            message,
        });
    }

    fn fit(&mut self, value: &Value, schema: &Value, path: &str) -> Value {
        let Some(schema) = schema.as_object() else {
            return value.clone();
        };
        if let Some(branches) = schema
            .get("anyOf")
            .or_else(|| schema.get("oneOf"))
            .and_then(Value::as_array)
        {
            return self.fit_any_of(value, branches, path);
        }
        let types = declared_types(schema);
        let nullable = types.contains(&"null")
            || schema.get("nullable").and_then(Value::as_bool) == Some(true);
        if value.is_null() && (nullable || types.is_empty()) {
            return Value::Null;
        }
        if let Some(options) = schema.get("enum").and_then(Value::as_array) {
            return self.fit_enum(value, options, path);
        }
        if types.is_empty() {
            return self.fit_untyped(value, schema, path);
        }
        // A value that already has one of the types keeps it; otherwise convert, in the order
        // the schema lists the types.
        let exact = types.iter().find(|t| has_type(value, t));
        let order: Vec<&str> = exact.into_iter().chain(types.iter()).copied().collect();
        for ty in order {
            let mut attempt = Coercer::default();
            if let Some(fitted) = attempt.fit_type(value, ty, schema, path) {
                self.flags.extend(attempt.flags);
                self.errors.extend(attempt.errors);
                return fitted;
            }
        }
        if value.is_null() {
            // Absent or null where the schema wants a value: required-ness is judged by the
            // enclosing object.
            return Value::Null;
        }
        self.error(
            path,
            format!(
                "expected {}, found {}",
                types.join(" or "),
                type_phrase(value)
            ),
        );
        value.clone()
    }

    fn fit_any_of(&mut self, value: &Value, branches: &[Value], path: &str) -> Value {
        let mut best: Option<(usize, u32, Coercer, Value)> = None;
        for branch in branches {
            let mut attempt = Coercer::default();
            let fitted = attempt.fit(value, branch, path);
            let rank = (attempt.errors.len(), total_cost(&attempt.flags));
            if best.as_ref().is_none_or(|(e, s, _, _)| rank < (*e, *s)) {
                best = Some((rank.0, rank.1, attempt, fitted));
            }
        }
        match best {
            Some((_, _, attempt, fitted)) => {
                self.flags.extend(attempt.flags);
                self.errors.extend(attempt.errors);
                fitted
            }
            None => value.clone(),
        }
    }

    fn fit_untyped(&mut self, value: &Value, schema: &Map<String, Value>, path: &str) -> Value {
        if schema.contains_key("properties") {
            return self
                .fit_type(value, "object", schema, path)
                .unwrap_or_else(|| value.clone());
        }
        if schema.contains_key("items") {
            return self
                .fit_type(value, "array", schema, path)
                .unwrap_or_else(|| value.clone());
        }
        if let Value::String(text) = value {
            return Value::String(self.fit_format(text, schema, path));
        }
        value.clone()
    }

    fn fit_enum(&mut self, value: &Value, options: &[Value], path: &str) -> Value {
        if options.contains(value) {
            return value.clone();
        }
        let value = match value {
            Value::Array(items) if items.len() == 1 => {
                self.flags.push(Flag::ListToSingle);
                &items[0]
            }
            other => other,
        };
        let wanted = loose_text(value);
        if let Some(found) = options.iter().find(|option| loose_text(option) == wanted) {
            self.flags.push(Flag::EnumNormalized);
            return found.clone();
        }
        let allowed: Vec<String> = options.iter().map(Value::to_string).collect();
        self.error(
            path,
            format!("{value} is not one of {}", allowed.join(", ")),
        );
        value.clone()
    }

    /// Converts `value` to `ty`, or `None` when it cannot be one.
    fn fit_type(
        &mut self,
        value: &Value,
        ty: &str,
        schema: &Map<String, Value>,
        path: &str,
    ) -> Option<Value> {
        if let Value::Array(items) = value
            && items.len() == 1
            && ty != "array"
        {
            self.flags.push(Flag::ListToSingle);
            return self.fit_type(&items[0], ty, schema, path);
        }
        match ty {
            "object" => match value {
                Value::Object(members) => Some(self.fit_object(members, schema, path)),
                Value::String(text) => {
                    let embedded = embedded_json(text).filter(Value::is_object)?;
                    self.flags.push(Flag::ParsedEmbeddedJson);
                    self.fit_type(&embedded, ty, schema, path)
                }
                _ => None,
            },
            "array" => {
                let items_schema = schema.get("items").cloned().unwrap_or(Value::Bool(true));
                let items = match value {
                    Value::Array(items) => items.clone(),
                    Value::Null => return None,
                    Value::String(text) if text.trim_start().starts_with('[') => {
                        match embedded_json(text) {
                            Some(Value::Array(items)) => {
                                self.flags.push(Flag::ParsedEmbeddedJson);
                                items
                            }
                            _ => {
                                self.flags.push(Flag::SingleToList);
                                vec![value.clone()]
                            }
                        }
                    }
                    single => {
                        self.flags.push(Flag::SingleToList);
                        vec![single.clone()]
                    }
                };
                let fitted = items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| self.fit(item, &items_schema, &format!("{path}[{i}]")))
                    .collect();
                Some(Value::Array(fitted))
            }
            "string" => match value {
                Value::String(text) => Some(Value::String(self.fit_format(text, schema, path))),
                Value::Number(_) | Value::Bool(_) => {
                    self.flags.push(Flag::ToString);
                    Some(Value::String(value.to_string()))
                }
                _ => None,
            },
            "integer" | "number" => {
                let number = match value {
                    Value::Number(n) => n.as_f64()?,
                    Value::String(text) => {
                        let number = number_from_text(text)?;
                        self.flags.push(Flag::StringToNumber);
                        number
                    }
                    _ => return None,
                };
                if ty == "integer" {
                    if number.fract() != 0.0 {
                        return None;
                    }
                    if value.is_f64() {
                        self.flags.push(Flag::FloatToInt);
                    }
                    return Some(integral(number, value));
                }
                Some(match value {
                    Value::Number(_) => value.clone(),
                    _ => number_json(number),
                })
            }
            "boolean" => match value {
                Value::Bool(_) => Some(value.clone()),
                Value::String(text) => {
                    let parsed = bool_from_text(text)?;
                    self.flags.push(Flag::ToBool);
                    Some(Value::Bool(parsed))
                }
                Value::Number(n) => {
                    let parsed = match n.as_f64()? {
                        0.0 => false,
                        1.0 => true,
                        _ => return None,
                    };
                    self.flags.push(Flag::ToBool);
                    Some(Value::Bool(parsed))
                }
                _ => None,
            },
            "null" => value.is_null().then_some(Value::Null),
            _ => Some(value.clone()),
        }
    }

    fn fit_format(&mut self, text: &str, schema: &Map<String, Value>, path: &str) -> String {
        let normalized = match schema.get("format").and_then(Value::as_str) {
            Some("date") => normalize_date(text),
            Some("date-time") => normalize_date_time(text),
            _ => return text.to_string(),
        };
        match normalized {
            Some(iso) if iso == text => iso,
            Some(iso) => {
                self.flags.push(Flag::DateNormalized);
                iso
            }
            None => {
                self.error(
                    path,
                    format!("{text:?} is not a date this parser understands"),
                );
                text.to_string()
            }
        }
    }

    fn fit_object(
        &mut self,
        members: &Map<String, Value>,
        schema: &Map<String, Value>,
        path: &str,
    ) -> Value {
        let properties = schema.get("properties").and_then(Value::as_object);
        let extra_schema = schema.get("additionalProperties");
        let Some(properties) = properties else {
            return match extra_schema.filter(|s| s.is_object()) {
                Some(each) => Value::Object(
                    members
                        .iter()
                        .map(|(k, v)| (k.clone(), self.fit(v, each, &member_path(path, k))))
                        .collect(),
                ),
                None => Value::Object(members.clone()),
            };
        };
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let entries: Vec<(&String, &Value)> = members.iter().collect();
        let mut used = vec![false; entries.len()];
        let mut out = Map::new();
        for (name, property) in properties {
            let child = member_path(path, name);
            let found = entries.iter().position(|(k, _)| *k == name).or_else(|| {
                let wanted = loose_key(name);
                let index = entries
                    .iter()
                    .enumerate()
                    .position(|(i, (k, _))| !used[i] && loose_key(k) == wanted)?;
                self.flags.push(Flag::KeyNormalized);
                Some(index)
            });
            let value = match found {
                Some(index) => {
                    used[index] = true;
                    self.fit(entries[index].1, property, &child)
                }
                None => {
                    self.flags.push(Flag::MissingProperty);
                    Value::Null
                }
            };
            if value.is_null() && required.contains(&name.as_str()) && !allows_null(property) {
                self.error(&child, format!("required property {name:?} is missing"));
            }
            out.insert(name.clone(), value);
        }
        for (index, (key, value)) in members.iter().enumerate() {
            if used[index] || out.contains_key(key) {
                continue;
            }
            match extra_schema {
                Some(Value::Bool(true)) => {
                    out.insert(key.clone(), value.clone());
                }
                Some(each @ Value::Object(_)) => {
                    let fitted = self.fit(value, each, &member_path(path, key));
                    out.insert(key.clone(), fitted);
                }
                _ => self.flags.push(Flag::ExtraPropertyDropped),
            }
        }
        Value::Object(out)
    }
}

fn declared_types(schema: &Map<String, Value>) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(ty)) => vec![ty.as_str()],
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn allows_null(schema: &Value) -> bool {
    let Some(schema) = schema.as_object() else {
        return true;
    };
    if let Some(branches) = schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))
        .and_then(Value::as_array)
    {
        return branches.iter().any(allows_null);
    }
    declared_types(schema).contains(&"null")
        || schema.get("nullable").and_then(Value::as_bool) == Some(true)
}

fn has_type(value: &Value, ty: &str) -> bool {
    match ty {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        _ => false,
    }
}

/// `$.name`, or `$["odd key"]` when the key is not a plain identifier.
fn member_path(path: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !key.starts_with(|c: char| c.is_ascii_digit());
    if plain {
        format!("{path}.{key}")
    } else {
        format!("{path}[{}]", Value::String(key.to_string()))
    }
}

/// Keys compared ignoring case and snake/camel/kebab style: `firstName` ~ `first_name`.
fn loose_key(key: &str) -> String {
    key.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Enum values compared ignoring case, spacing and punctuation.
fn loose_text(value: &Value) -> String {
    match value {
        Value::String(text) => loose_key(text),
        other => loose_key(&other.to_string()),
    }
}

fn embedded_json(text: &str) -> Option<Value> {
    let chars: Vec<char> = text.chars().collect();
    read_document(&chars).ok().map(|read| read.value)
}

fn bool_from_text(text: &str) -> Option<bool> {
    match text.trim().to_lowercase().as_str() {
        "true" | "yes" | "y" | "t" | "1" | "on" => Some(true),
        "false" | "no" | "n" | "f" | "0" | "off" => Some(false),
        _ => None,
    }
}

/// A number written as text: "42", "1,200", "$1.2 million", "15%", "3k".
pub(crate) fn number_from_text(text: &str) -> Option<f64> {
    let lower = text.trim().to_lowercase();
    let mut body = lower.as_str();
    let mut negative = false;
    if let Some(rest) = body.strip_prefix('-') {
        negative = true;
        body = rest.trim_start();
    }
    body = body
        .trim_start_matches(['$', '€', '£', '¥', '₹', '+'])
        .trim();
    if let Some(rest) = body.strip_prefix('-') {
        negative = !negative;
        body = rest.trim_start();
    }
    for code in ["usd", "eur", "gbp"] {
        body = body.trim_end_matches(code).trim();
    }
    body = body.trim_end_matches('%').trim();
    let split = body
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | ',' | '_' | ' ')))
        .unwrap_or(body.len());
    let (digits, suffix) = body.split_at(split);
    let scale = match suffix.trim() {
        "" => 1.0,
        "k" | "thousand" => 1e3,
        "m" | "mn" | "mm" | "million" | "millions" => 1e6,
        "b" | "bn" | "billion" | "billions" => 1e9,
        "t" | "tn" | "trillion" => 1e12,
        _ => return None,
    };
    let digits = digits.trim();
    if digits.is_empty() || !digits.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let groups: Vec<&str> = digits.split(',').collect();
    let thousands = groups.len() > 1
        && groups[0].len() <= 3
        && groups[1..].iter().enumerate().all(|(i, g)| {
            let last = i == groups.len() - 2;
            let int_part = if last {
                g.split('.').next().unwrap_or(g)
            } else {
                g
            };
            int_part.len() == 3 && int_part.chars().all(|c| c.is_ascii_digit())
        });
    if groups.len() > 1 && !thousands {
        return None;
    }
    let cleaned: String = digits
        .chars()
        .filter(|c| !matches!(c, ',' | '_' | ' '))
        .collect();
    let number: f64 = cleaned.parse().ok()?;
    let number = number * scale;
    Some(if negative { -number } else { number })
}

fn integral(number: f64, original: &Value) -> Value {
    if let Value::Number(n) = original
        && (n.is_i64() || n.is_u64())
    {
        return original.clone();
    }
    number_json(number)
}

/// A JSON number, as an integer when it is one (and safely representable).
fn number_json(number: f64) -> Value {
    if number.fract() == 0.0 && number.abs() < 9.0e15 {
        Value::Number((number as i64).into())
    } else {
        serde_json::Number::from_f64(number).map_or(Value::Null, Value::Number)
    }
}
