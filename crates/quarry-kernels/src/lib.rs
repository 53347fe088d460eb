//! What the embedded model needs below candle: its GGUF file mapped into memory instead of
//! read ([`map_file`]), and matrix products on Q4_1 weights where they lie in that map
//! ([`q4_1`]). The rest of the workspace forbids unsafe code; this crate holds all of it.

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
