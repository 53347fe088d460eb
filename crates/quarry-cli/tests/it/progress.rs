//! Progress bars are for people at a terminal: in a pipe (as here) long commands print no bar,
//! no spinner and no terminal escapes, so scripts read clean output.

use crate::common;

use common::{Sandbox, stderr};

#[test]
fn doc_add_of_many_files_draws_nothing_in_a_pipe() {
    let sandbox = Sandbox::new("progress-doc-add");
    let mut paths = Vec::new();
    for i in 0..5 {
        let path = sandbox.dir.join(format!("note-{i}.md"));
        std::fs::write(
            &path,
            format!("# Note {i}\n\nAcme opened office number {i}."),
        )
        .unwrap();
        paths.push(path.display().to_string());
    }
    let mut args = vec!["doc", "add"];
    args.extend(paths.iter().map(String::as_str));
    let output = sandbox.quarry(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(String::from_utf8_lossy(&output.stdout).lines().count(), 5);
    let err = stderr(&output);
    assert!(!err.contains('\u{1b}') && !err.contains('\r'), "{err:?}");
    assert!(err.is_empty(), "nothing on stderr: {err:?}");
}
