//! Choosing a model with one string (`openai:gpt-4o-mini`, `ollama:qwen2.5:3b`,
//! `anthropic:claude-sonnet-4-5`) and building its client.
//!
//! This crate never reads the environment; the CLI (or server) resolves it and passes values in:
//!
//! | variable | goes to |
//! |---|---|
//! | `QUARRY_MODEL` | the model string for [`ModelSpec::parse`] when `--model` is absent |
//! | `QUARRY_API_KEY` | [`ProviderSettings::api_key`] for any provider; wins over the two below |
//! | `OPENAI_API_KEY` | [`ProviderSettings::api_key`] for `openai` and the other OpenAI-compatible providers |
//! | `ANTHROPIC_API_KEY` | [`ProviderSettings::api_key`] for `anthropic` |
//! | `OLLAMA_HOST` | [`ProviderSettings::ollama_host`] (`host:port` or a URL; default `http://localhost:11434`) |
//! | `--base-url` | [`ProviderSettings::base_url`], which wins over every default and `OLLAMA_HOST` |
//!
//! [`Provider::key_variable`] names the provider's variable, for help texts.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use crate::LlmError;
use crate::anthropic::AnthropicClient;
use crate::client::LlmClient;
use crate::openai::OpenAiClient;
use crate::transport::{Endpoint, TransportConfig};

/// Where a model is served and which wire protocol it speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provider {
    OpenAi,
    Anthropic,
    Ollama,
    Vllm,
    LlamaCpp,
    LmStudio,
    /// Any other server speaking the OpenAI chat completions API; needs a base URL.
    OpenAiCompatible,
}

impl Provider {
    pub const ALL: [Provider; 7] = [
        Provider::OpenAi,
        Provider::Anthropic,
        Provider::Ollama,
        Provider::Vllm,
        Provider::LlamaCpp,
        Provider::LmStudio,
        Provider::OpenAiCompatible,
    ];

    /// The prefix in a model string.
    pub fn name(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::Anthropic => "anthropic",
            Provider::Ollama => "ollama",
            Provider::Vllm => "vllm",
            Provider::LlamaCpp => "llamacpp",
            Provider::LmStudio => "lmstudio",
            Provider::OpenAiCompatible => "openai-compatible",
        }
    }

    fn from_name(name: &str) -> Option<Provider> {
        let provider = match name.to_ascii_lowercase().as_str() {
            "openai" => Provider::OpenAi,
            "anthropic" | "claude" => Provider::Anthropic,
            "ollama" => Provider::Ollama,
            "vllm" => Provider::Vllm,
            "llamacpp" | "llama.cpp" | "llama-cpp" => Provider::LlamaCpp,
            "lmstudio" | "lm-studio" => Provider::LmStudio,
            "openai-compatible" | "openai_compatible" | "compatible" => Provider::OpenAiCompatible,
            _ => return None,
        };
        Some(provider)
    }

    /// The base URL used when none is given; `None` for a generic OpenAI-compatible server.
    /// Ollama's comes from [`ProviderSettings::ollama_host`] when set.
    pub fn default_base_url(self) -> Option<&'static str> {
        match self {
            Provider::OpenAi => Some("https://api.openai.com/v1"),
            Provider::Anthropic => Some("https://api.anthropic.com"),
            Provider::Ollama => Some("http://localhost:11434/v1"),
            Provider::Vllm => Some("http://localhost:8000/v1"),
            Provider::LlamaCpp => Some("http://localhost:8080/v1"),
            Provider::LmStudio => Some("http://localhost:1234/v1"),
            Provider::OpenAiCompatible => None,
        }
    }

    /// The environment variable holding this provider's key (`QUARRY_API_KEY` works for all).
    pub fn key_variable(self) -> &'static str {
        match self {
            Provider::Anthropic => "ANTHROPIC_API_KEY",
            _ => "OPENAI_API_KEY",
        }
    }

    /// Cloud providers refuse calls without a key; local servers need none.
    fn needs_key(self) -> bool {
        matches!(self, Provider::OpenAi | Provider::Anthropic)
    }

    /// Model names local servers accept without one (llama.cpp serves whatever it loaded).
    fn model_optional(self) -> bool {
        matches!(
            self,
            Provider::LlamaCpp | Provider::LmStudio | Provider::OpenAiCompatible
        )
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A parsed model string: `provider:model`, where the model is everything after the first
/// colon (`ollama:qwen2.5:3b` is model `qwen2.5:3b` on Ollama).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ModelSpec {
    pub provider: Provider,
    pub model: String,
}

