//! The byte layout of the entity data (the gazetteer table), shared by `build.rs` (which writes
//! it) and [`super::gazetteer`] (which reads it, from the compiled-in copy or from bytes a host
//! installs at run time). All numbers are little-endian.
//!
//! - a header: [`MAGIC`], then [`HEADER_FIELDS`] u32s: key bytes, entry count, slot count, the
//!   most tokens and the most bytes of a multi-word phrase;
//! - every key's UTF-8 bytes, concatenated;
//! - per entry, [`ENTRY_BYTES`]: key start (u32), key length (u16), flags (u16);
//! - per slot, a u32: entry index + 1, or 0 when empty. The slot count is a power of two, at most
//!   half full; a key is probed linearly from `table_hash(key) & (slots - 1)`.

/// The first bytes of the entity data; the trailing digit is the format version, bumped whenever
/// the layout or the meaning of a flag changes, so data from another version is refused.
pub(crate) const MAGIC: &[u8; 8] = b"QRYGAZ01";
/// The u32 fields after the magic.
pub(crate) const HEADER_FIELDS: usize = 5;
/// Bytes of the header.
pub(crate) const HEADER_BYTES: usize = MAGIC.len() + 4 * HEADER_FIELDS;
/// Bytes of one entry record.
pub(crate) const ENTRY_BYTES: usize = 8;
