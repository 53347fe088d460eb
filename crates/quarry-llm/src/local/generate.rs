//! One reply decoded from a local model: the prompt through the chat template, then token by
//! token under the reply's grammar (its mask decides which tokens may come next; tokens the
//! grammar forces are fed without sampling), until an end-of-turn token, the grammar's end or
//! the output budget. The forward passes are the engine's ([`super::engine`]), shared with the
//! other replies decoded at the same time.

use std::time::Instant;

use candle_transformers::generation::{LogitsProcessor, Sampling};
use llguidance::toktrie::TokenId;
use llguidance::{Matcher, ParserFactory};

use super::grammar::{ReplyKind, reply_grammar};
use super::steer::{Steering, closing_reserve};
use super::template::ChatTemplate;
use super::vocab::Lexicon;
use crate::LlmError;
use crate::types::{ChatRequest, ChatResponse, PromptTokensDetails, ToolCall, Usage};

/// Where the time of one reply went (the benchmark reads it: `LocalModel::last_stats`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DecodeStats {
    pub prompt_tokens: usize,
    /// Prompt tokens taken from the prefix cache instead of read.
    pub cached_tokens: usize,
    /// The forward passes that read the prompt (shared with other replies in the same passes).
    pub prompt_ms: f64,
    /// From the start of the reply to its first token chosen.
    pub first_token_ms: f64,
    pub generated_tokens: usize,
    /// Forward passes after the prompt's.
    pub decode_ms: f64,
    /// Token masks computed.
    pub mask_ms: f64,
}

/// Replies with no `max_tokens` stop here.
const DEFAULT_MAX_TOKENS: usize = 1024;

/// How tokens are drawn: `temperature` 0 (the default) takes the most likely allowed token, so
/// the same request gives the same reply; otherwise `top_p` and `seed` (from the request's
/// `extra`) apply.
struct SamplingSettings {
    temperature: f64,
    top_p: Option<f64>,
    seed: u64,
}

impl SamplingSettings {
    fn of(request: &ChatRequest) -> SamplingSettings {
        let number = |key: &str| request.extra.get(key).and_then(serde_json::Value::as_f64);
        SamplingSettings {
            temperature: request.temperature.map_or(0.0, f64::from),
            top_p: number("top_p"),
            seed: request
                .extra
                .get("seed")
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(299_792_458),
        }
    }

    fn processor(&self) -> LogitsProcessor {
        let sampling = if self.temperature <= 0.0 {
            Sampling::ArgMax
        } else {
            match self.top_p {
                Some(p) if p < 1.0 => Sampling::TopP {
                    p,
                    temperature: self.temperature,
                },
                _ => Sampling::All {
                    temperature: self.temperature,
                },
            }
        };
        LogitsProcessor::from_sampling(self.seed, sampling)
    }
}

/// One reply being decoded: its prompt, how much of it is read, its grammar, sampler and
/// steering, and the tokens generated so far. The engine ([`super::engine`]) reads the tokens
/// [`input`](Self::input) names for many replies in one forward pass and hands each its logits
/// ([`advance`](Self::advance)).
pub struct Decoding {
    prompt: Vec<TokenId>,
    /// Prompt tokens read so far, those taken from the prefix cache included.
    read: usize,
    matcher: Option<Matcher>,
    sampler: LogitsProcessor,
    /// The grounding source as it appears inside a JSON string (escaped, no quotes).
    source: Option<String>,
    budget: usize,
    reserve: usize,
    window: usize,
    ignore_eos: bool,
    kind: ReplyKind,
    generated: Vec<TokenId>,
    /// Tokens chosen but not read yet: the last sampled one and those the grammar forced.
    pending: Vec<TokenId>,
    emitted: usize,
    finish_reason: &'static str,
    started: Instant,
    stats: DecodeStats,
}

/// Where a reply stands after a step.
#[derive(Debug, PartialEq, Eq)]
pub enum Progress {
    Running,
    Finished,
}

