//! Every command handed an id that names nothing answers `Error: NotFound - …` with exit status
//! 1, the same way over every command (listing commands included); `key create --json` prints
//! JSON.

use crate::common;

use common::{Sandbox, stderr};

#[test]
fn a_missing_id_is_not_found_everywhere() {
    let sandbox = Sandbox::new("not-found");
    let commands: &[&[&str]] = &[
        &["entity", "show", "nope"],
        &["results", "nope"],
        &["history", "nope", "ceo"],
        &["approve", "nope"],
        &["reject", "nope", "--reason", "wrong"],
        &["run", "nope", "--no-wait"],
        &["retry", "nope", "--no-wait"],
        &["episode", "show", "nope"],
        &["graph", "show", "nope"],
        &["graph", "neighbors", "nope"],
        &["key", "revoke", "qk_deadbeef"],
        &["entity", "list", "--type", "nope"],
    ];
    for args in commands {
        let output = sandbox.quarry(args);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).starts_with("Error: NotFound - "),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(output.stdout.is_empty(), "{args:?} printed a result");
    }
}

#[test]
fn key_create_json_prints_the_key_as_json() {
    let sandbox = Sandbox::new("key-json");
    let out = sandbox.quarry_ok(&[
        "key",
        "create",
        "--scopes",
        "entities:read",
        "--name",
        "ann",
        "--json",
    ]);
    let key: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert!(key["key"].as_str().unwrap().starts_with("qk_"), "{key}");
    assert_eq!(key["name"], "ann");
    assert_eq!(key["scopes"], serde_json::json!(["entities:read"]));
    assert!(key.get("secret_hash").is_none());
    let revoked = sandbox.quarry_ok(&["key", "revoke", key["prefix"].as_str().unwrap()]);
    assert!(revoked.contains("revoked"));
}
