//! The lenient JSON parser.

use pyo3::prelude::*;
use quarry_core::ErrorCode;
use quarry_parse::{RepairOptions, total_cost};
use serde_json::{Value, json};

use crate::errors::raised;

/// `{value, flags, score, errors}` as JSON text, or `null` when the reply holds no JSON.
///
/// With a schema (JSON text), every JSON candidate in the reply is fitted to it and the one
/// needing the fewest, cheapest repairs wins. Without one, the reply is read as one JSON
/// document as json_repair does (prose around it dropped, syntax repaired); `strict` refuses
/// repairs that change meaning (json_repair's `strict`).
#[pyfunction]
#[pyo3(signature = (reply, schema=None, strict=false))]
pub fn parse_json(
    py: Python<'_>,
    reply: String,
    schema: Option<String>,
    strict: bool,
) -> PyResult<String> {
    let schema: Option<Value> = schema
        .map(|text| {
            serde_json::from_str(&text).map_err(|error| {
                raised(
                    ErrorCode::InvalidSchema,
                    format!("the schema is not JSON: {error}"),
                )
            })
        })
        .transpose()?;
    Ok(py.detach(|| match schema {
        Some(schema) => match quarry_parse::parse(&reply, &schema) {
            Some(parsed) => json!({
                "value": parsed.value,
                "flags": parsed.flags,
                "score": parsed.score,
                "errors": parsed.errors,
            })
            .to_string(),
            None => "null".to_owned(),
        },
        None => match quarry_parse::repair(&reply, RepairOptions { strict }) {
            Ok(repaired) => json!({
                "value": repaired.value,
                "score": total_cost(&repaired.flags),
                "flags": repaired.flags,
                "errors": [],
            })
            .to_string(),
            Err(_) => "null".to_owned(),
        },
    }))
}
