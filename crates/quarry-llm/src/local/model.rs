//! A GGUF model's weights on the CPU, through candle's quantized models: the architectures
//! people run small (llama: SmolLM2, Llama 3.x; qwen2; qwen3; gemma3), chosen by the GGUF's
//! `general.architecture`.

use std::io::Cursor;
use std::path::Path;
use std::sync::Arc;

use candle_core::quantized::gguf_file::{self, Content, Value};
use candle_core::quantized::{GgmlDType, QTensor};
use candle_core::{DType, Device, Tensor};
use candle_transformers::models::{quantized_qwen2, quantized_qwen3};
use quarry_kernels::Mmap;

use super::batch::SequenceStep;
use super::cache::Reuse;
use super::gemma3::{Gate, Gemma3};
use super::llama::Llama;
use super::vocab::{metadata_str, metadata_u32};
use crate::LlmError;

/// The weights of one architecture, with their key-value cache.
enum Weights {
    Llama(Llama),
    Qwen2(quantized_qwen2::ModelWeights),
    Qwen3(quantized_qwen3::ModelWeights),
    Gemma3(Gemma3),
}

/// A loaded model: the weights and how many tokens fit its context window.
pub struct Model {
    weights: Weights,
    pub architecture: String,
    pub context_length: usize,
    device: Device,
}

impl Model {
    /// Reads the weights of the GGUF at `path`, whose header `content` was read already, for a
    /// context window of the model's own length or `context`, whichever is shorter.
    pub fn load(path: &Path, content: Content, context: Option<usize>) -> Result<Model, LlmError> {
        let architecture = metadata_str(&content, "general.architecture")?;
        let own_length = metadata_u32(&content, &format!("{architecture}.context_length"))
            .unwrap_or(2048) as usize;
        let context_length = context.map_or(own_length, |context| context.clamp(1, own_length));
        let device = Device::Cpu;
        let file = quarry_kernels::map_file(path).map_err(|error| unreadable(path, &error))?;
        // Quarry's own llama and gemma3 read every tensor where it lies (widening what candle
        // multiplies slowly as they load: `quarry_kernels::load_tensor`); candle's models get
        // a rewritten GGUF with those tensors widened to Q8_0.
        let file = Arc::new(file);
        let (content, file) = match architecture.as_str() {
            "llama" | "gemma3" => (content, file),
            _ => requantized(content, file, SCALAR_ONLY, GgmlDType::Q8_0, &device)
                .map_err(|error| unreadable(path, &error))?,
        };
        let mut reader = Cursor::new(&file[..]);
        let weights = match architecture.as_str() {
            "llama" => Weights::Llama(
                Llama::load(&content, &file, context_length, &device)
                    .map_err(|error| unreadable(path, &error))?,
            ),
            "qwen2" => Weights::Qwen2(
                quantized_qwen2::ModelWeights::from_gguf(content, &mut reader, &device)
                    .map_err(|error| unreadable(path, &error))?,
            ),
            "qwen3" => Weights::Qwen3(
                quantized_qwen3::ModelWeights::from_gguf(content, &mut reader, &device)
                    .map_err(|error| unreadable(path, &error))?,
            ),
            "gemma3" => Weights::Gemma3(
                Gemma3::load(&content, &file, context_length, Gate::Gelu, &device)
                    .map_err(|error| unreadable(path, &error))?,
            ),
            other => {
                return Err(LlmError::Misconfigured {
                    provider: "local".to_owned(),
                    reason: format!(
                        "{}: architecture '{other}' is not supported (llama, qwen2, qwen3 and \
                         gemma3 are)",
                        path.display()
                    ),
                });
            }
        };
        Ok(Model {
            weights,
            architecture,
            context_length,
            device,
        })
    }

    /// How this architecture's key-value state can be reused across replies.
    pub fn reuse(&self) -> Reuse {
        match self.weights {
            Weights::Llama(_) | Weights::Gemma3(_) => Reuse::Prefix,
            Weights::Qwen2(_) | Weights::Qwen3(_) => Reuse::Continuation,
        }
    }

    /// Reads each step's tokens after its cached ones and answers, per step, the logits after
    /// its last token when asked for. Quarry's own llama reads every step in one pass; candle's
    /// models hold one sequence, so they take one step at a time (a step whose cache is empty
    /// starts that sequence afresh).
    pub fn forward_batch(
        &mut self,
        steps: &mut [SequenceStep<'_>],
    ) -> Result<Vec<Option<Vec<f32>>>, LlmError> {
        match &self.weights {
            Weights::Llama(weights) => return weights.forward_batch(steps).map_err(inference),
            Weights::Gemma3(weights) => return weights.forward_batch(steps).map_err(inference),
            Weights::Qwen2(_) | Weights::Qwen3(_) => {}
        }
        let mut answers = Vec::with_capacity(steps.len());
        for step in steps.iter_mut() {
            if step.tokens.is_empty() {
                answers.push(None);
                continue;
            }
            let position = step.cache.len();
            if position == 0 {
                self.clear_candle_cache();
            }
            let logits = self.forward_candle(step.tokens, position)?;
            step.cache.extend_tokens(step.tokens);
            answers.push(step.logits.then_some(logits));
        }
        Ok(answers)
    }

    /// Forgets the sequence a candle model holds.
    fn clear_candle_cache(&mut self) {
        match &mut self.weights {
            Weights::Qwen2(weights) => weights.clear_kv_cache(),
            Weights::Qwen3(weights) => weights.clear_kv_cache(),
            // Quarry's own models keep no state in their weights.
            Weights::Gemma3(_) | Weights::Llama(_) => {}
        }
    }

    /// A candle model's logits after `tokens`, which sit at `position` in its one sequence.
    fn forward_candle(&mut self, tokens: &[u32], position: usize) -> Result<Vec<f32>, LlmError> {
        let input = Tensor::new(tokens, &self.device)
            .and_then(|input| input.unsqueeze(0))
            .map_err(inference)?;
        let logits = match &mut self.weights {
            Weights::Qwen2(weights) => weights.forward(&input, position),
            Weights::Qwen3(weights) => weights.forward(&input, position),
            Weights::Llama(_) | Weights::Gemma3(_) => Err(candle_core::Error::Msg(
                "Quarry's own models are read through forward_batch".to_owned(),
            )),
        }
        .map_err(inference)?;
        logits
            .squeeze(0)
            .and_then(|logits| logits.to_dtype(DType::F32))
            .and_then(|logits| logits.to_vec1::<f32>())
            .map_err(inference)
    }
}

/// What a GGUF file holds, from its header alone: its architecture (`llama`, `gemma3`, …) and
/// quantization (`Q4_K_M`, `Q8_0`, …, as llama.cpp names its file types; else the block type
/// most of its weights use).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelFacts {
    pub architecture: String,
    pub quantization: String,
}

