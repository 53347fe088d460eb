//! What users see of JSON Schema validation: Pydantic-generated schemas load and validate, union
//! values pass or come back with per-field feedback, keywords that used to be ignored are
//! enforced, and lenient coercion leaves a union's value alone. Everything goes through the entry
//! points the agent uses: `Schema::parse`, `repair::read_extraction` and `validate::validate`.

use quarry_agent::Schema;
use quarry_agent::repair::read_extraction;
use quarry_agent::validate::{Violation, ViolationKind, validate};
use serde_json::{Value, json};

fn load(name: &str) -> Schema {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    Schema::parse(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn found(violations: &[Violation]) -> Vec<(&str, ViolationKind)> {
    violations
        .iter()
        .map(|v| (v.path.as_str(), v.kind))
        .collect()
}

fn message_at<'v>(violations: &'v [Violation], path: &str) -> &'v str {
    violations
        .iter()
        .find(|v| v.path == path)
        .map(|v| v.message.as_str())
        .unwrap_or_else(|| panic!("no violation at {path}: {violations:?}"))
}

fn good_order() -> Value {
    json!({"order_id": 1042, "customer_email": "ana@example.com",
        "placed_at": "2024-03-01T09:30:00Z", "tracking": null, "color": "red",
        "pet": {"pet_type": "cat", "lives": 7},
        "lines": [{"sku": "ABC-12", "quantity": 2, "price": 9.5}],
        "tags": ["gift", "express"], "website": null})
}

#[test]
fn pydantic_v2_schema_loads_and_a_conforming_order_passes() {
    let schema = load("pydantic/v2_order.json");
    assert_eq!(validate(&schema, &good_order()), vec![]);
    let mut by_string_id = good_order();
    by_string_id["order_id"] = json!("A-7");
    by_string_id["pet"] = json!({"pet_type": "dog", "bark": "woof"});
    assert_eq!(validate(&schema, &by_string_id), vec![]);
}

#[test]
fn pydantic_v2_violations_come_back_per_field() {
    let schema = load("pydantic/v2_order.json");
    let order = json!({"order_id": true, "customer_email": "nobody",
        "placed_at": "2024-03-01 9:30", "tracking": "not-a-uuid", "color": "blue",
        "pet": {"pet_type": "dog", "bark": 3},
        "lines": [{"sku": "abc", "quantity": 0, "price": 1}],
        "tags": ["gift", "gift"], "website": "not a url"});
    let violations = validate(&schema, &order);
    assert_eq!(
        found(&violations),
        vec![
            ("order_id", ViolationKind::Union),
            ("customer_email", ViolationKind::Format),
            ("placed_at", ViolationKind::Format),
            ("tracking", ViolationKind::Union),
            ("color", ViolationKind::Union),
            ("pet", ViolationKind::Union),
            ("lines[0].sku", ViolationKind::Pattern),
            ("lines[0].quantity", ViolationKind::Range),
            ("tags", ViolationKind::Unique),
            ("website", ViolationKind::Union),
        ]
    );
    assert_eq!(
        message_at(&violations, "order_id"),
        "field 'order_id': true fits none of the options (string or integer); the closest, \
         string, fails: expected string, got the boolean true"
    );
    assert_eq!(
        message_at(&violations, "pet"),
        "field 'pet': an object fits none of the options (Cat or Dog); the closest, Dog, \
         fails: at 'pet.bark', expected string, got the number 3"
    );
    assert_eq!(
        message_at(&violations, "placed_at"),
        "field 'placed_at': \"2024-03-01 9:30\" is not a date-time; write it as \
         YYYY-MM-DDTHH:MM:SS with an offset (Z or +01:00)"
    );
    assert_eq!(
        message_at(&violations, "tags"),
        "field 'tags': the items must all be different; remove the repeated ones"
    );
}

#[test]
fn pydantic_v2_required_fields_and_empty_lists() {
    let schema = load("pydantic/v2_order.json");
    let violations = validate(
        &schema,
        &json!({"order_id": null, "customer_email": "a@b.co", "placed_at": "2024-03-01T09:30:00Z",
            "pet": {"pet_type": "cat"}, "lines": []}),
    );
    assert_eq!(
        found(&violations),
        vec![
            ("order_id", ViolationKind::Missing),
            ("pet", ViolationKind::Union),
            ("lines", ViolationKind::Length),
        ]
    );
    assert_eq!(
        message_at(&violations, "order_id"),
        "field 'order_id' is required but has no value; find it in the document"
    );
    assert!(
        message_at(&violations, "pet").contains("the closest, Cat, fails: 'pet.lives' is required"),
        "{violations:?}"
    );
}

