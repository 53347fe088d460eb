//! Choosing and building the model client from flags and the environment. This is the one place
//! that reads QUARRY_MODEL, QUARRY_API_KEY, the providers' key variables (OPENAI_API_KEY,
//! AZURE_OPENAI_API_KEY, GEMINI_API_KEY, ANTHROPIC_API_KEY, OLLAMA_API_KEY, VLLM_API_KEY,
//! LLAMA_API_KEY, LM_API_TOKEN: see `Provider::key_variable`), their host variables (OLLAMA_HOST,
//! AZURE_OPENAI_ENDPOINT), AZURE_OPENAI_API_VERSION (these through `ProviderSettings::from_lookup`)
//! and QUARRY_HEADERS (clap reads QUARRY_MODEL
//! into `--model`, QUARRY_DB, QUARRY_PROJECT, QUARRY_EMBEDDER and QUARRY_EMBEDDER_BASE_URL into
//! theirs, and quarry.toml's keys are those flags' defaults: see `config.rs`).
//! [`model_settings`] resolves them once per process into the `ModelSettings` the process's one
//! `ModelRegistry` (quarry-llm) builds every client from.

use std::sync::Arc;

use quarry_agent::ExtractorConfig;
use quarry_core::ErrorCode;
use quarry_llm::{
    LlmClient, LlmError, LocalSettings, ModelRegistry, ModelSettings, ModelSpec, ProviderSettings,
    parse_header,
};

use crate::args::ExtractArgs;
use crate::args::{AgentArgs, ModelArgs};
use crate::config::{Config, env, non_blank};
use crate::failure::Failure;
use crate::model_files::models_dir;

/// The model settings of this process, resolved once from the flags (clap has put the
/// environment's and quarry.toml's values in them), quarry.toml's `[headers]` and `[local]`
/// tables, and the environment: the one place they are worked out.
pub fn model_settings(args: &ModelArgs, file: &Config) -> ModelSettings {
    let models_dir = models_dir();
    ModelSettings {
        default_model: non_blank(args.model.as_deref()).or_else(default_local_model),
        base_url: non_blank(args.base_url.as_deref()),
        headers: model_headers(file, &args.headers),
        retries: args.retries,
        concurrency: args.concurrency,
        local: args.local_flags(),
        local_per_model: file
            .local
            .models
            .iter()
            .map(|(name, model)| (name.clone(), model.settings()))
            .collect(),
        local_every: file.local.every().settings(),
        models_dir,
        env: Arc::new(env),
    }
}

/// The process's registry of model clients (one per model string).
pub fn registry(args: &ModelArgs, file: &Config) -> Arc<ModelRegistry> {
    Arc::new(ModelRegistry::new(model_settings(args, file)))
}

/// The default model's client and spec.
pub fn client_from(
    args: &ModelArgs,
    file: &Config,
) -> Result<(Arc<dyn LlmClient>, ModelSpec), Failure> {
    let registry = registry(args, file);
    let raw = registry.default_model().ok_or_else(|| {
        Failure::coded(
            ErrorCode::MissingModel,
            "no model: pass --model provider:model (e.g. ollama:qwen2.5:3b or local:PATH.gguf) \
             or set QUARRY_MODEL; or set `model` in quarry.toml; or install a local model with \
             `quarry model pull OWNER/REPO --file MODEL.gguf --name default`",
        )
    })?;
    ModelSpec::parse(raw).map_err(|error| Failure::coded(ErrorCode::InvalidModel, error))?;
    registry.client(raw).map_err(model_failure)
}

/// The embedded default: the installed local model named `default`, or the only one installed.
fn default_local_model() -> Option<String> {
    crate::model_files::default_local_model().map(|path| format!("local:{}", path.display()))
}

/// Why a model client cannot be built or called, as the CLI reports it: a missing key names its
/// variable (`MissingApiKey`, exit 2) and settings that cannot work (a provider that needs
/// `--base-url` without one) are a usage error (exit 2); anything else is `ModelError`.
pub fn model_failure(error: LlmError) -> Failure {
    Failure::coded(quarry_agent::llm_error_code(&error), error)
}

/// The custom headers for the model's provider: quarry.toml's `[headers]`, each line of
/// `QUARRY_HEADERS` (`Name: value`), then every `--header` (clap has checked their form). A
/// malformed line of the variable is reported on stderr and left out.
fn model_headers(file: &Config, flags: &[String]) -> Vec<(String, String)> {
    let from_env = env("QUARRY_HEADERS").unwrap_or_default();
    let mut headers: Vec<(String, String)> = file
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

/// Retries of a failed embeddings request (beyond the first attempt), and embeddings requests in
/// flight at once.
const EMBEDDER_RETRIES: u32 = 3;
const EMBEDDER_CONCURRENCY: usize = 4;

/// Provider settings for the embeddings model `spec` (`--embedder provider:model`): keys and
/// hosts from the environment; no custom headers (those are the chat model's).
pub fn embedder_settings(spec: &ModelSpec, base_url: Option<String>) -> ProviderSettings {
    let settings = ModelSettings {
        default_model: None,
        base_url,
        headers: Vec::new(),
        retries: EMBEDDER_RETRIES,
        concurrency: EMBEDDER_CONCURRENCY,
        local: LocalSettings::default(),
        local_per_model: Default::default(),
        local_every: LocalSettings::default(),
        models_dir: models_dir(),
        env: Arc::new(env),
    };
    settings.provider_settings(spec)
}

/// The schema agent's settings from its flags.
pub fn extractor_config(args: &AgentArgs) -> ExtractorConfig {
    ExtractorConfig {
        max_attempts: args.max_attempts.max(1),
        max_tokens_budget: args.max_tokens_budget,
        ..ExtractorConfig::default()
    }
}

/// The schema agent's settings from the flags: relative dates in the text ("next Friday") are
/// read against `--now`, else the clock.
pub fn config_for(args: &ExtractArgs) -> Result<ExtractorConfig, Failure> {
    let mut config = extractor_config(&args.agent);
    config.now = Some(match args.now.as_deref() {
        Some(raw) => quarry_detect::skill::parse_now(raw)?,
        None => chrono::Local::now().fixed_offset(),
    });
    Ok(config)
}
