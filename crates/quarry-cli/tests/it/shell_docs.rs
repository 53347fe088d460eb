//! What `quarry` tells shells and readers about itself: completion scripts, the man page and
//! `--version` with the commit.

use crate::common;

use common::{quarry, stderr, stdout};

fn run(args: &[&str]) -> String {
    let output = quarry().args(args).output().expect("quarry runs");
    assert!(
        output.status.success(),
        "quarry {args:?}: {}",
        stderr(&output)
    );
    stdout(&output)
}

#[test]
fn completion_scripts_name_the_subcommands() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = run(&["completions", shell]);
        for name in ["extract", "entity", "episode", "completions"] {
            assert!(script.contains(name), "{shell} script lacks {name}");
        }
    }
    let output = quarry().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(2),
        "an unknown shell is a usage error"
    );
}

#[test]
fn the_man_page_documents_the_commands() {
    let page = run(&["man"]);
    assert!(
        page.starts_with(".ie") || page.contains(".TH quarry"),
        "{page}"
    );
    for name in ["extract", "entity", "graph", "man"] {
        assert!(page.contains(name), "the page lacks {name}");
    }
    let dir = std::env::temp_dir().join(format!("quarry-man-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    run(&["man", "--dir", dir.to_str().unwrap()]);
    let page =
        std::fs::read_to_string(dir.join("quarry-entity-add.1")).expect("a page per command");
    assert!(page.contains(r"\-\-title"), "{page}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_version_names_the_commit_in_a_checkout() {
    let version = run(&["--version"]);
    let expected = format!("quarry {}", env!("CARGO_PKG_VERSION"));
    assert!(version.starts_with(&expected), "{version}");
    let in_checkout = std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .is_ok_and(|output| output.status.success());
    if in_checkout {
        let commit = version
            .trim()
            .rsplit('(')
            .next()
            .unwrap()
            .trim_end_matches(')');
        assert!(
            commit.len() >= 7 && commit.chars().all(|c| c.is_ascii_hexdigit()),
            "{version}"
        );
    }
}
