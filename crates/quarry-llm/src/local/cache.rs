//! The key-value state of sequences: one [`SequenceCache`] per sequence being decoded, and the
//! [`PrefixCache`] of recent ones, from which a new reply starts at the longest prefix its prompt
//! shares with a prompt (and reply) already read.
//!
//! A retry resends the conversation plus one feedback message, a chat's next turn resends the
//! history, the field pipeline asks about many fields of one document: each starts where an
//! earlier sequence's tokens stop matching, instead of reading its prompt from scratch.

use candle_core::{DType, Result, Tensor};

/// Positions a layer's cache grows by.
const CACHE_STEP: usize = 256;

/// One layer's keys and values, `(1, kv_heads, capacity, head_dim)` each, of which the first
/// `len` positions hold the sequence.
#[derive(Default)]
struct LayerCache {
    keys: Option<Tensor>,
    values: Option<Tensor>,
    len: usize,
}

impl LayerCache {
    fn capacity(&self) -> usize {
        self.keys
            .as_ref()
            .and_then(|keys| keys.dim(2).ok())
            .unwrap_or(0)
    }

    fn bytes(&self) -> usize {
        self.keys.as_ref().map_or(0, |keys| {
            2 * keys.elem_count() * keys.dtype().size_in_bytes()
        })
    }

    /// Appends `(1, kv_heads, n, head_dim)` keys and values after the first `len` positions and
    /// answers all of them.
    fn append(&mut self, keys: &Tensor, values: &Tensor) -> Result<(Tensor, Tensor)> {
        let added = keys.dim(2)?;
        let needed = self.len + added;
        if needed > self.capacity() {
            let (_, heads, _, head_dim) = keys.dims4()?;
            let capacity = needed.next_multiple_of(CACHE_STEP);
            let grow = |old: &Option<Tensor>| -> Result<Tensor> {
                let grown =
                    Tensor::zeros((1, heads, capacity, head_dim), DType::F32, keys.device())?;
                if let Some(old) = old.as_ref().filter(|_| self.len > 0) {
                    grown.slice_set(&old.narrow(2, 0, self.len)?.contiguous()?, 2, 0)?;
                }
                Ok(grown)
            };
            self.keys = Some(grow(&self.keys)?);
            self.values = Some(grow(&self.values)?);
        }
        let (Some(all_keys), Some(all_values)) = (&self.keys, &self.values) else {
            candle_core::bail!("the key-value cache was not allocated");
        };
        all_keys.slice_set(&keys.contiguous()?, 2, self.len)?;
        all_values.slice_set(&values.contiguous()?, 2, self.len)?;
        self.len = needed;
        Ok((
            all_keys.narrow(2, 0, needed)?,
            all_values.narrow(2, 0, needed)?,
        ))
    }
}

/// The key-value state of one sequence and the tokens it holds, in order.
#[derive(Default)]
pub struct SequenceCache {
    layers: Vec<LayerCache>,
    tokens: Vec<u32>,
}

impl SequenceCache {
    /// The tokens whose keys and values are held.
    pub fn tokens(&self) -> &[u32] {
        &self.tokens
    }

    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Memory the cache holds, in bytes.
    pub fn bytes(&self) -> usize {
        self.layers.iter().map(LayerCache::bytes).sum()
    }

    /// Keeps the first `len` positions (their keys and values stay; later ones are overwritten).
    pub fn truncate(&mut self, len: usize) {
        self.tokens.truncate(len);
        for layer in &mut self.layers {
            layer.len = layer.len.min(len);
        }
    }

    /// A copy of the first `len` positions: a sequence whose prompt starts as this one's does
    /// starts from it instead of reading that start again.
    pub fn prefix_copy(&self, len: usize) -> Result<SequenceCache> {
        let len = len.min(self.len());
        let mut copy = SequenceCache {
            layers: Vec::with_capacity(self.layers.len()),
            tokens: self.tokens[..len].to_vec(),
        };
        for (index, layer) in self.layers.iter().enumerate() {
            let (Some(keys), Some(values)) = (&layer.keys, &layer.values) else {
                continue;
            };
            let kept = len.min(layer.len);
            copy.append(
                index,
                &keys.narrow(2, 0, kept)?,
                &values.narrow(2, 0, kept)?,
            )?;
        }
        Ok(copy)
    }

