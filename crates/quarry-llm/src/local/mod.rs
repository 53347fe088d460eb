//! `local:` models: GGUF inference inside the process, behind the same [`LlmClient`] as the HTTP
//! providers (feature `local`).
//!
//! A model is loaded once per process and path ([`load`]) and shared by every client and
//! request. Its [`engine`] thread decodes the replies asked of it together, each starting from
//! the longest prefix of its prompt already read ([`cache`]), their text streamed back as it is
//! decoded. The tokenizer and the chat
//! template come from the GGUF itself ([`vocab`], [`template`]). Every reply that must follow a
//! JSON Schema, or be a tool call, is decoded under a token mask ([`grammar`]), so it parses and
//! conforms; with the source text given, plain strings can only be text the source contains.

mod batch;
mod cache;
mod engine;
mod gemma3;
mod generate;
mod grammar;
mod llama;
mod model;
mod steer;
mod template;
mod vocab;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use candle_core::quantized::gguf_file::Content;
use llguidance::ParserFactory;

use crate::LlmError;
use crate::client::{BoxFuture, LlmClient, TokenSink};
pub use crate::local_settings::LocalSettings;
use crate::structured::StructuredOutput;
use crate::types::{ChatRequest, ChatResponse};

pub use engine::{CacheReport, EngineSettings};
pub use generate::DecodeStats;
pub use grammar::tool_call_text;
pub use model::{ModelFacts, describe};

fn engine_settings(settings: &LocalSettings) -> EngineSettings {
    EngineSettings {
        parallel: settings
            .parallel
            .unwrap_or_else(LocalSettings::default_parallel)
            .max(1),
        cache_bytes: settings
            .cache_mib
            .unwrap_or(LocalSettings::DEFAULT_CACHE_MIB)
            << 20,
        prompt_chunk: PROMPT_CHUNK,
    }
}

/// llguidance's fuel for precomputing a reply's lexemes (its default is 1M, which a grounded
/// string over a 7.5 KB document with a label excluded exceeds).
const INITIAL_LEXER_FUEL: u64 = 50_000_000;

/// Prompt tokens read in one forward pass, over all replies.
const PROMPT_CHUNK: usize = 512;

/// A loaded GGUF model: its vocabulary, chat template, mask factory, and the engine that owns
/// its weights.
pub struct LocalModel {
    name: String,
    lexicon: Arc<vocab::Lexicon>,
    template: template::ChatTemplate,
    factory: ParserFactory,
    engine: engine::Engine,
    context_length: usize,
    architecture: String,
    settings: EngineSettings,
    last_stats: Mutex<Option<DecodeStats>>,
}

impl LocalModel {
    fn open(path: &Path, settings: &LocalSettings) -> Result<LocalModel, LlmError> {
        let mut file = std::fs::File::open(path).map_err(|error| LlmError::Misconfigured {
            provider: "local".to_owned(),
            reason: format!(
                "cannot open the model file {}: {error} (give local:PATH.gguf, or install a \
                 model)",
                path.display()
            ),
        })?;
        let content = Content::read(&mut file).map_err(|error| LlmError::Misconfigured {
            provider: "local".to_owned(),
            reason: format!("{} is not a GGUF model file: {error}", path.display()),
        })?;
        let vocab = vocab::Vocab::from_gguf(&content)?;
        let chat_template = content
            .metadata
            .get("tokenizer.chat_template")
            .and_then(|value| value.to_string().ok())
            .cloned();
        let template = template::ChatTemplate::new(
            chat_template,
            vocab.bos_name().unwrap_or_default(),
            vocab.eos_name(),
        )?;
        let mut factory =
            ParserFactory::new_simple(vocab.env()).map_err(|error| LlmError::Misconfigured {
                provider: "local".to_owned(),
                reason: format!("the token masks cannot be prepared: {error}"),
            })?;
        factory.quiet();
        // A grounded string over a document of several KB is a large substring lexeme: its
        // precomputation over the vocabulary needs more than llguidance's default fuel (1M).
        factory.limits_mut().initial_lexer_fuel = INITIAL_LEXER_FUEL;
        let name = path.file_stem().map_or_else(
            || path.display().to_string(),
            |stem| stem.to_string_lossy().into_owned(),
        );
        // The rotation tables and the window follow `--context` when it is shorter.
        let model = model::Model::load(path, content, settings.context)?;
        let context_length = model.context_length;
        let architecture = model.architecture.clone();
        let trie = vocab.env().tok_trie();
        let first_bytes = (0..trie.vocab_size() as u32)
            .map(|token| trie.token(token).first().copied().unwrap_or(0))
            .collect();
        let lexicon = Arc::new(vocab::Lexicon {
            path: path.to_owned(),
            vocab,
            first_bytes,
        });
        let engine_settings = engine_settings(settings);
        let engine = engine::Engine::start(model, lexicon.clone(), engine_settings)?;
        Ok(LocalModel {
            name,
            lexicon,
            template,
            factory,
            engine,
            context_length,
            architecture,
            settings: engine_settings,
            last_stats: Mutex::new(None),
        })
    }