#[test]
fn pydantic_v1_schema_keeps_allof_ref_descriptions_and_validates() {
    let schema = load("pydantic/v1_invoice.json");
    let block = schema.prompt_fields();
    assert!(
        block.contains("- buyer (object; required): Who pays the invoice"),
        "{block}"
    );
    assert!(block.contains("  - name (string; required)"), "{block}");
    assert!(
        block.contains("- currency (string; one of \"USD\", \"EUR\"): An enumeration."),
        "{block}"
    );
    assert!(block.contains("- reference (string or integer)"), "{block}");
    let good = json!({"number": "INV-12", "reference": 77, "issued": "2024-02-29",
        "currency": "EUR", "total": 120.5, "buyer": {"name": "Acme", "email": null},
        "lines": [{"description": "Bolts", "amount": 120.5}], "kind": "invoice"});
    assert_eq!(validate(&schema, &good), vec![]);
    let bad = json!({"number": "12", "reference": 1.5, "issued": "2023-02-29",
        "currency": "usd", "total": 10, "buyer": {"email": "x@y.z", "website": "example"},
        "lines": [{"description": "Bolts", "amount": 0}], "kind": "receipt"});
    assert_eq!(
        found(&validate(&schema, &bad)),
        vec![
            ("number", ViolationKind::Pattern),
            ("reference", ViolationKind::Union),
            ("issued", ViolationKind::Format),
            ("currency", ViolationKind::Enum),
            ("buyer.name", ViolationKind::Missing),
            ("buyer.website", ViolationKind::Format),
            ("lines[0].amount", ViolationKind::Range),
            ("kind", ViolationKind::Enum),
        ]
    );
}

/// zod-to-json-schema writes draft-07's `$schema`; the schema is read as 2020-12 all the same
/// (the keywords it uses mean the same in both).
#[test]
fn zod_draft07_schema_loads_and_validates() {
    let schema = load("zod/user_draft07.json");
    let good = json!({"name": "Ana", "age": 31, "role": "admin", "tags": null,
        "contact": "+351 21 000 0000"});
    assert_eq!(validate(&schema, &good), vec![]);
    let bad = json!({"name": "", "age": 0, "role": "root", "contact": "call me"});
    assert_eq!(
        found(&validate(&schema, &bad)),
        vec![
            ("name", ViolationKind::Length),
            ("age", ViolationKind::Range),
            ("role", ViolationKind::Enum),
            ("contact", ViolationKind::Union),
        ]
    );
}

/// Keywords Quarry used to ignore silently, each with a value that passes and one that fails.
#[test]
fn keywords_once_ignored_are_enforced() {
    let cases = [
        (
            json!({"type": "object", "additionalProperties": false,
                "properties": {"a": {"type": "string"}}}),
            json!({"a": "x"}),
            json!({"a": "x", "b": 1}),
            ViolationKind::Unexpected,
        ),
        (
            json!({"type": "array", "uniqueItems": true}),
            json!([1, 2]),
            json!([1, 1]),
            ViolationKind::Unique,
        ),
        (
            json!({"type": "number", "multipleOf": 0.5}),
            json!(2.5),
            json!(2.2),
            ViolationKind::Range,
        ),
        (
            json!({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}],
                "items": false}),
            json!(["a", 1]),
            json!(["a", "b"]),
            ViolationKind::Type,
        ),
        (
            json!({"type": "object", "dependentRequired": {"card": ["expiry"]},
                "properties": {"card": {"type": "string"}, "expiry": {"type": "string"}}}),
            json!({"card": "4111", "expiry": "12/27"}),
            json!({"card": "4111"}),
            ViolationKind::Missing,
        ),
        (
            json!({"type": "object", "properties": {"country": {"type": "string"},
                    "zip": {"type": "string"}},
                "if": {"properties": {"country": {"const": "US"}}},
                "then": {"properties": {"zip": {"pattern": "^[0-9]{5}$"}}}}),
            json!({"country": "US", "zip": "10001"}),
            json!({"country": "US", "zip": "SW1A"}),
            ViolationKind::Pattern,
        ),
        (
            json!({"const": "EUR"}),
            json!("EUR"),
            json!("USD"),
            ViolationKind::Enum,
        ),
        (
            json!({"allOf": [{"type": "string"}, {"maxLength": 3}]}),
            json!("abc"),
            json!("abcd"),
            ViolationKind::Length,
        ),
        (
            json!({"not": {"type": "string"}}),
            json!(3),
            json!("3"),
            ViolationKind::Rule,
        ),
        (
            json!({"type": "array", "contains": {"type": "integer"}, "minContains": 2}),
            json!([1, 2, "x"]),
            json!([1, "x"]),
            ViolationKind::Rule,
        ),
        // ECMA-262 look-ahead and a backreference.
        (
            json!({"type": "string", "pattern": "^(?=.*[0-9])[A-Z0-9]{6}$"}),
            json!("AB12CD"),
            json!("ABCDEF"),
            ViolationKind::Pattern,
        ),
        (
            json!({"type": "string", "pattern": "^(\\w)\\1$"}),
            json!("aa"),
            json!("ab"),
            ViolationKind::Pattern,
        ),
    ];
    for (spec, good, bad, kind) in cases {
        let schema = Schema::from_value(&json!({"type": "object", "required": ["x"],
            "properties": {"x": spec}}))
        .unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert_eq!(
            validate(&schema, &json!({"x": good})),
            vec![],
            "{spec} {good}"
        );
        let violations = validate(&schema, &json!({"x": bad}));
        assert_eq!(
            violations.iter().map(|v| v.kind).collect::<Vec<_>>(),
            vec![kind],
            "{spec} {bad}: {violations:?}"
        );
        assert!(violations[0].path.starts_with('x'), "{violations:?}");
    }
}

