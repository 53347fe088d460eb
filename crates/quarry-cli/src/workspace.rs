//! Opening the database and project the team commands act on.

use std::sync::Arc;

use anyhow::Context;
use quarry_core::store::Store;

use crate::args::StoreArgs;
use crate::failure::Failure;

/// An open store, the project's id, and the tokio runtime its futures run on.
pub struct Workspace {
    pub store: Arc<dyn Store>,
    pub project: String,
    pub runtime: tokio::runtime::Runtime,
    pub json: bool,
}

impl Workspace {
    pub fn open(args: &StoreArgs) -> Result<Workspace, Failure> {
        let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
        let url = database_url(args.db.as_deref());
        let store = runtime
            .block_on(quarry_store::open(&url))
            .map_err(|error| Failure::coded("StorageError", format!("opening {url}: {error}")))?;
        // Runs a crash left `running` are marked failed before anything else happens.
        let interrupted = runtime
            .block_on(store.fail_interrupted_runs())
            .map_err(|error| Failure::coded("StorageError", error))?;
        if interrupted > 0 {
            eprintln!("marked {interrupted} interrupted run(s) as failed");
        }
        let name = args
            .project
            .clone()
            .or_else(|| std::env::var("QUARRY_PROJECT").ok())
            .unwrap_or_else(|| "default".to_owned());
        let project = runtime
            .block_on(store.ensure_project(&name))
            .map_err(|error| Failure::coded("StorageError", error))?;
        Ok(Workspace {
            store,
            project,
            runtime,
            json: args.json,
        })
    }
}

/// `--db`, else `QUARRY_DB`, else `quarry.db` in the current folder.
pub fn database_url(flag: Option<&str>) -> String {
    flag.map(str::to_owned)
        .or_else(|| {
            std::env::var("QUARRY_DB")
                .ok()
                .filter(|db| !db.trim().is_empty())
        })
        .unwrap_or_else(|| "quarry.db".to_owned())
}
