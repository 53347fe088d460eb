//! The work behind each export, in plain Rust (no JavaScript types), so it runs and is tested
//! natively too: requests parsed and answered by the same library functions the CLI and the HTTP
//! host call.

use quarry_core::Target;
use quarry_core::json::to_spaced_string;
use quarry_detect::skill::{self, CheckInput, SkillDefaults, SkillInput};
use quarry_parse::RepairOptions;
use serde_json::{Value, json};

use crate::failure::Failure;

/// The extract skill on one JSON request; `default_now` is the reference time when the request
/// names none.
pub fn extract(request: &str, default_now: &str) -> Result<String, Failure> {
    let input = SkillInput::from_json(request.as_bytes())?;
    let defaults = SkillDefaults::new(skill::parse_now(default_now)?);
    Ok(to_spaced_string(&skill::run(&input, &defaults)?))
}

/// The guardrail's verdict on one JSON request `{"text", "target", "output"}`; the target is
/// checked before anything else, as in the other hosts.
pub fn check(request: &str) -> Result<String, Failure> {
    let input = CheckInput::from_json(request.as_bytes())?;
    let target: Target = input.target.parse()?;
    let verdict = skill::check(
        &input.text,
        target,
        &input.output,
        skill::DEFAULT_MAX_INPUT_BYTES,
    )?;
    Ok(to_spaced_string(&verdict))
}

/// The best reading of `raw` against the JSON Schema text `schema`, or `null`.
pub fn parse(raw: &str, schema: &str) -> Result<String, Failure> {
    let schema: Value = serde_json::from_str(schema).map_err(|e| Failure::bad_schema(&e))?;
    Ok(to_spaced_string(&quarry_parse::parse(raw, &schema)))
}

/// `raw` read as one JSON document, with the repairs it needed.
pub fn repair(raw: &str, strict: bool) -> Result<String, Failure> {
    let repaired =
        quarry_parse::repair(raw, RepairOptions { strict }).map_err(|e| Failure::unparsable(&e))?;
    Ok(to_spaced_string(
        &json!({"value": repaired.value, "flags": repaired.flags}),
    ))
}

/// Whether `target` names `entity` or `name`, whose detectors read the entity data.
pub fn needs_entity_data(target: &str) -> bool {
    matches!(target.parse(), Ok(Target::Entity | Target::Name))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: &str = "2024-01-10T12:00:00+01:00";

    fn failure(result: Result<String, Failure>) -> (&'static str, String) {
        let failure = result.unwrap_err();
        (failure.error, failure.message)
    }

    #[test]
    fn extract_answers_the_contracts_json() {
        let request = r#"{"text": "For support, email us at support@agent.rs or sales@agent.rs", "target": "email"}"#;
        assert_eq!(
            extract(request, NOW).unwrap(),
            r#"{"email": ["support@agent.rs", "sales@agent.rs"]}"#
        );
    }

    #[test]
    fn relative_dates_use_the_pages_clock_unless_the_request_names_a_time() {
        let request =
            |now: &str| format!(r#"{{"text": "see you tomorrow", "target": "date"{now}}}"#);
        assert_eq!(
            extract(&request(""), NOW).unwrap(),
            r#"{"date": "2024-01-11"}"#
        );
        let named = request(r#", "now": "2030-06-01T08:00:00Z""#);
        assert_eq!(extract(&named, NOW).unwrap(), r#"{"date": "2030-06-02"}"#);
    }

    #[test]
    fn failures_carry_the_contract_code_and_message() {
        let unknown = r#"{"text": "hello@agent.rs", "target": "fax"}"#;
        assert_eq!(
            failure(extract(unknown, NOW)),
            ("InvalidTarget", "unknown target 'fax'".to_owned())
        );
        let empty = r#"{"text": "  ", "target": "email"}"#;
        assert_eq!(failure(extract(empty, NOW)).0, "EmptyInput");
        assert_eq!(failure(extract("[1]", NOW)).0, "MalformedRequest");
    }

    #[test]
    fn only_entity_and_name_need_the_entity_data() {
        // That they fail with EntityDataNotLoaded until it is loaded is tested on the built module
        // (packages/quarry/test/entity-data.test.mjs): a workspace build turns quarry-detect's
        // embedded-entity-data feature on for every crate, this one included.
        assert!(needs_entity_data(" Entity ") && needs_entity_data("name"));
        assert!(!needs_entity_data("email") && !needs_entity_data("fax"));
    }

    #[test]
    fn check_rejects_a_hallucinated_value_with_the_contracts_reason() {
        let request = json!({"text": "Contact us anytime", "target": "email",
            "output": r#"{"email": "contact@example.com"}"#});
        let verdict: Value = serde_json::from_str(&check(&request.to_string()).unwrap()).unwrap();
        assert_eq!(verdict["verdict"], "rejected");
        assert_eq!(
            verdict["reasons"][0]["message"],
            "contact@example.com does not appear in source text - hallucination detected"
        );
        let bad_target = json!({"text": "x", "target": "fax", "output": "{}"}).to_string();
        assert_eq!(failure(check(&bad_target)).0, "InvalidTarget");
        assert_eq!(failure(check(r#"{"text": "x"}"#)).0, "MalformedRequest");
    }

    #[test]
    fn parse_and_repair_report_their_flags() {
        let parsed: Value = serde_json::from_str(
            &parse(
                "Sure! {'total': '12',}",
                r#"{"type": "object", "properties": {"total": {"type": "number"}}}"#,
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(parsed["value"], json!({"total": 12}));
        let flags = parsed["flags"].as_array().unwrap();
        assert!(flags.contains(&json!("single_quotes")), "{flags:?}");
        assert_eq!(parse("   ", "{}").unwrap(), "null");
        assert_eq!(failure(parse("{}", "{not json")).0, "MalformedRequest");

        let repaired: Value =
            serde_json::from_str(&repair("{a: 1, b: True,}", false).unwrap()).unwrap();
        assert_eq!(repaired["value"], json!({"a": 1, "b": true}));
        // One flag per repair made: two unquoted keys.
        assert_eq!(
            repaired["flags"],
            json!([
                "unquoted_key",
                "unquoted_key",
                "python_literal",
                "trailing_comma"
            ])
        );
        assert_eq!(failure(repair("{\"a\": 1", true)).0, "MalformedOutput");
    }
}
