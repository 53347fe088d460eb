//! Matrix products on Q4_1 weights without widening them: candle multiplies Q4_1 with a scalar
//! loop on x86, so a Q4_1 GGUF used to be requantized to Q8_0 at load, which doubles the bytes
//! every generated token reads. [`Q4_1Weights`] keeps the file's 4-bit blocks (memory-mapped)
//! and multiplies them with an AVX2 kernel against activations quantized to 8 bits with their
//! block sums (llama.cpp's Q8_1), as llama.cpp does.
//!
//! A Q4_1 block holds 32 weights as `d * q + m` (`q` in 0..=15; `d` and `m` as f16; low nibbles
//! are weights 0..16, high nibbles 16..32). A Q8_1 block holds 32 activations as `d * q` (`q` an
//! i8) and `s = d * Σq`. Their dot product is `d_w * d_a * Σ(q_w * q_a) + m_w * s_a`.

use std::ops::Range;
use std::sync::Arc;

use crate::Mmap;
use crate::blocks::Blocks;
use candle_core::quantized::{GgmlDType, QStorage, QTensor, QuantizedType};
use candle_core::{CpuStorage, Result};
use half::f16;

/// Weights per block, in both block types.
const BLOCK: usize = 32;
/// Bytes of one Q4_1 block: `d`, `m` (f16 each) and 16 bytes of nibbles.
const Q4_1_BYTES: usize = 20;

/// One Q4_1 block, as GGUF stores it.
#[derive(Clone, Copy)]
#[repr(C)]
struct BlockQ4_1 {
    d: u16,
    m: u16,
    qs: [u8; BLOCK / 2],
}
const _: () = assert!(std::mem::size_of::<BlockQ4_1>() == Q4_1_BYTES);

/// One block of activations, quantized to 8 bits.
#[derive(Clone, Copy, Default)]
struct BlockQ8_1 {
    d: f32,
    /// `d` times the sum of `qs`: what the weights' offset `m` multiplies.
    s: f32,
    qs: [i8; BLOCK],
}

/// A Q4_1 weight matrix (rows of `k` weights, `k` a multiple of 32) that candle's `QMatMul`
/// multiplies through [`QuantizedType::matmul_t`].
pub struct Q4_1Weights {
    blocks: Blocks<BlockQ4_1>,
}

impl Q4_1Weights {
    /// The Q4_1 tensor of `shape` whose blocks are `bytes` of the mapped `file` (GGUF aligns
    /// tensor data to at least 8 bytes, so the range is aligned for the blocks' u16 fields).
    pub fn mapped(file: Arc<Mmap>, bytes: Range<usize>, shape: &[usize]) -> Result<QTensor> {
        let weights = Q4_1Weights {
            blocks: Blocks::mapped(file, bytes, shape, BLOCK, &GgmlDType::Q4_1)?,
        };
        // GGUF lists dimensions innermost first; candle's shape is outermost first.
        let dims: Vec<usize> = shape.iter().rev().copied().collect();
        QTensor::new(QStorage::Cpu(Box::new(weights)), dims)
    }

    fn blocks(&self) -> &[BlockQ4_1] {
        self.blocks.get()
    }
}

impl QuantizedType for Q4_1Weights {
    fn dtype(&self) -> GgmlDType {
        GgmlDType::Q4_1
    }

