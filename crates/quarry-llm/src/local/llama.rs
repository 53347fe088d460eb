//! The llama architecture (SmolLM2, Llama 3.x) on the memory-mapped GGUF: Q4_1 weights stay
//! 4-bit ([`quarry_kernels::q4_1`]), other block types go through candle's kernels. Compared with
//! candle-transformers' `quantized_llama`, the key-value state lives outside the weights, one
//! [`SequenceCache`] per sequence, so one forward pass reads the new tokens of several sequences
//! at once (every weight matrix multiplied once for all of them; attention per sequence, each
//! against its own cache), and a sequence can start from a cached prefix; grouped-query attention
//! reads the shared key-value heads in place instead of repeating them.

use std::sync::Arc;

use candle_core::quantized::QMatMul;
use candle_core::quantized::gguf_file::Content;
use candle_core::{DType, Device, Module, Result, Tensor};
use candle_transformers::quantized_nn::RmsNorm;
use quarry_kernels::Mmap;
use quarry_kernels::q4_1::load_tensor;

use super::cache::SequenceCache;

struct Layer {
    attention_norm: RmsNorm,
    query: QMatMul,
    key: QMatMul,
    value: QMatMul,
    attention_output: QMatMul,
    ffn_norm: RmsNorm,
    gate: QMatMul,
    up: QMatMul,
    down: QMatMul,
}

/// A llama model's weights and key-value cache.
pub struct Llama {
    /// The token embedding table, kept quantized: a row is widened when its token is read.
    embeddings: QMatMul,
    layers: Vec<Layer>,
    norm: RmsNorm,
    output: QMatMul,
    heads: usize,
    kv_heads: usize,
    head_dim: usize,
    cos: Tensor,
    sin: Tensor,
    /// The sequence of [`forward`](Self::forward), which reads one sequence at a time.
    solo: SequenceCache,
}

/// One sequence's part of a batched forward pass.
pub struct SequenceStep<'a> {
    /// Its key-value state; the new tokens are appended to it.
    pub cache: &'a mut SequenceCache,
    /// The tokens to read, placed after the cached ones.
    pub tokens: &'a [u32],
    /// Whether the logits after its last token are wanted (not for a prompt's earlier chunks).
    pub logits: bool,
}

impl Llama {
    /// Loads the llama model of `content` from the mapped GGUF `file`.
    /// `context_length` positions get rotation tables.
    pub fn load(
        content: &Content,
        file: &Arc<Mmap>,
        context_length: usize,
        device: &Device,
    ) -> Result<Llama> {
        let number = |key: &str| -> Result<&candle_core::quantized::gguf_file::Value> {
            content
                .metadata
                .get(key)
                .ok_or_else(|| candle_core::Error::Msg(format!("the GGUF has no {key}")))
        };
        let heads = number("llama.attention.head_count")?.to_u32()? as usize;
        let kv_heads = number("llama.attention.head_count_kv")?.to_u32()? as usize;
        let block_count = number("llama.block_count")?.to_u32()? as usize;
        let embedding_length = number("llama.embedding_length")?.to_u32()? as usize;
        let rope_dim = number("llama.rope.dimension_count")?.to_u32()? as usize;
        let epsilon = f64::from(number("llama.attention.layer_norm_rms_epsilon")?.to_f32()?);
        let rope_base = number("llama.rope.freq_base")
            .and_then(|value| value.to_f32())
            .unwrap_or(10_000.0);
        if heads == 0 || kv_heads == 0 || !heads.is_multiple_of(kv_heads) {
            candle_core::bail!("{heads} attention heads do not share {kv_heads} key-value heads");
        }
        let tensor = |name: &str| load_tensor(content, file, name, device);
        let matmul = |name: &str| QMatMul::from_qtensor(tensor(name)?);
        let norm = |name: &str| RmsNorm::from_qtensor(tensor(name)?, epsilon);

        let embeddings = matmul("token_embd.weight")?;
        // Models with tied embeddings have no output matrix: the embedding table is it.
        let output = match content.tensor_infos.contains_key("output.weight") {
            true => matmul("output.weight")?,
            false => embeddings.clone(),
        };
        let mut layers = Vec::with_capacity(block_count);
        for index in 0..block_count {
            let name = |part: &str| format!("blk.{index}.{part}.weight");
            layers.push(Layer {
                attention_norm: norm(&name("attn_norm"))?,
                query: matmul(&name("attn_q"))?,
                key: matmul(&name("attn_k"))?,
                value: matmul(&name("attn_v"))?,
                attention_output: matmul(&name("attn_output"))?,
                ffn_norm: norm(&name("ffn_norm"))?,
                gate: matmul(&name("ffn_gate"))?,
                up: matmul(&name("ffn_up"))?,
                down: matmul(&name("ffn_down"))?,
            });
        }
        let (cos, sin) = rotary_tables(rope_dim, rope_base, context_length, device)?;
        Ok(Llama {
            embeddings,
            layers,
            norm: norm("output_norm.weight")?,
            output,
            heads,
            kv_heads,
            head_dim: embedding_length / heads,
            cos,
            sin,
            solo: SequenceCache::default(),
        })
    }

