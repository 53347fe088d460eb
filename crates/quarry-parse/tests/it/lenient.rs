//! Behaviour of the public API on the shapes of model output Quarry meets.

use quarry_parse::{Flag, RepairOptions, coerce, parse, parse_candidates, repair};
use serde_json::{Value, json};

fn repaired(raw: &str) -> Value {
    repair(raw, RepairOptions::default())
        .unwrap_or_else(|e| panic!("{raw:?} did not repair: {e}"))
        .value
}

#[test]
fn fenced_json_in_prose_is_the_first_candidate() {
    let raw =
        "Sure! Here is the data:\n```json\n{\"name\": \"Ada\", \"age\": 36}\n```\nAnything else?";
    let candidates = parse_candidates(raw);
    let first = &candidates[0];
    assert_eq!(first.value, json!({"name": "Ada", "age": 36}));
    assert!(first.flags.contains(&Flag::ExtractedFromFence));
    assert_eq!(
        &raw[first.span.clone()].trim(),
        &"{\"name\": \"Ada\", \"age\": 36}"
    );
    assert_eq!(repaired(raw), json!({"name": "Ada", "age": 36}));
}

#[test]
fn object_in_prose_without_fence_is_extracted() {
    let raw = "The result is {\"total\": 12} as requested.";
    let candidates = parse_candidates(raw);
    let object = candidates
        .iter()
        .find(|c| c.value.is_object())
        .expect("object candidate");
    assert_eq!(object.value, json!({"total": 12}));
    assert!(object.flags.contains(&Flag::ExtractedFromProse));
    assert_eq!(&raw[object.span.clone()], "{\"total\": 12}");
}

#[test]
fn trailing_comma_is_dropped_and_flagged() {
    let read = repair("{\"a\": [1, 2, 3,], \"b\": 2,}", RepairOptions::default()).unwrap();
    assert_eq!(read.value, json!({"a": [1, 2, 3], "b": 2}));
    assert!(read.flags.contains(&Flag::TrailingComma));
}

#[test]
fn truncated_object_is_closed() {
    let read = repair(
        "{\"name\": \"Ada\", \"tags\": [\"math\", \"comp",
        RepairOptions::default(),
    )
    .unwrap();
    assert_eq!(read.value, json!({"name": "Ada", "tags": ["math", "comp"]}));
    assert!(read.flags.contains(&Flag::Truncated));
    assert!(read.flags.contains(&Flag::UnclosedString));
}

#[test]
fn python_literals_and_single_quotes() {
    let read = repair(
        "{'ok': True, 'missing': None, 'off': False}",
        RepairOptions::default(),
    )
    .unwrap();
    assert_eq!(
        read.value,
        json!({"ok": true, "missing": null, "off": false})
    );
    assert!(read.flags.contains(&Flag::PythonLiteral));
    assert!(read.flags.contains(&Flag::SingleQuotes));
}

#[test]
fn comments_unquoted_keys_and_missing_commas() {
    assert_eq!(
        repaired("{\n  // who\n  name: \"Ada\"\n  age: 36 /* years */\n}"),
        json!({"name": "Ada", "age": 36})
    );
}

#[test]
fn unescaped_quotes_inside_strings() {
    assert_eq!(
        repaired("{\"quote\": \"she said \"hi\" and left\", \"n\": 1}"),
        json!({"quote": "she said \"hi\" and left", "n": 1})
    );
    assert_eq!(
        repaired("{\"city\": \"New York, \"state\": \"NY\"}"),
        json!({"city": "New York", "state": "NY"})
    );
}

#[test]
fn several_values_become_a_list() {
    let read = repair("{\"a\": 1}\n{\"b\": 2}", RepairOptions::default()).unwrap();
    assert_eq!(read.value, json!([{"a": 1}, {"b": 2}]));
    assert!(read.flags.contains(&Flag::MultipleValues));
}

#[test]
fn strict_mode_refuses_guesses() {
    let strict = RepairOptions { strict: true };
    assert!(repair("[1][2]", strict).is_err());
    assert!(repair("{\"key\": , \"b\": 1}", strict).is_err());
    assert_eq!(repair("{\"a\": 1}", strict).unwrap().value, json!({"a": 1}));
}

#[test]
fn invalid_unicode_escape_is_refused() {
    assert!(repair("\"\\uZ000\"", RepairOptions::default()).is_err());
}

#[test]
fn tool_call_written_as_content_is_unwrapped() {
    let schema = json!({
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"]
    });
    let raw = "I'll call the tool now: {\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\": \\\"Paris\\\", \\\"days\\\": \\\"3\\\"}\"}";
    let parsed = parse(raw, &schema).expect("a reading");
    assert_eq!(parsed.value, json!({"city": "Paris", "days": 3}));
    assert!(parsed.flags.contains(&Flag::UnwrappedToolCall));
    assert!(parsed.errors.is_empty());
}

