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

// The option groups of `args.rs`, by the long names clap shows (positionals as `<id>`).
const STORE: &[&str] = &["db", "project"];
const OUTPUT: &[&str] = &["json"];
const EMBEDDER: &[&str] = &["embedder", "embedder-base-url"];
const MODEL: &[&str] = &[
    "model",
    "base-url",
    "header",
    "retries",
    "concurrency",
    "parallel",
    "context",
    "cache-mib",
];
const AGENT: &[&str] = &["max-attempts", "max-tokens-budget"];
const QUEUE: &[&str] = &["task-attempts"];
const GRAPH: &[&str] = &[
    "graph-types",
    "stoplist",
    "graph-model",
    "graph-temperature",
    "graph-max-tokens",
];
const INPUT: &[&str] = &["text", "file", "max-bytes"];
const SERVE_LIMITS: &[&str] = &[
    "header-timeout-secs",
    "idle-timeout-secs",
    "max-connections",
    "max-uri-bytes",
    "request-timeout-secs",
    "max-extractions",
    "extraction-budget-bytes",
    "overload-wait-ms",
    "shutdown-grace-secs",
    "turn-lease-secs",
];

/// What each command's code reads, written down from its handler: its own options and the
/// groups it takes. A group used by a command that does not read one of its options (as
/// `--interactive` once showed under `serve`) makes a command's list differ from clap's, and so
/// does an option added to a shared group without deciding which commands read it.
fn options_read() -> Vec<(&'static str, Vec<&'static str>)> {
    let with = |own: &[&'static str], groups: &[&[&'static str]]| {
        let mut all = own.to_vec();
        for group in groups {
            all.extend_from_slice(group);
        }
        all
    };
    let review = |own: &[&'static str]| {
        with(
            own,
            &[
                &["<result>", "no-wait", "reviewer"],
                STORE,
                OUTPUT,
                EMBEDDER,
                MODEL,
                QUEUE,
            ],
        )
    };
    let pipeline_run = with(
        &["<entity>", "fields", "no-wait"],
        &[STORE, OUTPUT, EMBEDDER, MODEL, QUEUE],
    );
    let host = with(
        &["no-worker"],
        &[MODEL, AGENT, QUEUE, STORE[..1].as_ref(), EMBEDDER, GRAPH],
    );
    vec![
        (
            "quarry extract",
            with(
                &[
                    "target",
                    "schema",
                    "jsonl",
                    "now",
                    "region",
                    "detail",
                    "interactive",
                    "explain",
                ],
                &[MODEL, AGENT, INPUT],
            ),
        ),
        ("quarry check", with(&["target", "output"], &[INPUT])),
        (
            "quarry serve",
            with(
                &[
                    "addr",
                    "max-body-bytes",
                    "secure-cookies",
                    "mcp-allowed-host",
                    "log-format",
                ],
                &[&host, SERVE_LIMITS],
            ),
        ),
        ("quarry mcp", with(&["project"], &[&host])),
        (
            "quarry bench",
            vec![
                "size-mib",
                "value-share",
                "passes",
                "json",
                "write-corpus",
                "probe",
                "probe-mib",
                "local-model",
                "prompt-file",
                "generate",
            ],
        ),
        ("quarry type load", with(&["<file>"], &[STORE, OUTPUT])),
        ("quarry type list", with(&[], &[STORE, OUTPUT])),
        (
            "quarry entity add",
            with(
                &["type", "title", "parent", "fields", "lock"],
                &[STORE, OUTPUT],
            ),
        ),
        // Always JSON: no --json.
        ("quarry entity show", with(&["<id>"], &[STORE])),
        ("quarry entity list", with(&["type"], &[STORE, OUTPUT])),
        (
            "quarry doc add",
            with(&["<files>", "entity"], &[STORE, OUTPUT, EMBEDDER]),
        ),
        (
            "quarry run",
            with(&["instructions", "field-instructions"], &[&pipeline_run]),
        ),
        ("quarry retry", pipeline_run),
        // Prints nothing: no --json.
        (
            "quarry worker",
            with(
                &["lease-secs", "shutdown-grace-secs"],
                &[GRAPH, STORE, EMBEDDER, MODEL, QUEUE],
            ),
        ),
        ("quarry results", with(&["<entity>"], &[STORE, OUTPUT])),
        ("quarry approve", review(&[])),
        ("quarry reject", review(&["reason"])),
        (
            "quarry history",
            with(&["<entity>", "<field>"], &[STORE, OUTPUT]),
        ),
        (
            "quarry key create",
            with(&["scopes", "name"], &[STORE, OUTPUT]),
        ),
        // Prints one line: no --json.
        ("quarry key revoke", with(&["<key>"], &[STORE])),
        (
            "quarry correction add",
            with(&["<text>", "type", "field"], &[STORE, OUTPUT]),
        ),
        ("quarry correction list", with(&[], &[STORE, OUTPUT])),
        // Prints nothing: no --json.
        ("quarry correction rm", with(&["<id>"], &[STORE])),
        (
            "quarry episode add",
            with(
                &["user", "assistant", "graph", "no-wait"],
                &[GRAPH, MODEL, QUEUE, STORE, OUTPUT],
            ),
        ),
        ("quarry episode show", with(&["<id>"], &[STORE, OUTPUT])),
        (
            "quarry episode process",
            with(&[], &[GRAPH, MODEL, QUEUE, STORE, OUTPUT]),
        ),
        (
            "quarry episode retry",
            with(
                &["<ids>", "failed", "no-wait"],
                &[GRAPH, MODEL, QUEUE, STORE, OUTPUT],
            ),
        ),
        (
            "quarry graph entities",
            with(&["<query>", "type", "limit"], &[STORE, OUTPUT, EMBEDDER]),
        ),
        ("quarry graph show", with(&["<id>"], &[STORE, OUTPUT])),
        (
            "quarry graph neighbors",
            with(&["<id>", "depth"], &[STORE, OUTPUT]),
        ),
        ("quarry model list", with(&[], &[OUTPUT])),
        (
            "quarry model pull",
            vec!["<source>", "file", "revision", "name", "sha256", "force"],
        ),
        ("quarry model rm", vec!["<name>"]),
        ("quarry model path", vec!["<name>"]),
        ("quarry completions", vec!["<shell>"]),
        ("quarry man", vec!["dir"]),
    ]
}

