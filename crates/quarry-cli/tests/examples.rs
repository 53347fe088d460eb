//! The files under `examples/` that README shows load as documented, so the documented formats
//! of `quarry.yaml` and of `--graph` files cannot drift from what the binary accepts
//! (`examples/quarry.toml` is loaded by `tests/config.rs`).

mod common;

use common::Sandbox;
use serde_json::Value;

fn example(name: &str) -> String {
    format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_example_entity_types_load() {
    let sandbox = Sandbox::new("example-types");
    sandbox.quarry_ok(&["type", "load", &example("quarry.yaml")]);
    let listed: Value =
        serde_json::from_str(&sandbox.quarry_ok(&["type", "list", "--json"])).unwrap();
    let company = &listed[0];
    assert_eq!(company["slug"], "company", "{listed}");
    let fields: Vec<&str> = company["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|field| field["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        fields,
        [
            "ceo",
            "headquarters",
            "founded",
            "size_class",
            "board_approved",
            "subsidiaries"
        ]
    );
    let size_class = &company["fields"][3];
    assert_eq!(size_class["derived"], true, "{size_class}");
    assert_eq!(size_class["derived_from"], serde_json::json!(["founded"]));
    assert_eq!(size_class["depends_on"], serde_json::json!(["founded"]));
}

#[test]
fn the_example_graph_file_is_stored_without_a_model() {
    let sandbox = Sandbox::new("example-graph");
    sandbox.quarry_ok(&[
        "episode",
        "add",
        "--user",
        "Alice joined Acme Corp",
        "--assistant",
        "Congrats!",
        "--graph",
        &example("graph.json"),
    ]);
    let found: Value =
        serde_json::from_str(&sandbox.quarry_ok(&["graph", "entities", "--json"])).unwrap();
    let text = found.to_string();
    assert!(
        text.contains("Alice") && text.contains("Acme Corp"),
        "{text}"
    );
}
