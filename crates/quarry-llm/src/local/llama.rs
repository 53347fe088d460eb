//! The llama architecture (SmolLM2, Llama 3.x) on the memory-mapped GGUF: Q4_1 weights stay
//! 4-bit ([`quarry_kernels::q4_1`]), other block types go through candle's kernels. Compared with
//! candle-transformers' `quantized_llama`, the key-value cache is preallocated (no copy of the
//! whole cache per token) and grouped-query attention reads the shared key-value heads in place
//! instead of repeating them.

use std::sync::Arc;

use candle_core::quantized::QMatMul;
use candle_core::quantized::gguf_file::Content;
use candle_core::{DType, Device, IndexOp, Module, Result, Tensor};
use candle_nn::kv_cache::KvCache;
use candle_transformers::quantized_nn::RmsNorm;
use quarry_kernels::Mmap;
use quarry_kernels::q4_1::load_tensor;

/// Positions the cache holds before it grows (by as many again).
const CACHE_STEP: usize = 512;

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
    cache: KvCache,
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
                cache: KvCache::new(2, CACHE_STEP),
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
        })
    }

    /// Forgets the cached sequence.
    pub fn clear_kv_cache(&mut self) {
        for layer in &mut self.layers {
            layer.cache.reset();
        }
    }

    /// The last position's logits after `tokens` (shape `(1, seq)`) placed at `position`.
    pub fn forward(&mut self, tokens: &Tensor, position: usize) -> Result<Tensor> {
        let (batch, seq_len) = tokens.dims2()?;
        let mut hidden = self
            .embeddings
            .embedding(&tokens.flatten_all()?)?
            .reshape((batch, seq_len, ()))?;
        let mask = match seq_len {
            1 => None,
            _ => Some(causal_mask(seq_len, position, tokens.device())?),
        };
        let (cos, sin) = (
            self.cos.narrow(0, position, seq_len)?,
            self.sin.narrow(0, position, seq_len)?,
        );
        let shape = AttentionShape {
            heads: self.heads,
            kv_heads: self.kv_heads,
            head_dim: self.head_dim,
        };
        for layer in &mut self.layers {
            let attended = layer.attention(
                &layer.attention_norm.forward(&hidden)?,
                &shape,
                (&cos, &sin),
                mask.as_ref(),
            )?;
            hidden = (attended + hidden)?;
            let normed = layer.ffn_norm.forward(&hidden)?;
            let activated = (layer.gate.forward(&normed)?.silu()? * layer.up.forward(&normed)?)?;
            hidden = (layer.down.forward(&activated)? + hidden)?;
        }
        let last = self.norm.forward(&hidden)?.i((.., seq_len - 1, ..))?;
        self.output.forward(&last)
    }
}

struct AttentionShape {
    heads: usize,
    kv_heads: usize,
    head_dim: usize,
}

impl Layer {
    fn attention(
        &mut self,
        x: &Tensor,
        shape: &AttentionShape,
        (cos, sin): (&Tensor, &Tensor),
        mask: Option<&Tensor>,
    ) -> Result<Tensor> {
        let (batch, seq_len, width) = x.dims3()?;
        let split = |t: Tensor, heads: usize| {
            t.reshape((batch, seq_len, heads, shape.head_dim))?
                .transpose(1, 2)?
                .contiguous()
        };
        let query = split(self.query.forward(x)?, shape.heads)?;
        let key = split(self.key.forward(x)?, shape.kv_heads)?;
        let value = split(self.value.forward(x)?, shape.kv_heads)?;
        // GGUF llama weights are permuted for the interleaved rotation (pairs 2i, 2i + 1).
        let query = candle_nn::rotary_emb::rope_i(&query, cos, sin)?;
        let key = candle_nn::rotary_emb::rope_i(&key, cos, sin)?;
        let (key, value) = self.cache.append(&key, &value)?;
        let kv_len = key.dim(2)?;

        // The query heads that share a key-value head attend as one group of `group * seq_len`
        // rows: (batch, kv_heads, group * seq_len, head_dim).
        let group = shape.heads / shape.kv_heads;
        let query = query.reshape((batch, shape.kv_heads, group * seq_len, shape.head_dim))?;
        let scale = 1.0 / (shape.head_dim as f64).sqrt();
        let scores = (query.matmul(&key.t()?)? * scale)?;
        let scores = match mask {
            None => scores,
            Some(mask) => scores
                .reshape((batch, shape.kv_heads, group, seq_len, kv_len))?
                .broadcast_add(mask)?
                .reshape((batch, shape.kv_heads, group * seq_len, kv_len))?,
        };
        let weights = candle_nn::ops::softmax_last_dim(&scores)?;
        let attended = weights.matmul(&value.contiguous()?)?;
        let attended = attended
            .reshape((batch, shape.heads, seq_len, shape.head_dim))?
            .transpose(1, 2)?
            .reshape((batch, seq_len, width))?;
        self.attention_output.forward(&attended)
    }
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
