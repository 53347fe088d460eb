//! The files under `examples/` that README shows load as documented, so the documented formats
//! of `quarry.yaml` and of `--graph` files cannot drift from what the binary accepts
//! (`examples/quarry.toml` is loaded by `tests/it/config.rs`).

use crate::common;

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

#[test]
fn an_entity_type_in_the_references_field_config_shape_loads() {
    let sandbox = Sandbox::new("example-reference-type");
    sandbox.quarry_ok(&["type", "load", &example("reference-entity-type.json")]);
    let listed: Value =
        serde_json::from_str(&sandbox.quarry_ok(&["type", "list", "--json"])).unwrap();
    let company = &listed[0];
    assert_eq!(company["default_agent"], "ollama:qwen2.5:3b", "{company:#}");
    let ceo = &company["fields"][0];
    assert_eq!(ceo["agent"], "openai:gpt-4o-mini", "{ceo:#}");
    assert_eq!(ceo["display_type"], "text");
    assert_eq!(ceo["required"], true);
    assert_eq!(ceo["requires_approval"], true);
    assert_eq!(ceo["max_steps"], 4);
    assert_eq!(
        ceo["sources"],
        serde_json::json!(["linked-documents", "all-documents"])
    );
    let revenue = &company["fields"][1];
    assert_eq!(revenue["depends_on"], serde_json::json!(["ceo"]));
    assert_eq!(revenue["display_type"], "currency");
    assert_eq!(revenue["consensus"]["agents"][1], "openai:gpt-4o-mini");
    assert_eq!(company["fields"][2]["human_input"], true);
    let connection = &company["fields"][3]["connection"];
    assert_eq!(connection["entity_type"], "company");
    assert_eq!(connection["cascade"]["title_field"], "name");

    // What it cannot take is named: actions, a key given both ways, an unknown display type.
    let file = sandbox.dir.join("bad.json");
    for (field, message) in [
        (
            serde_json::json!({"name": "a", "actions": [{"on": "approved", "webhook": "ftp://x"}]}),
            "action webhook 'ftp://x' is not an http(s) URL",
        ),
        (
            serde_json::json!({"name": "a", "maxSteps": 2, "extraction": {"maxSteps": 3}}),
            "`max_steps` is given both in `extraction` and beside it",
        ),
        (
            serde_json::json!({"name": "a", "displayType": "sparkline"}),
            "sparkline",
        ),
    ] {
        std::fs::write(
            &file,
            serde_json::json!({"slug": "bad", "fields": [field]}).to_string(),
        )
        .unwrap();
        let output = sandbox.quarry(&["type", "load", file.to_str().unwrap()]);
        assert_eq!(output.status.code(), Some(1));
        let error = common::stderr(&output);
        assert!(error.contains(message), "{error}");
    }
}