    /// The model's context window, in tokens.
    pub fn context_length(&self) -> usize {
        self.context_length
    }

    /// The GGUF's architecture, e.g. `llama`.
    pub fn architecture(&self) -> String {
        self.architecture.clone()
    }

    /// How the model is served.
    pub fn engine_settings(&self) -> EngineSettings {
        self.settings
    }

    /// What its prefix cache holds now.
    pub fn cache_report(&self) -> &CacheReport {
        self.engine.cache_report()
    }

    /// Where the time of the last reply went.
    pub fn last_stats(&self) -> Option<DecodeStats> {
        self.last_stats.lock().ok().and_then(|stats| *stats)
    }

    /// The token ids of `text` (special tokens written in it included).
    pub fn tokenize(&self, text: &str) -> Result<Vec<u32>, LlmError> {
        self.lexicon.vocab.encode(text)
    }

    /// The text of `tokens`.
    pub fn detokenize(&self, tokens: &[u32]) -> String {
        self.lexicon.vocab.decode(tokens)
    }

    fn failure(&self, reason: &str) -> LlmError {
        self.lexicon.failure(reason)
    }
}

/// The model at `path`, loaded on first use (with default settings) and shared afterwards.
pub fn load(path: &Path) -> Result<Arc<LocalModel>, LlmError> {
    load_with(path, &LocalSettings::default())
}

/// The model at `path`, loaded on first use with `settings` and shared afterwards (a model
/// already loaded keeps the settings it was loaded with).
pub fn load_with(path: &Path, settings: &LocalSettings) -> Result<Arc<LocalModel>, LlmError> {
    static LOADED: Mutex<Option<HashMap<PathBuf, Arc<LocalModel>>>> = Mutex::new(None);
    let key = path.canonicalize().unwrap_or_else(|_| path.to_owned());
    let mut loaded = LOADED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let models = loaded.get_or_insert_with(HashMap::new);
    if let Some(model) = models.get(&key) {
        return Ok(model.clone());
    }
    let model = Arc::new(LocalModel::open(&key, settings)?);
    models.insert(key, model.clone());
    Ok(model)
}

/// A model of its own, loaded with `settings` and shared with no one (tests and benchmarks
/// compare settings on one file; everything else uses [`load`]).
pub fn load_unshared(path: &Path, settings: &LocalSettings) -> Result<Arc<LocalModel>, LlmError> {
    Ok(Arc::new(LocalModel::open(path, settings)?))
}

/// A client of a loaded local model.
pub struct LocalClient {
    model: Arc<LocalModel>,
}

impl LocalClient {
    pub fn new(model: Arc<LocalModel>) -> LocalClient {
        LocalClient { model }
    }

    /// Loads (or reuses) the model at `path`.
    pub fn open(path: &Path) -> Result<LocalClient, LlmError> {
        Ok(LocalClient::new(load(path)?))
    }

    pub fn model(&self) -> &Arc<LocalModel> {
        &self.model
    }

    /// Prepares the reply on a blocking thread (template, tokens, grammar), queues it on the
    /// model's engine and passes its text to `on_token` on this task as it comes. Dropping the
    /// future cancels the reply.
    async fn decode(
        &self,
        request: &ChatRequest,
        on_token: Option<TokenSink<'_>>,
    ) -> Result<ChatResponse, LlmError> {
        let started = Instant::now();
        let model = self.model.clone();
        let request = request.clone();
        let decoding = tokio::task::spawn_blocking(move || {
            generate::Decoding::prepare(
                &model.template,
                &model.lexicon,
                &model.factory,
                model.context_length,
                &request,
                started,
            )
        })
        .await
        .map_err(|error| self.model.failure(&format!("the decoder stopped: {error}")))??;
        let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel();
        self.model.engine.submit(decoding, sender)?;
        while let Some(event) = receiver.recv().await {
            match event {
                engine::Event::Text(text) => {
                    if let Some(sink) = on_token {
                        sink(&text);
                    }
                }
                engine::Event::Done(done) => {
                    let (response, stats) = done?;
                    if let Ok(mut last) = self.model.last_stats.lock() {
                        *last = Some(stats);
                    }
                    return Ok(response);
                }
            }
        }
        Err(self.model.failure("the decoder stopped without a reply"))
    }
}

impl LlmClient for LocalClient {
    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(self.decode(request, None))
    }

    fn chat_stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_token: TokenSink<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(self.decode(request, Some(on_token)))
    }

    fn describe(&self) -> String {
        format!("local:{}", self.model.name)
    }

    fn structured_output(&self) -> StructuredOutput {
        StructuredOutput::JsonSchema
    }

    fn prefers_retrieval(&self) -> bool {
        true
    }

    fn decodes_grounded(&self) -> bool {
        true
    }
}
