//! Choosing and building the model client from flags and the environment. This is the one place
//! that reads QUARRY_MODEL, QUARRY_API_KEY, OPENAI_API_KEY, ANTHROPIC_API_KEY and OLLAMA_HOST
//! (`workspace.rs` reads QUARRY_DB and QUARRY_PROJECT).

use std::sync::Arc;

use quarry_agent::ExtractorConfig;
use quarry_core::ErrorCode;
use quarry_llm::{LlmClient, ModelSpec, ProviderSettings, TransportConfig, build_client};

use crate::args::ModelArgs;
use crate::failure::Failure;

/// The client and model string for `args`, with keys and hosts from the environment.
pub fn client_from(args: &ModelArgs) -> Result<(Arc<dyn LlmClient>, ModelSpec), Failure> {
    let raw = chosen_model(args).ok_or_else(|| {
        Failure::coded(
            ErrorCode::MissingModel,
            "no model: pass --model provider:model (e.g. ollama:qwen2.5:3b) or set QUARRY_MODEL",
        )
    })?;
    let spec =
        ModelSpec::parse(&raw).map_err(|error| Failure::coded(ErrorCode::InvalidModel, error))?;
    let settings = provider_settings(&spec, args.base_url.clone(), args.retries, args.concurrency);
    let client = build_client(&spec, settings)
        .map_err(|error| Failure::coded(ErrorCode::ModelError, error))?;
    Ok((client, spec))
}

/// The model string: `--model`, else a non-empty `QUARRY_MODEL`.
pub fn chosen_model(args: &ModelArgs) -> Option<String> {
    args.model.clone().or_else(|| env("QUARRY_MODEL"))
}

/// Provider settings for `spec`, with keys and hosts from the environment.
pub fn provider_settings(
    spec: &ModelSpec,
    base_url: Option<String>,
    retries: u32,
    concurrency: usize,
) -> ProviderSettings {
    let defaults = ProviderSettings::default();
    ProviderSettings {
        base_url,
        api_key: env("QUARRY_API_KEY").or_else(|| env(spec.provider.key_variable())),
        host: spec.provider.host_variable().and_then(env),
        api_version: env("AZURE_OPENAI_API_VERSION"),
        headers: Vec::new(),
        concurrency,
        transport: TransportConfig {
            max_attempts: retries + 1,
            ..defaults.transport
        },
    }
}

/// The agent's settings from the model flags.
pub fn extractor_config(args: &ModelArgs) -> ExtractorConfig {
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
