//! `quarry.toml`, the CLI's settings file: defaults for the model, the database, the project and
//! the embedder, below flags and environment variables (flag > environment variable > file >
//! built-in default).
//!
//! The file is `quarry.toml` in the working directory, else `$XDG_CONFIG_HOME/quarry/quarry.toml`
//! (`~/.config/quarry/quarry.toml` when `XDG_CONFIG_HOME` is unset); the first found is the only
//! one read. A key the file does not know is an error naming the key and the file, never ignored.
//! `main` loads it once, before parsing the command line: the file's keys that are flags become
//! those flags' defaults ([`Config::command`]), so clap resolves flag > environment > file >
//! built-in default in one place; the tables that are not flags (`[headers]`, `[local]`) reach
//! the model settings through the value `main` passes down (`model::model_settings`). See
//! `examples/quarry.toml`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use quarry_core::ErrorCode;
use serde::Deserialize;

use crate::failure::Failure;

/// The settings `quarry.toml` may hold; each key is the flag of the same name.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Config {
    /// `--db`: a SQLite path (relative to the working directory) or a `postgres://` URL.
    pub db: Option<String>,
    /// `--project`.
    pub project: Option<String>,
    /// `--model`, as `provider:model`.
    pub model: Option<String>,
    /// `--base-url` of the model's server.
    pub base_url: Option<String>,
    /// Extra HTTP headers for every request to the model's provider, `Name = "value"`; those of
    /// `QUARRY_HEADERS` and `--header` are added after them.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// `--embedder`.
    pub embedder: Option<String>,
    /// `--embedder-base-url`.
    pub embedder_base_url: Option<String>,
    /// How `local:` models are served: `[local]` for every one, `[local.models.NAME]` for the
    /// model whose file is `NAME.gguf`.
    #[serde(default)]
    pub local: LocalConfig,
}

/// `[local]`: `--parallel`, `--context` and `--cache-mib` for every `local:` model, and per
/// model under `[local.models.NAME]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LocalConfig {
    pub parallel: Option<usize>,
    pub context: Option<usize>,
    pub cache_mib: Option<usize>,
    #[serde(default)]
    pub models: BTreeMap<String, LocalModelConfig>,
}

impl LocalConfig {
    /// The settings for every model.
    pub fn every(&self) -> LocalModelConfig {
        LocalModelConfig {
            parallel: self.parallel,
            context: self.context,
            cache_mib: self.cache_mib,
        }
    }
}

/// One `local:` model's serving settings, each the flag of the same name.
#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LocalModelConfig {
    pub parallel: Option<usize>,
    pub context: Option<usize>,
    pub cache_mib: Option<usize>,
}

impl LocalModelConfig {
    pub fn settings(self) -> quarry_llm::LocalSettings {
        quarry_llm::LocalSettings {
            parallel: self.parallel,
            cache_mib: self.cache_mib,
            context: self.context,
        }
    }
}

/// Finds and reads the settings file (none is fine); a file that cannot be read or parsed, or
/// holds an unknown key, is an `InvalidConfig` failure naming the file.
pub fn load() -> Result<Config, Failure> {
    match locate() {
        Some(path) => read(&path),
        None => Ok(Config::default()),
    }
}

impl Config {
    /// The command line's definition with this file's flag-like keys as the defaults of the
    /// flags of the same name, in every subcommand that has them.
    pub fn command(&self, command: clap::Command) -> clap::Command {
        let defaults: Vec<(&str, &str)> = [
            ("db", &self.db),
            ("project", &self.project),
            ("model", &self.model),
            ("base_url", &self.base_url),
            ("embedder", &self.embedder),
            ("embedder_base_url", &self.embedder_base_url),
        ]
        .into_iter()
        .filter_map(|(id, value)| {
            let value = value.as_deref()?.trim();
            (!value.is_empty()).then_some((id, value))
        })
        .collect();
        with_defaults(command, &defaults)
    }
}

/// `command` and its subcommands, each of the named flags defaulting to its value.
fn with_defaults(mut command: clap::Command, defaults: &[(&str, &str)]) -> clap::Command {
    for (id, value) in defaults {
        if command.get_arguments().any(|arg| arg.get_id() == *id) {
            let value = value.to_string();
            command = command.mut_arg(*id, |arg| arg.default_value(value));
        }
    }
    let names: Vec<String> = command
        .get_subcommands()
        .map(|sub| sub.get_name().to_owned())
        .collect();
    for name in names {
        command = command.mut_subcommand(name, |sub| with_defaults(sub, defaults));
    }
    command
}

