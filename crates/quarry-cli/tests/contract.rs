//! The extract skill's contract (extract-skill-contract.md §8–9) through the real binary: the
//! seven examples print exactly the shown JSON, and failures print `Error: <Code> - …` with exit 1.

mod common;

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
    let (code, stdout, _) = extract("ip", "The gateway 192.168.1.1 answers; 999.1.1.1 is no address");
    assert_eq!(code, 0);
    assert_eq!(stdout.trim_end(), r#"{"ip": "192.168.1.1"}"#);
}

#[test]
fn relative_dates_resolve_against_now() {
    // NOW is Wednesday 2024-01-10.
    let (code, stdout, stderr) = extract("date", "Let's meet tomorrow, or in 3 days at the latest.");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim_end(), r#"{"date": ["2024-01-11", "2024-01-13"]}"#);
}
