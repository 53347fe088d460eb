//! How a `local:` model is served ([`LocalSettings`]): given per model in `quarry.toml` or by
//! flags, read when the model loads. Defined without the `local` feature, so the settings pass
//! through [`ProviderSettings`](crate::ProviderSettings) in every build.

/// How a local model is served. Unset values are sized to the machine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LocalSettings {
    /// Replies decoded together at most (`--parallel`); more wait for a place.
    pub parallel: Option<usize>,
    /// MiB for key-value state (`--cache-mib`): of replies being decoded and of prompts kept
    /// for reuse.
    pub cache_mib: Option<usize>,
    /// The context window in tokens (`--context`), at most the model's own.
    pub context: Option<usize>,
}

impl LocalSettings {
    /// MiB of key-value state when unset.
    pub const DEFAULT_CACHE_MIB: usize = 512;

    /// Replies decoded together when unset: twice the CPUs (one reply leaves the cores waiting
    /// on memory while the weights are read), between 2 and 8.
    pub fn default_parallel() -> usize {
        let cpus = std::thread::available_parallelism().map_or(2, usize::from);
        (2 * cpus).clamp(2, 8)
    }

    /// These settings, each unset one taken from `fallback`.
    pub fn or(self, fallback: LocalSettings) -> LocalSettings {
        LocalSettings {
            parallel: self.parallel.or(fallback.parallel),
            cache_mib: self.cache_mib.or(fallback.cache_mib),
            context: self.context.or(fallback.context),
        }
    }
}
