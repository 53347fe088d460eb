//! The MCP server with a real MCP client no one here wrote: the official Python SDK (PyPI `mcp`,
//! pinned in `scripts/mcp.sh`) drives `quarry mcp` over stdio and `/mcp` of `quarry serve` over
//! streamable HTTP (`tests/mcp/client_test.py`): initialize, list tools, every tool with its
//! result and an error case, scope refusal and project isolation over HTTP, and a server without
//! a database (no key, only the tools that need none).
//!
//! The database is seeded through the real binary and the model is a scripted OpenAI-compatible
//! server. Needs the package on `QUARRY_MCP_PYTHONPATH` (or in `target/python-mcp`, where
//! `scripts/mcp.sh` installs it); without it the test is SKIPPED, except in CI (`CI` set), where
//! it fails.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{
    ModelRequest, PythonPackage, Sandbox, SeededKeys, Server, between, model_args,
    search_documents, seed_keys, serve_with_model, stderr, stdout, submit_value,
};
use quarry_testkit::{Reply, Scripted};
use serde_json::{Value, json};

const TYPES: &str = r#"
entity_types:
  - slug: company
    name: Company
    fields:
      - {name: ceo, instructions: "The chief executive's full name", agent: "openai-compatible:m-field", sources: [linked-documents]}
      - {name: headquarters, instructions: "The city of the head office", agent: "openai-compatible:m-field", sources: [linked-documents]}
"#;

const REPORT: &str = "Annual report 2024.\n\nThe company's CEO is Jane Doe. The head office is in \
                      Springfield.";

/// What the scripted field agents answer per field.
const FIELD_VALUES: &[(&str, &str)] = &[("ceo", "Jane Doe"), ("headquarters", "Springfield")];

/// What the scripted schema agent fills: the vendor at once, the total once a person answered.
const VENDOR: &str = "Acme Supplies Ltd";
const TOTAL: f64 = 1200.0;

#[test]
fn a_real_mcp_client_uses_every_tool_over_stdio_and_http() {
    let Some(pythonpath) = mcp_client() else {
        return;
    };
    let sandbox = Sandbox::new("mcp");
    sandbox.model.respond_with(respond);
    let mut fixture = seed(&sandbox);
    let model_args = model_args(&sandbox);
    let server = serve_with_model(&sandbox);
    fixture["url"] = json!(format!("http://{}", server.addr));
    // A server without a database: only the tools that need none, and no key.
    let model_only: Vec<&str> = model_args.iter().map(String::as_str).collect();
    let bare = Server::start(&model_only);
    fixture["bare_url"] = json!(format!("http://{}", bare.addr));
    fixture["binary"] = json!(env!("CARGO_BIN_EXE_quarry"));
    fixture["db"] = json!(sandbox.db());
    fixture["model_args"] = json!(model_args);

    let fixture_path = sandbox.dir.join("fixture.json");
    std::fs::write(&fixture_path, fixture.to_string()).expect("the fixture file is written");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/client_test.py");
    let output = Command::new("python3")
        .arg(&script)
        .env("PYTHONPATH", &pythonpath)
        .env("QUARRY_MCP_FIXTURE", &fixture_path)
        .output()
        .expect("python3 runs");
    let report = format!("{}\n{}", stdout(&output), stderr(&output));
    println!("{report}");
    assert!(
        output.status.success(),
        "the MCP client tests failed:\n{report}"
    );
    drop(server);
    drop(bare);
}

/// The folder holding the `mcp` package, or `None` (after saying so) when it is not installed
/// outside CI.
fn mcp_client() -> Option<PathBuf> {
    PythonPackage {
        name: "Python MCP client (mcp)",
        env: "QUARRY_MCP_PYTHONPATH",
        default_dir: "python-mcp/mcp-2.3.0",
        imports: "import mcp.client.stdio, mcp.client.streamable_http",
        script: "mcp.sh",
    }
    .locate()
}

/// The scripted model: field agents search, then submit `FIELD_VALUES`; the schema agent fills
/// the vendor and, once a person answered its question, the total.
fn respond(request: &Value) -> Scripted {
    let ModelRequest {
        messages,
        system,
        all_text,
    } = ModelRequest::of(request);
    if system.starts_with("You extract one field of one entity.") {
        let field = between(&system, "\nField: ", " ").unwrap_or_default();
        if !messages.iter().any(|m| m["role"] == "tool") {
            return search_documents(&format!("company {field}"));
        }
        let value = FIELD_VALUES
            .iter()
            .find(|(name, _)| *name == field)
            .map(|(_, value)| *value);
        return submit_value(value);
    }
    if all_text.contains("A person answered your clarification question") {
        Reply::tool_call(
            "submit",
            json!({"vendor": VENDOR, "total": TOTAL}).to_string(),
        )
        .into()
    } else {
        Reply::tool_call("submit", json!({"vendor": VENDOR}).to_string()).into()
    }
}

/// Types, one entity with its report per transport (so the two runs do not meet), keys of three
/// kinds, and an entity in another project, all through the real binary.
fn seed(sandbox: &Sandbox) -> Value {
    let types = sandbox.dir.join("types.yaml");
    std::fs::write(&types, TYPES).expect("the types file is written");
    let types = types.display().to_string();
    let report = sandbox.dir.join("report.md");
    std::fs::write(&report, REPORT).expect("the report is written");
    let report = report.display().to_string();
    sandbox.quarry_ok(&["type", "load", &types]);
    let mut entities = serde_json::Map::new();
    for transport in ["stdio", "http"] {
        let entity = sandbox
            .quarry_ok(&[
                "entity",
                "add",
                "--type",
                "company",
                "--title",
                &format!("Acme {transport}"),
            ])
            .trim()
            .to_owned();
        let output = sandbox.quarry(&["doc", "add", &report, "--entity", &entity]);
        assert!(output.status.success(), "doc add: {}", stderr(&output));
        entities.insert(transport.to_owned(), json!(entity));
    }
    let SeededKeys {
        admin,
        reader,
        other,
        other_entity,
    } = seed_keys(sandbox, &types, "Ada Agent");
    json!({
        "entities": entities,
        "other_entity": other_entity,
        "keys": {"admin": admin, "reader": reader, "other": other},
        "values": FIELD_VALUES.iter().map(|(f, v)| (f.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
        "chat": {"vendor": VENDOR, "total": TOTAL},
    })
}