    /// Records `tokens` as read (architectures whose key-value state candle keeps).
    pub fn extend_tokens(&mut self, tokens: &[u32]) {
        self.tokens.extend_from_slice(tokens);
    }

    /// Appends layer `layer`'s keys and values of new tokens; answers the layer's whole keys and
    /// values. The tokens themselves are recorded once, by [`extend_tokens`](Self::extend_tokens).
    pub fn append(
        &mut self,
        layer: usize,
        keys: &Tensor,
        values: &Tensor,
    ) -> Result<(Tensor, Tensor)> {
        if self.layers.len() <= layer {
            self.layers.resize_with(layer + 1, LayerCache::default);
        }
        self.layers[layer].append(keys, values)
    }
}

/// How an architecture's key-value state can be reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reuse {
    /// Quarry's own forward pass: any number of sequences, each cut back to any prefix.
    Prefix,
    /// candle's models keep one sequence inside the weights: it is reused only when the new
    /// prompt continues it.
    Continuation,
}

/// Sequences kept after their replies, within a memory budget, least recently used dropped
/// first.
pub struct PrefixCache {
    idle: Vec<(SequenceCache, u64)>,
    budget_bytes: usize,
    reuse: Reuse,
    clock: u64,
}

impl PrefixCache {
    pub fn new(budget_bytes: usize, reuse: Reuse) -> PrefixCache {
        PrefixCache {
            idle: Vec::new(),
            budget_bytes,
            reuse,
            clock: 0,
        }
    }

    /// The kept sequence `prompt` would start from, and how many of its tokens that one holds
    /// (at least one; never the whole prompt: its last token is read again for its logits).
    fn best_for(&self, prompt: &[u32]) -> Option<(usize, usize)> {
        let usable = prompt.len().saturating_sub(1);
        self.idle
            .iter()
            .enumerate()
            .map(|(index, (cache, _))| {
                let shared = common_prefix(cache.tokens(), prompt).min(usable);
                let reusable = match self.reuse {
                    Reuse::Prefix => true,
                    Reuse::Continuation => shared == cache.len(),
                };
                (index, if reusable { shared } else { 0 })
            })
            .filter(|&(_, shared)| shared > 0)
            .max_by_key(|&(_, shared)| shared)
    }

    /// The cache a sequence with `prompt` starts from, and how many of the prompt's tokens it
    /// holds already.
    pub fn take(&mut self, prompt: &[u32]) -> (SequenceCache, usize) {
        match self.best_for(prompt) {
            Some((index, shared)) => {
                let (mut cache, _) = self.idle.swap_remove(index);
                cache.truncate(shared);
                (cache, shared)
            }
            None => {
                if self.reuse == Reuse::Continuation {
                    // The model's one sequence is about to be replaced.
                    self.idle.clear();
                }
                (SequenceCache::default(), 0)
            }
        }
    }

    /// How many of `prompt`'s tokens [`take`](Self::take) would start it after.
    pub fn shared_with(&self, prompt: &[u32]) -> usize {
        self.best_for(prompt).map_or(0, |(_, shared)| shared)
    }

    /// Keeps `cache` for later prompts, then drops the least recently used sequences until the
    /// kept ones and `active_bytes` (the caches of sequences still decoding) fit the budget.
    pub fn put_back(&mut self, cache: SequenceCache, active_bytes: usize) {
        self.clock += 1;
        if self.reuse == Reuse::Continuation {
            self.idle.clear();
        }
        if cache.len() > 0 {
            self.idle.push((cache, self.clock));
        }
        self.trim(active_bytes);
    }

