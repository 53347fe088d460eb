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
            "schema field 'a': unknown type 'strin'; did you mean 'string'? expected one of string,",
        ),
        (
            r#"{"properties": {"a": {"type": "string", "pattern": "("}}}"#,
            "schema field 'a': not a valid JSON Schema 2020-12 at `/properties/a/pattern`",
        ),
        (
            r#"{"required": ["b"], "properties": {"a": {"type": "string"}}}"#,
            "schema field 'b': listed in `required`",
        ),
        (
            r##"{"properties": {"a": {"$ref": "#/$defs/nope"}}}"##,
            "invalid schema: ",
        ),
        (
            r#"{"properties": {"a": {"$ref": "https://example.com/money.json"}}}"#,
            "invalid schema: ",
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

#[test]
fn remote_references_are_refused_saying_nothing_is_fetched() {
    let error =
        Schema::parse(r#"{"properties": {"a": {"$ref": "https://example.com/money.json"}}}"#)
            .unwrap_err();
    assert!(error.message.contains("fetches nothing"), "{error}");
}

#[test]
fn misspelled_keywords_are_reported_with_the_nearest_spelling() {
    let cases = [
        (
            r#"{"properties": {"name": {"type": "string", "minLenght": 2}}}"#,
            "schema field 'name': unknown keyword 'minLenght'; did you mean 'minLength'?",
        ),
        (
            r#"{"properties": {"tags": {"type": "array", "items": {"type": "string", "uniqueitems": true}}}}"#,
            "schema field 'tags[]': unknown keyword 'uniqueitems'; did you mean 'uniqueItems'?",
        ),
        (
            r#"{"requierd": ["a"], "properties": {"a": {"type": "string"}}}"#,
            "invalid schema: unknown keyword 'requierd'; did you mean 'required'?",
        ),
        (
            r#"{"properties": {"a": {"anyOf": [{"type": "string", "patern": "^a"}, {"type": "integer"}]}}}"#,
            "schema field 'a.anyOf[0]': unknown keyword 'patern'; did you mean 'pattern'?",
        ),
        (
            r#"{"$defs": {"Pet": {"type": "object", "propertys": {}}}, "properties": {"a": {"type": "string"}}}"#,
            "schema field '$defs.Pet': unknown keyword 'propertys'; did you mean 'properties'?",
        ),
        (
            r#"{"properties": {"a": {"type": "string", "colour": "red"}}}"#,
            "schema field 'a': unknown keyword 'colour'; write a JSON Schema 2020-12 keyword, or prefix your own annotation with `x-`",
        ),
    ];
    for (text, expected) in cases {
        let error = Schema::parse(text).unwrap_err().to_string();
        assert_eq!(error, expected, "{text}");
    }
    // Extensions and annotations are not typos.
    Schema::parse(
        r#"{"properties": {"a": {"type": "string", "x-ui": "wide", "examples": ["x"],
            "deprecated": false, "$comment": "kept"}}}"#,
    )
    .unwrap();
}

#[test]
fn unsupported_keywords_are_refused_naming_them() {
    let cases = [
        (
            r#"{"properties": {"a": {"type": "object", "dependencies": {"x": ["y"]}}}}"#,
            "`dependencies` is draft-07",
        ),
        (
            r#"{"properties": {"a": {"type": "array", "items": [{"type": "string"}], "additionalItems": false}}}"#,
            "`additionalItems` is draft-07",
        ),
        (
            r#"{"properties": {"a": {"type": "array", "items": [{"type": "string"}]}}}"#,
            "`items` is an array (the draft-07 tuple form)",
        ),
        (
            r#"{"properties": {"a": {"type": "string", "contentMediaType": "application/json"}}}"#,
            "`contentMediaType` is an annotation JSON Schema 2020-12 does not check",
        ),
        (
            r#"{"properties": {"a": {"type": "string", "format": "binary"}}}"#,
            "format 'binary' is not one Quarry checks; use one of date, date-time, time",
        ),
        (
            r#"{"properties": {"a": {"$ref": "x", "nullable": true}}}"#,
            "`nullable` needs a `type` beside it",
        ),
        (
            r#"{"properties": {"pet": {"oneOf": [{"type": "object", "properties": {"kind": {"const": "cat"}}},
                {"type": "object", "properties": {"bark": {"type": "string"}}}],
                "discriminator": {"propertyName": "kind"}}}}"#,
            "`discriminator` names 'kind', but option 2 does not fix it",
        ),
        (
            r#"{"anyOf": [{"required": ["a"]}, {"required": ["b"]}], "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}"#,
            "`anyOf` on the top-level object is not supported",
        ),
        (
            r##"{"$ref": "#/$defs/Base", "$defs": {"Base": {"type": "object", "minProperties": 1, "properties": {"a": {"type": "string"}}}}}"##,
            "`minProperties` on the top-level object is not supported",
        ),
    ];
    for (text, expected) in cases {
        let error = Schema::parse(text).unwrap_err().to_string();
        assert!(error.contains(expected), "{text}: {error}");
    }
}

