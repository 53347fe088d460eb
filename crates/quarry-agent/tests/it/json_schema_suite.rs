//! The official JSON-Schema-Test-Suite (draft 2020-12, vendored under
//! `tests/json-schema-test-suite/` with its MIT licence) run through Quarry's own entry points:
//! every case's schema is loaded with [`Schema::from_value`] as the one field `value` of an
//! extraction schema, and every test's data is checked with [`validate`] as `{"value": data}`.
//! A verdict that differs from the suite's, or a schema Quarry refuses, fails the test unless
//! [`SKIPS`] lists it with the reason; a listed case that now agrees fails it too, so the list
//! stays true.
//!
//! Pass counts per keyword: `cargo test -p quarry-agent --test it json_schema_suite -- --nocapture`.

use std::fmt::Write;

use quarry_agent::Schema;
use quarry_agent::validate::validate;
use serde::Deserialize;
use serde_json::{Value, json};

const SUITE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/json-schema-test-suite/draft2020-12"
);

/// The keywords Quarry claims, as the suite's file names (`optional/format/…` for the formats,
/// whose assertion the suite keeps optional and Quarry turns on).
const CLAIMED: &[&str] = &[
    "additionalProperties",
    "allOf",
    "anchor",
    "anyOf",
    "boolean_schema",
    "const",
    "contains",
    "default",
    "defs",
    "dependentRequired",
    "dependentSchemas",
    "dynamicRef",
    "enum",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "format",
    "if-then-else",
    "infinite-loop-detection",
    "items",
    "maxContains",
    "maxItems",
    "maxLength",
    "maxProperties",
    "maximum",
    "minContains",
    "minItems",
    "minLength",
    "minProperties",
    "minimum",
    "multipleOf",
    "not",
    "oneOf",
    "pattern",
    "patternProperties",
    "prefixItems",
    "properties",
    "propertyNames",
    "ref",
    "required",
    "type",
    "unevaluatedItems",
    "unevaluatedProperties",
    "uniqueItems",
    "optional/ecmascript-regex",
    "optional/format/date",
    "optional/format/date-time",
    "optional/format/time",
    "optional/format/duration",
    "optional/format/email",
    "optional/format/idn-email",
    "optional/format/hostname",
    "optional/format/idn-hostname",
    "optional/format/ipv4",
    "optional/format/ipv6",
    "optional/format/uri",
    "optional/format/uri-reference",
    "optional/format/iri",
    "optional/format/iri-reference",
    "optional/format/uri-template",
    "optional/format/uuid",
    "optional/format/json-pointer",
    "optional/format/relative-json-pointer",
    "optional/format/regex",
];

/// Where Quarry parts from the suite on purpose: (file, case description, test description or
/// `*` for every test of the case, why).
const SKIPS: &[(&str, &str, &str, &str)] = &[
    (
        "dynamicRef",
        "strict-tree schema, guards against misspelled properties",
        "*",
        REMOTE,
    ),
    (
        "dynamicRef",
        "tests for implementation dynamic anchor and reference link",
        "*",
        REMOTE,
    ),
    (
        "dynamicRef",
        "$ref and $dynamicAnchor are independent of order - $defs first",
        "*",
        REMOTE,
    ),
    (
        "dynamicRef",
        "$ref and $dynamicAnchor are independent of order - $ref first",
        "*",
        REMOTE,
    ),
    (
        "dynamicRef",
        "$ref to $dynamicRef finds detached $dynamicAnchor",
        "*",
        REMOTE,
    ),
    (
        "format",
        "email format",
        "invalid email string is only an annotation by default",
        FORMAT_ASSERTED,
    ),
    (
        "format",
        "idn-email format",
        "invalid idn-email string is only an annotation by default",
        FORMAT_ASSERTED,
    ),
    (
        "format",
        "regex format",
        "invalid regex string is only an annotation by default",
        FORMAT_ASSERTED,
    ),
    (
        "format",
        "ipv4 format",
        "invalid ipv4 string is only an annotation by default",
        FORMAT_ASSERTED,
    ),
    (
        "format",
        "ipv6 format",
        "invalid ipv6 string is only an annotation by default",
        FORMAT_ASSERTED,
    ),
    (
        "format",
        "idn-hostname format",
        "invalid idn-hostname string is only an annotation by default",
        FORMAT_ASSERTED,
    ),
    (
        "format",
        "hostname format",
        "invalid hostname string is only an annotation by default",
        FORMAT_ASSERTED,
    ),
    (
        "format",
        "date format",
        "invalid date string is only an annotation by default",
        FORMAT_ASSERTED,
    ),
    (
        "format",
        "date-time format",
        "invalid date-time string is only an annotation by default",
        FORMAT_ASSERTED,
    ),
    (
        "format",
        "time format",
        "invalid time string is only an annotation by default",
        FORMAT_ASSERTED,
    ),
    (
        "format",
        "json-pointer format",
        "invalid json-pointer string is only an annotation by default",
        FORMAT_ASSERTED,
    ),
    (
        "format",
        "relative-json-pointer format",
        "invalid relative-json-pointer string is only an annotation by default",
        FORMAT_ASSERTED,
    ),
    (
        "format",
        "iri format",
        "invalid iri string is only an annotation by default",
        FORMAT_ASSERTED,
    ),
    (
        "format",
        "iri-reference format",
        "invalid iri-reference string is only an annotation by default",
        FORMAT_ASSERTED,
    ),
    (
        "format",
        "uri format",
        "invalid uri string is only an annotation by default",
        FORMAT_ASSERTED,
    ),
    (
        "format",
        "uri-reference format",
        "invalid uri-reference string is only an annotation by default",
        FORMAT_ASSERTED,
    ),
    (
        "format",
        "uri-template format",
        "invalid uri-template string is only an annotation by default",
        FORMAT_ASSERTED,
    ),
    (
        "format",
        "uuid format",
        "invalid uuid string is only an annotation by default",
        FORMAT_ASSERTED,
    ),
    (
        "format",
        "duration format",
        "invalid duration string is only an annotation by default",
        FORMAT_ASSERTED,
    ),
];

