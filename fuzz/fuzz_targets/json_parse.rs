#![no_main]
//! Candidate finding, repair and schema coercion together (`quarry_parse::parse`), against a
//! schema with the common field types.

use std::sync::LazyLock;

use serde_json::{Value, json};

static SCHEMA: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "total": {"type": "number"},
            "count": {"type": "integer"},
            "paid": {"type": "boolean"},
            "due": {"type": "string", "format": "date"},
            "items": {"type": "array", "items": {"type": "object", "properties": {"sku": {"type": "string"}}}},
            "status": {"enum": ["open", "closed"]}
        },
        "required": ["name"]
    })
});

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = quarry_parse::parse(text, &SCHEMA);
});
