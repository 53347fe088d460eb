//! Choosing a model with one string (`openai:gpt-4o-mini`, `ollama:qwen2.5:3b`,
//! `anthropic:claude-sonnet-4-5`, `azure:my-deployment`, `gemini:gemini-2.5-flash`) and building
//! its client.
//!
//! This crate never reads the environment; the CLI (or server) resolves it and passes values in:
//!
//! | variable | goes to |
//! |---|---|
//! | `QUARRY_MODEL` | the model string for [`ModelSpec::parse`] when `--model` is absent |
//! | `QUARRY_API_KEY` | [`ProviderSettings::api_key`] for any provider; wins over the provider's own |
//! | [`Provider::key_variable`] | [`ProviderSettings::api_key`]: `OPENAI_API_KEY`, `AZURE_OPENAI_API_KEY`, `GEMINI_API_KEY`, `ANTHROPIC_API_KEY`, `OLLAMA_API_KEY`, `VLLM_API_KEY`, `LLAMA_API_KEY`, `LM_API_TOKEN`; `OPENAI_API_KEY` for `openai-compatible` |
//! | [`Provider::host_variable`] | [`ProviderSettings::host`]: `OLLAMA_HOST` (`host:port` or a URL; default `http://localhost:11434`), `AZURE_OPENAI_ENDPOINT` (`https://RESOURCE.openai.azure.com`) |
//! | `AZURE_OPENAI_API_VERSION` | [`ProviderSettings::api_version`] (default [`AZURE_API_VERSION`]) |
//! | `QUARRY_HEADERS`, `--header` | [`ProviderSettings::headers`] |
//! | `--base-url` | [`ProviderSettings::base_url`], which wins over every default and host variable |

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use crate::LlmError;
use crate::anthropic::AnthropicClient;
use crate::client::LlmClient;
use crate::ollama::OllamaClient;
use crate::openai::{AZURE_API_VERSION, AzureDeployment, OpenAi, OpenAiClient};
use crate::structured::StructuredOutput;
use crate::transport::{Endpoint, TransportConfig};

/// Where a model is served and which wire protocol it speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provider {
    OpenAi,
    /// Azure OpenAI: the model is the deployment name.
    Azure,
    /// Google's Gemini API through its OpenAI-compatible endpoint.
    Gemini,
    Anthropic,
    /// Ollama's native API (`/api/chat`); its OpenAI-compatible `/v1` is `openai-compatible`.
    Ollama,
    Vllm,
    LlamaCpp,
    LmStudio,
    /// Any other server speaking the OpenAI chat completions API; needs a base URL.
    OpenAiCompatible,
    /// A GGUF model run inside this process (`local:PATH.gguf`); needs the `local` feature.
    Local,
}

impl Provider {
    pub const ALL: [Provider; 10] = [
        Provider::OpenAi,
        Provider::Azure,
        Provider::Gemini,
        Provider::Anthropic,
        Provider::Ollama,
        Provider::Vllm,
        Provider::LlamaCpp,
        Provider::LmStudio,
        Provider::OpenAiCompatible,
        Provider::Local,
    ];

