//! What Quarry's own forward passes share (llama, gemma3): a batch of sequences read in one pass
//! ([`SequenceStep`], [`Batch`]), attention of one sequence's queries against its cache
//! ([`attend`]) with the causal (and sliding-window) mask, rotation tables, and the logits of
//! the rows asked for ([`Batch::logits`]).

use candle_core::quantized::QMatMul;
use candle_core::{DType, Device, Module, Result, Tensor};
use candle_transformers::quantized_nn::RmsNorm;

use super::cache::SequenceCache;

/// One sequence's part of a batched forward pass.
pub struct SequenceStep<'a> {
    /// Its key-value state; the new tokens are appended to it.
    pub cache: &'a mut SequenceCache,
    /// The tokens to read, placed after the cached ones.
    pub tokens: &'a [u32],
    /// Whether the logits after its last token are wanted (not for a prompt's earlier chunks).
    pub logits: bool,
}

/// The steps' tokens one after another, with each token's position in its own sequence.
pub struct Batch {
    pub tokens: Tensor,
    pub positions: Tensor,
    pub total: usize,
}

impl Batch {
    /// The tokens of `steps`, or `None` when there are none; a position past `window` is an
    /// error.
    pub fn of(steps: &[SequenceStep<'_>], window: usize) -> Result<Option<Batch>> {
        let mut tokens = Vec::new();
        let mut positions = Vec::new();
        for step in steps {
            let start = step.cache.len();
            tokens.extend_from_slice(step.tokens);
            positions.extend((start..start + step.tokens.len()).map(|position| position as u32));
        }
        if tokens.is_empty() {
            return Ok(None);
        }
        if positions
            .iter()
            .any(|&position| position as usize >= window)
        {
            candle_core::bail!("a sequence runs past the context window of {window} tokens");
        }
        Ok(Some(Batch {
            total: tokens.len(),
            tokens: Tensor::new(tokens.as_slice(), &Device::Cpu)?,
            positions: Tensor::new(positions.as_slice(), &Device::Cpu)?,
        }))
    }

    /// After the pass: records each step's tokens in its cache, and answers, per step, the
    /// logits after its last token when asked for. Only those rows of `hidden` (`(1, total,
    /// width)`) go through `norm` and `output`.
    pub fn logits(
        steps: &mut [SequenceStep<'_>],
        hidden: &Tensor,
        norm: &RmsNorm,
        output: &QMatMul,
    ) -> Result<Vec<Option<Vec<f32>>>> {
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
                let rows = Tensor::new(wanted.as_slice(), hidden.device())?;
                output
                    .forward(&norm.forward(&hidden.index_select(&rows, 1)?)?)?
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

/// One sequence read on its own through `forward_batch`: the last position's logits after
/// `tokens` (shape `(1, seq)`) placed at `position` of `cache` (cut back to `position` first),
/// as candle's models answer them (the tests compare with those).
#[cfg(test)]
pub fn read_one(
    forward_batch: impl FnOnce(&mut [SequenceStep<'_>]) -> Result<Vec<Option<Vec<f32>>>>,
    cache: &mut SequenceCache,
    tokens: &Tensor,
    position: usize,
) -> Result<Tensor> {
    let tokens = tokens.flatten_all()?.to_vec1::<u32>()?;
    cache.truncate(position);
    let logits = forward_batch(&mut [SequenceStep {
        cache,
        tokens: &tokens,
        logits: true,
    }])?;
    let logits = logits.into_iter().next().flatten().unwrap_or_default();
    Tensor::new(logits, &Device::Cpu)?.unsqueeze(0)
}

/// The heads of an attention layer.
pub struct AttentionShape {
    pub heads: usize,
    pub kv_heads: usize,
    pub head_dim: usize,
    /// Keys further back than this many positions are not attended to (Gemma's local layers).
    pub window: Option<usize>,
}

/// Each step's queries, keys and values (`(1, heads, total, head_dim)`, rotated, the steps' rows
/// one after another) through attention against the step's own cache, the new keys and values
/// appended to it for `layer`: `(1, total, heads * head_dim)`.
pub fn attend_steps(
    layer: usize,
    (query, key, value): (&Tensor, &Tensor, &Tensor),
    shape: &AttentionShape,
    steps: &mut [SequenceStep<'_>],
) -> Result<Tensor> {
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
            layer,
            &part(key)?.contiguous()?,
            &part(value)?.contiguous()?,
        )?;
        outputs.push(attend(&part(query)?, &keys, &values, position, shape)?);
        start += seq_len;
    }
    match outputs.len() {
        1 => Ok(outputs.pop().expect("one output")),
        _ => Tensor::cat(&outputs, 1),
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
    // rows: (batch, kv_heads, group * seq_len, head_dim), reading the shared heads in place.
    let group = shape.heads / shape.kv_heads;
    let query =
        query
            .contiguous()?
            .reshape((batch, shape.kv_heads, group * seq_len, shape.head_dim))?;
    let scale = 1.0 / (shape.head_dim as f64).sqrt();
    let scores = (query.matmul(&keys.t()?)? * scale)?;
    let windowed = shape.window.is_some_and(|window| kv_len > window);
    let scores = match seq_len == 1 && !windowed {
        true => scores,
        false => scores
            .reshape((batch, shape.kv_heads, group, seq_len, kv_len))?
            .broadcast_add(&causal_mask(seq_len, position, shape.window)?)?
            .reshape((batch, shape.kv_heads, group * seq_len, kv_len))?,
    };
    let weights = candle_nn::ops::softmax_last_dim(&scores)?;
    weights
        .matmul(&values.contiguous()?)?
        .reshape((batch, shape.heads, seq_len, shape.head_dim))?
        .transpose(1, 2)?
        .reshape((batch, seq_len, shape.heads * shape.head_dim))
}

/// `(seq_len, position + seq_len)`: 0 where a query may attend (an earlier or its own
/// position, less than `window` back), -inf elsewhere.
fn causal_mask(seq_len: usize, position: usize, window: Option<usize>) -> Result<Tensor> {
    let kv_len = position + seq_len;
    let values: Vec<f32> = (0..seq_len)
        .flat_map(|i| {
            let query = position + i;
            (0..kv_len).map(move |key| {
                let visible = key <= query && window.is_none_or(|window| query - key < window);
                if visible { 0.0 } else { f32::NEG_INFINITY }
            })
        })
        .collect();
    Tensor::from_vec(values, (seq_len, kv_len), &Device::Cpu)
}

/// The rotation's cosines and sines, `(positions, rope_dim / 2)` each.
pub fn rotary_tables(rope_dim: usize, base: f32, positions: usize) -> Result<(Tensor, Tensor)> {
    let device = &Device::Cpu;
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

/// `(1, total, heads * head_dim)` as `(1, heads, total, head_dim)`.
pub fn split_heads(t: Tensor, heads: usize, head_dim: usize) -> Result<Tensor> {
    let (batch, total, _) = t.dims3()?;
    t.reshape((batch, total, heads, head_dim))?
        .transpose(1, 2)?
        .contiguous()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mask_is_causal_and_keeps_to_the_window() {
        let mask = causal_mask(2, 3, Some(2))
            .unwrap()
            .to_vec2::<f32>()
            .unwrap();
        let visible = |row: &[f32]| -> Vec<bool> { row.iter().map(|v| *v == 0.0).collect() };
        // Query at position 3 sees 2 and 3; at 4, sees 3 and 4.
        assert_eq!(visible(&mask[0]), [false, false, true, true, false]);
        assert_eq!(visible(&mask[1]), [false, false, false, true, true]);
        let full = causal_mask(1, 2, None).unwrap().to_vec2::<f32>().unwrap();
        assert_eq!(visible(&full[0]), [true, true, true]);
    }
}
