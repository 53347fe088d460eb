//! Model clients by model string, one per string for the whole process: the schema agent, the
//! field agents, the graph extractor and the MCP tools that name one model share its client, and
//! with it its `concurrency` limit (and, for `local:` models, the loaded weights).
//!
//! [`ModelSettings`] is what every client is built from, resolved once per process by its host
//! (the CLI: flags, then environment, then `quarry.toml`): the default model, the server's base
//! URL, custom headers, retries, concurrency, how `local:` models are served, where installed
//! models live, and the environment the providers' keys and hosts are read from.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use crate::{LlmClient, LlmError, LocalSettings, ModelSpec, ProviderSettings, build_client};

/// Reads one environment variable (keys and hosts of the providers); blank counts as unset.
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// What every model client of a process is built from.
#[derive(Clone)]
pub struct ModelSettings {
    /// The model used where none is named: chosen once by the host (for the CLI: `--model`,
    /// `QUARRY_MODEL`, quarry.toml's `model`, else the installed local model).
    pub default_model: Option<String>,
    /// The model server's base URL, for providers that take one.
    pub base_url: Option<String>,
    /// Extra HTTP headers for every request to a model's provider.
    pub headers: Vec<(String, String)>,
    /// Retries of a failed request (beyond the first attempt).
    pub retries: u32,
    /// Requests in flight at once, per client.
    pub concurrency: usize,
    /// How `local:` models are served: these win, then `local_per_model` (by the file's name
    /// without `.gguf`), then `local_every`.
    pub local: LocalSettings,
    pub local_per_model: BTreeMap<String, LocalSettings>,
    pub local_every: LocalSettings,
    /// Where installed GGUF models live (`local:NAME` is `NAME.gguf` there).
    pub models_dir: PathBuf,
    /// The environment, for the providers' keys and hosts.
    pub env: EnvLookup,
}

impl std::fmt::Debug for ModelSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelSettings")
            .field("default_model", &self.default_model)
            .field("base_url", &self.base_url)
            .field("headers", &self.headers.len())
            .field("retries", &self.retries)
            .field("concurrency", &self.concurrency)
            .field("models_dir", &self.models_dir)
            .finish_non_exhaustive()
    }
}

impl ModelSettings {
    /// `provider:model`, with a `local:NAME` resolved to `NAME.gguf` in the model directory.
    pub fn parse(&self, raw: &str) -> Result<ModelSpec, LlmError> {
        Ok(ModelSpec::parse(raw)?.with_installed_name(&self.models_dir))
    }

    /// The provider settings for `spec`: keys and hosts from the environment, then these.
    pub fn provider_settings(&self, spec: &ModelSpec) -> ProviderSettings {
        let from_env = ProviderSettings::from_lookup(spec, |name| (self.env)(name));
        ProviderSettings {
            base_url: self.base_url.clone(),
            concurrency: self.concurrency,
            headers: self.headers.clone(),
            local: self.local_for(spec),
            transport: crate::TransportConfig {
                max_attempts: self.retries + 1,
                ..from_env.transport.clone()
            },
            ..from_env
        }
    }

    /// How the `local:` model `spec` is served.
    pub fn local_for(&self, spec: &ModelSpec) -> LocalSettings {
        let name = std::path::Path::new(&spec.model)
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default();
        let per_model = self.local_per_model.get(&name).copied().unwrap_or_default();
        self.local.or(per_model).or(self.local_every)
    }
}

/// A built client and the spec it was built from.
type Built = (Arc<dyn LlmClient>, ModelSpec);

/// One client per model string, built on first use.
pub struct ModelRegistry {
    settings: ModelSettings,
    built: Mutex<HashMap<String, Built>>,
}

impl ModelRegistry {
    pub fn new(settings: ModelSettings) -> ModelRegistry {
        ModelRegistry {
            settings,
            built: Mutex::new(HashMap::new()),
        }
    }

    pub fn settings(&self) -> &ModelSettings {
        &self.settings
    }

    /// The model used where none is named.
    pub fn default_model(&self) -> Option<&str> {
        self.settings.default_model.as_deref()
    }

    /// The client of `model` (a model string) and its parsed spec, built on first use; the
    /// error says why it cannot be (a missing key names its variable). A failure is not kept:
    /// the next call tries again.
    pub fn client(&self, model: &str) -> Result<Built, LlmError> {
        let mut built = self.built.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(found) = built.get(model) {
            return Ok(found.clone());
        }
        let spec = self.settings.parse(model)?;
        let client = build_client(&spec, self.settings.provider_settings(&spec))?;
        built.insert(model.to_owned(), (client.clone(), spec.clone()));
        Ok((client, spec))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(env: &'static [(&'static str, &'static str)]) -> ModelSettings {
        ModelSettings {
            default_model: None,
            base_url: None,
            headers: vec![("X-Team".to_owned(), "a".to_owned())],
            retries: 2,
            concurrency: 3,
            local: LocalSettings {
                parallel: Some(8),
                ..LocalSettings::default()
            },
            local_per_model: BTreeMap::from([(
                "smol".to_owned(),
                LocalSettings {
                    parallel: Some(2),
                    context: Some(1024),
                    ..LocalSettings::default()
                },
            )]),
            local_every: LocalSettings {
                cache_mib: Some(64),
                context: Some(4096),
                ..LocalSettings::default()
            },
            models_dir: PathBuf::from("/models"),
            env: Arc::new(move |name| {
                env.iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| (*value).to_owned())
            }),
        }
    }

    #[test]
    fn a_model_string_gets_one_client_for_the_process() {
        let registry = ModelRegistry::new(settings(&[("OPENAI_API_KEY", "sk-test")]));
        let (first, spec) = registry.client("openai:gpt-4o-mini").expect("built");
        let (again, _) = registry.client("openai:gpt-4o-mini").expect("built");
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(spec.model, "gpt-4o-mini");
    }

    #[test]
    fn a_missing_key_is_an_error_naming_its_variable_and_is_not_kept() {
        let registry = ModelRegistry::new(settings(&[]));
        let error = registry.client("anthropic:claude").err().expect("no key");
        assert!(error.to_string().contains("ANTHROPIC_API_KEY"), "{error}");
        assert!(registry.client("anthropic:claude").is_err());
    }

    #[test]
    fn provider_settings_take_keys_from_the_environment_and_the_rest_from_the_settings() {
        let settings = settings(&[("OPENAI_API_KEY", "sk-test")]);
        let spec = settings.parse("openai:gpt-4o-mini").expect("parses");
        let provider = settings.provider_settings(&spec);
        assert_eq!(provider.api_key.as_deref(), Some("sk-test"));
        assert_eq!(provider.transport.max_attempts, 3);
        assert_eq!(provider.concurrency, 3);
        assert_eq!(provider.headers, [("X-Team".to_owned(), "a".to_owned())]);
    }

    #[test]
    fn local_serving_is_the_flags_then_the_model_s_own_then_every_model_s() {
        let settings = settings(&[]);
        let smol = settings.parse("local:smol").expect("parses");
        assert_eq!(smol.model, "/models/smol.gguf");
        let served = settings.local_for(&smol);
        assert_eq!(
            (served.parallel, served.context, served.cache_mib),
            (Some(8), Some(1024), Some(64))
        );
        let other = settings.parse("local:other").expect("parses");
        assert_eq!(settings.local_for(&other).context, Some(4096));
    }
}