impl ModelSpec {
    pub fn parse(spec: &str) -> Result<ModelSpec, LlmError> {
        let spec = spec.trim();
        let invalid = || LlmError::InvalidModel(spec.to_string());
        let (prefix, model) = spec.split_once(':').unwrap_or((spec, ""));
        let provider = Provider::from_name(prefix).ok_or_else(invalid)?;
        let model = model.trim();
        if model.is_empty() && !provider.model_optional() {
            return Err(invalid());
        }
        Ok(ModelSpec {
            provider,
            model: model.to_string(),
        })
    }
}

impl FromStr for ModelSpec {
    type Err = LlmError;

    fn from_str(spec: &str) -> Result<ModelSpec, LlmError> {
        ModelSpec::parse(spec)
    }
}

impl fmt::Display for ModelSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.provider, self.model)
    }
}

/// Everything besides the model string that [`build_client`] needs. See the module docs for
/// the environment variable behind each field.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderSettings {
    /// Overrides the provider's default base URL (`--base-url`). For OpenAI-compatible
    /// providers it includes `/v1` (`http://host:8000/v1`); for Anthropic it does not.
    pub base_url: Option<String>,
    pub api_key: Option<String>,
    /// `OLLAMA_HOST`: `host:port`, `http://host:port`, with or without `/v1`.
    pub ollama_host: Option<String>,
    pub transport: TransportConfig,
    /// Calls in flight at once through this client; 0 means unlimited.
    pub concurrency: usize,
}

impl Default for ProviderSettings {
    fn default() -> Self {
        ProviderSettings {
            base_url: None,
            api_key: None,
            ollama_host: None,
            transport: TransportConfig::default(),
            concurrency: 8,
        }
    }
}

/// The client for `spec`: Anthropic's messages API for `anthropic`, the OpenAI-compatible chat
/// API for every other provider.
///
/// Fails with [`LlmError::MissingKey`] for `openai`/`anthropic` at their cloud URL without a
/// key, and with [`LlmError::Misconfigured`] for `openai-compatible` without a base URL.
pub fn build_client(
    spec: &ModelSpec,
    settings: ProviderSettings,
) -> Result<Arc<dyn LlmClient>, LlmError> {
    let provider = spec.provider;
    let endpoint = resolve_endpoint(spec, &settings)?;
    let client: Arc<dyn LlmClient> = match provider {
        Provider::Anthropic => Arc::new(AnthropicClient::new(
            endpoint,
            settings.transport,
            settings.concurrency,
        )?),
        _ => Arc::new(OpenAiClient::new(
            endpoint,
            settings.transport,
            settings.concurrency,
        )?),
    };
    Ok(client)
}

/// The endpoint `spec` and `settings` name: `--base-url`, then `OLLAMA_HOST` for Ollama, then
/// the provider's default; the key required for `openai`/`anthropic` at their cloud URL. Shared
/// by chat clients and the embeddings client.
pub(crate) fn resolve_endpoint(
    spec: &ModelSpec,
    settings: &ProviderSettings,
) -> Result<Endpoint, LlmError> {
    let provider = spec.provider;
    let base_url = match (&settings.base_url, provider) {
        (Some(url), _) if !url.trim().is_empty() => url.trim().trim_end_matches('/').to_string(),
        (_, Provider::Ollama) => match settings.ollama_host.as_deref().map(str::trim) {
            Some(host) if !host.is_empty() => ollama_base_url(host),
            _ => ollama_base_url("http://localhost:11434"),
        },
        _ => provider
            .default_base_url()
            .ok_or_else(|| LlmError::Misconfigured {
                provider: provider.name().to_string(),
                reason: "an OpenAI-compatible server needs a base URL, e.g. --base-url http://localhost:8000/v1".into(),
            })?
            .to_string(),
    };
    let api_key = settings
        .api_key
        .clone()
        .filter(|key| !key.trim().is_empty());
    let at_cloud_default = provider.default_base_url() == Some(base_url.as_str());
    if provider.needs_key() && at_cloud_default && api_key.is_none() {
        return Err(LlmError::MissingKey {
            provider: provider.name().to_string(),
            variable: format!("{} or QUARRY_API_KEY", provider.key_variable()),
        });
    }
    Ok(Endpoint {
        provider: provider.name().to_string(),
        base_url,
        model: spec.model.clone(),
        api_key,
    })
}