    fn matmul_t(
        &self,
        (m, k, n): (usize, usize, usize),
        lhs: &[f32],
        dst: &mut [f32],
    ) -> Result<()> {
        if !k.is_multiple_of(BLOCK) || lhs.len() != m * k || dst.len() < m * n {
            candle_core::bail!("Q4_1 matmul of ({m}, {k}) by ({k}, {n}) got mismatched buffers");
        }
        let weights = self.blocks();
        let row_blocks = k / BLOCK;
        if weights.len() != n * row_blocks {
            candle_core::bail!("Q4_1 matmul: the weights are not {n} rows of {k}");
        }
        let activations = quantize_rows(lhs, m, k);
        let kernels = kernels();
        // Work items are groups of weight rows: a group stays in L1 while every activation row
        // passes it, so the weights are read from memory once per product. Within a group, two
        // weight rows meet two activation rows at a time (each block unpacked once for two
        // products); every product is computed the same way whatever its neighbours, so a row's
        // results do not depend on the other rows of the batch.
        let groups = n.div_ceil(ROWS_PER_ITEM);
        let dst_address = dst.as_mut_ptr() as usize;
        let activation = |row: usize| &activations[row * row_blocks..(row + 1) * row_blocks];
        let weight = |column: usize| &weights[column * row_blocks..(column + 1) * row_blocks];
        candle_core::utils::barrier_pool().execute_chunked(groups, |items| {
            // SAFETY: each (row, column) of dst belongs to exactly one item (its column's
            // group), and row * n + column < m * n <= dst.len().
            let store = |row: usize, column: usize, value: f32| unsafe {
                *(dst_address as *mut f32).add(row * n + column) = value;
            };
            for item in items {
                let end = n.min((item + 1) * ROWS_PER_ITEM);
                let mut row = 0;
                while row < m {
                    let pair = row + 1 < m;
                    let mut column = item * ROWS_PER_ITEM;
                    while column < end {
                        if pair && column + 1 < end {
                            let products = (kernels.dot_2x2)(
                                [weight(column), weight(column + 1)],
                                [activation(row), activation(row + 1)],
                            );
                            store(row, column, products[0]);
                            store(row, column + 1, products[1]);
                            store(row + 1, column, products[2]);
                            store(row + 1, column + 1, products[3]);
                            column += 2;
                            continue;
                        }
                        store(row, column, (kernels.dot)(weight(column), activation(row)));
                        if pair {
                            store(
                                row + 1,
                                column,
                                (kernels.dot)(weight(column), activation(row + 1)),
                            );
                        }
                        column += 1;
                    }
                    row += if pair { 2 } else { 1 };
                }
            }
        });
        Ok(())
    }

    fn matmul_t_f16(&self, mkn: (usize, usize, usize), lhs: &[f16], dst: &mut [f16]) -> Result<()> {
        let lhs: Vec<f32> = lhs.iter().map(|value| value.to_f32()).collect();
        let mut wide = vec![0f32; dst.len()];
        self.matmul_t(mkn, &lhs, &mut wide)?;
        for (out, value) in dst.iter_mut().zip(wide) {
            *out = f16::from_f32(value);
        }
        Ok(())
    }

    fn embedding(&self, ids: &[u32], rows: usize, hidden: usize) -> Result<CpuStorage> {
        let row_blocks = hidden / BLOCK;
        let blocks = self.blocks();
        if !hidden.is_multiple_of(BLOCK) || blocks.len() != rows * row_blocks {
            candle_core::bail!("Q4_1 embedding: the table is not {rows} rows of {hidden}");
        }
        let mut out = Vec::with_capacity(ids.len() * hidden);
        for &id in ids {
            let id = id as usize;
            if id >= rows {
                candle_core::bail!("Q4_1 embedding: id {id} is past the {rows} rows");
            }
            dequantize_into(&blocks[id * row_blocks..(id + 1) * row_blocks], &mut out);
        }
        Ok(CpuStorage::F32(out))
    }

    fn dequantize(&self, elem_count: usize) -> Result<CpuStorage> {
        let mut out = Vec::with_capacity(elem_count);
        dequantize_into(self.blocks(), &mut out);
        out.truncate(elem_count);
        Ok(CpuStorage::F32(out))
    }

    fn storage_size_in_bytes(&self) -> usize {
        self.blocks().len() * Q4_1_BYTES
    }

    fn as_ptr(&self) -> *const u8 {
        self.blocks().as_ptr().cast()
    }

    fn block_size(&self) -> usize {
        BLOCK
    }

    fn from_float(&mut self, xs: &[f32]) {
        self.blocks = Blocks::Owned(xs.chunks_exact(BLOCK).map(quantize_q4_1).collect());
    }

    fn from_float_imatrix(&mut self, xs: &[f32], _weights: &[f32], _n_per_row: usize) {
        self.from_float(xs);
    }

    fn size(&self) -> usize {
        self.storage_size_in_bytes()
    }
}

/// Weight rows per unit of parallel work.
const ROWS_PER_ITEM: usize = 16;

/// The rows of `lhs` (`m` rows of `k`) as Q8_1 blocks, row after row.
fn quantize_rows(lhs: &[f32], m: usize, k: usize) -> Vec<BlockQ8_1> {
    let mut blocks = Vec::with_capacity(m * k / BLOCK);
    for values in lhs.chunks_exact(BLOCK) {
        let largest = values
            .iter()
            .fold(0f32, |largest, value| largest.max(value.abs()));
        let d = largest / 127.0;
        let inverse = if d == 0.0 { 0.0 } else { 1.0 / d };
        let mut block = BlockQ8_1 {
            d,
            ..BlockQ8_1::default()
        };
        let mut sum = 0i32;
        for (q, value) in block.qs.iter_mut().zip(values) {
            *q = round_small(value * inverse) as i8;
            sum += i32::from(*q);
        }
        block.s = d * sum as f32;
        blocks.push(block);
    }
    blocks
}

