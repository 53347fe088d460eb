//! `quarry.toml`: found in the working directory or the user's config dir, below flags and
//! environment variables, and strict about its keys.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{quarry, stderr, stdout};
use quarry_testkit::{Reply, ScriptedServer};
use serde_json::Value;

/// A temporary working directory (removed on drop).
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let dir = std::env::temp_dir().join(format!("quarry-config-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `quarry ARGS` run in `cwd`, with no settings from the calling environment.
fn quarry_in(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = quarry();
    command.current_dir(cwd).args(args);
    for name in [
        "QUARRY_MODEL",
        "QUARRY_DB",
        "QUARRY_PROJECT",
        "QUARRY_API_KEY",
        "QUARRY_HEADERS",
    ] {
        command.env_remove(name);
    }
    command.envs(env.iter().copied());
    command.output().expect("quarry runs")
}

fn titles(output: &Output) -> Vec<String> {
    assert!(output.status.success(), "{}", stderr(output));
    let listed: Value = serde_json::from_str(&stdout(output)).unwrap();
    listed
        .as_array()
        .unwrap()
        .iter()
        .map(|entity| entity["title"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_working_directorys_file_sets_the_model_base_url_and_headers() {
    let dir = Dir::new("model");
    let server = ScriptedServer::with_script([Reply::tool_call("submit", r#"{"vendor": "Acme"}"#)]);
    dir.write(
        "quarry.toml",
        &format!(
            "model = \"openai-compatible:from-file\"\nbase-url = \"{}\"\n[headers]\nX-Team = \"research\"\n",
            server.base_url()
        ),
    );
    dir.write(
        "s.json",
        r#"{"type": "object", "properties": {"vendor": {"type": "string"}}}"#,
    );
    let output = quarry_in(
        &dir.0,
        &[
            "extract",
            "--schema",
            "s.json",
            "--text",
            "Invoice from Acme.",
        ],
        &[],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("Acme"), "{}", stdout(&output));
    let request = &server.recorded()[0];
    assert_eq!(request.body["model"], "from-file");
    assert_eq!(
        request.headers.get("x-team").map(String::as_str),
        Some("research")
    );
}

#[test]
fn flag_beats_environment_beats_file_beats_default() {
    let dir = Dir::new("precedence");
    dir.write("quarry.toml", "db = \"from-file.db\"\nproject = \"file\"\n");
    let add = |project: &[&str], env: &[(&str, &str)], title: &str| {
        let mut args = vec!["entity", "add", "--type", "company", "--title", title];
        args.extend_from_slice(project);
        quarry_in(&dir.0, &args, env)
    };
    // Entities need a type: load one into each project used below.
    dir.write(
        "types.yaml",
        "entity_types:\n  - slug: company\n    fields:\n      - {name: ceo}\n",
    );
    for project in ["file", "env", "flag"] {
        let output = quarry_in(
            &dir.0,
            &["type", "load", "types.yaml", "--project", project],
            &[],
        );
        assert!(output.status.success(), "{}", stderr(&output));
    }
    assert!(add(&[], &[], "in-file").status.success());
    assert!(
        add(&[], &[("QUARRY_PROJECT", "env")], "in-env")
            .status
            .success()
    );
    assert!(
        add(
            &["--project", "flag"],
            &[("QUARRY_PROJECT", "env")],
            "in-flag"
        )
        .status
        .success()
    );
    assert!(dir.0.join("from-file.db").exists(), "the file's db is used");
    let list = |project: &str| {
        titles(&quarry_in(
            &dir.0,
            &["entity", "list", "--json", "--project", project],
            &[],
        ))
    };
    assert_eq!(list("file"), ["in-file"]);
    assert_eq!(list("env"), ["in-env"]);
    assert_eq!(list("flag"), ["in-flag"]);
}

#[test]
fn the_user_config_dir_is_read_when_the_working_directory_has_none() {
    let dir = Dir::new("xdg");
    dir.write("xdg/quarry/quarry.toml", "db = \"xdg.db\"\n");
    let work = dir.write("work/.keep", "");
    let xdg = dir.0.join("xdg").display().to_string();
    let output = quarry_in(
        work.parent().unwrap(),
        &["type", "list"],
        &[("XDG_CONFIG_HOME", &xdg)],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        dir.0.join("work/xdg.db").exists(),
        "the user's file was read"
    );
}

#[test]
fn an_unknown_key_is_an_error_naming_the_key_and_the_file() {
    let dir = Dir::new("unknown");
    let path = dir.write("quarry.toml", "project = \"p\"\nmodle = \"ollama:m\"\n");
    let output = quarry_in(&dir.0, &["type", "list"], &[]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(message.starts_with("Error: InvalidConfig - "), "{message}");
    assert!(message.contains("`modle`"), "{message}");
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(!dir.0.join("quarry.db").exists(), "nothing ran");
}

#[test]
fn the_example_file_loads() {
    let dir = Dir::new("example");
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/quarry.toml");
    std::fs::copy(example, dir.0.join("quarry.toml")).unwrap();
    let output = quarry_in(&dir.0, &["type", "list", "--json"], &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(dir.0.join("quarry.db").exists());
}