    /// The prefix in a model string.
    pub fn name(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::Azure => "azure",
            Provider::Gemini => "gemini",
            Provider::Anthropic => "anthropic",
            Provider::Ollama => "ollama",
            Provider::Vllm => "vllm",
            Provider::LlamaCpp => "llamacpp",
            Provider::LmStudio => "lmstudio",
            Provider::OpenAiCompatible => "openai-compatible",
            Provider::Local => "local",
        }
    }

    fn from_name(name: &str) -> Option<Provider> {
        let provider = match name.to_ascii_lowercase().as_str() {
            "openai" => Provider::OpenAi,
            "azure" | "azure-openai" | "azure_openai" => Provider::Azure,
            "gemini" | "google" => Provider::Gemini,
            "anthropic" | "claude" => Provider::Anthropic,
            "ollama" => Provider::Ollama,
            "vllm" => Provider::Vllm,
            "llamacpp" | "llama.cpp" | "llama-cpp" => Provider::LlamaCpp,
            "lmstudio" | "lm-studio" => Provider::LmStudio,
            "openai-compatible" | "openai_compatible" | "compatible" => Provider::OpenAiCompatible,
            "local" => Provider::Local,
            _ => return None,
        };
        Some(provider)
    }

    /// The base URL used when none is given; `None` where the user must say (a generic
    /// OpenAI-compatible server, an Azure resource). Ollama's and Azure's come from
    /// [`ProviderSettings::host`] when set.
    pub fn default_base_url(self) -> Option<&'static str> {
        match self {
            Provider::OpenAi => Some("https://api.openai.com/v1"),
            Provider::Gemini => Some("https://generativelanguage.googleapis.com/v1beta/openai"),
            Provider::Anthropic => Some("https://api.anthropic.com"),
            Provider::Ollama => Some("http://localhost:11434"),
            Provider::Vllm => Some("http://localhost:8000/v1"),
            Provider::LlamaCpp => Some("http://localhost:8080/v1"),
            Provider::LmStudio => Some("http://localhost:1234/v1"),
            Provider::Azure | Provider::OpenAiCompatible | Provider::Local => None,
        }
    }

    /// The environment variable holding this provider's key (`QUARRY_API_KEY` works for all).
    /// Local servers have their own, so a cloud key is never sent to them by accident.
    pub fn key_variable(self) -> &'static str {
        match self {
            Provider::OpenAi | Provider::OpenAiCompatible => "OPENAI_API_KEY",
            Provider::Azure => "AZURE_OPENAI_API_KEY",
            Provider::Gemini => "GEMINI_API_KEY",
            Provider::Anthropic => "ANTHROPIC_API_KEY",
            Provider::Ollama => "OLLAMA_API_KEY",
            Provider::Vllm => "VLLM_API_KEY",
            Provider::LlamaCpp => "LLAMA_API_KEY",
            Provider::LmStudio => "LM_API_TOKEN",
            // Runs in the process: no key is ever sent.
            Provider::Local => "QUARRY_API_KEY",
        }
    }

    /// The environment variable naming where the provider runs, if it has one.
    pub fn host_variable(self) -> Option<&'static str> {
        match self {
            Provider::Ollama => Some("OLLAMA_HOST"),
            Provider::Azure => Some("AZURE_OPENAI_ENDPOINT"),
            _ => None,
        }
    }

    /// How this provider's models are asked for output that follows a schema (see
    /// [`crate::structured`]).
    pub fn structured_output(self) -> StructuredOutput {
        match self {
            Provider::OpenAi | Provider::Azure => StructuredOutput::StrictJsonSchema,
            Provider::Gemini
            | Provider::Vllm
            | Provider::LlamaCpp
            | Provider::LmStudio
            | Provider::Local => StructuredOutput::JsonSchema,
            Provider::Ollama => StructuredOutput::OllamaFormat,
            Provider::Anthropic => StructuredOutput::ForcedTool,
            Provider::OpenAiCompatible => StructuredOutput::None,
        }
    }

    /// Cloud providers refuse calls without a key at their own URL; local servers need none.
    fn needs_key(self) -> bool {
        matches!(
            self,
            Provider::OpenAi | Provider::Anthropic | Provider::Gemini | Provider::Azure
        )
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
/// colon (`ollama:qwen2.5:3b` is model `qwen2.5:3b` on Ollama; `azure:NAME` is the deployment).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ModelSpec {
    pub provider: Provider,
    pub model: String,
}

/// Where installed GGUF models live, as a host reads its environment through `lookup`:
/// `QUARRY_MODELS_DIR`, else `$XDG_DATA_HOME/quarry/models`, else
/// `~/.local/share/quarry/models`.
pub fn models_dir_from(lookup: impl Fn(&str) -> Option<String>) -> std::path::PathBuf {
    if let Some(dir) = lookup("QUARRY_MODELS_DIR") {
        return dir.into();
    }
    let data = lookup("XDG_DATA_HOME").map_or_else(
        || {
            std::path::PathBuf::from(lookup("HOME").unwrap_or_else(|| ".".to_owned()))
                .join(".local/share")
        },
        std::path::PathBuf::from,
    );
    data.join("quarry/models")
}

