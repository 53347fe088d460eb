//! The schema agent: `quarry.Extractor`'s native half. One tokio runtime serves every extractor
//! in the process; each call blocks its Python thread with the GIL released, and stops early
//! when its [`CancelToken`] is cancelled or (on the main thread) Ctrl-C arrives.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyString;
use quarry_agent::{Extractor, ExtractorConfig, Schema, llm_error_code};
use quarry_core::ErrorCode;
use quarry_llm::{ModelSpec, ProviderSettings, TransportConfig, build_client, models_dir_from};

use crate::errors::raised;
use crate::text::utf8;

/// A variable of the process environment, empty counting as unset (as the CLI reads them).
fn environment(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .filter(|value| !value.trim().is_empty())
}

/// How often a waiting call looks at its token and at Python's signal handlers.
const CANCEL_POLL: Duration = Duration::from_millis(50);

fn runtime() -> PyResult<&'static tokio::runtime::Runtime> {
    static RUNTIME: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("quarry-io")
                .enable_all()
                .build()
                .map_err(|error| error.to_string())
        })
        .as_ref()
        .map_err(|error| {
            raised(
                ErrorCode::Internal,
                format!("starting the runtime: {error}"),
            )
        })
}

/// Cancels the call it is given to: the model call in flight is dropped and the call raises
/// `quarry.errors.InvalidState` (the async twin cancels through it when its task is cancelled).
#[pyclass(module = "quarry._native")]
#[derive(Default)]
pub struct CancelToken {
    cancelled: Arc<AtomicBool>,
}

#[pymethods]
impl CancelToken {
    #[new]
    fn new() -> Self {
        CancelToken::default()
    }

    fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
    }

    #[getter]
    fn cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }
}

#[pyclass(module = "quarry._native", frozen)]
pub struct NativeExtractor {
    extractor: Extractor,
    schema: Schema,
}

#[pymethods]
impl NativeExtractor {
    #[new]
    #[pyo3(signature = (
        schema, model, *, base_url=None, api_key=None, headers=Vec::new(), max_attempts=3,
        max_tokens_budget=None, max_completion_tokens=None, temperature=None, retries=2,
        concurrency=8, timeout=None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        schema: &str,
        model: &str,
        base_url: Option<String>,
        api_key: Option<String>,
        headers: Vec<(String, String)>,
        max_attempts: u32,
        max_tokens_budget: Option<u64>,
        max_completion_tokens: Option<u32>,
        temperature: Option<f32>,
        retries: u32,
        concurrency: usize,
        timeout: Option<f64>,
    ) -> PyResult<Self> {
        let schema = Schema::parse(schema)
            .map_err(|error| raised(ErrorCode::InvalidSchema, error.to_string()))?;
        // `local:NAME` is a model installed with `quarry model pull … --name NAME`.
        let spec = ModelSpec::parse(model)
            .map_err(|error| raised(llm_error_code(&error), error.to_string()))?
            .with_installed_name(&models_dir_from(environment));
        let from_env = ProviderSettings::from_lookup(&spec, environment);
        let mut transport = TransportConfig {
            max_attempts: retries + 1,
            ..from_env.transport.clone()
        };
        if let Some(seconds) = timeout {
            if !(seconds.is_finite() && seconds > 0.0) {
                return Err(raised(
                    ErrorCode::InvalidArguments,
                    format!("timeout must be a positive number of seconds, got {seconds}"),
                ));
            }
            transport.request_timeout = Duration::from_secs_f64(seconds);
            transport.read_timeout = Duration::from_secs_f64(seconds);
        }
        let settings = ProviderSettings {
            base_url,
            api_key: api_key.or(from_env.api_key.clone()),
            headers,
            concurrency,
            transport,
            ..from_env
        };
        // reqwest's client wants a runtime only when it sends; building it needs none.
        let client = build_client(&spec, settings)
            .map_err(|error| raised(llm_error_code(&error), error.to_string()))?;
        let defaults = ExtractorConfig::default();
        let config = ExtractorConfig {
            max_attempts: max_attempts.max(1),
            max_tokens_budget,
            max_completion_tokens: max_completion_tokens.unwrap_or(defaults.max_completion_tokens),
            temperature: temperature.or(defaults.temperature),
            ..defaults
        };
        Ok(NativeExtractor {
            extractor: Extractor::new(client, spec.model.clone(), config),
            schema,
        })
    }

    /// The extraction as JSON text (value, fields, outcome, usage, model_calls, chunks).
    #[pyo3(signature = (text, clarifications=Vec::new(), cancel=None))]
    fn extract(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyString>,
        clarifications: Vec<String>,
        cancel: Option<PyRef<'_, CancelToken>>,
    ) -> PyResult<String> {
        let cancelled = cancel.map_or_else(
            || Arc::new(AtomicBool::new(false)),
            |token| Arc::clone(&token.cancelled),
        );
        let runtime = runtime()?;
        let text = utf8(text)?;
        let work = self.extractor.extract(&self.schema, text, &clarifications);
        let finished = py.detach(|| {
            runtime.block_on(async {
                tokio::select! {
                    result = work => Ok(result),
                    interruption = interrupted(&cancelled) => Err(interruption),
                }
            })
        });
        match finished {
            Ok(Ok(extraction)) => {
                Ok(serde_json::to_string(&extraction).expect("an extraction is plain JSON"))
            }
            Ok(Err(error)) => Err(raised(error.error_code(), error.to_string())),
            // Ctrl-C: Python's own KeyboardInterrupt, as its signal handler raised it.
            Err(Some(signal)) => Err(signal),
            Err(None) => Err(raised(
                ErrorCode::InvalidState,
                "the extraction was cancelled before it finished",
            )),
        }
    }
}

/// Resolves once the token is cancelled (`None`) or a Python signal handler raises, as Ctrl-C's
/// does (`Some` of what it raised).
async fn interrupted(cancelled: &AtomicBool) -> Option<PyErr> {
    let mut tick = tokio::time::interval(CANCEL_POLL);
    loop {
        tick.tick().await;
        if cancelled.load(Ordering::SeqCst) {
            return None;
        }
        if let Err(raised) = Python::attach(|py| py.check_signals()) {
            return Some(raised);
        }
    }
}