/// The options clap shows for a command, sorted.
fn shown_options(command: &clap::Command) -> Vec<String> {
    let mut names: Vec<String> = command
        .get_arguments()
        .filter(|arg| !matches!(arg.get_id().as_str(), "help" | "version"))
        .map(|arg| {
            arg.get_long()
                .map_or_else(|| format!("<{}>", arg.get_id()), str::to_owned)
        })
        .collect();
    names.sort();
    names
}

#[test]
fn each_command_lists_only_the_options_its_code_reads() {
    let read: HashMap<&str, Vec<&str>> = options_read().into_iter().collect();
    let mut wrong = Vec::new();
    for (path, command) in all_commands() {
        if command.has_subcommands() {
            continue;
        }
        let Some(expected) = read.get(path.as_str()) else {
            wrong.push(format!(
                "{path}: not in options_read(); say what its code reads"
            ));
            continue;
        };
        let mut expected: Vec<String> = expected.iter().map(|name| (*name).to_owned()).collect();
        expected.sort();
        let shown = shown_options(&command);
        if shown != expected {
            let extra: Vec<_> = shown
                .iter()
                .filter(|name| !expected.contains(name))
                .collect();
            let missing: Vec<_> = expected
                .iter()
                .filter(|name| !shown.contains(name))
                .collect();
            wrong.push(format!(
                "{path}: shown but not read {extra:?}, read but not shown {missing:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn key_create_help_lists_every_scope_with_what_it_allows() {
    let mut root = Cli::command();
    let help = root
        .find_subcommand_mut("key")
        .and_then(|key| key.find_subcommand_mut("create"))
        .expect("quarry key create exists")
        .render_long_help()
        .to_string();
    for (scope, allows) in quarry_server::keys::SCOPE_DESCRIPTIONS {
        assert!(
            help.contains(scope) && help.contains(allows),
            "`quarry key create --help` lacks {scope}: {help}"
        );
    }
}
