//! Puts the commit into `quarry --version`: `QUARRY_VERSION` is the package version followed by
//! the short commit hash when the source is a Git checkout with `git` installed, and the package
//! version alone otherwise (e.g. built from a source tarball).

use std::path::Path;
use std::process::Command;

fn main() {
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let full = match git(&["rev-parse", "--short", "HEAD"]) {
        Some(commit) => format!("{version} ({commit})"),
        None => version,
    };
    println!("cargo:rustc-env=QUARRY_VERSION={full}");
    println!("cargo:rerun-if-env-changed=GIT_DIR");
    // Rebuild when HEAD moves: HEAD itself (a checkout) and the branch it points at (a commit).
    for path in ["HEAD", "packed-refs"] {
        watch(git(&["rev-parse", "--git-path", path]));
    }
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watch(git(&["rev-parse", "--git-path", &branch]));
    }
}

/// The trimmed output of a successful `git ARGS`, or `None` (no git, not a checkout).
fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    let text = text.trim();
    (output.status.success() && !text.is_empty()).then(|| text.to_owned())
}

fn watch(path: Option<String>) {
    if let Some(path) = path.filter(|path| Path::new(path).exists()) {
        println!("cargo:rerun-if-changed={path}");
    }
}