#[test]
fn coerces_string_to_integer() {
    let parsed = coerce(&json!("42"), &json!({"type": "integer"}));
    assert_eq!(parsed.value, json!(42));
    assert_eq!(parsed.flags, vec![Flag::StringToNumber]);
    assert!(parsed.score > 0);
    assert_eq!(
        coerce(&json!("1,200"), &json!({"type": "number"})).value,
        json!(1200)
    );
    assert_eq!(
        coerce(&json!("$1.2 million"), &json!({"type": "number"})).value,
        json!(1_200_000)
    );
    assert_eq!(
        coerce(&json!(42), &json!({"type": "string"})).value,
        json!("42")
    );
}

#[test]
fn enum_matches_ignoring_case_and_spacing() {
    let schema = json!({"enum": ["In Progress", "Done"]});
    let parsed = coerce(&json!("in-progress"), &schema);
    assert_eq!(parsed.value, json!("In Progress"));
    assert!(parsed.flags.contains(&Flag::EnumNormalized));
    let miss = coerce(&json!("blocked"), &schema);
    assert_eq!(miss.errors.len(), 1);
}

#[test]
fn single_value_becomes_a_list() {
    let schema = json!({"type": "array", "items": {"type": "string"}});
    let parsed = coerce(&json!("only"), &schema);
    assert_eq!(parsed.value, json!(["only"]));
    assert!(parsed.flags.contains(&Flag::SingleToList));
}

#[test]
fn missing_property_is_null_with_a_flag_and_extras_are_dropped() {
    let schema = json!({
        "type": "object",
        "properties": {"firstName": {"type": "string"}, "email": {"type": ["string", "null"]}},
        "required": ["firstName"]
    });
    let parsed = coerce(&json!({"first_name": "Ada", "shoe": 38}), &schema);
    assert_eq!(parsed.value, json!({"firstName": "Ada", "email": null}));
    assert!(parsed.flags.contains(&Flag::MissingProperty));
    assert!(parsed.flags.contains(&Flag::KeyNormalized));
    assert!(parsed.flags.contains(&Flag::ExtraPropertyDropped));
    assert!(parsed.errors.is_empty());
}

#[test]
fn coercion_error_names_the_path() {
    let schema = json!({
        "type": "object",
        "properties": {"items": {"type": "array", "items": {
            "type": "object", "properties": {"price": {"type": "number"}}
        }}}
    });
    let value = json!({"items": [{"price": 1}, {"price": "2.5"}, {"price": "free"}]});
    let parsed = coerce(&value, &schema);
    assert_eq!(parsed.errors.len(), 1);
    assert_eq!(parsed.errors[0].path, "$.items[2].price");
    assert_eq!(parsed.value["items"][1]["price"], json!(2.5));
}

#[test]
fn booleans_dates_and_nullable_any_of() {
    let schema = json!({
        "type": "object",
        "properties": {
            "paid": {"type": "boolean"},
            "due": {"type": "string", "format": "date"},
            "ref": {"anyOf": [{"type": "integer"}, {"type": "null"}]}
        }
    });
    let parsed = coerce(
        &json!({"paid": "yes", "due": "January 15, 2024", "ref": null}),
        &schema,
    );
    assert_eq!(
        parsed.value,
        json!({"paid": true, "due": "2024-01-15", "ref": null})
    );
    assert!(parsed.flags.contains(&Flag::DateNormalized));
    assert!(parsed.errors.is_empty());
}

#[test]
fn parse_prefers_the_candidate_that_fits_the_schema() {
    let schema = json!({"type": "object", "properties": {"total": {"type": "number"}}, "required": ["total"]});
    let raw = "Options were [1, 2] but the answer is:\n```json\n{\"total\": \"12.50\"}\n```";
    let parsed = parse(raw, &schema).expect("a reading");
    assert_eq!(parsed.value, json!({"total": 12.5}));
    assert!(parsed.errors.is_empty());
}

#[test]
fn parse_returns_none_without_any_json() {
    assert!(parse("", &json!({"type": "object"})).is_none());
}

/// Every prefix of these inputs (what a cut-off stream produces) must read without panicking.
#[test]
fn truncations_never_panic() {
    let inputs = [
        "```json\n{\"a\": [1, 2.5e3, \"x\\\"y\", {\"b\": null}], 'c': True, d: undefined}\n```",
        "{\"key\": \"lorem \"ipsum\" dolor\", \"n\": -0.5, \"u\": \"\\ud83d\\ude00\\u00e9\"} trailing",
        "callback({\"a\": [1, 2, 3,], /* c */ \"b\": 'it''s'}); // done",
        "[{\"i\":1{\"i\":2}], (1, 2), {'s', 't'}, \"a\" + \"b\", /re/, …, «q», “w”",
        "Here: {\"city\": \"Paris\", \"tags\": [\"a\" \"b\"], \"ok\": yes}\n\n{\"more\": 1}",
    ];
    let schema = json!({"type": "object", "properties": {"a": {"type": "array"}, "city": {"type": "string"}}});
    for input in inputs {
        for (end, _) in input.char_indices().chain([(input.len(), ' ')]) {
            let prefix = &input[..end];
            let _ = repair(prefix, RepairOptions::default());
            let _ = repair(prefix, RepairOptions { strict: true });
            for candidate in parse_candidates(prefix) {
                assert!(prefix.get(candidate.span.clone()).is_some());
            }
            let _ = parse(prefix, &schema);
        }
    }
}
