//! Weights of candle's block types (Q4_K, Q6_K, Q8_0, …) multiplied where they lie in the
//! memory-mapped GGUF, through candle's own kernels: loading them through candle copies every
//! tensor into the heap, so a model's weights sat in memory twice (the page cache of the map
//! and the copy). [`MappedBlocks`] is a candle `QuantizedType` over a range of the map.

use std::ops::Range;
use std::sync::Arc;

use candle_core::quantized::k_quants::{self, GgmlType};
use candle_core::quantized::{GgmlDType, QStorage, QTensor, QuantizedType};
use candle_core::{CpuStorage, Result};
use half::f16;

use crate::Mmap;
use crate::blocks::Blocks;

/// A tensor of `T` blocks over the mapped file.
pub struct MappedBlocks<T> {
    blocks: Blocks<T>,
}

impl<T: GgmlType + Send + Sync + 'static> MappedBlocks<T> {
    /// The tensor of `shape` (candle's order, outermost first) whose blocks are `bytes` of
    /// `file`.
    pub fn tensor(file: Arc<Mmap>, bytes: Range<usize>, shape: &[usize]) -> Result<QTensor> {
        let weights = MappedBlocks::<T> {
            blocks: Blocks::mapped(file, bytes, shape, T::BLCK_SIZE, &T::DTYPE)?,
        };
        QTensor::new(QStorage::Cpu(Box::new(weights)), shape)
    }

    fn blocks(&self) -> &[T] {
        self.blocks.get()
    }
}

impl<T: GgmlType + Send + Sync + 'static> QuantizedType for MappedBlocks<T> {
    fn dtype(&self) -> GgmlDType {
        T::DTYPE
    }

    fn matmul_t(&self, mkn: (usize, usize, usize), lhs: &[f32], dst: &mut [f32]) -> Result<()> {
        k_quants::matmul(mkn, lhs, self.blocks(), dst)
    }

    fn matmul_t_f16(&self, mkn: (usize, usize, usize), lhs: &[f16], dst: &mut [f16]) -> Result<()> {
        k_quants::matmul_f16(mkn, lhs, self.blocks(), dst)
    }

    fn embedding(&self, ids: &[u32], rows: usize, hidden: usize) -> Result<CpuStorage> {
        let row_blocks = hidden / T::BLCK_SIZE;
        let blocks = self.blocks();
        if !hidden.is_multiple_of(T::BLCK_SIZE) || blocks.len() != rows * row_blocks {
            candle_core::bail!(
                "{:?} embedding: the table is not {rows} rows of {hidden}",
                T::DTYPE
            );
        }
        let mut out = vec![0f32; ids.len() * hidden];
        for (row, &id) in ids.iter().enumerate() {
            let id = id as usize;
            if id >= rows {
                candle_core::bail!("{:?} embedding: id {id} is past the {rows} rows", T::DTYPE);
            }
            T::to_float(
                &blocks[id * row_blocks..(id + 1) * row_blocks],
                &mut out[row * hidden..(row + 1) * hidden],
            );
        }
        Ok(CpuStorage::F32(out))
    }

    fn dequantize(&self, elem_count: usize) -> Result<CpuStorage> {
        let mut out = vec![0f32; elem_count];
        T::to_float(self.blocks(), &mut out);
        Ok(CpuStorage::F32(out))
    }

    fn storage_size_in_bytes(&self) -> usize {
        std::mem::size_of_val(self.blocks())
    }

    fn as_ptr(&self) -> *const u8 {
        self.blocks().as_ptr().cast()
    }

    fn block_size(&self) -> usize {
        T::BLCK_SIZE
    }

    fn from_float(&mut self, xs: &[f32]) {
        let mut blocks = vec![T::zeros(); xs.len() / T::BLCK_SIZE];
        T::from_float(xs, &mut blocks);
        self.blocks = Blocks::Owned(blocks);
    }

    fn from_float_imatrix(&mut self, xs: &[f32], _weights: &[f32], _n_per_row: usize) {
        self.from_float(xs);
    }

    fn size(&self) -> usize {
        self.storage_size_in_bytes()
    }
}

/// The tensor of `shape` (candle's order) whose blocks start at byte `bytes_at` of the mapped
/// `file`, for the block types Quarry keeps mapped (`None` for the others, which candle reads
/// into memory).
pub fn mapped_tensor(
    dtype: GgmlDType,
    file: &Arc<Mmap>,
    bytes_at: usize,
    shape: &[usize],
) -> Option<Result<QTensor>> {
    use k_quants::{BlockQ4_0, BlockQ4K, BlockQ5K, BlockQ6K, BlockQ8_0};
    fn of<T: GgmlType + Send + Sync + 'static>(
        file: &Arc<Mmap>,
        at: usize,
        shape: &[usize],
    ) -> Result<QTensor> {
        let elements: usize = shape.iter().product();
        let bytes = at..at + elements / T::BLCK_SIZE * std::mem::size_of::<T>();
        MappedBlocks::<T>::tensor(Arc::clone(file), bytes, shape)
    }
    Some(match dtype {
        GgmlDType::Q4_0 => of::<BlockQ4_0>(file, bytes_at, shape),
        GgmlDType::Q8_0 => of::<BlockQ8_0>(file, bytes_at, shape),
        GgmlDType::Q4K => of::<BlockQ4K>(file, bytes_at, shape),
        GgmlDType::Q5K => of::<BlockQ5K>(file, bytes_at, shape),
        GgmlDType::Q6K => of::<BlockQ6K>(file, bytes_at, shape),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use candle_core::quantized::QMatMul;
    use candle_core::quantized::k_quants::{BlockQ6K, BlockQ8_0};
    use candle_core::{Device, Module, Tensor};

    use super::*;

    fn values(count: usize, seed: u64) -> Vec<f32> {
        let mut rng = fastrand::Rng::with_seed(seed);
        (0..count).map(|_| rng.f32() * 2.0 - 1.0).collect()
    }

    /// Blocks read where they lie multiply and look up exactly as candle's own copy does.
    fn mapped_equals_owned<T: GgmlType + Send + Sync + 'static>() {
        let (n, k, m) = (16, 512, 3);
        let weights = Tensor::from_vec(values(n * k, 1), (n, k), &Device::Cpu).unwrap();
        let owned = QTensor::quantize(&weights, T::DTYPE).unwrap();
        let raw = owned.data().unwrap();
        let file = Arc::new(crate::map_bytes(&raw).unwrap());
        let mapped = MappedBlocks::<T>::tensor(file, 0..raw.len(), &[n, k]).unwrap();
        let ids = Tensor::new(&[3u32, 0], &Device::Cpu).unwrap();
        let rows = |tensor: &QTensor| -> Vec<Vec<f32>> {
            tensor.embedding(&ids).unwrap().to_vec2().unwrap()
        };
        assert_eq!(rows(&mapped), rows(&owned));
        let lhs = Tensor::from_vec(values(m * k, 2), (m, k), &Device::Cpu).unwrap();
        let product = |tensor: QTensor| -> Vec<Vec<f32>> {
            let matmul = QMatMul::from_qtensor(tensor).unwrap();
            matmul.forward(&lhs).unwrap().to_vec2().unwrap()
        };
        assert_eq!(product(mapped), product(owned));
    }

    #[test]
    fn mapped_q6_k_and_q8_0_blocks_equal_candles_own_copy() {
        mapped_equals_owned::<BlockQ6K>();
        mapped_equals_owned::<BlockQ8_0>();
    }
}