/// A flag's value, blank counting as unset.
pub fn non_blank(value: Option<&str>) -> Option<String> {
    value
        .filter(|value| !value.trim().is_empty())
        .map(str::to_owned)
}

/// `./quarry.toml`, else the user's one, if it exists.
fn locate() -> Option<PathBuf> {
    let local = std::env::current_dir()
        .unwrap_or_default()
        .join("quarry.toml");
    if local.is_file() {
        return Some(local);
    }
    let non_empty = |name| std::env::var_os(name).filter(|value| !value.is_empty());
    let config_dir = non_empty("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| non_empty("HOME").map(|home| PathBuf::from(home).join(".config")))?;
    let user = config_dir.join("quarry").join("quarry.toml");
    user.is_file().then_some(user)
}

fn read(path: &Path) -> Result<Config, Failure> {
    let invalid = |message: String| {
        Failure::coded(
            ErrorCode::InvalidConfig,
            format!("{}: {message}", path.display()),
        )
    };
    let text = std::fs::read_to_string(path).map_err(|error| invalid(error.to_string()))?;
    parse(&text).map_err(invalid)
}

/// Parses the file's text; the error names the offending key and its line.
fn parse(text: &str) -> Result<Config, String> {
    toml::from_str(text).map_err(|error| {
        let line = error.span().map(|span| {
            1 + text.as_bytes()[..span.start.min(text.len())]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
        });
        let message = error
            .message()
            .trim()
            .replace("unknown field", "unknown key");
        match line {
            Some(line) => format!("line {line}: {message}"),
            None => message,
        }
    })
}

pub fn env(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .filter(|value| !value.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_key() {
        let config = parse(
            "db = \"q.db\"\nproject = \"p\"\nmodel = \"ollama:m\"\nbase-url = \"http://h\"\n\
             embedder = \"hashing\"\nembedder-base-url = \"http://e\"\n[headers]\nX-A = \"1\"\n",
        )
        .expect("parses");
        assert_eq!(config.db.as_deref(), Some("q.db"));
        assert_eq!(config.embedder_base_url.as_deref(), Some("http://e"));
        assert_eq!(config.headers.get("X-A").map(String::as_str), Some("1"));
    }

    #[test]
    fn local_models_are_set_for_all_and_per_model() {
        let config = parse(
            "[local]\nparallel = 4\ncache-mib = 256\n[local.models.smollm2]\nparallel = 2\n\
             context = 4096\n",
        )
        .expect("parses");
        assert_eq!(config.local.every().parallel, Some(4));
        let smollm2 = config.local.models["smollm2"];
        assert_eq!((smollm2.parallel, smollm2.context), (Some(2), Some(4096)));
        assert!(parse("[local]\nthreads = 2\n").is_err());
    }

    #[test]
    fn an_unknown_key_is_named_with_its_line() {
        let error = parse("project = \"p\"\nmodle = \"x\"\n").expect_err("refused");
        assert!(error.contains("unknown key `modle`"), "{error}");
        assert!(error.starts_with("line 2:"), "{error}");
    }

    #[test]
    fn the_file_s_keys_become_the_flags_defaults_in_every_subcommand() {
        use clap::CommandFactory;
        let config = parse("db = \"file.db\"\nmodel = \"ollama:m\"\n").expect("parses");
        let parse_with = |line: &[&str]| {
            let matches = config
                .command(crate::args::Cli::command())
                .try_get_matches_from(line)
                .expect("parses");
            <crate::args::Cli as clap::FromArgMatches>::from_arg_matches(&matches).expect("args")
        };
        let crate::args::Command::Worker(worker) = parse_with(&["quarry", "worker"]).command else {
            panic!("a worker command");
        };
        assert_eq!(worker.store.db.as_deref(), Some("file.db"));
        assert_eq!(worker.model.model.as_deref(), Some("ollama:m"));
        let crate::args::Command::Worker(worker) =
            parse_with(&["quarry", "worker", "--db", "flag.db"]).command
        else {
            panic!("a worker command");
        };
        assert_eq!(worker.store.db.as_deref(), Some("flag.db"));
    }
}
