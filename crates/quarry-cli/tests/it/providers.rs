//! Provider settings through the real binary: custom headers from `--header` and
//! `QUARRY_HEADERS`, and a provider embedder's base URL on commands without a model.

use crate::common;

use std::path::PathBuf;
use std::process::Output;

use common::{quarry, stderr, stdout};
use quarry_testkit::{Reply, ScriptedServer};

struct Folder(PathBuf);

impl Folder {
    fn new(name: &str) -> Folder {
        let dir =
            std::env::temp_dir().join(format!("quarry-providers-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Folder(dir)
    }

    fn path(&self, name: &str) -> String {
        self.0.join(name).display().to_string()
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn clean(command: &mut std::process::Command) -> &mut std::process::Command {
    command
        .env_remove("QUARRY_MODEL")
        .env_remove("QUARRY_API_KEY")
        .env_remove("QUARRY_HEADERS")
        .env_remove("QUARRY_EMBEDDER_BASE_URL")
}

#[test]
fn headers_from_the_flag_and_the_environment_reach_the_model() {
    let folder = Folder::new("headers");
    let schema = folder.path("schema.json");
    std::fs::write(
        &schema,
        r#"{"type": "object", "properties": {"vendor": {"type": "string"}}}"#,
    )
    .unwrap();
    let server = ScriptedServer::with_script([Reply::tool_call(
        "submit",
        r#"{"vendor": "Acme Supplies Ltd"}"#,
    )]);
    let output = clean(&mut quarry())
        .args([
            "extract",
            "--schema",
            &schema,
            "--text",
            "Invoice from Acme Supplies Ltd.",
        ])
        .args([
            "--model",
            "openai-compatible:m",
            "--base-url",
            &server.base_url(),
        ])
        .args(["--header", "X-Team: extraction", "--header", "X-Trace:abc"])
        .env("QUARRY_HEADERS", "X-Gateway: eu-1\n\nnot a header\n")
        .output()
        .unwrap();

    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stdout(&output).contains("Acme Supplies Ltd"));
    // The malformed line is said, not silently dropped.
    assert!(
        stderr(&output).contains("'not a header'"),
        "{}",
        stderr(&output)
    );
    let headers = &server.recorded()[0].headers;
    assert_eq!(headers["x-team"], "extraction");
    assert_eq!(headers["x-trace"], "abc");
    assert_eq!(headers["x-gateway"], "eu-1");
}

#[test]
fn a_header_without_a_colon_is_a_usage_error() {
    let output = clean(&mut quarry())
        .args([
            "extract", "--schema", "s.json", "--text", "x", "--header", "X-Team",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("Name: value"),
        "{}",
        stderr(&output)
    );
}

fn doc_add(folder: &Folder, extra: &[&str], env_url: Option<&str>) -> Output {
    let file = folder.path("billing.md");
    std::fs::write(&file, "The billing service sends invoices nightly.").unwrap();
    let mut command = quarry();
    clean(&mut command)
        .args(["doc", "add", &file, "--db", &folder.path("quarry.db")])
        .args(["--embedder", "openai-compatible:embedder"])
        .args(extra);
    if let Some(url) = env_url {
        command.env("QUARRY_EMBEDDER_BASE_URL", url);
    }
    command.output().unwrap()
}

#[test]
fn commands_without_a_model_take_the_embedder_base_url() {
    let folder = Folder::new("embedder");
    let server = ScriptedServer::start();

    let refused = doc_add(&folder, &[], None);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        stderr(&refused).contains("--embedder-base-url"),
        "{}",
        stderr(&refused)
    );

    let url = server.base_url();
    let added = doc_add(&folder, &["--embedder-base-url", &url], None);
    assert_eq!(added.status.code(), Some(0), "{}", stderr(&added));
    let from_env = doc_add(&folder, &[], Some(&url));
    assert_eq!(from_env.status.code(), Some(0), "{}", stderr(&from_env));

    let listed = clean(&mut quarry())
        .args([
            "graph",
            "entities",
            "invoices",
            "--db",
            &folder.path("quarry.db"),
        ])
        .args([
            "--embedder",
            "openai-compatible:embedder",
            "--embedder-base-url",
            &url,
        ])
        .output()
        .unwrap();
    assert_eq!(listed.status.code(), Some(0), "{}", stderr(&listed));

    let inputs: Vec<String> = server
        .requests()
        .iter()
        .map(|request| request["input"].to_string())
        .collect();
    let all = inputs.join("\n");
    assert!(
        all.contains("The billing service sends invoices nightly."),
        "{all}"
    );
    assert!(all.contains("invoices"), "{all}");
    assert!(server.recorded().iter().all(|r| r.path == "/v1/embeddings"));
}
