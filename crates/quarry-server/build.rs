//! Embeds every file of `web/` (the web app's assets) into the binary: writes
//! `$OUT_DIR/web_assets.rs`, a table of `(name, bytes)` filled by `include_str!` (text) or
//! `include_bytes!` (anything else), read by `src/web.rs`. A new file in `web/` is served
//! without touching the Rust code.

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let web = manifest.join("web");
    println!("cargo:rerun-if-changed=web");
    let mut names: Vec<String> = std::fs::read_dir(&web)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_file()))
                .filter_map(|entry| entry.file_name().into_string().ok())
                .filter(|name| {
                    !name.starts_with('.')
                        && name
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut table = String::from("pub(crate) static ASSETS: &[(&str, &[u8])] = &[\n");
    for name in &names {
        let path = web.join(name);
        let path = path.to_str().expect("a UTF-8 path to web/");
        let text = [
            ".html", ".css", ".js", ".mjs", ".svg", ".json", ".txt", ".map",
        ]
        .iter()
        .any(|ext| name.ends_with(ext));
        let embed = if text {
            format!("include_str!({path:?}).as_bytes()")
        } else {
            format!("include_bytes!({path:?})")
        };
        writeln!(table, "    ({name:?}, {embed}),").expect("writing to a String");
    }
    table.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it"));
    std::fs::write(out.join("web_assets.rs"), table).expect("OUT_DIR is writable");
}
