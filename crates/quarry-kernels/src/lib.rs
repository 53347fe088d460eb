//! What the embedded model needs below candle: its GGUF file mapped into memory instead of
//! read ([`map_file`]), matrix products on Q4_1 weights where they lie in that map ([`q4_1`]),
//! candle's other block types kept in the map too ([`mapped`]), and [`load_tensor`], which picks
//! among them. The rest of the workspace forbids unsafe code; this crate holds all of it.

mod blocks;
pub mod mapped;
pub mod q4_1;

use std::path::Path;

pub use memmap2::Mmap;

/// The file at `path`, mapped read-only.
///
/// Like llama.cpp, Quarry expects a model file not to be rewritten while a process uses it
/// (`quarry model pull` writes a `.part` file and renames it into place, which leaves the mapped
/// file intact).
pub fn map_file(path: &Path) -> std::io::Result<Mmap> {
    let file = std::fs::File::open(path)?;
    // SAFETY: the map is read-only and Quarry never writes model files in place (see above);
    // another program truncating the file while it is mapped is outside what Quarry guards.
    unsafe { Mmap::map(&file) }
}

/// `bytes` copied into an anonymous read-only map, so rewritten GGUF data and a mapped file
/// have one type.
pub fn map_bytes(bytes: &[u8]) -> std::io::Result<Mmap> {
    let mut map = memmap2::MmapMut::map_anon(bytes.len().max(1))?;
    map[..bytes.len()].copy_from_slice(bytes);
    map.make_read_only()
}

/// Loads `name` from the GGUF mapped as `file`: Q4_1 as [`q4_1::Q4_1Weights`] and Q4_0, Q8_0,
/// Q4_K, Q5_K and Q6_K as [`mapped::MappedBlocks`], all where they lie in the map; Q5_0 and Q5_1
/// (which candle multiplies with a scalar loop on x86) widened to Q8_0, losslessly, in memory;
/// anything else (f32 and f16 norms and tables) read through candle.
pub fn load_tensor(
    content: &candle_core::quantized::gguf_file::Content,
    file: &std::sync::Arc<Mmap>,
    name: &str,
    device: &candle_core::Device,
) -> candle_core::Result<candle_core::quantized::QTensor> {
    use candle_core::quantized::{GgmlDType, QTensor};
    let Some(info) = content.tensor_infos.get(name) else {
        candle_core::bail!("the GGUF has no tensor {name}");
    };
    let at = content.tensor_data_offset as usize + info.offset as usize;
    let shape = info.shape.dims();
    match info.ggml_dtype {
        GgmlDType::Q4_1 => return q4_1::mapped_tensor(file, at, shape),
        dtype => {
            if let Some(tensor) = mapped::mapped_tensor(dtype, file, at, shape) {
                return tensor;
            }
        }
    }
    let mut reader = std::io::Cursor::new(&file[..]);
    let tensor = content.tensor(&mut reader, name, device)?;
    match info.ggml_dtype {
        GgmlDType::Q5_0 | GgmlDType::Q5_1 => {
            let values = tensor.dequantize(device)?;
            QTensor::quantize(&values, GgmlDType::Q8_0).or(Ok(tensor))
        }
        _ => Ok(tensor),
    }
}
