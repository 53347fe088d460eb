//! `local:` models: GGUF inference inside the process, behind the same [`LlmClient`] as the HTTP
//! providers (feature `local`).
//!
//! A model is loaded once per process and path ([`load`]) and shared by every client and
//! request; replies are decoded one at a time per model (its key-value cache is one sequence),
//! on a blocking thread, their text streamed back as it is decoded. The tokenizer and the chat
//! template come from the GGUF itself ([`vocab`], [`template`]). Every reply that must follow a
//! JSON Schema, or be a tool call, is decoded under a token mask ([`grammar`]), so it parses and
//! conforms; with the source text given, plain strings can only be text the source contains.

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

use candle_core::quantized::gguf_file::Content;
use llguidance::ParserFactory;

use crate::LlmError;
use crate::client::{BoxFuture, LlmClient, TokenSink};
use crate::structured::StructuredOutput;
use crate::types::{ChatRequest, ChatResponse};

pub use generate::DecodeStats;
pub use grammar::tool_call_text;

/// A loaded GGUF model: its vocabulary, chat template, mask factory and weights.
pub struct LocalModel {
    path: PathBuf,
    name: String,
    vocab: vocab::Vocab,
    template: template::ChatTemplate,
    factory: ParserFactory,
    model: Mutex<model::Model>,
    last_stats: Mutex<Option<DecodeStats>>,
    /// The first byte of each token's text (0 for none), for steering ([`steer`]).
    first_bytes: Vec<u8>,
}

impl LocalModel {
    fn open(path: &Path) -> Result<LocalModel, LlmError> {
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
        let name = path.file_stem().map_or_else(
            || path.display().to_string(),
            |stem| stem.to_string_lossy().into_owned(),
        );
        let model = model::Model::load(path, content)?;
        let trie = vocab.env().tok_trie();
        let first_bytes = (0..trie.vocab_size() as u32)
            .map(|token| trie.token(token).first().copied().unwrap_or(0))
            .collect();
        Ok(LocalModel {
            path: path.to_owned(),
            name,
            vocab,
            template,
            factory,
            model: Mutex::new(model),
            last_stats: Mutex::new(None),
            first_bytes,
        })
    }

    /// The model's context window, in tokens.
    pub fn context_length(&self) -> usize {
        self.model.lock().map_or(0, |model| model.context_length)
    }

    /// The GGUF's architecture, e.g. `llama`.
    pub fn architecture(&self) -> String {
        self.model
            .lock()
            .map_or_else(|_| String::new(), |model| model.architecture.clone())
    }

    /// Where the time of the last reply went.
    pub fn last_stats(&self) -> Option<DecodeStats> {
        self.last_stats.lock().ok().and_then(|stats| *stats)
    }

    /// The token ids of `text` (special tokens written in it included).
    pub fn tokenize(&self, text: &str) -> Result<Vec<u32>, LlmError> {
        self.vocab.encode(text)
    }

    /// The text of `tokens`.
    pub fn detokenize(&self, tokens: &[u32]) -> String {
        self.vocab.decode(tokens)
    }

    fn failure(&self, reason: &str) -> LlmError {
        LlmError::BadReply {
            provider: "local".to_owned(),
            url: self.path.display().to_string(),
            reason: reason.to_owned(),
        }
    }
}

/// The model at `path`, loaded on first use and shared afterwards.
pub fn load(path: &Path) -> Result<Arc<LocalModel>, LlmError> {
    static LOADED: Mutex<Option<HashMap<PathBuf, Arc<LocalModel>>>> = Mutex::new(None);
    let key = path.canonicalize().unwrap_or_else(|_| path.to_owned());
    let mut loaded = LOADED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let models = loaded.get_or_insert_with(HashMap::new);
    if let Some(model) = models.get(&key) {
        return Ok(model.clone());
    }
    let model = Arc::new(LocalModel::open(&key)?);
    models.insert(key, model.clone());
    Ok(model)
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

    /// Decodes on a blocking thread, passing text to `on_token` on this task as it comes.
    async fn decode(
        &self,
        request: &ChatRequest,
        on_token: Option<TokenSink<'_>>,
    ) -> Result<ChatResponse, LlmError> {
        let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel::<String>();
        let model = self.model.clone();
        let request = request.clone();
        let decoding = tokio::task::spawn_blocking(move || {
            let (response, stats) = generate::generate(&model, &request, &mut |text| {
                let _ = sender.send(text.to_owned());
            })?;
            if let Ok(mut last) = model.last_stats.lock() {
                *last = Some(stats);
            }
            Ok(response)
        });
        while let Some(text) = receiver.recv().await {
            if let Some(sink) = on_token {
                sink(&text);
            }
        }
        decoding
            .await
            .map_err(|error| self.model.failure(&format!("the decoder stopped: {error}")))?
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
