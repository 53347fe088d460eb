//! The gemma3 architecture (Gemma 3 270M, 1B, …) on the GGUF, batched like [`super::llama`]:
//! the key-value state of each sequence lives in its [`SequenceCache`], so several sequences
//! are read in one pass and a sequence can start from a cached prefix.
//!
//! What sets Gemma 3 apart from llama: the embeddings are scaled by √width; queries and keys are
//! normalised per head before the rotation (the rotation is the non-interleaved one); five of
//! every six layers attend to the last `sliding_window` positions only and rotate with the local
//! base; every block's output is normalised again before the residual; the feed-forward gate is
//! GELU (tanh approximation), as llama.cpp and the reference implementation have it (candle's
//! `quantized_gemma3` uses SiLU there).

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

/// The feed-forward gate's activation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// GELU, tanh approximation: Gemma 3's.
    Gelu,
    /// SiLU: what candle's `quantized_gemma3` computes (the tests compare the rest with it).
    #[cfg(test)]
    Silu,
}

struct Layer {
    attention_norm: RmsNorm,
    query: QMatMul,
    key: QMatMul,
    value: QMatMul,
    query_norm: RmsNorm,
    key_norm: RmsNorm,
    attention_output: QMatMul,
    post_attention_norm: RmsNorm,
    ffn_norm: RmsNorm,
    gate: QMatMul,
    up: QMatMul,
    down: QMatMul,
    post_ffn_norm: RmsNorm,
    /// Positions attended to, for the local layers.
    window: Option<usize>,
}

/// A Gemma 3 model's weights.
pub struct Gemma3 {
    /// The token embedding table, kept quantized: a row is widened when its token is read.
    embeddings: QMatMul,
    embedding_scale: f64,
    layers: Vec<Layer>,
    norm: RmsNorm,
    output: QMatMul,
    heads: usize,
    kv_heads: usize,
    head_dim: usize,
    /// Rotation tables `(cos, sin)` of the global layers and of the local ones.
    global_rotation: (Tensor, Tensor),
    local_rotation: (Tensor, Tensor),
    gate: Gate,
}