    /// The last position's logits after `tokens` (shape `(1, seq)`) placed at `position` of
    /// the one sequence this method reads (its cache cut back to `position`).
    pub fn forward(&mut self, tokens: &Tensor, position: usize) -> Result<Tensor> {
        let tokens = tokens.flatten_all()?.to_vec1::<u32>()?;
        let mut solo = std::mem::take(&mut self.solo);
        solo.truncate(position);
        let logits = self.forward_batch(&mut [SequenceStep {
            cache: &mut solo,
            tokens: &tokens,
            logits: true,
        }]);
        self.solo = solo;
        let logits = logits?.pop().flatten().unwrap_or_default();
        Tensor::new(logits, &Device::Cpu)?.unsqueeze(0)
    }

    /// Reads each step's tokens after its cached ones, all sequences in one pass: the answer
    /// has, per step, the logits after its last token when they were asked for.
    pub fn forward_batch(&self, steps: &mut [SequenceStep<'_>]) -> Result<Vec<Option<Vec<f32>>>> {
        let device = Device::Cpu;
        let mut all_tokens = Vec::new();
        let mut positions = Vec::new();
        for step in steps.iter() {
            let start = step.cache.len();
            all_tokens.extend_from_slice(step.tokens);
            positions.extend((start..start + step.tokens.len()).map(|position| position as u32));
        }
        let total = all_tokens.len();
        if total == 0 {
            return Ok(steps.iter().map(|_| None).collect());
        }
        let window = self.cos.dim(0)?;
        if positions
            .iter()
            .any(|&position| position as usize >= window)
        {
            candle_core::bail!("a sequence runs past the context window");
        }
        let mut hidden = self
            .embeddings
            .embedding(&Tensor::new(all_tokens.as_slice(), &device)?)?
            .reshape((1, total, ()))?;
        let positions = Tensor::new(positions.as_slice(), &device)?;
        let rotation = (
            self.cos.index_select(&positions, 0)?,
            self.sin.index_select(&positions, 0)?,
        );
        let shape = AttentionShape {
            heads: self.heads,
            kv_heads: self.kv_heads,
            head_dim: self.head_dim,
        };
        for (index, layer) in self.layers.iter().enumerate() {
            let attended = layer.attention(
                index,
                &layer.attention_norm.forward(&hidden)?,
                &shape,
                (&rotation.0, &rotation.1),
                steps,
            )?;
            hidden = (attended + hidden)?;
            let normed = layer.ffn_norm.forward(&hidden)?;
            let activated = (layer.gate.forward(&normed)?.silu()? * layer.up.forward(&normed)?)?;
            hidden = (layer.down.forward(&activated)? + hidden)?;
        }
        // Only the rows whose logits are wanted go through the output matrix.
        let mut wanted = Vec::new();
        let mut end = 0;
        for step in steps.iter_mut() {
            end += step.tokens.len();
            step.cache.extend_tokens(step.tokens);
            if step.logits && !step.tokens.is_empty() {
                wanted.push(end as u32 - 1);
            }
        }
        let mut rows = match wanted.is_empty() {
            true => Vec::new(),
            false => {
                let last = hidden.index_select(&Tensor::new(wanted.as_slice(), &device)?, 1)?;
                self.output
                    .forward(&self.norm.forward(&last)?)?
                    .squeeze(0)?
                    .to_vec2::<f32>()?
            }
        }
        .into_iter();
        Ok(steps
            .iter()
            .map(|step| match step.logits && !step.tokens.is_empty() {
                true => rows.next(),
                false => None,
            })
            .collect())
    }
}

struct AttentionShape {
    heads: usize,
    kv_heads: usize,
    head_dim: usize,
}

impl Layer {
    /// Attention over `x`, the new tokens of every step one after another: the projections and
    /// rotation for all of them at once, then each step's queries against its own cache.
    fn attention(
        &self,
        index: usize,
        x: &Tensor,
        shape: &AttentionShape,
        (cos, sin): (&Tensor, &Tensor),
        steps: &mut [SequenceStep<'_>],
    ) -> Result<Tensor> {
        let (batch, total, width) = x.dims3()?;
        let split = |t: Tensor, heads: usize| {
            t.reshape((batch, total, heads, shape.head_dim))?
                .transpose(1, 2)?
                .contiguous()
        };
        let query = split(self.query.forward(x)?, shape.heads)?;
        let key = split(self.key.forward(x)?, shape.kv_heads)?;
        let value = split(self.value.forward(x)?, shape.kv_heads)?;
        // GGUF llama weights are permuted for the interleaved rotation (pairs 2i, 2i + 1).
        let query = candle_nn::rotary_emb::rope_i(&query, cos, sin)?;
        let key = candle_nn::rotary_emb::rope_i(&key, cos, sin)?;
        let mut outputs = Vec::with_capacity(steps.len());
        let mut start = 0;
        for step in steps.iter_mut() {
            let seq_len = step.tokens.len();
            if seq_len == 0 {
                continue;
            }
            let part = |t: &Tensor| t.narrow(2, start, seq_len);
            let position = step.cache.len();
            let (keys, values) = step.cache.append(
                index,
                &part(&key)?.contiguous()?,
                &part(&value)?.contiguous()?,
            )?;
            outputs.push(attend(&part(&query)?, &keys, &values, position, shape)?);
            start += seq_len;
        }
        let attended = match outputs.len() {
            1 => outputs.pop().expect("one output"),
            _ => Tensor::cat(&outputs, 1)?,
        };
        self.attention_output
            .forward(&attended.reshape((batch, total, width))?)
    }
}

/// One sequence's queries `(1, heads, seq_len, head_dim)`, placed at `position`, against its
/// keys and values `(1, kv_heads, kv_len, head_dim)`: `(1, seq_len, heads * head_dim)`.
fn attend(
    query: &Tensor,
    keys: &Tensor,
    values: &Tensor,
    position: usize,
    shape: &AttentionShape,
) -> Result<Tensor> {
    let (batch, _, seq_len, _) = query.dims4()?;
    let kv_len = keys.dim(2)?;
    // The query heads that share a key-value head attend as one group of `group * seq_len`
    // rows: (batch, kv_heads, group * seq_len, head_dim).
    let group = shape.heads / shape.kv_heads;
    let query =
        query
            .contiguous()?
            .reshape((batch, shape.kv_heads, group * seq_len, shape.head_dim))?;
    let scale = 1.0 / (shape.head_dim as f64).sqrt();
    let scores = (query.matmul(&keys.t()?)? * scale)?;
    let scores = match seq_len {
        1 => scores,
        _ => scores
            .reshape((batch, shape.kv_heads, group, seq_len, kv_len))?
            .broadcast_add(&causal_mask(seq_len, position, query.device())?)?
            .reshape((batch, shape.kv_heads, group * seq_len, kv_len))?,
    };
    let weights = candle_nn::ops::softmax_last_dim(&scores)?;
    weights
        .matmul(&values.contiguous()?)?
        .reshape((batch, shape.heads, seq_len, shape.head_dim))?
        .transpose(1, 2)?
        .reshape((batch, seq_len, shape.heads * shape.head_dim))
}

/// `(seq_len, position + seq_len)`: 0 where a query may attend, -inf after it.
fn causal_mask(seq_len: usize, position: usize, device: &Device) -> Result<Tensor> {
    let kv_len = position + seq_len;
    let values: Vec<f32> = (0..seq_len)
        .flat_map(|i| {
            (0..kv_len).map(move |j| match j > position + i {
                true => f32::NEG_INFINITY,
                false => 0.0,
            })
        })
        .collect();
    Tensor::from_vec(values, (seq_len, kv_len), device)
}

/// The rotation's cosines and sines for every position the context can hold.
fn rotary_tables(
    rope_dim: usize,
    base: f32,
    positions: usize,
    device: &Device,
) -> Result<(Tensor, Tensor)> {
    let inverse: Vec<f32> = (0..rope_dim)
        .step_by(2)
        .map(|i| 1.0 / base.powf(i as f32 / rope_dim as f32))
        .collect();
    let inverse = Tensor::new(inverse.as_slice(), device)?;
    let angles = Tensor::arange(0, positions as u32, device)?
        .to_dtype(DType::F32)?
        .reshape((positions, 1))?
        .broadcast_mul(&inverse.reshape((1, ()))?)?;
    Ok((angles.cos()?, angles.sin()?))
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use candle_core::quantized::gguf_file::Content;
    use candle_transformers::models::quantized_llama;

    use super::*;
    use crate::local::model::{SCALAR_ONLY, requantized};
    use candle_core::quantized::GgmlDType;

    fn header(file: &Mmap) -> Content {
        Content::read(&mut Cursor::new(&file[..])).expect("a GGUF header")
    }

    fn argmax(logits: &[f32]) -> usize {
        (0..logits.len())
            .max_by(|&a, &b| logits[a].total_cmp(&logits[b]))
            .unwrap()
    }

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
        let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
        dot / (norm(a) * norm(b))
    }

