//! A tensor's quantized blocks where they lie in the memory-mapped GGUF, or owned once rewritten:
//! the one place a range of the map is read as blocks (both [`crate::q4_1`] and
//! [`crate::mapped`] keep their weights in it).

use std::ops::Range;
use std::sync::Arc;

use candle_core::Result;

use crate::Mmap;

/// Blocks of type `T` (plain integers and f16s: every bit pattern is a valid block).
pub(crate) enum Blocks<T> {
    Mapped {
        file: Arc<Mmap>,
        bytes: Range<usize>,
    },
    Owned(Vec<T>),
}

impl<T> Blocks<T> {
    /// `bytes` of `file` as the blocks of a tensor of `shape` (`elements_per_block` values a
    /// block; `kind` names the type in errors): the range must be a whole number of blocks, in
    /// the map, and aligned for `T`.
    pub(crate) fn mapped(
        file: Arc<Mmap>,
        bytes: Range<usize>,
        shape: &[usize],
        elements_per_block: usize,
        kind: &dyn std::fmt::Debug,
    ) -> Result<Blocks<T>> {
        let elements: usize = shape.iter().product();
        let expected = elements / elements_per_block * std::mem::size_of::<T>();
        if !elements.is_multiple_of(elements_per_block)
            || bytes.len() != expected
            || bytes.end > file.len()
        {
            candle_core::bail!(
                "{kind:?} tensor of shape {shape:?} needs {expected} bytes, the file has {} at {}",
                bytes.len(),
                bytes.start
            );
        }
        if !(file.as_ptr() as usize + bytes.start).is_multiple_of(std::mem::align_of::<T>()) {
            candle_core::bail!("{kind:?} tensor data at {} is not aligned", bytes.start);
        }
        Ok(Blocks::Mapped { file, bytes })
    }

    pub(crate) fn get(&self) -> &[T] {
        match self {
            Blocks::Mapped { file, bytes } => {
                let bytes = &file[bytes.clone()];
                // SAFETY: `mapped` checked that the range is a whole number of blocks inside the
                // map and aligned for `T`; the block types kept here are plain integers and
                // f16s, for which every bit pattern is valid.
                unsafe {
                    std::slice::from_raw_parts(
                        bytes.as_ptr().cast::<T>(),
                        bytes.len() / std::mem::size_of::<T>(),
                    )
                }
            }
            Blocks::Owned(blocks) => blocks,
        }
    }
}
