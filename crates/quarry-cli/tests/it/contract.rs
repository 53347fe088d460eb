//! The extract skill's contract (extract-skill-contract.md §8–9) through the real binary: the
//! seven examples print exactly the shown JSON, and failures print `Error: <Code> - …` with exit 1.

use crate::common;

use common::extract;

/// Example inputs and the exact stdout the contract shows (one line, Python `json.dumps` style).
const CONTRACT_EXAMPLES: &[(&str, &str, &str)] = &[
    (
        "email",
        "For support, email us at support@agent.rs or sales@agent.rs",
        r#"{"email": ["support@agent.rs", "sales@agent.rs"]}"#,
    ),
    (
        "url",
        "Visit https://agent.rs or check https://github.com/hwclass/agent.rs",
        r#"{"url": ["https://agent.rs", "https://github.com/hwclass/agent.rs"]}"#,
    ),
    (
        "date",
        "The meeting is scheduled for January 15, 2024 at 3pm",
        r#"{"date": "2024-01-15"}"#,
    ),
    (
        "entity",
        "John Smith from Anthropic met with Sarah at Google headquarters",
        r#"{"entity": {"people": ["John Smith", "Sarah"], "organizations": ["Anthropic", "Google"], "locations": ["Google headquarters"]}}"#,
    ),
    (
        "name",
        "The report was prepared by Dr. Jane Smith and reviewed by Michael Johnson.",
        r#"{"name": ["Dr. Jane Smith", "Michael Johnson"]}"#,
    ),
    (
        "email",
        "This text contains no email addresses",
        r#"{"email": []}"#,
    ),
    // Example 7: with no model, the deterministic path cannot hallucinate; it finds nothing.
    ("email", "Contact us anytime", r#"{"email": []}"#),
];

#[test]
fn contract_examples_print_exactly_the_shown_json() {
    for (target, text, expected) in CONTRACT_EXAMPLES {
        let (code, stdout, stderr) = extract(target, text);
        assert_eq!(code, 0, "{target} on {text:?} failed: {stderr}");
        assert_eq!(stdout.trim_end(), *expected, "{target} on {text:?}");
        assert!(stderr.is_empty(), "unexpected stderr: {stderr}");
    }
}

#[test]
fn the_cli_host_example_prints_one_email_as_a_string() {
    let (code, stdout, _) = extract("email", "Contact: hello@agent.rs");
    assert_eq!(code, 0);
    assert_eq!(stdout, "{\"email\": \"hello@agent.rs\"}\n");
}

#[test]
fn unknown_target_fails_at_once_with_the_contract_message() {
    let (code, stdout, stderr) = extract("fax", "Contact: hello@agent.rs");
    assert_eq!(code, 1);
    assert!(stdout.is_empty());
    assert_eq!(stderr, "Error: InvalidTarget - unknown target 'fax'\n");
}

#[test]
fn empty_text_is_an_error_not_an_empty_result() {
    for text in ["", "   \n\t"] {
        let (code, stdout, stderr) = extract("email", text);
        assert_eq!(code, 1, "text {text:?}");
        assert!(stdout.is_empty());
        assert!(stderr.starts_with("Error: EmptyInput - "), "{stderr}");
    }
}

#[test]
fn phone_and_ip_targets_normalise_values() {
    let (code, stdout, stderr) = extract("phone", "Call us on (415) 555-2671 today");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim_end(), r#"{"phone": "+14155552671"}"#);
    let (code, stdout, _) = extract(
        "ip",
        "The gateway 192.168.1.1 answers; 999.1.1.1 is no address",
    );
    assert_eq!(code, 0);
    assert_eq!(stdout.trim_end(), r#"{"ip": "192.168.1.1"}"#);
}

#[test]
fn relative_dates_resolve_against_now() {
    // NOW is Wednesday 2024-01-10.
    let (code, stdout, stderr) =
        extract("date", "Let's meet tomorrow, or in 3 days at the latest.");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout.trim_end(),
        r#"{"date": ["2024-01-11", "2024-01-13"]}"#
    );
}

#[test]
fn guardrail_rejects_the_contract_example_7_hallucination() {
    let output = common::run(
        &[
            "check",
            "--target",
            "email",
            "--text",
            "Contact us anytime",
            "--output",
            r#"{"email": "contact@example.com"}"#,
        ],
        "",
    );
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        common::stderr(&output),
        "Error: Hallucination - contact@example.com does not appear in source text - hallucination detected\n"
    );
    let verdict: serde_json::Value = serde_json::from_str(&common::stdout(&output)).unwrap();
    assert_eq!(verdict["verdict"], "rejected");
    assert_eq!(verdict["reasons"][0]["value"], "contact@example.com");
}

#[test]
fn guardrail_accepts_grounded_output_and_reports_its_span() {
    let output = common::run(
        &[
            "check",
            "--target",
            "email",
            "--text",
            "Contact: hello@agent.rs",
            "--output",
            r#"{"email": "hello@agent.rs"}"#,
        ],
        "",
    );
    assert_eq!(output.status.code(), Some(0), "{}", common::stderr(&output));
    let verdict: serde_json::Value = serde_json::from_str(&common::stdout(&output)).unwrap();
    assert_eq!(verdict["verdict"], "accepted");
    assert_eq!(verdict["values"][0]["evidence"]["alignment"]["start"], 9);
    assert_eq!(verdict["values"][0]["evidence"]["alignment"]["end"], 23);
}

#[test]
fn guardrail_rejects_malformed_and_mistyped_output() {
    for (raw, code) in [
        ("Sure! here you go", "MalformedOutput"),
        (r#"{"url": "https://agent.rs"}"#, "SchemaViolation"),
        (r#"{"email": 42}"#, "TypeMismatch"),
    ] {
        let output = common::run(
            &[
                "check",
                "--target",
                "email",
                "--text",
                "mail hello@agent.rs",
                "--output",
                raw,
            ],
            "",
        );
        assert_eq!(output.status.code(), Some(1), "{raw}");
        assert!(
            common::stderr(&output).starts_with(&format!("Error: {code} - ")),
            "{raw}: {}",
            common::stderr(&output)
        );
    }
}