impl ModelSpec {
    /// `local:NAME` (no path separator, no `.gguf`) as the installed model `NAME.gguf` in
    /// `models_dir`; any other spec as it is.
    pub fn with_installed_name(mut self, models_dir: &std::path::Path) -> ModelSpec {
        if self.provider == Provider::Local
            && !self.model.contains(std::path::MAIN_SEPARATOR)
            && !self.model.contains('/')
            && !self.model.ends_with(".gguf")
        {
            self.model = models_dir
                .join(format!("{}.gguf", self.model))
                .display()
                .to_string();
        }
        self
    }

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
    /// providers it includes `/v1` (`http://host:8000/v1`); for Anthropic it may or may not; for
    /// Ollama it is the host (a `/v1` is ignored); for Azure it is the resource URL.
    pub base_url: Option<String>,
    pub api_key: Option<String>,
    /// The provider's [host variable](Provider::host_variable): `OLLAMA_HOST` (`host:port`,
    /// `http://host:port`) or `AZURE_OPENAI_ENDPOINT`.
    pub host: Option<String>,
    /// Azure OpenAI's `api-version` (default [`AZURE_API_VERSION`]).
    pub api_version: Option<String>,
    /// Extra `(name, value)` headers sent with every request, over the provider's own.
    pub headers: Vec<(String, String)>,
    pub transport: TransportConfig,
    /// Calls in flight at once through this client; 0 means unlimited.
    pub concurrency: usize,
    /// How a `local:` model is served (other providers ignore it).
    pub local: crate::LocalSettings,
}

impl Default for ProviderSettings {
    fn default() -> Self {
        ProviderSettings {
            base_url: None,
            api_key: None,
            host: None,
            api_version: None,
            headers: Vec::new(),
            transport: TransportConfig::default(),
            concurrency: 8,
            local: crate::LocalSettings::default(),
        }
    }
}

impl ProviderSettings {
    /// The key, host and API version for `spec` as a host reads them from its environment
    /// through `lookup` (which should treat an empty variable as unset): the key from
    /// `QUARRY_API_KEY`, else the provider's [key variable](Provider::key_variable); the host
    /// from its [host variable](Provider::host_variable); `AZURE_OPENAI_API_VERSION`. The rest
    /// are the defaults.
    pub fn from_lookup(spec: &ModelSpec, lookup: impl Fn(&str) -> Option<String>) -> Self {
        ProviderSettings {
            api_key: lookup("QUARRY_API_KEY").or_else(|| lookup(spec.provider.key_variable())),
            host: spec.provider.host_variable().and_then(&lookup),
            api_version: lookup("AZURE_OPENAI_API_VERSION"),
            ..ProviderSettings::default()
        }
    }
}

/// `Name: value` as a header pair (for `--header` and `QUARRY_HEADERS`); `None` without a colon
/// or a name.
pub fn parse_header(line: &str) -> Option<(String, String)> {
    let (name, value) = line.split_once(':')?;
    let name = name.trim();
    (!name.is_empty()).then(|| (name.to_owned(), value.trim().to_owned()))
}

/// The client for `spec`: Anthropic's messages API for `anthropic`, Ollama's native API for
/// `ollama`, the OpenAI-compatible chat API (with the provider's structured-output mode, and
/// Azure's deployment URL) for every other provider.
///
/// Fails with [`LlmError::MissingKey`] for a cloud provider at its own URL without a key (for
/// Azure, without a key or an authorising custom header), and with [`LlmError::Misconfigured`]
/// for `openai-compatible` or `azure` without a base URL, or a custom header that is not valid.
pub fn build_client(
    spec: &ModelSpec,
    settings: ProviderSettings,
) -> Result<Arc<dyn LlmClient>, LlmError> {
    let provider = spec.provider;
    if provider == Provider::Local {
        return local_client(spec, &settings.local);
    }
    let endpoint = resolve_endpoint(spec, &settings, Api::Chat)?;
    let (transport, concurrency) = (settings.transport.clone(), settings.concurrency);
    let headers = &settings.headers;
    let client: Arc<dyn LlmClient> = match provider {
        Provider::Anthropic => {
            Arc::new(AnthropicClient::new(endpoint, transport, concurrency)?.with_headers(headers)?)
        }
        Provider::Ollama => {
            Arc::new(OllamaClient::new(endpoint, transport, concurrency)?.with_headers(headers)?)
        }
        _ => {
            let azure = match provider {
                Provider::Azure => Some(azure_deployment(spec, &settings)?),
                _ => None,
            };
            let protocol = OpenAi {
                structured: provider.structured_output(),
                azure,
            };
            Arc::new(
                OpenAiClient::with_protocol(protocol, endpoint, transport, concurrency)?
                    .with_headers(headers)?,
            )
        }
    };
    Ok(client)
}