    /// Drops the least recently used sequences until the kept ones and `active_bytes` fit.
    pub fn trim(&mut self, active_bytes: usize) {
        while !self.idle.is_empty() && self.bytes() + active_bytes > self.budget_bytes {
            let oldest = (0..self.idle.len())
                .min_by_key(|&index| self.idle[index].1)
                .unwrap_or(0);
            self.idle.swap_remove(oldest);
        }
    }

    /// Memory the kept sequences hold, in bytes.
    pub fn bytes(&self) -> usize {
        self.idle.iter().map(|(cache, _)| cache.bytes()).sum()
    }

    /// How many sequences are kept.
    pub fn len(&self) -> usize {
        self.idle.len()
    }
}

/// How many leading tokens `a` and `b` share.
pub fn common_prefix(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use candle_core::Device;

    use super::*;

    fn cache_of(tokens: &[u32], positions: usize) -> SequenceCache {
        let mut cache = SequenceCache::default();
        let keys = Tensor::ones((1, 2, positions, 4), DType::F32, &Device::Cpu).unwrap();
        cache.append(0, &keys, &keys).unwrap();
        cache.extend_tokens(tokens);
        cache
    }

    #[test]
    fn a_prompt_starts_from_the_longest_shared_prefix_and_reads_its_last_token_again() {
        let mut pool = PrefixCache::new(usize::MAX, Reuse::Prefix);
        pool.put_back(cache_of(&[1, 2, 3, 4], 4), 0);
        pool.put_back(cache_of(&[1, 2, 9], 3), 0);
        let (cache, shared) = pool.take(&[1, 2, 3, 7, 8]);
        assert_eq!((shared, cache.tokens()), (3, &[1, 2, 3][..]));
        // The whole prompt cached: its last token is read again.
        pool.put_back(cache_of(&[5, 6, 7], 3), 0);
        let (_, shared) = pool.take(&[5, 6, 7]);
        assert_eq!(shared, 2);
        // Nothing shared: a fresh cache, the others kept.
        let (cache, shared) = pool.take(&[42]);
        assert_eq!((shared, cache.len(), pool.len()), (0, 0, 1));
    }

    #[test]
    fn a_prefix_copy_holds_the_first_positions_only() {
        let cache = cache_of(&[1, 2, 3, 4], 4);
        let copy = cache.prefix_copy(2).unwrap();
        assert_eq!(copy.tokens(), &[1, 2]);
        assert_eq!(copy.layers[0].len, 2);
        assert_eq!(
            copy.layers[0].keys.as_ref().unwrap().dim(2).unwrap(),
            CACHE_STEP
        );
    }

    #[test]
    fn a_continuation_cache_is_reused_only_when_the_prompt_continues_it() {
        let mut pool = PrefixCache::new(usize::MAX, Reuse::Continuation);
        pool.put_back(cache_of(&[1, 2, 3], 3), 0);
        assert_eq!(pool.take(&[1, 2, 3, 4]).1, 3);
        pool.put_back(cache_of(&[1, 2, 3], 3), 0);
        assert_eq!(pool.take(&[1, 2, 4, 5]).1, 0);
        assert_eq!(pool.len(), 0, "the model's one sequence was replaced");
    }

    #[test]
    fn the_least_recently_used_sequences_go_first_when_the_budget_is_spent() {
        let one = cache_of(&[1], CACHE_STEP).bytes();
        let mut pool = PrefixCache::new(3 * one, Reuse::Prefix);
        for token in 0..50 {
            pool.put_back(cache_of(&[token, 100], 1), 0);
            assert!(pool.bytes() <= 3 * one);
        }
        assert_eq!(pool.len(), 3);
        assert_eq!(pool.take(&[49, 100, 7]).1, 2, "the newest is kept");
        assert_eq!(pool.take(&[3, 100, 7]).1, 0, "an old one is gone");
        // Sequences still decoding count against the budget.
        pool.trim(2 * one);
        assert_eq!(pool.len(), 1);
    }
}
