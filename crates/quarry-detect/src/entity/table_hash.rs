//! The hash of the compiled-in gazetteer table, shared by `build.rs` (which lays the table out)
//! and [`super::gazetteer`] (which probes it): FNV-1a, 64 bits. It needs no seed and no state, so
//! the table written at build time is valid at run time without building anything.

/// FNV-1a of `key`'s bytes.
pub(crate) fn table_hash(key: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in key {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}
