use serde_json::json;

use super::*;

#[test]
fn json_schema_subset_loads_into_the_ir() {
    let schema = Schema::parse(
        r##"{"title": "invoice", "type": "object", "required": ["id", "total"],
        "$defs": {"money": {"type": "number", "minimum": 0}},
        "properties": {
            "id": {"type": "string", "pattern": "^INV", "description": "Invoice number"},
            "total": {"$ref": "#/$defs/money"},
            "note": {"type": ["string", "null"], "x-grounding": "none"},
            "due": {"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]},
            "lines": {"type": "array", "items": {"type": "object",
                "properties": {"amount": {"type": "number"}}}}}}"##,
    )
    .unwrap();
    assert_eq!(schema.name, "invoice");
    let names: Vec<&str> = schema.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["id", "total", "note", "due", "lines"]);
    let total = schema.field("total").unwrap();
    assert!(total.required && !total.may_be_null());
    assert_eq!(total.spec.minimum.unwrap().value, 0.0);
    let note = schema.field("note").unwrap();
    assert!(note.spec.nullable);
    assert_eq!(note.spec.grounding, GroundingPolicy::None);
    let due = schema.field("due").unwrap();
    assert_eq!(due.spec.format, Some(Format::Date));
    assert!(due.spec.nullable);
    // Sent to the model verbatim.
    assert_eq!(schema.json_schema()["$defs"]["money"]["minimum"], json!(0));
    assert!(
        schema
            .prompt_block
            .contains("- id (string; required): Invoice number")
    );
}

#[test]
fn quarry_yaml_form_loads_and_renders_json_schema() {
    let schema = Schema::parse(
        "name: invoice\nfields:\n  id: {type: string, required: true}\n  issued: date\n  \
         status: {enum: [open, closed]}\n  summary: {type: text, x-grounding: none}\n  \
         lines:\n    type: list\n    items:\n      fields:\n        amount: {type: number, min_length: 1}\n",
    );
    // `min_length` on a number is accepted (it is simply never checked) ...
    let schema = schema.unwrap();
    let json = schema.json_schema();
    assert_eq!(json["required"], json!(["id"]));
    assert_eq!(
        json["properties"]["issued"]["type"],
        json!(["string", "null"])
    );
    assert_eq!(json["properties"]["issued"]["format"], json!("date"));
    assert_eq!(
        json["properties"]["status"]["enum"],
        json!(["open", "closed", null])
    );
    assert_eq!(json["properties"]["summary"]["x-grounding"], json!("none"));
    assert_eq!(
        json["properties"]["lines"]["items"]["properties"]["amount"]["type"],
        json!(["number", "null"])
    );
}

#[test]
fn bad_schemas_name_the_field() {
    let cases = [
        (
            r#"{"properties": {"a": {"type": "strin"}}}"#,
            "schema field 'a': unknown type 'strin'",
        ),
        (
            r#"{"properties": {"a": {"type": "string", "pattern": "("}}}"#,
            "schema field 'a': `pattern` is not a valid",
        ),
        (
            r#"{"properties": {"a": {"oneOf": [{"type": "string"}, {"type": "number"}]}}}"#,
            "schema field 'a': `oneOf` with several",
        ),
        (
            r#"{"required": ["b"], "properties": {"a": {"type": "string"}}}"#,
            "schema field 'b': listed in `required`",
        ),
        (
            r##"{"properties": {"a": {"$ref": "#/$defs/nope"}}}"##,
            "schema field 'a': `$ref` '#/$defs/nope' points at nothing",
        ),
        (
            "fields:\n  total: {type: number, requird: true}\n",
            "schema field 'total': unknown key 'requird'",
        ),
        (
            "fields:\n  lines: {type: list}\n",
            "schema field 'lines': a list needs `items`",
        ),
        (
            "fields:\n  x: {type: string, x-grounding: maybe}\n",
            "schema field 'x': x-grounding 'maybe' is unknown",
        ),
        (
            "fields: {}\n",
            "invalid schema: the schema declares no fields",
        ),
        ("{not json", "invalid schema: not valid JSON"),
    ];
    for (text, expected) in cases {
        let error = Schema::parse(text).unwrap_err().to_string();
        assert!(error.starts_with(expected), "{text}: {error}");
    }
}
