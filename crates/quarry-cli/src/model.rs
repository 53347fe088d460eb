//! Choosing and building the model client from flags and the environment. This is the one place
//! that reads QUARRY_MODEL, QUARRY_API_KEY, the providers' key variables (OPENAI_API_KEY,
//! AZURE_OPENAI_API_KEY, GEMINI_API_KEY, ANTHROPIC_API_KEY, OLLAMA_API_KEY, VLLM_API_KEY,
//! LLAMA_API_KEY, LM_API_TOKEN: see `Provider::key_variable`), their host variables (OLLAMA_HOST,
//! AZURE_OPENAI_ENDPOINT), AZURE_OPENAI_API_VERSION (these through `ProviderSettings::from_lookup`)
//! and QUARRY_HEADERS (clap reads QUARRY_MODEL
//! into `--model`, QUARRY_DB, QUARRY_PROJECT, QUARRY_EMBEDDER and QUARRY_EMBEDDER_BASE_URL into
//! theirs). Below flags and variables come the settings of `quarry.toml` (see `config.rs`).

use std::sync::Arc;

use quarry_agent::ExtractorConfig;
use quarry_core::ErrorCode;
use quarry_llm::{
    LlmClient, LlmError, LocalSettings, ModelSpec, ProviderSettings, TransportConfig, build_client,
    parse_header,
};

use crate::args::{AgentArgs, ModelArgs};
use crate::config::{self, pick};
use crate::failure::Failure;

/// The client and model string for `args`, with keys and hosts from the environment.
pub fn client_from(args: &ModelArgs) -> Result<(Arc<dyn LlmClient>, ModelSpec), Failure> {
    let raw = chosen_model(args).ok_or_else(|| {
        Failure::coded(
            ErrorCode::MissingModel,
            "no model: pass --model provider:model (e.g. ollama:qwen2.5:3b or local:PATH.gguf) \
             or set QUARRY_MODEL; or set `model` in quarry.toml; or install a local model with \
             `quarry model pull OWNER/REPO --file MODEL.gguf --name default`",
        )
    })?;
    let spec = parse_model(&raw).map_err(|error| Failure::coded(ErrorCode::InvalidModel, error))?;
    let settings = ProviderSettings {
        headers: model_headers(&args.headers),
        local: local_settings(&spec, args.local_flags()),
        ..provider_settings(&spec, chosen_base_url(args), args.retries, args.concurrency)
    };
    let client = build_client(&spec, settings).map_err(model_failure)?;
    Ok((client, spec))
}

/// Why a model client cannot be built or called, as the CLI reports it: a missing key names its
/// variable (`MissingApiKey`, exit 2) and settings that cannot work (a provider that needs
/// `--base-url` without one) are a usage error (exit 2); anything else is `ModelError`.
pub fn model_failure(error: LlmError) -> Failure {
    Failure::coded(quarry_agent::llm_error_code(&error), error)
}

/// `provider:model`, with a `local:NAME` (no path separator, no `.gguf`) resolved to
/// `NAME.gguf` in the model directory ([`models_dir`]).
pub fn parse_model(raw: &str) -> Result<ModelSpec, LlmError> {
    Ok(ModelSpec::parse(raw)?.with_installed_name(&models_dir()))
}

/// Where installed GGUF models live: `QUARRY_MODELS_DIR`, else `$XDG_DATA_HOME/quarry/models`,
/// else `~/.local/share/quarry/models`.
pub fn models_dir() -> std::path::PathBuf {
    quarry_llm::models_dir_from(env)
}

/// The model string: `--model` (or `QUARRY_MODEL`), else quarry.toml's `model`, else the
/// embedded default: the installed local model named `default`, or the only one installed.
pub fn chosen_model(args: &ModelArgs) -> Option<String> {
    pick(args.model.as_deref(), config::file().model.as_deref()).or_else(|| {
        crate::model_files::default_local_model().map(|path| format!("local:{}", path.display()))
    })
}

/// The model server's base URL: `--base-url`, else quarry.toml's `base-url`.
pub fn chosen_base_url(args: &ModelArgs) -> Option<String> {
    pick(args.base_url.as_deref(), config::file().base_url.as_deref())
}

/// The custom headers for the model's provider: quarry.toml's `[headers]`, each line of
/// `QUARRY_HEADERS` (`Name: value`), then every `--header` (clap has checked their form). A
/// malformed line of the variable is reported on stderr and left out.
pub fn model_headers(flags: &[String]) -> Vec<(String, String)> {
    let from_env = env("QUARRY_HEADERS").unwrap_or_default();
    let mut headers: Vec<(String, String)> = config::file()
        .headers
        .iter()
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect();
    for line in from_env.lines().filter(|line| !line.trim().is_empty()) {
        match parse_header(line) {
            Some(header) => headers.push(header),
            None => eprintln!(
                "warning: QUARRY_HEADERS line '{}' is not 'Name: value'; left out",
                line.trim()
            ),
        }
    }
    headers.extend(flags.iter().filter_map(|flag| parse_header(flag)));
    headers
}

/// Provider settings for `spec`, with keys and hosts from the environment (custom headers are
/// the model's alone: see [`model_headers`]).
pub fn provider_settings(
    spec: &ModelSpec,
    base_url: Option<String>,
    retries: u32,
    concurrency: usize,
) -> ProviderSettings {
    let from_env = ProviderSettings::from_lookup(spec, env);
    ProviderSettings {
        base_url,
        concurrency,
        transport: TransportConfig {
            max_attempts: retries + 1,
            ..from_env.transport.clone()
        },
        ..from_env
    }
}

/// How a `local:` model is served: the flags, then quarry.toml's `[local.models.NAME]` (NAME
/// the file's name without `.gguf`), then its `[local]`.
pub fn local_settings(spec: &ModelSpec, flags: LocalSettings) -> LocalSettings {
    let file = &config::file().local;
    let name = std::path::Path::new(&spec.model)
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default();
    let per_model = file
        .models
        .get(&name)
        .map(|model| model.settings())
        .unwrap_or_default();
    flags.or(per_model).or(file.every().settings())
}

/// The schema agent's settings from its flags.
pub fn extractor_config(args: &AgentArgs) -> ExtractorConfig {
    ExtractorConfig {
        max_attempts: args.max_attempts.max(1),
        max_tokens_budget: args.max_tokens_budget,
        ..ExtractorConfig::default()
    }
}

pub fn env(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .filter(|value| !value.trim().is_empty())
}