#[test]
fn claimed_formats_are_checked() {
    let cases = [
        ("date", "2024-02-29", "2023-02-29"),
        ("time", "14:30:00Z", "14:30"),
        (
            "date-time",
            "2024-02-29T14:30:00+01:00",
            "2024-02-29T14:30:00",
        ),
        ("duration", "P3DT4H", "3 days"),
        ("email", "ana@example.com", "ana@"),
        ("idn-email", "josé@例え.jp", "josé"),
        ("hostname", "mail.example.com", "-bad-.example"),
        ("ipv4", "192.0.2.1", "192.0.2.256"),
        ("ipv6", "2001:db8::1", "2001:db8:::1"),
        ("uri", "https://example.com/a?b=c", "/relative/only"),
        ("uri-reference", "/relative/only", "\\\\share\\file"),
        (
            "uuid",
            "123e4567-e89b-12d3-a456-426614174000",
            "123e4567e89b",
        ),
    ];
    for (format, good, bad) in cases {
        let schema = Schema::from_value(&json!({"type": "object",
            "properties": {"x": {"type": "string", "format": format}}}))
        .unwrap();
        assert_eq!(
            validate(&schema, &json!({"x": good})),
            vec![],
            "{format} {good}"
        );
        let violations = validate(&schema, &json!({"x": bad}));
        assert_eq!(
            found(&violations),
            vec![("x", ViolationKind::Format)],
            "{format} {bad}"
        );
    }
}

/// `null` for a declared property is "no value" (missing when required); under
/// `additionalProperties` it is only a value of the wrong type.
#[test]
fn null_is_missing_only_for_declared_properties() {
    let schema = Schema::from_value(&json!({"type": "object", "properties": {"prices": {
        "type": "object", "required": ["base"],
        "properties": {"base": {"type": "number"}},
        "additionalProperties": {"type": "number"}}}}))
    .unwrap();
    let violations = validate(&schema, &json!({"prices": {"base": null, "extra": null}}));
    assert_eq!(
        found(&violations),
        vec![
            ("prices.base", ViolationKind::Missing),
            ("prices.extra", ViolationKind::Type)
        ]
    );
}

#[test]
fn top_level_dependent_required_names_the_missing_field() {
    let schema = Schema::from_value(&json!({"type": "object",
        "dependentRequired": {"iban": ["bic"]},
        "properties": {"iban": {"type": "string"}, "bic": {"type": "string"}}}))
    .unwrap();
    let violations = validate(
        &schema,
        &json!({"iban": "DE89370400440532013000", "bic": null}),
    );
    assert_eq!(found(&violations), vec![("bic", ViolationKind::Missing)]);
}

/// The lenient parser must not turn `"42"` into 42 where the union allows a string, nor a
/// number into a string where it allows a number; it still converts where only one type fits.
#[test]
fn coercion_keeps_a_union_value_that_already_fits() {
    let schema = Schema::parse(
        r#"{"type": "object", "properties": {
            "id": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "code": {"type": ["integer", "string"]},
            "qty": {"type": "integer"}}}"#,
    )
    .unwrap();
    let read = read_extraction(r#"{"id": "42", "code": 7, "qty": "7"}"#, &schema).unwrap();
    assert_eq!(read.value, json!({"id": "42", "code": 7, "qty": 7}));
    assert_eq!(validate(&schema, &read.value), vec![]);
    let read = read_extraction(r#"{"id": 42, "code": "A7"}"#, &schema).unwrap();
    assert_eq!(read.value["id"], json!(42));
    assert_eq!(read.value["code"], json!("A7"));
}
