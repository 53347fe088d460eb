//! `--detail`, file and stdin input, size limits and the JSONL batch mode, through the binary.

use crate::common;

use common::{NOW, run, stderr, stdout};
use serde_json::Value;

#[test]
fn detail_reports_code_point_offsets_values_and_types() {
    let text = "Café ☕ — write to Zoë@Example.COM or visit HTTPS://Example.org/a";
    let output = run(
        &[
            "extract", "--target", "email", "--text", text, "--detail", "--now", NOW,
        ],
        "",
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let result: Value = serde_json::from_str(&stdout(&output)).expect("valid JSON");
    let found = &result["matches"][0];
    let start = found["start"].as_u64().unwrap() as usize;
    let end = found["end"].as_u64().unwrap() as usize;
    let by_code_points: String = text.chars().skip(start).take(end - start).collect();
    assert_eq!(by_code_points, "Zoë@Example.COM");
    assert_eq!(found["text"], "Zoë@Example.COM");
    assert_eq!(found["value"], "Zoë@example.com");
    assert_eq!(found["type"], "email");
    assert_eq!(result["email"], "Zoë@Example.COM");
}

#[test]
fn file_and_stdin_inputs_give_the_same_answer_as_text() {
    let dir = std::env::temp_dir().join(format!("quarry-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("input.txt");
    std::fs::write(&path, "Contact: hello@agent.rs").unwrap();
    let from_file = run(
        &[
            "extract",
            "--target",
            "email",
            "--file",
            path.to_str().unwrap(),
        ],
        "",
    );
    let from_stdin = run(&["extract", "--target", "email"], "Contact: hello@agent.rs");
    assert_eq!(stdout(&from_file), "{\"email\": \"hello@agent.rs\"}\n");
    assert_eq!(stdout(&from_stdin), stdout(&from_file));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unreadable_invalid_and_oversize_inputs_name_the_problem() {
    let missing = run(
        &[
            "extract",
            "--target",
            "email",
            "--file",
            "/no/such/file.txt",
        ],
        "",
    );
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing).starts_with("Error: UnreadableInput - cannot read '/no/such/file.txt'"),
        "{}",
        stderr(&missing)
    );

    let dir = std::env::temp_dir().join(format!("quarry-cli-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let latin1 = dir.join("latin1.txt");
    std::fs::write(&latin1, b"caf\xe9 hello@agent.rs").unwrap();
    let invalid = run(
        &[
            "extract",
            "--target",
            "email",
            "--file",
            latin1.to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(invalid.status.code(), Some(1));
    assert!(
        stderr(&invalid).contains("InvalidUtf8"),
        "{}",
        stderr(&invalid)
    );
    assert!(
        stderr(&invalid).contains("offset 3"),
        "{}",
        stderr(&invalid)
    );

    let big = run(
        &["extract", "--target", "email", "--max-bytes", "10"],
        "hello@agent.rs and more",
    );
    assert_eq!(big.status.code(), Some(1));
    assert!(
        stderr(&big).starts_with("Error: InputTooLarge - "),
        "{}",
        stderr(&big)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn jsonl_answers_every_line_in_order_and_isolates_bad_lines() {
    let input = concat!(
        "{\"text\": \"mail hello@agent.rs\"}\n",
        "this is not json\n",
        "{\"text\": \"\"}\n",
        "{\"text\": \"see https://agent.rs\", \"target\": \"url\"}\n",
        "{\"text\": \"x\", \"target\": \"fax\"}\n",
        "{\"text\": \"due tomorrow\", \"target\": \"date\", \"now\": \"2024-02-28T09:00:00Z\"}\n",
    );
    let output = run(&["extract", "--target", "email", "--jsonl"], input);
    assert!(output.status.success(), "{}", stderr(&output));
    let lines: Vec<Value> = stdout(&output)
        .lines()
        .map(|line| serde_json::from_str(line).expect("each output line is JSON"))
        .collect();
    assert_eq!(lines.len(), 6);
    assert_eq!(lines[0], serde_json::json!({"email": "hello@agent.rs"}));
    assert_eq!(lines[1]["error"], "MalformedRequest");
    assert_eq!(lines[1]["line"], 2);
    assert_eq!(lines[2]["error"], "EmptyInput");
    assert_eq!(lines[3], serde_json::json!({"url": "https://agent.rs"}));
    assert_eq!(lines[4]["error"], "InvalidTarget");
    assert_eq!(lines[5], serde_json::json!({"date": "2024-02-29"}));
    assert!(stderr(&output).contains("6 lines read, 3 answered with an error object"));
}

#[test]
fn jsonl_exits_non_zero_only_when_every_line_failed() {
    let all_bad = run(
        &["extract", "--target", "email", "--jsonl"],
        "not json\n{\"text\": \"x\", \"target\": \"fax\"}\n",
    );
    assert_eq!(all_bad.status.code(), Some(1), "{}", stderr(&all_bad));
    assert_eq!(
        stdout(&all_bad).lines().count(),
        2,
        "every line is still answered"
    );
    assert!(stderr(&all_bad).contains("2 lines read, 2 answered with an error object"));

    let empty = run(&["extract", "--target", "email", "--jsonl"], "");
    assert!(empty.status.success(), "{}", stderr(&empty));
}