/// `OLLAMA_HOST` as Ollama's own CLI reads it (scheme and `/v1` optional), plus the `/v1` of its
/// OpenAI-compatible API.
fn ollama_base_url(host: &str) -> String {
    let host = host.trim_end_matches('/');
    let with_scheme = if host.contains("://") {
        host.to_string()
    } else {
        format!("http://{host}")
    };
    if with_scheme.ends_with("/v1") {
        with_scheme
    } else {
        format!("{with_scheme}/v1")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_is_everything_after_the_first_colon() {
        let spec = ModelSpec::parse("ollama:qwen2.5:3b").unwrap();
        assert_eq!(spec.provider, Provider::Ollama);
        assert_eq!(spec.model, "qwen2.5:3b");
        assert_eq!(spec.to_string(), "ollama:qwen2.5:3b");
        let spec: ModelSpec = "OpenAI:gpt-4o-mini".parse().unwrap();
        assert_eq!(
            (spec.provider, spec.model.as_str()),
            (Provider::OpenAi, "gpt-4o-mini")
        );
    }

    #[test]
    fn unknown_or_incomplete_specs_are_rejected() {
        for bad in ["gpt-4o-mini", "qwen2.5:3b", "openai:", "anthropic", ""] {
            assert!(
                matches!(ModelSpec::parse(bad), Err(LlmError::InvalidModel(_))),
                "{bad}"
            );
        }
        assert_eq!(
            ModelSpec::parse("llamacpp").unwrap().provider,
            Provider::LlamaCpp
        );
    }

    #[test]
    fn cloud_providers_need_a_key_local_ones_do_not() {
        let openai = ModelSpec::parse("openai:gpt-4o-mini").unwrap();
        let err = build_client(&openai, ProviderSettings::default())
            .err()
            .unwrap();
        assert!(err.to_string().contains("OPENAI_API_KEY"), "{err}");
        let anthropic = ModelSpec::parse("anthropic:claude-sonnet-4-5").unwrap();
        assert!(matches!(
            build_client(&anthropic, ProviderSettings::default()),
            Err(LlmError::MissingKey { .. })
        ));
        // A proxy or a local server at another URL may take no key.
        let proxied = ProviderSettings {
            base_url: Some("http://127.0.0.1:9/v1".into()),
            ..ProviderSettings::default()
        };
        assert!(build_client(&openai, proxied).is_ok());
        let ollama = ModelSpec::parse("ollama:qwen2.5:3b").unwrap();
        let client = build_client(&ollama, ProviderSettings::default()).unwrap();
        assert_eq!(client.describe(), "ollama:qwen2.5:3b");
    }

    #[test]
    fn generic_compatible_server_needs_a_base_url() {
        let spec = ModelSpec::parse("openai-compatible:my-model").unwrap();
        assert!(matches!(
            build_client(&spec, ProviderSettings::default()),
            Err(LlmError::Misconfigured { .. })
        ));
    }

    #[test]
    fn ollama_host_forms() {
        assert_eq!(
            ollama_base_url("localhost:11434"),
            "http://localhost:11434/v1"
        );
        assert_eq!(
            ollama_base_url("https://gpu-box:443/"),
            "https://gpu-box:443/v1"
        );
        assert_eq!(
            ollama_base_url("http://gpu-box:11434/v1"),
            "http://gpu-box:11434/v1"
        );
    }
}
