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
use candle_core::{Device, Module, Result, Tensor};
use candle_transformers::quantized_nn::RmsNorm;
use quarry_kernels::Mmap;
use quarry_kernels::load_tensor;

use super::batch::{AttentionShape, Batch, SequenceStep, attend_steps, rotary_tables, split_heads};
#[cfg(test)]
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
        let (cos, sin) = rotary_tables(rope_dim, rope_base, context_length)?;
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

    /// The last position's logits after `tokens` (shape `(1, seq)`) placed at `position` of
    /// the one sequence `cache` holds (cut back to `position` first).
    #[cfg(test)]
    pub fn forward(
        &self,
        cache: &mut SequenceCache,
        tokens: &Tensor,
        position: usize,
    ) -> Result<Tensor> {
        super::batch::read_one(|steps| self.forward_batch(steps), cache, tokens, position)
    }

    /// Reads each step's tokens after its cached ones, all sequences in one pass: the answer
    /// has, per step, the logits after its last token when they were asked for.
    pub fn forward_batch(&self, steps: &mut [SequenceStep<'_>]) -> Result<Vec<Option<Vec<f32>>>> {
        let Some(batch) = Batch::of(steps, self.cos.dim(0)?)? else {
            return Ok(steps.iter().map(|_| None).collect());
        };
        let mut hidden = self
            .embeddings
            .embedding(&batch.tokens)?
            .reshape((1, batch.total, ()))?;
        let rotation = (
            self.cos.index_select(&batch.positions, 0)?,
            self.sin.index_select(&batch.positions, 0)?,
        );
        let shape = AttentionShape {
            heads: self.heads,
            kv_heads: self.kv_heads,
            head_dim: self.head_dim,
            window: None,
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
        Batch::logits(steps, &hidden, &self.norm, &self.output)
    }
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
        let query = split_heads(self.query.forward(x)?, shape.heads, shape.head_dim)?;
        let key = split_heads(self.key.forward(x)?, shape.kv_heads, shape.head_dim)?;
        let value = split_heads(self.value.forward(x)?, shape.kv_heads, shape.head_dim)?;
        // GGUF llama weights are permuted for the interleaved rotation (pairs 2i, 2i + 1).
        let query = candle_nn::rotary_emb::rope_i(&query, cos, sin)?;
        let key = candle_nn::rotary_emb::rope_i(&key, cos, sin)?;
        let attended = attend_steps(index, (&query, &key, &value), shape, steps)?;
        self.attention_output.forward(&attended)
    }
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
        let ours = Llama::load(&content, &bytes, 1024, &Device::Cpu).expect("ours loads");
        let mut cache = SequenceCache::default();
        let mut theirs = quantized_llama::ModelWeights::from_gguf(
            content,
            &mut Cursor::new(&bytes[..]),
            &Device::Cpu,
        )
        .expect("candle's loads");
        side_by_side(
            &mut [
                &mut |input, position| theirs.forward(input, position),
                &mut |input, position| ours.forward(&mut cache, input, position),
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
        let exact = Llama::load(&exact, &exact_bytes, 1024, &device).unwrap();
        let four_bit = Llama::load(&header(&file), &file, 1024, &device).unwrap();
        let eight_bit = Llama::load(&widened, &widened_bytes, 1024, &device).unwrap();
        let mut caches: [SequenceCache; 3] = Default::default();
        let [exact_cache, four_cache, eight_cache] = &mut caches;
        side_by_side(
            &mut [
                &mut |input, position| exact.forward(exact_cache, input, position),
                &mut |input, position| four_bit.forward(four_cache, input, position),
                &mut |input, position| eight_bit.forward(eight_cache, input, position),
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
