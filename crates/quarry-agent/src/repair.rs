//! Reading a submission: the model's tool arguments or plain content, through `quarry-parse`'s
//! lenient parser and schema coercion. This file is the agent's only contact with that crate
//! (the pipeline's field agents read their submissions through it too).

use serde_json::Value;

use crate::schema::Schema;

/// A submission read as JSON and fitted to the schema, with what had to be repaired.
#[derive(Debug, Clone)]
pub struct Repaired {
    pub value: Value,
    /// Repair and coercion flags in snake_case (`extracted_from_prose`, `string_to_number`).
    pub repairs: Vec<String>,
}

/// Reads `raw` as an extraction for `schema`; `Err` says why nothing could be read.
///
/// Coercion misfits are not reported here: the value is kept as it was and validation, which
/// knows the whole schema, names the problem.
pub fn read_extraction(raw: &str, schema: &Schema) -> Result<Repaired, String> {
    if raw.trim().is_empty() {
        return Err("it was empty".to_owned());
    }
    let parsed = quarry_parse::parse(raw, &schema.coercion_schema)
        .ok_or_else(|| "no JSON object found".to_owned())?;
    let repairs = parsed
        .flags
        .iter()
        .filter_map(|flag| match serde_json::to_value(flag) {
            Ok(Value::String(name)) => Some(name),
            _ => None,
        })
        .collect();
    Ok(Repaired {
        value: parsed.value,
        repairs,
    })
}

/// Whether a repair says the model's output was damaged enough to lower confidence. Where the JSON
/// was found (prose, fence), absent or extra properties, and misfits (validation reports those on
/// their own field) do not count.
pub(crate) fn lowers_confidence(repair: &str) -> bool {
    !matches!(
        repair,
        "extracted_from_fence"
            | "extracted_from_prose"
            | "unwrapped_tool_call"
            | "missing_property"
            | "extra_property_dropped"
            | "key_normalized"
            | "trailing_comma"
            | "unfitted"
    )
}
