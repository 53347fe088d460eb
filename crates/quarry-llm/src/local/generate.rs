//! One reply decoded from a local model: the prompt through the chat template, then token by
//! token under the reply's grammar (its mask decides which tokens may come next; tokens the
//! grammar forces are fed without sampling), until an end-of-turn token, the grammar's end or
//! the output budget.

use std::time::Instant;

use candle_transformers::generation::{LogitsProcessor, Sampling};
use llguidance::Matcher;
use llguidance::toktrie::TokenId;

use super::LocalModel;
use super::grammar::{ReplyKind, reply_grammar};
use super::steer::{Steering, closing_reserve};
use crate::LlmError;
use crate::types::{ChatRequest, ChatResponse, ToolCall, Usage};

/// Where the time of one reply went (the benchmark reads it: `LocalModel::last_stats`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DecodeStats {
    pub prompt_tokens: usize,
    /// The prompt's forward pass.
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

/// Decodes the reply to `request`, handing each piece of text to `on_text` as it is decoded.
pub fn generate(
    local: &LocalModel,
    request: &ChatRequest,
    on_text: &mut dyn FnMut(&str),
) -> Result<(ChatResponse, DecodeStats), LlmError> {
    let started = Instant::now();
    let mut stats = DecodeStats::default();
    // `ignore_eos` (as llama.cpp's): unconstrained text runs to `max_tokens` (benchmarks).
    let ignore_eos = request
        .extra
        .get("ignore_eos")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    let prompt = local.template.render(request)?;
    let prompt_tokens = local.vocab.encode(&prompt)?;
    let mut model = local
        .model
        .lock()
        .map_err(|_| local.failure("an earlier reply panicked while decoding"))?;
    let window = model.context_length;
    if prompt_tokens.len() >= window {
        return Err(LlmError::ContextOverflow {
            provider: "local".to_owned(),
            url: local.path.display().to_string(),
            status: 400,
            body: format!(
                "the prompt has {} tokens and the model's context window {window}",
                prompt_tokens.len()
            ),
        });
    }
    let budget = request
        .max_tokens
        .map_or(DEFAULT_MAX_TOKENS, |max| max as usize)
        .min(window - prompt_tokens.len());
    let plan = reply_grammar(request)?;
    let mut matcher = match plan.grammar {
        Some(grammar) => {
            let matcher = Matcher::new(local.factory.create_parser(grammar));
            if let Some(error) = matcher.get_error() {
                return Err(local.failure(&format!("the reply's grammar is refused: {error}")));
            }
            Some(matcher)
        }
        None => None,
    };
    let mut sampler = SamplingSettings::of(request).processor();
    let steering = Steering {
        first_bytes: &local.first_bytes,
        source: request.grounding.as_deref().map(|source| {
            let escaped = serde_json::to_string(source).expect("a string serialises");
            escaped[1..escaped.len() - 1].to_owned()
        }),
    };
    let reserve = closing_reserve(budget);

    model.reset();
    let mut position = 0;
    let mut pending: Vec<TokenId> = prompt_tokens.clone();
    let mut generated: Vec<TokenId> = Vec::new();
    let mut emitted = 0;
    let mut finish_reason = "length";
    stats.prompt_tokens = prompt_tokens.len();
    while generated.len() < budget {
        let forward_started = Instant::now();
        let mut logits = model.forward(&pending, position)?;
        let forward_ms = forward_started.elapsed().as_secs_f64() * 1e3;
        if position == 0 {
            stats.prompt_ms = forward_ms;
        } else {
            stats.decode_ms += forward_ms;
        }
        position += pending.len();
        if let Some(matcher) = matcher.as_mut() {
            let mask_started = Instant::now();
            let mask = matcher
                .compute_mask()
                .map_err(|error| local.failure(&format!("the token mask failed: {error}")))?;
            stats.mask_ms += mask_started.elapsed().as_secs_f64() * 1e3;
            for (token, logit) in logits.iter_mut().enumerate() {
                if !mask.is_allowed(token as TokenId) {
                    *logit = f32::NEG_INFINITY;
                }
            }
            let closing = budget - generated.len() <= reserve;
            steering.apply(&mut logits, &local.vocab.decode(&generated), closing);
        }
        let logits = candle_core::Tensor::new(logits.as_slice(), &candle_core::Device::Cpu)
            .map_err(|error| local.failure(&error.to_string()))?;
        let token = sampler
            .sample(&logits)
            .map_err(|error| local.failure(&error.to_string()))?;
        if generated.is_empty() {
            stats.first_token_ms = started.elapsed().as_secs_f64() * 1e3;
        }
        if local.vocab.is_end_of_turn(token) && !(ignore_eos && matcher.is_none()) {
            finish_reason = "stop";
            break;
        }
        pending = vec![token];
        if let Some(matcher) = matcher.as_mut() {
            matcher
                .consume_token(token)
                .map_err(|error| local.failure(&format!("the grammar refused a token: {error}")))?;
            // Tokens the grammar allows no alternative to are taken as they are.
            pending.extend(matcher.consume_ff_tokens());
        }
        generated.extend_from_slice(&pending);
        emitted = stream_text(local, &generated, emitted, on_text);
        if matcher.as_mut().is_some_and(|matcher| matcher.is_stopped()) {
            finish_reason = "stop";
            break;
        }
    }
    let text = local.vocab.decode(&generated);
    if emitted < text.len() {
        on_text(&text[emitted..]);
    }
    let usage = Usage {
        prompt_tokens: prompt_tokens.len() as u64,
        completion_tokens: generated.len() as u64,
    };
    let (content, tool_calls) = match plan.kind {
        ReplyKind::ToolCall => match tool_call(&text) {
            Some(call) => (None, vec![call]),
            None => (Some(text), Vec::new()),
        },
        ReplyKind::Json | ReplyKind::Text => (Some(text), Vec::new()),
    };
    stats.generated_tokens = generated.len();
    let response = ChatResponse {
        content,
        tool_calls,
        finish_reason: Some(finish_reason.to_owned()),
        usage,
        latency: started.elapsed(),
        attempts: 1,
    };
    Ok((response, stats))
}

/// Hands `on_text` the text decoded since `emitted` bytes, holding back a character whose bytes
/// are not all decoded yet; answers the new count.
fn stream_text(
    local: &LocalModel,
    generated: &[TokenId],
    emitted: usize,
    on_text: &mut dyn FnMut(&str),
) -> usize {
    let text = local.vocab.decode(generated);
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
