//! Every command says what it does and every argument what it means: the walk behind `--help`.
//!
//! A doc comment on a flattened argument struct becomes the `about` of any subcommand that has
//! none of its own, so `quarry entity add --help` once described itself as "The database and
//! project every team command acts on"; these tests fail on that and on any undocumented argument.

use std::collections::HashMap;

use clap::CommandFactory;

use crate::args::Cli;

/// Every command below the root (the root too), with its path, e.g. `quarry entity add`.
fn all_commands() -> Vec<(String, clap::Command)> {
    let mut root = Cli::command();
    root.build();
    let mut pending = vec![("quarry".to_owned(), root)];
    let mut found = Vec::new();
    while let Some((path, command)) = pending.pop() {
        for sub in command
            .get_subcommands()
            .filter(|sub| sub.get_name() != "help")
        {
            pending.push((format!("{path} {}", sub.get_name()), sub.clone()));
        }
        found.push((path, command));
    }
    found
}

/// Arguments clap adds itself (`--help`, `--version`) and hidden internal ones need no text.
fn documented_by_us(arg: &clap::Arg) -> bool {
    !arg.is_hide_set() && !matches!(arg.get_id().as_str(), "help" | "version")
}

#[test]
fn every_command_says_what_it_does() {
    let missing: Vec<String> = all_commands()
        .into_iter()
        .filter(|(_, command)| {
            command
                .get_about()
                .is_none_or(|about| about.to_string().trim().is_empty())
        })
        .map(|(path, _)| path)
        .collect();
    assert!(
        missing.is_empty(),
        "commands without a description: {missing:?}"
    );
}

#[test]
fn no_two_commands_share_a_description() {
    // The flattened-struct leak shows as one text under several commands.
    let mut by_about: HashMap<String, Vec<String>> = HashMap::new();
    for (path, command) in all_commands() {
        if let Some(about) = command.get_about() {
            by_about.entry(about.to_string()).or_default().push(path);
        }
    }
    let shared: Vec<_> = by_about
        .into_iter()
        .filter(|(_, paths)| paths.len() > 1)
        .collect();
    assert!(
        shared.is_empty(),
        "descriptions used by several commands: {shared:?}"
    );
}

#[test]
fn every_argument_has_help() {
    let mut missing = Vec::new();
    for (path, command) in all_commands() {
        for arg in command.get_arguments().filter(|arg| documented_by_us(arg)) {
            if arg
                .get_help()
                .is_none_or(|help| help.to_string().trim().is_empty())
            {
                missing.push(format!("{path} {}", arg.get_id()));
            }
        }
    }
    assert!(missing.is_empty(), "arguments without help: {missing:?}");
}