impl Decoding {
    /// The reply to `request`: its prompt through the model's chat `template` and `lexicon`,
    /// checked against the context `window`, and its grammar compiled by the model's `factory`.
    /// `started` is when the request arrived.
    pub fn prepare(
        template: &ChatTemplate,
        lexicon: &Lexicon,
        factory: &ParserFactory,
        window: usize,
        request: &ChatRequest,
        started: Instant,
    ) -> Result<Decoding, LlmError> {
        // `ignore_eos` (as llama.cpp's): unconstrained text runs to `max_tokens` (benchmarks).
        let ignore_eos = request
            .extra
            .get("ignore_eos")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false);
        let prompt = template.render(request)?;
        let prompt = lexicon.vocab.encode(&prompt)?;
        if prompt.len() >= window {
            return Err(LlmError::ContextOverflow {
                provider: "local".to_owned(),
                url: lexicon.path.display().to_string(),
                status: 400,
                body: format!(
                    "the prompt has {} tokens and the model's context window {window}",
                    prompt.len()
                ),
            });
        }
        let budget = request
            .max_tokens
            .map_or(DEFAULT_MAX_TOKENS, |max| max as usize)
            .min(window - prompt.len());
        let plan = reply_grammar(request)?;
        let matcher = match plan.grammar {
            Some(grammar) => {
                let matcher = Matcher::new(factory.create_parser(grammar));
                if let Some(error) = matcher.get_error() {
                    return Err(
                        lexicon.failure(&format!("the reply's grammar is refused: {error}"))
                    );
                }
                Some(matcher)
            }
            None => None,
        };
        let stats = DecodeStats {
            prompt_tokens: prompt.len(),
            ..DecodeStats::default()
        };
        Ok(Decoding {
            prompt,
            read: 0,
            matcher,
            sampler: SamplingSettings::of(request).processor(),
            source: request.grounding.as_deref().map(|source| {
                let escaped = serde_json::to_string(source).expect("a string serialises");
                escaped[1..escaped.len() - 1].to_owned()
            }),
            budget,
            reserve: closing_reserve(budget),
            window,
            ignore_eos,
            kind: plan.kind,
            generated: Vec::new(),
            pending: Vec::new(),
            emitted: 0,
            finish_reason: "length",
            started,
            stats,
        })
    }

    /// The prompt's tokens.
    pub fn prompt(&self) -> &[TokenId] {
        &self.prompt
    }

    /// Starts after the first `cached` prompt tokens, whose keys and values the cache holds.
    pub fn start_after(&mut self, cached: usize) {
        self.read = cached;
        self.stats.cached_tokens = cached;
    }

    /// Whether the prompt is still being read.
    pub fn reading_prompt(&self) -> bool {
        self.read < self.prompt.len()
    }

    /// The tokens to read next: at most `prompt_limit` of the prompt's rest, or the tokens
    /// chosen at the last step.
    pub fn input(&self, prompt_limit: usize) -> &[TokenId] {
        match self.reading_prompt() {
            true => &self.prompt[self.read..self.prompt.len().min(self.read + prompt_limit)],
            false => &self.pending,
        }
    }

    /// Whether reading `count` tokens of [`input`](Self::input) gives logits to choose from.
    pub fn wants_logits(&self, count: usize) -> bool {
        !self.reading_prompt() || self.read + count == self.prompt.len()
    }

    /// Adds the time of a forward pass this reply took part in.
    pub fn account(&mut self, forward_ms: f64) {
        match self.reading_prompt() {
            true => self.stats.prompt_ms += forward_ms,
            false => self.stats.decode_ms += forward_ms,
        }
    }

    /// After `count` tokens of [`input`](Self::input) were read, with the `logits` after them
    /// when [`wants_logits`](Self::wants_logits): chooses the next token under the mask,
    /// streams the text it completes to `on_text`, and says whether the reply is finished.
    pub fn advance(
        &mut self,
        count: usize,
        logits: Option<Vec<f32>>,
        lexicon: &Lexicon,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Progress, LlmError> {
        if self.reading_prompt() {
            self.read += count;
        }
        let Some(mut logits) = logits else {
            return Ok(Progress::Running);
        };
        if let Some(matcher) = self.matcher.as_mut() {
            let mask_started = Instant::now();
            let mask = matcher
                .compute_mask()
                .map_err(|error| lexicon.failure(&format!("the token mask failed: {error}")))?;
            self.stats.mask_ms += mask_started.elapsed().as_secs_f64() * 1e3;
            for (token, logit) in logits.iter_mut().enumerate() {
                if !mask.is_allowed(token as TokenId) {
                    *logit = f32::NEG_INFINITY;
                }
            }
            let steering = Steering {
                first_bytes: &lexicon.first_bytes,
                source: self.source.as_deref(),
            };
            let closing = self.budget - self.generated.len().min(self.budget) <= self.reserve;
            steering.apply(&mut logits, &lexicon.vocab.decode(&self.generated), closing);
        }
        let logits = candle_core::Tensor::new(logits.as_slice(), &candle_core::Device::Cpu)
            .map_err(|error| lexicon.failure(&error.to_string()))?;
        let token = self
            .sampler
            .sample(&logits)
            .map_err(|error| lexicon.failure(&error.to_string()))?;
        if self.generated.is_empty() {
            self.stats.first_token_ms = self.started.elapsed().as_secs_f64() * 1e3;
        }
        if lexicon.vocab.is_end_of_turn(token) && !(self.ignore_eos && self.matcher.is_none()) {
            self.finish_reason = "stop";
            return Ok(Progress::Finished);
        }
        self.pending = vec![token];
        if let Some(matcher) = self.matcher.as_mut() {
            matcher.consume_token(token).map_err(|error| {
                lexicon.failure(&format!("the grammar refused a token: {error}"))
            })?;
            // Tokens the grammar allows no alternative to are taken as they are.
            self.pending.extend(matcher.consume_ff_tokens());
        }
        self.generated.extend_from_slice(&self.pending);
        self.emitted = stream_text(lexicon, &self.generated, self.emitted, on_text);
        if self
            .matcher
            .as_mut()
            .is_some_and(|matcher| matcher.is_stopped())
        {
            self.finish_reason = "stop";
            return Ok(Progress::Finished);
        }
        let full = self.generated.len() >= self.budget
            || self.prompt.len() + self.generated.len() >= self.window;
        Ok(match full {
            true => Progress::Finished,
            false => Progress::Running,
        })
    }

    /// The finished reply, the rest of its text handed to `on_text`.
    pub fn finish(
        mut self,
        lexicon: &Lexicon,
        on_text: &mut dyn FnMut(&str),
    ) -> (ChatResponse, DecodeStats) {
        let text = lexicon.vocab.decode(&self.generated);
        if self.emitted < text.len() {
            on_text(&text[self.emitted..]);
        }
        let usage = Usage {
            prompt_tokens: self.prompt.len() as u64,
            completion_tokens: self.generated.len() as u64,
            prompt_tokens_details: PromptTokensDetails {
                cached_tokens: self.stats.cached_tokens as u64,
            },
        };
        let (content, tool_calls) = match self.kind {
            ReplyKind::ToolCall => match tool_call(&text) {
                Some(call) => (None, vec![call]),
                None => (Some(text), Vec::new()),
            },
            ReplyKind::Json | ReplyKind::Text => (Some(text), Vec::new()),
        };
        self.stats.generated_tokens = self.generated.len();
        let response = ChatResponse {
            content,
            tool_calls,
            finish_reason: Some(self.finish_reason.to_owned()),
            usage,
            latency: self.started.elapsed(),
            attempts: 1,
        };
        (response, self.stats)
    }
}

/// Hands `on_text` the text decoded since `emitted` bytes, holding back a character whose bytes
/// are not all decoded yet; answers the new count.
fn stream_text(
    lexicon: &Lexicon,
    generated: &[TokenId],
    emitted: usize,
    on_text: &mut dyn FnMut(&str),
) -> usize {
    let text = lexicon.vocab.decode(generated);
    let complete = text.trim_end_matches('\u{fffd}').len();
    if complete > emitted && text.is_char_boundary(emitted) {
        on_text(&text[emitted..complete]);
        complete
    } else {
        emitted
    }
}

/// `{"name": …, "arguments": …}` as a tool call.
fn tool_call(text: &str) -> Option<ToolCall> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    Some(ToolCall {
        id: "call_0".to_owned(),
        name: value.get("name")?.as_str()?.to_owned(),
        arguments: value.get("arguments")?.to_string(),
    })
}