/// Reads [`ModelFacts`] from the header of the GGUF at `path`.
pub fn describe(path: &Path) -> Result<ModelFacts, LlmError> {
    let mut file = std::fs::File::open(path).map_err(|error| unreadable(path, &error))?;
    let content = Content::read(&mut file).map_err(|error| unreadable(path, &error))?;
    let architecture = metadata_str(&content, "general.architecture")?;
    let quantization = metadata_u32(&content, "general.file_type")
        .and_then(file_type_name)
        .map(str::to_owned)
        .unwrap_or_else(|| dominant_block_type(&content));
    Ok(ModelFacts {
        architecture,
        quantization,
    })
}

/// llama.cpp's `llama_ftype` names (the `general.file_type` a converter writes).
fn file_type_name(file_type: u32) -> Option<&'static str> {
    Some(match file_type {
        0 => "F32",
        1 => "F16",
        2 => "Q4_0",
        3 => "Q4_1",
        7 => "Q8_0",
        8 => "Q5_0",
        9 => "Q5_1",
        10 => "Q2_K",
        11 => "Q3_K_S",
        12 => "Q3_K_M",
        13 => "Q3_K_L",
        14 => "Q4_K_S",
        15 => "Q4_K_M",
        16 => "Q5_K_S",
        17 => "Q5_K_M",
        18 => "Q6_K",
        32 => "BF16",
        _ => return None,
    })
}

/// The block type of the most weights.
fn dominant_block_type(content: &Content) -> String {
    let mut counts: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for info in content.tensor_infos.values() {
        *counts.entry(format!("{:?}", info.ggml_dtype)).or_default() += info.shape.elem_count();
    }
    counts
        .into_iter()
        .max_by_key(|(_, count)| *count)
        .map(|(name, _)| name.to_uppercase())
        .unwrap_or_default()
}

/// Block types candle multiplies with a scalar loop only on x86: a model stored in them is
/// requantized to Q8_0 (lossless for their 4- and 5-bit values, twice their size), whose AVX2
/// kernel is an order of magnitude faster. Q4_1 comes first: the llama implementation keeps it
/// ([`quarry_kernels::q4_1`]).
pub(super) const SCALAR_ONLY: &[GgmlDType] = &[GgmlDType::Q4_1, GgmlDType::Q5_0, GgmlDType::Q5_1];

/// `content` and the mapped `file`, with tensors of the `widen` types requantized to `to` in an
/// in-memory GGUF (the file as it is when it has none).
pub(super) fn requantized(
    content: Content,
    file: Arc<Mmap>,
    widen: &[GgmlDType],
    to: GgmlDType,
    device: &Device,
) -> candle_core::Result<(Content, Arc<Mmap>)> {
    let slow = content
        .tensor_infos
        .values()
        .any(|info| widen.contains(&info.ggml_dtype));
    if !slow {
        return Ok((content, file));
    }
    let mut reader = Cursor::new(&file[..]);
    let mut tensors: Vec<(String, QTensor)> = Vec::with_capacity(content.tensor_infos.len());
    for (name, info) in &content.tensor_infos {
        let tensor = content.tensor(&mut reader, name, device)?;
        let tensor = if widen.contains(&info.ggml_dtype) {
            let values = tensor.dequantize(device)?;
            // A tensor whose rows do not split into the target's blocks stays as it is.
            QTensor::quantize(&values, to).unwrap_or(tensor)
        } else {
            tensor
        };
        tensors.push((name.clone(), tensor));
    }
    let metadata: Vec<(&str, &Value)> = content
        .metadata
        .iter()
        .map(|(key, value)| (key.as_str(), value))
        .collect();
    let tensor_refs: Vec<(&str, &QTensor)> = tensors
        .iter()
        .map(|(name, tensor)| (name.as_str(), tensor))
        .collect();
    let mut rewritten = Cursor::new(Vec::new());
    gguf_file::write(&mut rewritten, &metadata, &tensor_refs)?;
    let file = Arc::new(quarry_kernels::map_bytes(rewritten.get_ref())?);
    let content = Content::read(&mut Cursor::new(&file[..]))?;
    Ok((content, file))
}

fn unreadable(path: &Path, error: &dyn std::fmt::Display) -> LlmError {
    LlmError::Misconfigured {
        provider: "local".to_owned(),
        reason: format!("cannot load the GGUF model {}: {error}", path.display()),
    }
}

fn inference(error: candle_core::Error) -> LlmError {
    LlmError::BadReply {
        provider: "local".to_owned(),
        url: "in-process".to_owned(),
        reason: format!("inference failed: {error}"),
    }
}
