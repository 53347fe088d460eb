//! `quarry mcp`: Quarry's tools for an agent over the Model Context Protocol on stdin/stdout
//! (the client starts this command), acting as the local user with every scope on the database
//! and project (`--db`/`$QUARRY_DB`, else quarry.db; `--project`/`$QUARRY_PROJECT`, else
//! default). Model, embedder and workers as for `quarry serve`; logs go to stderr, stdout
//! carries only the protocol.

use std::process::ExitCode;

use anyhow::Context;
use quarry_core::ErrorCode;

use crate::args::McpArgs;
use crate::failure::Failure;
use crate::serve::{Host, init_logging_at};
use crate::workspace::{configured_database, configured_project};

/// Who the local user is recorded as (reviewer, trigger): `$USER`, else `mcp`.
fn local_user() -> String {
    std::env::var("USER")
        .ok()
        .filter(|user| !user.trim().is_empty())
        .unwrap_or_else(|| "mcp".to_owned())
}

pub fn run(args: McpArgs, file: &crate::config::Config) -> Result<ExitCode, Failure> {
    // A client shows the server's stderr to its user: warnings only, unless QUARRY_LOG asks.
    init_logging_at("warn");
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let database =
        configured_database(args.host.db.as_deref()).unwrap_or_else(|| "quarry.db".to_owned());
    let host = Host::start(&runtime, &args.host, Some(&database), file)?;
    let store = host.config.store.clone().ok_or_else(|| {
        Failure::coded(
            ErrorCode::StoreNotConfigured,
            format!("no database at {database}"),
        )
    })?;
    let project = runtime
        .block_on(store.ensure_project(&configured_project(args.project.as_deref())))
        .map_err(|error| Failure::coded(ErrorCode::StorageError, error))?;
    // Until the client closes stdin, or Ctrl-C or SIGTERM.
    let user = local_user();
    let signal = {
        let _entered = runtime.enter();
        quarry_server::shutdown_signal()
    };
    let served = runtime
        .block_on(async {
            tokio::select! {
                served = quarry_server::mcp::serve_stdio(&host.config, &project, &user) => served,
                () = signal => Ok(()),
            }
        })
        .context("serving MCP on stdin/stdout");
    host.stop(&runtime);
    // Model calls still decoding on blocking threads are abandoned, not awaited.
    runtime.shutdown_background();
    served?;
    Ok(ExitCode::SUCCESS)
}
