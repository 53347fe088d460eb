//! Regression tests, each named after the mistake it pins.

use quarry_parse::{RepairOptions, repair};
use serde_json::{Value, json};

fn repaired(raw: &str) -> Value {
    repair(raw, RepairOptions::default()).unwrap().value
}

// Arrays on separate lines were taken for one array re-emitted and the first was dropped.
#[test]
fn newline_separated_arrays_are_both_kept() {
    assert_eq!(repaired("[1,2,3]\n[4,5,6]"), json!([[1, 2, 3], [4, 5, 6]]));
}

// A bare word nested in an object made a later `{` look like prose before JSON.
#[test]
fn bare_value_inside_object_is_not_prose() {
    assert_eq!(repaired("{text:words{x}}")["text"], json!("words"));
}

// A quote followed by a stray word (`"b" true}`) swallowed the rest of the object.
#[test]
fn stray_word_after_string_value_is_dropped() {
    assert_eq!(repaired("{\"b\": \"xxxxx\" true}"), json!({"b": "xxxxx"}));
}

// `//` in a bare URL was read as a comment.
#[test]
fn url_in_unquoted_value_keeps_slashes() {
    assert_eq!(
        repaired("[https://example.com/a,2]"),
        json!(["https://example.com/a", 2])
    );
}

// A truncated key after a complete member replaced that member's value with null.
#[test]
fn truncated_key_keeps_earlier_value() {
    assert_eq!(
        repaired("[{\"key\": \"value\", \"key"),
        json!([{"key": "value"}])
    );
}

// `/[a-z]_/` stopped at `[` and was refused as prose followed by an array.
#[test]
fn regex_literal_is_a_string() {
    assert_eq!(repaired("/[a-z]_/"), json!("/[a-z]_/"));
}

// A comma inside a quoted sentence was taken for the end of the value.
#[test]
fn comma_inside_quoted_sentence_is_text() {
    assert_eq!(
        repaired("{\"notes\": \"lorem \"ipsum\", sic.\" }"),
        json!({"notes": "lorem \"ipsum\", sic."})
    );
}

// Leading zeros carry meaning (codes, ids) and must not become numbers.
#[test]
fn leading_zero_numbers_stay_text() {
    assert_eq!(repaired("[007, 002e3]"), json!(["007", "002e3"]));
}

// Deep nesting and long runs of quoted commas must not exhaust the stack or take quadratic time.
#[test]
fn adversarial_inputs_finish() {
    let deep = "[".repeat(100_000);
    assert!(repair(&deep, RepairOptions::default()).is_err());
    let quotes = "{\"a\": \"x".to_string() + &"\", \"y".repeat(20_000);
    assert!(repair(&quotes, RepairOptions::default()).is_ok());
    let _ = quarry_parse::parse_candidates(&"{\"a\": \"b\" ".repeat(2_000));
}

// An invalid escape (`\a`, `\l`) kept its backslash; jsonrepair and json_repair both drop it.
#[test]
fn invalid_escape_drops_the_backslash() {
    assert_eq!(repaired(r#""\a""#), json!("a"));
    assert_eq!(
        repaired("{\"key\": 'string\"\n\t\\le'"),
        json!({"key": "string\"\n\tle"})
    );
}

// `.25` and `82_461_110` were read as strings.
#[test]
fn bare_fractions_and_digit_separators_are_numbers() {
    assert_eq!(repaired("{\"key\": .25}"), json!({"key": 0.25}));
    assert_eq!(repaired("[-.5]"), json!([-0.5]));
    assert_eq!(
        repaired("{\"value\": 82_461_110}"),
        json!({"value": 82461110})
    );
    assert_eq!(repaired("[1__0]"), json!(["1__0"]));
}

// A line comment inside an object swallowed the closing brace and every member after it.
#[test]
fn line_comment_ends_at_its_container_closer() {
    assert_eq!(
        repaired(r#"{ "key": { "key2": "value2" // comment }, "key3": "value3" }"#),
        json!({"key": {"key2": "value2"}, "key3": "value3"})
    );
    assert_eq!(
        repaired(r#"{ "key": { "key2": "value2" # comment }, "key3": "value3" }"#),
        json!({"key": {"key2": "value2"}, "key3": "value3"})
    );
}

// A fenced block wrapped in brackets was read as an array of the fence's pieces.
#[test]
fn fence_inside_brackets_is_unwrapped() {
    assert_eq!(repaired("[```\n{\"a\":\"b\"}\n```]"), json!({"a": "b"}));
    assert_eq!(repaired("[```json\n{\"a\":\"b\"}\n```]"), json!({"a": "b"}));
    assert_eq!(repaired("{```\n{\"a\":\"b\"}\n```}"), json!({"a": "b"}));
}