/// `x` rounded to the nearest integer, ties to even, for |x| < 2²²: adding 1.5 × 2²³ leaves no
/// fraction bits, so the addition rounds. Plain arithmetic, which vectorises on any x86-64
/// (`f32::round` is a library call there).
fn round_small(x: f32) -> f32 {
    const SHIFT: f32 = 12_582_912.0;
    (x + SHIFT) - SHIFT
}

/// 32 values as a Q4_1 block (the minimum and the step between the 16 levels).
fn quantize_q4_1(values: &[f32]) -> BlockQ4_1 {
    let min = values.iter().copied().fold(f32::INFINITY, f32::min);
    let max = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let d = (max - min) / 15.0;
    let inverse = if d == 0.0 { 0.0 } else { 1.0 / d };
    let mut qs = [0u8; BLOCK / 2];
    for (j, q) in qs.iter_mut().enumerate() {
        let low = ((values[j] - min) * inverse).round().clamp(0.0, 15.0) as u8;
        let high = ((values[j + BLOCK / 2] - min) * inverse)
            .round()
            .clamp(0.0, 15.0) as u8;
        *q = low | (high << 4);
    }
    BlockQ4_1 {
        d: f16::from_f32(d).to_bits(),
        m: f16::from_f32(min).to_bits(),
        qs,
    }
}

fn dequantize_into(blocks: &[BlockQ4_1], out: &mut Vec<f32>) {
    for block in blocks {
        let d = f16::from_bits(block.d).to_f32();
        let m = f16::from_bits(block.m).to_f32();
        out.extend(block.qs.iter().map(|q| f32::from(q & 0x0F) * d + m));
        out.extend(block.qs.iter().map(|q| f32::from(q >> 4) * d + m));
    }
}

type DotKernel = fn(&[BlockQ4_1], &[BlockQ8_1]) -> f32;
/// Two weight rows by two activation rows: `[w0·a0, w1·a0, w0·a1, w1·a1]`, each exactly as
/// [`DotKernel`] computes it.
type Dot2x2Kernel = fn([&[BlockQ4_1]; 2], [&[BlockQ8_1]; 2]) -> [f32; 4];

/// The dot products this CPU runs fastest.
#[derive(Clone, Copy)]
struct Kernels {
    dot: DotKernel,
    dot_2x2: Dot2x2Kernel,
}

fn kernels() -> Kernels {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
        && std::arch::is_x86_feature_detected!("f16c")
    {
        return Kernels {
            dot: |weights, activations| {
                // SAFETY: the CPU has AVX2, FMA and F16C (checked above).
                unsafe { avx2::dot(weights, activations) }
            },
            dot_2x2: |weights, activations| {
                // SAFETY: the CPU has AVX2, FMA and F16C (checked above).
                unsafe { avx2::dot_2x2(weights, activations) }
            },
        };
    }
    Kernels {
        dot: dot_scalar,
        dot_2x2: dot_2x2_scalar,
    }
}

fn dot_2x2_scalar(weights: [&[BlockQ4_1]; 2], activations: [&[BlockQ8_1]; 2]) -> [f32; 4] {
    [
        dot_scalar(weights[0], activations[0]),
        dot_scalar(weights[1], activations[0]),
        dot_scalar(weights[0], activations[1]),
        dot_scalar(weights[1], activations[1]),
    ]
}

