//! Opening the database and project the team commands act on.

use std::sync::Arc;

use anyhow::Context;
use quarry_core::ErrorCode;
use quarry_core::retrieval::Retriever;
use quarry_core::store::Store;

use crate::args::{EmbedderArgs, OutputArgs, StoreArgs};
use crate::config::non_blank;
use crate::failure::Failure;
use crate::retrieval::{embedder_base_url, open_retriever};

/// An open store, the project's id, and the tokio runtime its futures run on.
pub struct Workspace {
    pub store: Arc<dyn Store>,
    pub project: String,
    pub runtime: tokio::runtime::Runtime,
    /// `--json`: print JSON instead of tables (false for commands without the flag).
    pub json: bool,
}

impl Workspace {
    /// The workspace of a command that prints what it found or did, as `--json` says.
    pub fn open_printing(args: &StoreArgs, output: &OutputArgs) -> Result<Workspace, Failure> {
        let mut workspace = Workspace::open(args)?;
        workspace.json = output.json;
        Ok(workspace)
    }

    pub fn open(args: &StoreArgs) -> Result<Workspace, Failure> {
        let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
        let url = configured_database(args.db.as_deref()).unwrap_or_else(|| "quarry.db".to_owned());
        let store = open_store(&runtime, &url)?;
        let name = configured_project(args.project.as_deref());
        let project = runtime
            .block_on(store.ensure_project(&name))
            .map_err(|error| Failure::coded(ErrorCode::StorageError, error))?;
        Ok(Workspace {
            store,
            project,
            runtime,
            json: false,
        })
    }

    /// The project's entity `id`; `NotFound` when there is none (every command that takes an
    /// entity id answers a missing one this way, listing commands included).
    pub fn entity(&self, id: &str) -> Result<quarry_core::model::Entity, Failure> {
        self.runtime
            .block_on(self.store.get_entity(&self.project, id))
            .map_err(crate::failure::storage)?
            .ok_or_else(|| {
                Failure::coded(
                    ErrorCode::NotFound,
                    format!("no entity '{id}' in this project"),
                )
            })
    }

    /// The retrieval index with the chosen embedder; with `rebuild`, loaded from the store (what
    /// searches need), else empty (enough to index new documents).
    pub fn retriever(
        &self,
        embedder: &EmbedderArgs,
        rebuild: bool,
    ) -> Result<Arc<dyn Retriever>, Failure> {
        open_retriever(
            &self.runtime,
            &self.store,
            rebuild,
            embedder.embedder.as_deref(),
            embedder_base_url(embedder.embedder_base_url.as_deref()),
        )
    }

    /// The retrieval index of a long-lived process: loaded from the store and following what
    /// other processes write to it (see `follow.rs`).
    pub fn followed_retriever(
        &self,
        embedder: &EmbedderArgs,
    ) -> Result<Arc<dyn Retriever>, Failure> {
        crate::retrieval::open_followed_retriever(
            &self.runtime,
            self.store.clone(),
            embedder.embedder.as_deref(),
            embedder_base_url(embedder.embedder_base_url.as_deref()),
        )
    }
}

/// `--project` (or `QUARRY_PROJECT`), else quarry.toml's `project`, else `default`.
pub fn configured_project(flag: Option<&str>) -> String {
    non_blank(flag).unwrap_or_else(|| "default".to_owned())
}

/// `--db` (or `QUARRY_DB`), else quarry.toml's `db`; `None` when none names a database.
pub fn configured_database(flag: Option<&str>) -> Option<String> {
    non_blank(flag)
}

/// Opens the store at `url` (migrations applied). Nothing else is written: work a crashed
/// process left behind is taken over by workers once its lease expires, never swept here
/// (another live process may own it).
pub fn open_store(runtime: &tokio::runtime::Runtime, url: &str) -> Result<Arc<dyn Store>, Failure> {
    runtime
        .block_on(quarry_store::open(url))
        .map_err(|error| Failure::coded(ErrorCode::StorageError, format!("opening {url}: {error}")))
}