/// Why remote references are skipped.
const REMOTE: &str = "the schema refers to http://localhost:1234/…, a remote document: Quarry resolves references inside the schema only and fetches nothing, so it refuses the schema when it is loaded";

/// Why `format.json`'s annotation-only cases are skipped.
const FORMAT_ASSERTED: &str = "Quarry asserts `format` (as the suite's optional/format files and the format-assertion vocabulary do) rather than treating it as an annotation: an invalid date must be sent back to the model, not accepted";

#[derive(Deserialize)]
struct Case {
    description: String,
    schema: Value,
    tests: Vec<Test>,
}

#[derive(Deserialize)]
struct Test {
    description: String,
    data: Value,
    valid: bool,
}

/// The case's schema as the field `value` of an extraction schema. The case keeps its own root
/// (so its `#` and `#/$defs/…` references still mean what they say) as an embedded resource.
fn extraction_schema(case: &Value) -> Value {
    let (reference, embedded) = match case {
        Value::Object(object) => {
            let mut object = object.clone();
            let id = match object.get("$id").and_then(Value::as_str) {
                Some(id) => id.to_owned(),
                None => {
                    object.insert("$id".into(), json!("urn:quarry:suite-case"));
                    "urn:quarry:suite-case".to_owned()
                }
            };
            (json!({"$ref": id}), Some(Value::Object(object)))
        }
        other => (other.clone(), None),
    };
    let mut schema = json!({
        "type": "object",
        "required": ["value"],
        "properties": {"value": reference},
    });
    if let Some(embedded) = embedded {
        schema["$defs"] = json!({"case": embedded});
    }
    schema
}

#[derive(Default)]
struct Tally {
    passed: usize,
    skipped: usize,
    total: usize,
}

#[test]
fn official_suite_cases_of_every_claimed_keyword() {
    let mut report = String::new();
    let mut failures = Vec::new();
    let mut used_skips = vec![false; SKIPS.len()];
    let mut all = Tally::default();
    for keyword in CLAIMED {
        let path = format!("{SUITE}/{keyword}.json");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let cases: Vec<Case> =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut tally = Tally::default();
        for case in &cases {
            let loaded = Schema::from_value(&extraction_schema(&case.schema));
            for test in &case.tests {
                tally.total += 1;
                let outcome = match &loaded {
                    Err(error) => Err(format!("schema refused: {error}")),
                    Ok(schema) => {
                        let violations = validate(schema, &json!({"value": test.data}));
                        if violations.is_empty() == test.valid {
                            Ok(())
                        } else if test.valid {
                            Err(format!("rejected a valid value: {}", violations[0].message))
                        } else {
                            Err("accepted an invalid value".to_owned())
                        }
                    }
                };
                let skip = SKIPS.iter().position(|(file, case_name, test_name, _)| {
                    file == keyword
                        && *case_name == case.description
                        && (*test_name == "*" || *test_name == test.description)
                });
                match (outcome, skip) {
                    (Ok(()), None) => tally.passed += 1,
                    (Ok(()), Some(index)) => {
                        used_skips[index] = true;
                        failures.push(format!(
                            "{keyword} / {} / {}: agrees with the suite now; remove it from SKIPS",
                            case.description, test.description
                        ));
                    }
                    (Err(_), Some(index)) => {
                        used_skips[index] = true;
                        tally.skipped += 1;
                    }
                    (Err(why), None) => failures.push(format!(
                        "{keyword} / {} / {}: {why}",
                        case.description, test.description
                    )),
                }
            }
        }
        let _ = writeln!(
            report,
            "{keyword:<40} {:>4} passed {:>3} skipped {:>4} cases",
            tally.passed, tally.skipped, tally.total
        );
        all.passed += tally.passed;
        all.skipped += tally.skipped;
        all.total += tally.total;
    }
    for (index, used) in used_skips.iter().enumerate() {
        if !used {
            let (file, case, test, _) = SKIPS[index];
            failures.push(format!(
                "SKIPS entry {file} / {case} / {test} matches no test"
            ));
        }
    }
    let _ = writeln!(
        report,
        "{:<40} {:>4} passed {:>3} skipped {:>4} cases",
        "all claimed keywords", all.passed, all.skipped, all.total
    );
    println!("{report}");
    assert!(
        failures.is_empty(),
        "{} disagreement(s) with the suite:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
