//! README stays true: its error-code table is generated from the one table of codes
//! (`quarry-core/src/error_code.rs`), and every environment variable the CLI reads is listed.
//!
//! After adding or changing a code, regenerate the table with
//! `UPDATE_README=1 cargo test -p quarry-cli --test it readme`.

use std::path::PathBuf;

use quarry_core::ErrorCode;

const START: &str = "<!-- error-codes:start (generated: UPDATE_README=1 cargo test -p quarry-cli --test it readme) -->";
const END: &str = "<!-- error-codes:end -->";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).expect("README.md is readable")
}

/// The table README must hold, from `ErrorCode::ALL`.
fn error_code_table() -> String {
    let mut table = String::from("| Code | HTTP | Exit | What to do |\n|---|---:|---:|---|\n");
    for code in ErrorCode::ALL {
        table.push_str(&format!(
            "| `{code}` | {} | {} | {} |\n",
            code.http_status(),
            code.exit_status(),
            code.hint().replace('|', "\\|")
        ));
    }
    table
}

#[test]
fn readme_lists_every_error_code() {
    let text = readme();
    let (Some(start), Some(end)) = (text.find(START), text.find(END)) else {
        panic!("README.md lacks the markers {START} … {END}");
    };
    let generated = format!("{START}\n{}{END}", error_code_table());
    let current = &text[start..end + END.len()];
    if current == generated {
        return;
    }
    if std::env::var_os("UPDATE_README").is_some() {
        let updated = text.replacen(current, &generated, 1);
        std::fs::write(root().join("README.md"), updated).expect("README.md is writable");
        return;
    }
    panic!(
        "README's error-code table is out of date with quarry-core/src/error_code.rs; run \
         UPDATE_README=1 cargo test -p quarry-cli --test it readme"
    );
}

/// Every quoted variable name read through one of the readers the CLI uses.
fn variables_read_in(source: &str, readers: &[&str]) -> Vec<String> {
    let mut names = Vec::new();
    for reader in readers {
        for (at, _) in source.match_indices(reader) {
            let rest = &source[at + reader.len()..];
            let Some(rest) = rest.strip_prefix('"') else {
                continue;
            };
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            if name.len() > 1 && rest[name.len()..].starts_with('"') {
                names.push(name);
            }
        }
    }
    names
}

#[test]
fn readme_lists_every_environment_variable() {
    let mut read = Vec::new();
    let cli = root().join("crates/quarry-cli/src");
    for entry in std::fs::read_dir(&cli).unwrap() {
        let source = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        read.extend(variables_read_in(
            &source,
            &[
                "env(",
                "env = ",
                "var(",
                "var_os(",
                "try_from_env(",
                "non_empty(",
            ],
        ));
    }
    // The providers' key and host variables (`Provider::key_variable`, `host_variable`).
    let providers =
        std::fs::read_to_string(root().join("crates/quarry-llm/src/model_spec.rs")).unwrap();
    read.extend(variables_read_in(&providers, &["=> ", "Some("]));
    // The web source's settings (`WebConfig::from_lookup`).
    let web = std::fs::read_to_string(root().join("crates/quarry-web/src/config.rs")).unwrap();
    read.extend(variables_read_in(&web, &["get(", "number("]));
    read.retain(|name| !name.starts_with("QUARRY_TEST_"));
    read.sort();
    read.dedup();
    assert!(read.len() > 15, "the scan found too few: {read:?}");
    let text = readme();
    let missing: Vec<_> = read
        .iter()
        .filter(|name| !text.contains(&format!("`{name}`")))
        .collect();
    assert!(missing.is_empty(), "README.md does not list {missing:?}");
}