#[test]
fn unions_load_as_unions_and_read_sensibly_in_the_prompt() {
    let schema = Schema::parse(
        r##"{"type": "object", "required": ["id", "pet"], "properties": {
            "id": {"anyOf": [{"type": "string"}, {"type": "integer"}], "description": "Order id"},
            "code": {"type": ["string", "integer", "null"]},
            "pet": {"oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}],
                    "discriminator": {"propertyName": "kind"}}},
        "$defs": {
            "Cat": {"title": "Cat", "type": "object", "required": ["kind"], "properties": {
                "kind": {"const": "cat"}, "lives": {"type": "integer"}}},
            "Dog": {"title": "Dog", "type": "object", "required": ["kind"], "properties": {
                "kind": {"const": "dog"}, "bark": {"type": "string"}}}}}"##,
    )
    .unwrap();
    let id = schema.field("id").unwrap();
    assert!(matches!(&id.spec.kind, Kind::Union(options) if options.len() == 2));
    assert_eq!(id.spec.type_label(), "string or integer");
    assert_eq!(
        schema.field("code").unwrap().spec.type_label(),
        "string or integer or null"
    );
    let block = &schema.prompt_block;
    assert!(
        block.contains("- id (string or integer; required): Order id"),
        "{block}"
    );
    assert!(block.contains("- pet (Cat or Dog; required)"), "{block}");
    assert!(
        block.contains("  * Cat (object)\n    - kind (string; required; always \"cat\")"),
        "{block}"
    );
    assert!(block.contains("    - bark (string)"), "{block}");
    // The coercion schema keeps the union, so "42" stays a string where a string is allowed.
    assert_eq!(
        schema.coercion_schema["properties"]["id"]["anyOf"],
        json!([{"type": "string"}, {"type": "integer"}])
    );
}

#[test]
fn refs_keep_their_sibling_description_and_allof_merges() {
    let schema = Schema::parse(
        r##"{"type": "object", "properties": {
            "total": {"$ref": "#/$defs/Money", "description": "Amount due, tax included"},
            "buyer": {"allOf": [{"$ref": "#/$defs/Party"}], "description": "Who pays"},
            "seller": {"allOf": [{"$ref": "#/$defs/Party"},
                                 {"properties": {"vat": {"type": "string"}}, "required": ["vat"]}]},
            "next": {"$ref": "#/$defs/Node"}},
        "$defs": {
            "Money": {"type": "number", "minimum": 0, "description": "A sum of money"},
            "Party": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}},
            "Node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}}}}"##,
    )
    .unwrap();
    let total = &schema.field("total").unwrap().spec;
    assert!(matches!(total.kind, Kind::Number));
    assert_eq!(
        total.description.as_deref(),
        Some("Amount due, tax included")
    );
    assert_eq!(total.minimum.unwrap().value, 0.0);
    assert!(
        schema
            .prompt_block
            .contains("- total (number): Amount due, tax included"),
        "{}",
        schema.prompt_block
    );
    let buyer = &schema.field("buyer").unwrap().spec;
    assert_eq!(buyer.description.as_deref(), Some("Who pays"));
    let Kind::Object(fields) = &schema.field("seller").unwrap().spec.kind else {
        panic!("seller is an object");
    };
    let seller: Vec<(&str, bool)> = fields
        .iter()
        .map(|f| (f.name.as_str(), f.required))
        .collect();
    assert_eq!(seller, [("name", true), ("vat", true)]);
    // A recursive reference stops the IR (the authority still checks every level).
    let Kind::Object(node) = &schema.field("next").unwrap().spec.kind else {
        panic!("next is an object");
    };
    assert_eq!(node[0].name, "child");
    assert!(matches!(node[0].spec.kind, Kind::Any));
}

#[test]
fn yaml_form_takes_every_claimed_format_and_refuses_others() {
    let schema =
        Schema::parse("fields:\n  id: uuid\n  at: time\n  host: {type: hostname}\n").unwrap();
    assert_eq!(schema.field("id").unwrap().spec.format, Some(Format::Uuid));
    assert_eq!(schema.field("at").unwrap().spec.format, Some(Format::Time));
    assert_eq!(
        schema.json_schema()["properties"]["host"]["format"],
        json!("hostname")
    );
    let error = Schema::parse("fields:\n  x: {type: string, format: binary}\n")
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("schema field 'x': format 'binary' is not one Quarry checks"),
        "{error}"
    );
}