/// The in-process client of a `local:PATH` model (the path as given: a binary resolves model
/// names to paths first).
#[cfg(feature = "local")]
fn local_client(
    spec: &ModelSpec,
    settings: &crate::LocalSettings,
) -> Result<Arc<dyn LlmClient>, LlmError> {
    let model = crate::local::load_with(std::path::Path::new(&spec.model), settings)?;
    Ok(Arc::new(crate::local::LocalClient::new(model)))
}

#[cfg(not(feature = "local"))]
fn local_client(
    _spec: &ModelSpec,
    _settings: &crate::LocalSettings,
) -> Result<Arc<dyn LlmClient>, LlmError> {
    Err(LlmError::Misconfigured {
        provider: "local".to_owned(),
        reason: "this build has no in-process inference (quarry-llm's `local` feature)".to_owned(),
    })
}

/// The Azure deployment `spec` names (its model) and the `api-version` to call it with; a name
/// with characters a URL path cannot carry as they are is refused, naming it.
pub(crate) fn azure_deployment(
    spec: &ModelSpec,
    settings: &ProviderSettings,
) -> Result<AzureDeployment, LlmError> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if !spec.model.chars().all(allowed) {
        return Err(LlmError::Misconfigured {
            provider: spec.provider.name().to_string(),
            reason: format!(
                "'{}' is not an Azure deployment name (letters, digits, '-', '_' and '.')",
                spec.model
            ),
        });
    }
    Ok(AzureDeployment {
        deployment: spec.model.clone(),
        api_version: settings
            .api_version
            .clone()
            .filter(|version| !version.trim().is_empty())
            .unwrap_or_else(|| AZURE_API_VERSION.to_owned()),
    })
}

/// Which API of the provider an endpoint is for (Ollama's chat is native, its embeddings are
/// OpenAI-compatible under `/v1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Api {
    Chat,
    Embeddings,
}

/// The endpoint `spec` and `settings` name: `--base-url`, then the provider's host variable,
/// then its default; the key a cloud provider needs. Shared by chat clients and the embeddings
/// client.
pub(crate) fn resolve_endpoint(
    spec: &ModelSpec,
    settings: &ProviderSettings,
    api: Api,
) -> Result<Endpoint, LlmError> {
    let provider = spec.provider;
    let given = |value: &Option<String>| {
        value
            .as_deref()
            .map(str::trim)
            .filter(|value| !value.is_empty())
            .map(str::to_owned)
    };
    let chosen = given(&settings.base_url)
        .or_else(|| provider.host_variable().and(given(&settings.host)))
        .or_else(|| provider.default_base_url().map(str::to_owned))
        .ok_or_else(|| LlmError::Misconfigured {
            provider: provider.name().to_string(),
            reason: match provider {
                Provider::Azure => "Azure OpenAI needs the resource URL: --base-url \
                    https://RESOURCE.openai.azure.com or AZURE_OPENAI_ENDPOINT"
                    .into(),
                _ => "an OpenAI-compatible server needs a base URL, e.g. --base-url \
                    http://localhost:8000/v1"
                    .into(),
            },
        })?;
    let mut base_url = chosen.trim_end_matches('/').to_string();
    match provider {
        Provider::Ollama => {
            base_url = ollama_root(&base_url);
            if api == Api::Embeddings {
                base_url.push_str("/v1");
            }
        }
        Provider::Azure => {
            if let Some(resource) = base_url.strip_suffix("/openai") {
                base_url = resource.to_owned();
            }
        }
        _ => {}
    }
    let api_key = settings
        .api_key
        .clone()
        .filter(|key| !key.trim().is_empty());
    let authorised_by_header = settings.headers.iter().any(|(name, _)| {
        name.eq_ignore_ascii_case("authorization") || name.eq_ignore_ascii_case("api-key")
    });
    let at_cloud_default = provider.default_base_url() == Some(base_url.as_str());
    let key_required = provider.needs_key() && (at_cloud_default || provider == Provider::Azure);
    if key_required && api_key.is_none() && !authorised_by_header {
        return Err(LlmError::MissingKey {
            provider: provider.name().to_string(),
            variable: provider.key_variable().to_owned(),
        });
    }
    Ok(Endpoint {
        provider: provider.name().to_string(),
        base_url,
        model: spec.model.clone(),
        api_key,
    })
}

