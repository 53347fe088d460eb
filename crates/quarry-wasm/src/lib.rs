//! The browser host: the `extract` skill, the output guardrail and the lenient JSON parser as a
//! WebAssembly module for JavaScript (`packages/quarry/` wraps it in the package users import).
//!
//! Every export takes and returns JSON text, and the package's wrapper calls `JSON.parse`: one
//! string each way is cheaper across the boundary than building JavaScript objects field by field
//! from Rust, and keeps this crate free of `js-sys`. The answers are the CLI's and the HTTP
//! host's, byte for byte, because the work is done by the same functions
//! ([`quarry_detect::skill`], [`quarry_parse`]).
//!
//! A failure is thrown as a string holding `{"error": "<Code>", "message": "…"}` (the HTTP host's
//! error shape); the wrapper turns it into a `SkillError`.
//!
//! **Architecture Invariant:** no IO and no clock: the wrapper passes the reference time and the
//! entity data's bytes in.

mod failure;
pub mod requests;

use wasm_bindgen::prelude::*;

use failure::{Failure, thrown};

/// `invokeSkill('extract', request)`: runs the skill on one request (a JSON object with `text`,
/// `target`, and optional `now`, `region`, `detail`) and returns the contract's JSON. `default_now`
/// (RFC 3339) is the reference time when the request names none: the page's clock.
#[wasm_bindgen(js_name = extractJson)]
pub fn extract_json(request: &str, default_now: &str) -> Result<String, JsValue> {
    requests::extract(request, default_now).map_err(thrown)
}

/// The output guardrail on one request (`{"text", "target", "output"}`, as `POST /skill/check`):
/// the verdict as JSON, accepted or rejected; a bad request fails.
#[wasm_bindgen(js_name = checkJson)]
pub fn check_json(request: &str) -> Result<String, JsValue> {
    requests::check(request).map_err(thrown)
}

/// The lenient parser: the best reading of `raw` as a value of `schema` (JSON text; `{}` accepts
/// any value) as `{"value", "flags", "score", "errors"}`, or `null` when `raw` holds no JSON.
#[wasm_bindgen(js_name = parseJson)]
pub fn parse_json(raw: &str, schema: &str) -> Result<String, JsValue> {
    requests::parse(raw, schema).map_err(thrown)
}

/// Reads `raw` as one JSON document, repairing what models break: `{"value", "flags"}`. With
/// `strict`, a repair that needs a guess fails instead.
#[wasm_bindgen(js_name = repairJson)]
pub fn repair_json(raw: &str, strict: bool) -> Result<String, JsValue> {
    requests::repair(raw, strict).map_err(thrown)
}

/// Installs the entity data (the package's `entity_data.bin`) that `entity` and `name` need.
#[wasm_bindgen(js_name = loadEntityData)]
pub fn load_entity_data(bytes: Vec<u8>) -> Result<(), JsValue> {
    quarry_detect::entity::load_data(bytes).map_err(|error| thrown(Failure::entity_data(&error)))
}

/// Whether the entity data is installed.
#[wasm_bindgen(js_name = entityDataLoaded)]
pub fn entity_data_loaded() -> bool {
    quarry_detect::entity::data_loaded()
}

/// Whether a request for `target` needs the entity data (so the wrapper can load it first).
/// Unknown targets need nothing: the skill rejects them itself.
#[wasm_bindgen(js_name = needsEntityData)]
pub fn needs_entity_data(target: &str) -> bool {
    requests::needs_entity_data(target)
}