impl Gemma3 {
    /// Loads the Gemma 3 model of `content` from the mapped GGUF `file`, with rotation tables
    /// for `context_length` positions.
    pub fn load(
        content: &Content,
        file: &Arc<Mmap>,
        context_length: usize,
        gate: Gate,
        device: &Device,
    ) -> Result<Gemma3> {
        let value = |key: &str| -> Result<&candle_core::quantized::gguf_file::Value> {
            content
                .metadata
                .get(&format!("gemma3.{key}"))
                .ok_or_else(|| candle_core::Error::Msg(format!("the GGUF has no gemma3.{key}")))
        };
        let number = |key: &str| -> Result<usize> { Ok(value(key)?.to_u32()? as usize) };
        let heads = number("attention.head_count")?;
        let kv_heads = number("attention.head_count_kv")?;
        let block_count = number("block_count")?;
        let embedding_length = number("embedding_length")?;
        let head_dim = number("attention.key_length")?;
        let sliding_window = number("attention.sliding_window")?;
        let pattern = number("attention.sliding_window_type").unwrap_or(6).max(1);
        let epsilon = f64::from(value("attention.layer_norm_rms_epsilon")?.to_f32()?);
        let global_base = value("rope.freq_base")
            .and_then(|base| base.to_f32())
            .unwrap_or(1_000_000.0);
        let local_base = value("rope.local_freq_base")
            .and_then(|base| base.to_f32())
            .unwrap_or(10_000.0);
        if heads == 0 || kv_heads == 0 || !heads.is_multiple_of(kv_heads) {
            candle_core::bail!("{heads} attention heads do not share {kv_heads} key-value heads");
        }
        let tensor = |name: &str| load_tensor(content, file, name, device);
        let matmul = |name: &str| QMatMul::from_qtensor(tensor(name)?);
        let norm = |name: &str| RmsNorm::from_qtensor(tensor(name)?, epsilon);

        let embeddings = matmul("token_embd.weight")?;
        let output = match content.tensor_infos.contains_key("output.weight") {
            true => matmul("output.weight")?,
            false => embeddings.clone(),
        };
        let mut layers = Vec::with_capacity(block_count);
        for index in 0..block_count {
            let name = |part: &str| format!("blk.{index}.{part}.weight");
            let local = !(index + 1).is_multiple_of(pattern);
            layers.push(Layer {
                attention_norm: norm(&name("attn_norm"))?,
                query: matmul(&name("attn_q"))?,
                key: matmul(&name("attn_k"))?,
                value: matmul(&name("attn_v"))?,
                query_norm: norm(&name("attn_q_norm"))?,
                key_norm: norm(&name("attn_k_norm"))?,
                attention_output: matmul(&name("attn_output"))?,
                post_attention_norm: norm(&name("post_attention_norm"))?,
                ffn_norm: norm(&name("ffn_norm"))?,
                gate: matmul(&name("ffn_gate"))?,
                up: matmul(&name("ffn_up"))?,
                down: matmul(&name("ffn_down"))?,
                post_ffn_norm: norm(&name("post_ffw_norm"))?,
                window: local.then_some(sliding_window),
            });
        }
        Ok(Gemma3 {
            embeddings,
            embedding_scale: (embedding_length as f64).sqrt(),
            layers,
            norm: norm("output_norm.weight")?,
            output,
            heads,
            kv_heads,
            head_dim,
            global_rotation: rotary_tables(head_dim, global_base, context_length)?,
            local_rotation: rotary_tables(head_dim, local_base, context_length)?,
            gate,
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
        let Some(batch) = Batch::of(steps, self.global_rotation.0.dim(0)?)? else {
            return Ok(steps.iter().map(|_| None).collect());
        };
        let mut hidden =
            (self
                .embeddings
                .embedding(&batch.tokens)?
                .reshape((1, batch.total, ()))?
                * self.embedding_scale)?;
        let select = |(cos, sin): &(Tensor, Tensor)| -> Result<(Tensor, Tensor)> {
            Ok((
                cos.index_select(&batch.positions, 0)?,
                sin.index_select(&batch.positions, 0)?,
            ))
        };
        let (global, local) = (
            select(&self.global_rotation)?,
            select(&self.local_rotation)?,
        );
        for (index, layer) in self.layers.iter().enumerate() {
            let shape = AttentionShape {
                heads: self.heads,
                kv_heads: self.kv_heads,
                head_dim: self.head_dim,
                window: layer.window,
            };
            let rotation = match layer.window {
                Some(_) => &local,
                None => &global,
            };
            let attended = layer.attention(
                index,
                &layer.attention_norm.forward(&hidden)?,
                &shape,
                rotation,
                steps,
            )?;
            hidden = (layer.post_attention_norm.forward(&attended)? + hidden)?;
            let normed = layer.ffn_norm.forward(&hidden)?;
            let gate = layer.gate.forward(&normed)?;
            let gate = match self.gate {
                Gate::Gelu => gate.gelu()?,
                #[cfg(test)]
                Gate::Silu => gate.silu()?,
            };
            let activated = (gate * layer.up.forward(&normed)?)?;
            let fed = layer.down.forward(&activated)?;
            hidden = (layer.post_ffn_norm.forward(&fed)? + hidden)?;
        }
        Batch::logits(steps, &hidden, &self.norm, &self.output)
    }
}

impl Layer {
    /// Attention over `x`, the new tokens of every step one after another: projections, the
    /// per-head norms and the rotation for all of them at once, then each step's queries
    /// against its own cache.
    fn attention(
        &self,
        index: usize,
        x: &Tensor,
        shape: &AttentionShape,
        (cos, sin): &(Tensor, Tensor),
        steps: &mut [SequenceStep<'_>],
    ) -> Result<Tensor> {
        let query = split_heads(self.query.forward(x)?, shape.heads, shape.head_dim)?;
        let key = split_heads(self.key.forward(x)?, shape.kv_heads, shape.head_dim)?;
        let value = split_heads(self.value.forward(x)?, shape.kv_heads, shape.head_dim)?;
        let query = candle_nn::rotary_emb::rope(&self.query_norm.forward(&query)?, cos, sin)?;
        let key = candle_nn::rotary_emb::rope(&self.key_norm.forward(&key)?, cos, sin)?;
        let attended = attend_steps(index, (&query, &key, &value), shape, steps)?;
        self.attention_output.forward(&attended)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use candle_transformers::models::quantized_gemma3;

    use super::*;

    fn argmax(logits: &[f32]) -> usize {
        (0..logits.len())
            .max_by(|&a, &b| logits[a].total_cmp(&logits[b]))
            .unwrap()
    }

    /// A prompt read in one pass gives the logits it gives read one token at a time: the same
    /// next token, and logits as close as the kernels allow (candle multiplies Q6_K weights by
    /// several rows through a tiled kernel whose activation rounding differs from its one-row
    /// kernel's).
    #[test]
    fn a_prompt_read_at_once_equals_it_read_token_by_token() {
        let Some(path) = quarry_testkit::test_gemma_gguf() else {
            return;
        };
        let file = Arc::new(quarry_kernels::map_file(&path).expect("the GGUF maps"));
        let content = Content::read(&mut Cursor::new(&file[..])).expect("a GGUF header");
        let model = Gemma3::load(&content, &file, 1024, Gate::Gelu, &Device::Cpu).unwrap();
        let prompt: Vec<u32> = vec![2, 105, 2364, 107, 818, 5279, 529, 7001, 563];
        let input = Tensor::new(prompt.as_slice(), &Device::Cpu)
            .unwrap()
            .unsqueeze(0)
            .unwrap();
        let at_once: Vec<f32> = model
            .forward(&mut SequenceCache::default(), &input, 0)
            .unwrap()
            .squeeze(0)
            .unwrap()
            .to_vec1()
            .unwrap();
        let mut cache = SequenceCache::default();
        let mut one_by_one: Vec<f32> = Vec::new();
        for (position, token) in prompt.iter().enumerate() {
            let input = Tensor::new(&[*token], &Device::Cpu)
                .unwrap()
                .unsqueeze(0)
                .unwrap();
            one_by_one = model
                .forward(&mut cache, &input, position)
                .unwrap()
                .squeeze(0)
                .unwrap()
                .to_vec1()
                .unwrap();
        }
        let dot: f32 = at_once.iter().zip(&one_by_one).map(|(a, b)| a * b).sum();
        let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
        let cosine = dot / (norm(&at_once) * norm(&one_by_one));
        assert_eq!(argmax(&at_once), argmax(&one_by_one));
        assert!(cosine > 0.999, "cosine {cosine}");
    }

    /// With candle's gate (SiLU), the forward pass (embedding scale, per-head norms, rotation,
    /// grouped attention, post-norms, local and global layers) matches candle-transformers'
    /// `quantized_gemma3` on the same weights: the same logits to float rounding, token by token
    /// (one row at a time, so both take the same kernels: see the test above).
    #[test]
    fn the_forward_pass_matches_candles_gemma3_with_its_gate() {
        let Some(path) = quarry_testkit::test_gemma_gguf() else {
            return;
        };
        // Both sides on the same blocks: the types Quarry widens to Q8_0 as it loads are
        // widened in the file candle reads too.
        let file = Arc::new(quarry_kernels::map_file(&path).expect("the GGUF maps"));
        let content = Content::read(&mut Cursor::new(&file[..])).expect("a GGUF header");
        let (content, file) = crate::local::model::requantized(
            content,
            file,
            crate::local::model::SCALAR_ONLY,
            candle_core::quantized::GgmlDType::Q8_0,
            &Device::Cpu,
        )
        .expect("the GGUF rewrites");
        let ours =
            Gemma3::load(&content, &file, 1024, Gate::Silu, &Device::Cpu).expect("ours loads");
        let mut cache = SequenceCache::default();
        let mut theirs = quantized_gemma3::ModelWeights::from_gguf(
            content,
            &mut Cursor::new(&file[..]),
            &Device::Cpu,
        )
        .expect("candle's loads");
        let mut tokens: Vec<u32> = vec![2];
        let mut position = 0;
        for _ in 0..12 {
            let input = Tensor::new(&tokens[position..], &Device::Cpu)
                .and_then(|input| input.unsqueeze(0))
                .unwrap();
            let mut logits = Vec::new();
            for forward in [
                &mut |input: &Tensor, at| theirs.forward(input, at),
                &mut |input: &Tensor, at| ours.forward(&mut cache, input, at),
            ] as [&mut dyn FnMut(&Tensor, usize) -> Result<Tensor>; 2]
            {
                let out: Vec<f32> = forward(&input, position)
                    .unwrap()
                    .squeeze(0)
                    .unwrap()
                    .to_vec1()
                    .unwrap();
                logits.push(out);
            }
            let gap = logits[0]
                .iter()
                .zip(&logits[1])
                .map(|(a, b)| (a - b).abs())
                .fold(0f32, f32::max);
            assert!(gap < 2e-2, "logits differ by {gap} after {tokens:?}");
            position = tokens.len();
            tokens.push(argmax(&logits[0]) as u32);
        }
    }
}