fn dot_scalar(weights: &[BlockQ4_1], activations: &[BlockQ8_1]) -> f32 {
    let mut total = 0f32;
    for (weight, activation) in weights.iter().zip(activations) {
        let mut sum = 0i32;
        for j in 0..BLOCK / 2 {
            let q = weight.qs[j];
            sum += i32::from(q & 0x0F) * i32::from(activation.qs[j]);
            sum += i32::from(q >> 4) * i32::from(activation.qs[j + BLOCK / 2]);
        }
        let d = f16::from_bits(weight.d).to_f32();
        let m = f16::from_bits(weight.m).to_f32();
        total += d * activation.d * sum as f32 + m * activation.s;
    }
    total
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::{BLOCK, BlockQ4_1, BlockQ8_1};

    /// llama.cpp's `ggml_vec_dot_q4_1_q8_1` for AVX2.
    #[target_feature(enable = "avx2,fma,f16c")]
    pub(super) unsafe fn dot(weights: &[BlockQ4_1], activations: &[BlockQ8_1]) -> f32 {
        debug_assert_eq!(weights.len(), activations.len());
        let low_nibbles = _mm256_set1_epi8(0x0F);
        let ones = _mm256_set1_epi16(1);
        let mut acc = _mm256_setzero_ps();
        let mut offsets = 0f32;
        for (weight, activation) in weights.iter().zip(activations) {
            let scales = _mm_cvtph_ps(_mm_cvtsi32_si128(
                (u32::from(weight.d) | (u32::from(weight.m) << 16)) as i32,
            ));
            let d = _mm_cvtss_f32(scales);
            let m = _mm_cvtss_f32(_mm_movehdup_ps(scales));
            offsets += m * activation.s;
            // SAFETY: 16 bytes of nibbles and 32 bytes of i8 are in bounds of their blocks.
            let (packed, quantized) = unsafe {
                (
                    _mm_loadu_si128(weight.qs.as_ptr().cast()),
                    _mm256_loadu_si256(activation.qs.as_ptr().cast()),
                )
            };
            let spread = _mm256_insertf128_si256::<1>(
                _mm256_castsi128_si256(packed),
                _mm_srli_epi16::<4>(packed),
            );
            let levels = _mm256_and_si256(spread, low_nibbles);
            // u8 × i8 pairs summed to i16 (at most 2 × 15 × 127: no saturation), then to i32.
            let products = _mm256_madd_epi16(_mm256_maddubs_epi16(levels, quantized), ones);
            acc = _mm256_fmadd_ps(
                _mm256_set1_ps(d * activation.d),
                _mm256_cvtepi32_ps(products),
                acc,
            );
        }
        horizontal_sum(acc) + offsets
    }

    /// [`dot`] for two weight rows and two activation rows at once: each block's nibbles are
    /// unpacked once for two products, each activation block loaded once for two. Every
    /// product takes the same steps in the same order as [`dot`], so its result is the same.
    #[target_feature(enable = "avx2,fma,f16c")]
    pub(super) unsafe fn dot_2x2(
        weights: [&[BlockQ4_1]; 2],
        activations: [&[BlockQ8_1]; 2],
    ) -> [f32; 4] {
        let blocks = weights[0].len();
        debug_assert!(weights[1].len() == blocks && activations.iter().all(|a| a.len() == blocks));
        let low_nibbles = _mm256_set1_epi8(0x0F);
        let ones = _mm256_set1_epi16(1);
        let mut acc = [_mm256_setzero_ps(); 4];
        let mut offsets = [0f32; 4];
        for block in 0..blocks {
            let mut levels = [_mm256_setzero_si256(); 2];
            let mut scales = [(0f32, 0f32); 2];
            for (w, weight) in weights.iter().enumerate() {
                let weight = &weight[block];
                let both = _mm_cvtph_ps(_mm_cvtsi32_si128(
                    (u32::from(weight.d) | (u32::from(weight.m) << 16)) as i32,
                ));
                scales[w] = (_mm_cvtss_f32(both), _mm_cvtss_f32(_mm_movehdup_ps(both)));
                // SAFETY: 16 bytes of nibbles are in bounds of the block.
                let packed = unsafe { _mm_loadu_si128(weight.qs.as_ptr().cast()) };
                let spread = _mm256_insertf128_si256::<1>(
                    _mm256_castsi128_si256(packed),
                    _mm_srli_epi16::<4>(packed),
                );
                levels[w] = _mm256_and_si256(spread, low_nibbles);
            }
            for (a, activation) in activations.iter().enumerate() {
                let activation = &activation[block];
                // SAFETY: 32 bytes of i8 are in bounds of the block.
                let quantized = unsafe { _mm256_loadu_si256(activation.qs.as_ptr().cast()) };
                for w in 0..2 {
                    let (d, m) = scales[w];
                    let out = 2 * a + w;
                    offsets[out] += m * activation.s;
                    let products =
                        _mm256_madd_epi16(_mm256_maddubs_epi16(levels[w], quantized), ones);
                    acc[out] = _mm256_fmadd_ps(
                        _mm256_set1_ps(d * activation.d),
                        _mm256_cvtepi32_ps(products),
                        acc[out],
                    );
                }
            }
        }
        let mut out = [0f32; 4];
        for (index, value) in out.iter_mut().enumerate() {
            *value = horizontal_sum(acc[index]) + offsets[index];
        }
        out
    }

    #[target_feature(enable = "avx2,fma,f16c")]
    fn horizontal_sum(acc: __m256) -> f32 {
        let half = _mm_add_ps(_mm256_extractf128_ps::<1>(acc), _mm256_castps256_ps128(acc));
        let half = _mm_add_ps(half, _mm_movehl_ps(half, half));
        let half = _mm_add_ss(half, _mm_movehdup_ps(half));
        _mm_cvtss_f32(half)
    }

    const _: () = assert!(BLOCK == 32);
}

