//! Every command and subcommand parses: clap checks its argument definitions (for example, two
//! flattened argument groups defining the same flag) only when a command is built, so a
//! conflict would otherwise surface as a panic the first time a user runs that command.

use crate::common;

use common::{quarry, stdout};

/// The subcommand names listed under "Commands:" in a help text.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

fn help_of(path: &[String]) -> String {
    let output = quarry()
        .args(path)
        .arg("--help")
        .output()
        .expect("quarry runs");
    assert!(
        output.status.success(),
        "quarry {} --help failed: {}",
        path.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
    stdout(&output)
}

#[test]
fn every_command_and_subcommand_builds_and_prints_its_help() {
    let mut pending = vec![Vec::<String>::new()];
    let mut seen = 0;
    while let Some(path) = pending.pop() {
        let help = help_of(&path);
        seen += 1;
        for name in subcommands(&help) {
            let mut next = path.clone();
            next.push(name);
            pending.push(next);
        }
    }
    assert!(seen > 20, "only {seen} commands found");
}