    type Forward<'a> = &'a mut dyn FnMut(&Tensor, usize) -> Result<Tensor>;
    /// Checks one step's logits (one set per model) after the tokens so far.
    type Comparison<'a> = &'a dyn Fn(&[Vec<f32>], &[u32]);

    /// The prompt and then a dozen greedy tokens through several models; `compare` sees each
    /// step's logits, one set per model. The first model's choices drive the sequence.
    fn side_by_side(models: &mut [Forward<'_>], compare: Comparison<'_>) {
        let mut tokens: Vec<u32> = vec![1, 4093, 314, 253, 1346, 282, 260, 3120, 30];
        let mut position = 0;
        for _ in 0..12 {
            let input = Tensor::new(&tokens[position..], &Device::Cpu)
                .and_then(|input| input.unsqueeze(0))
                .unwrap();
            let logits: Vec<Vec<f32>> = models
                .iter_mut()
                .map(|model| {
                    let logits = model(&input, position).unwrap();
                    logits.squeeze(0).unwrap().to_vec1().unwrap()
                })
                .collect();
            compare(&logits, &tokens);
            position = tokens.len();
            tokens.push(argmax(&logits[0]) as u32);
        }
    }

    /// The model at `path` with its `from` tensors requantized to `to`.
    fn requantized_model(
        path: &std::path::Path,
        from: &[GgmlDType],
        to: GgmlDType,
    ) -> (Content, Arc<Mmap>) {
        let file = Arc::new(quarry_kernels::map_file(path).expect("the GGUF maps"));
        requantized(header(&file), file, from, to, &Device::Cpu).unwrap()
    }

    /// The forward pass (rotation, cache, grouped attention, mask) matches candle-transformers'
    /// `quantized_llama` on identical weights and kernels (the model widened to Q8_0 for both):
    /// the same logits to float rounding, on the prompt and token by token after it.
    #[test]
    fn the_forward_pass_matches_candles_llama() {
        let Some(path) = quarry_testkit::test_gguf() else {
            return;
        };
        let (content, bytes) = requantized_model(&path, SCALAR_ONLY, GgmlDType::Q8_0);
        let mut ours = Llama::load(&content, &bytes, 1024, &Device::Cpu).expect("ours loads");
        let mut theirs = quantized_llama::ModelWeights::from_gguf(
            content,
            &mut Cursor::new(&bytes[..]),
            &Device::Cpu,
        )
        .expect("candle's loads");
        side_by_side(
            &mut [
                &mut |input, position| theirs.forward(input, position),
                &mut |input, position| ours.forward(input, position),
            ],
            &|logits, tokens| {
                let gap = logits[0]
                    .iter()
                    .zip(&logits[1])
                    .map(|(a, b)| (a - b).abs())
                    .fold(0f32, f32::max);
                assert!(gap < 1e-2, "logits differ by {gap} after {tokens:?}");
            },
        );
    }

    /// The 4-bit kernel against the exact product (the weights widened to f32): it picks the
    /// same greedy tokens, and its logits are no further from exact than those of the weights
    /// requantized to Q8_0 through candle's kernel (what Quarry did before), to within rounding.
    #[test]
    fn q4_1_products_are_as_close_to_exact_as_candles_q8_0() {
        let Some(path) = quarry_testkit::test_gguf() else {
            return;
        };
        let device = Device::Cpu;
        let file = Arc::new(quarry_kernels::map_file(&path).expect("the GGUF maps"));
        let (exact, exact_bytes) =
            requantized_model(&path, &[GgmlDType::Q4_1, GgmlDType::Q8_0], GgmlDType::F32);
        let (widened, widened_bytes) = requantized_model(&path, SCALAR_ONLY, GgmlDType::Q8_0);
        let mut exact = Llama::load(&exact, &exact_bytes, 1024, &device).unwrap();
        let mut four_bit = Llama::load(&header(&file), &file, 1024, &device).unwrap();
        let mut eight_bit = Llama::load(&widened, &widened_bytes, 1024, &device).unwrap();
        side_by_side(
            &mut [
                &mut |input, position| exact.forward(input, position),
                &mut |input, position| four_bit.forward(input, position),
                &mut |input, position| eight_bit.forward(input, position),
            ],
            &|logits, tokens| {
                let (four, eight) = (
                    cosine(&logits[0], &logits[1]),
                    cosine(&logits[0], &logits[2]),
                );
                assert_eq!(
                    argmax(&logits[1]),
                    argmax(&logits[0]),
                    "the next token differs after {tokens:?}"
                );
                assert!(
                    four > eight - 0.005,
                    "4-bit cosine {four}, Q8_0 {eight} after {tokens:?}"
                );
            },
        );
    }
}