/// An Ollama address as Ollama's own CLI reads `OLLAMA_HOST` (scheme optional), reduced to the
/// host: a `/v1` or `/api` suffix (the address of one of its APIs) is dropped.
fn ollama_root(host: &str) -> String {
    let host = host.trim_end_matches('/');
    let with_scheme = if host.contains("://") {
        host.to_string()
    } else {
        format!("http://{host}")
    };
    for suffix in ["/v1", "/api"] {
        if let Some(root) = with_scheme.strip_suffix(suffix) {
            return root.to_string();
        }
    }
    with_scheme
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
        assert_eq!(ollama_root("localhost:11434"), "http://localhost:11434");
        assert_eq!(ollama_root("https://gpu-box:443/"), "https://gpu-box:443");
        assert_eq!(
            ollama_root("http://gpu-box:11434/v1"),
            "http://gpu-box:11434"
        );
        let spec = ModelSpec::parse("ollama:nomic-embed-text").unwrap();
        let settings = ProviderSettings {
            host: Some("gpu-box:11434".into()),
            ..ProviderSettings::default()
        };
        let chat = resolve_endpoint(&spec, &settings, Api::Chat).unwrap();
        let embeddings = resolve_endpoint(&spec, &settings, Api::Embeddings).unwrap();
        assert_eq!(chat.base_url, "http://gpu-box:11434");
        assert_eq!(embeddings.base_url, "http://gpu-box:11434/v1");
    }

    #[test]
    fn azure_needs_a_resource_and_a_key_or_an_authorising_header() {
        let spec = ModelSpec::parse("azure:extraction-4o").unwrap();
        assert!(matches!(
            build_client(&spec, ProviderSettings::default()),
            Err(LlmError::Misconfigured { .. })
        ));
        let resource = ProviderSettings {
            host: Some("https://acme.openai.azure.com/openai/".into()),
            ..ProviderSettings::default()
        };
        let err = build_client(&spec, resource.clone()).err().unwrap();
        assert!(err.to_string().contains("AZURE_OPENAI_API_KEY"), "{err}");
        let entra = ProviderSettings {
            headers: vec![("Authorization".into(), "Bearer token".into())],
            ..resource.clone()
        };
        assert!(build_client(&spec, entra.clone()).is_ok());
        let odd = ModelSpec::parse("azure:my deployment/../x").unwrap();
        let err = build_client(&odd, entra).err().unwrap();
        assert!(
            err.to_string().contains("not an Azure deployment name"),
            "{err}"
        );
    }

    #[test]
    fn headers_parse_from_name_colon_value() {
        assert_eq!(
            parse_header("X-Title:  Quarry tests "),
            Some(("X-Title".into(), "Quarry tests".into()))
        );
        assert_eq!(
            parse_header("Authorization: Bearer a:b"),
            Some(("Authorization".into(), "Bearer a:b".into()))
        );
        assert_eq!(parse_header("no colon"), None);
        assert_eq!(parse_header(": value"), None);
    }

    #[test]
    fn each_provider_has_its_own_key_variable() {
        let variables: std::collections::HashSet<&str> = Provider::ALL
            .iter()
            .filter(|provider| **provider != Provider::OpenAiCompatible)
            .map(|provider| provider.key_variable())
            .collect();
        assert_eq!(variables.len(), Provider::ALL.len() - 1);
    }
}