/// The Q4_1 tensor of `shape` (candle's order) whose blocks start at byte `at` of `file`.
pub(crate) fn mapped_tensor(file: &Arc<Mmap>, at: usize, shape: &[usize]) -> Result<QTensor> {
    let elements: usize = shape.iter().product();
    let bytes = at..at + elements / BLOCK * Q4_1_BYTES;
    // `mapped` takes GGUF's order, innermost first.
    let dims: Vec<usize> = shape.iter().rev().copied().collect();
    Q4_1Weights::mapped(Arc::clone(file), bytes, &dims)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random_values(count: usize, seed: u64) -> Vec<f32> {
        let mut rng = fastrand::Rng::with_seed(seed);
        (0..count).map(|_| rng.f32() * 2.0 - 1.0).collect()
    }

    /// The kernel in use agrees with the scalar definition, and both with f32 arithmetic on the
    /// dequantized weights to within the activations' 8-bit rounding.
    #[test]
    fn dot_products_match_the_definition() {
        for seed in 0..20 {
            let k = 32 * (1 + seed as usize % 7);
            let weights: Vec<BlockQ4_1> = random_values(k, seed)
                .chunks_exact(BLOCK)
                .map(quantize_q4_1)
                .collect();
            let activation_values = random_values(k, seed + 100);
            let activations = quantize_rows(&activation_values, 1, k);
            let mut dequantized = Vec::new();
            dequantize_into(&weights, &mut dequantized);
            let exact: f32 = dequantized
                .iter()
                .zip(&activation_values)
                .map(|(w, a)| w * a)
                .sum();
            let scalar = dot_scalar(&weights, &activations);
            let fast = (kernels().dot)(&weights, &activations);
            assert!(
                (scalar - fast).abs() <= 1e-3 * (1.0 + scalar.abs()),
                "{scalar} vs {fast}"
            );
            assert!(
                (scalar - exact).abs() <= 0.02 * (k as f32).sqrt(),
                "{scalar} vs {exact}"
            );
        }
    }

    #[test]
    fn small_values_round_to_the_nearest_integer() {
        for (x, rounded) in [
            (0.4, 0.0),
            (0.6, 1.0),
            (-1.6, -2.0),
            (2.5, 2.0),
            (126.7, 127.0),
        ] {
            assert_eq!(round_small(x), rounded, "{x}");
        }
    }

    /// Two rows by two rows give, bit for bit, the four single products: a row's results do
    /// not depend on the rows it is batched with.
    #[test]
    fn two_by_two_products_equal_single_products_bit_for_bit() {
        let kernels = kernels();
        for seed in 0..20 {
            let k = 32 * (1 + seed as usize % 9);
            let weight_rows: Vec<Vec<BlockQ4_1>> = (0..2)
                .map(|row| {
                    random_values(k, seed * 7 + row)
                        .chunks_exact(BLOCK)
                        .map(quantize_q4_1)
                        .collect()
                })
                .collect();
            let activation_rows = quantize_rows(&random_values(2 * k, seed + 500), 2, k);
            let (first, second) = activation_rows.split_at(k / BLOCK);
            let paired = (kernels.dot_2x2)([&weight_rows[0], &weight_rows[1]], [first, second]);
            let single = [
                (kernels.dot)(&weight_rows[0], first),
                (kernels.dot)(&weight_rows[1], first),
                (kernels.dot)(&weight_rows[0], second),
                (kernels.dot)(&weight_rows[1], second),
            ];
            assert_eq!(
                paired.map(f32::to_bits),
                single.map(f32::to_bits),
                "k = {k}"
            );
        }
    }

    /// A whole product of any shape equals row-by-row products: batching rows changes nothing.
    #[test]
    fn a_matrix_product_equals_its_rows_one_at_a_time() {
        for (m, n) in [(1, 33), (2, 16), (3, 17), (5, 40)] {
            let k = 64;
            let weights = Q4_1Weights {
                blocks: Blocks::Owned(
                    random_values(n * k, m as u64)
                        .chunks_exact(BLOCK)
                        .map(quantize_q4_1)
                        .collect(),
                ),
            };
            let lhs = random_values(m * k, 900 + n as u64);
            let mut whole = vec![0f32; m * n];
            weights.matmul_t((m, k, n), &lhs, &mut whole).unwrap();
            for row in 0..m {
                let mut one = vec![0f32; n];
                weights
                    .matmul_t((1, k, n), &lhs[row * k..(row + 1) * k], &mut one)
                    .unwrap();
                assert_eq!(
                    &whole[row * n..(row + 1) * n],
                    &one[..],
                    "m {m}, n {n}, row {row}"
                );
            }
        }
    }
}
