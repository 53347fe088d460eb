//! `quarry correction add|list|rm`: project corrections, checked and stored as the API does
//! (`quarry_pipeline::corrections`).

use std::process::ExitCode;

use quarry_core::ErrorCode;
use quarry_core::model::NewCorrection;

use crate::args::CorrectionCommand;
use crate::failure::{Failure, storage};
use crate::table::{print_json, print_table};
use crate::workspace::Workspace;

pub fn run(command: CorrectionCommand) -> Result<ExitCode, Failure> {
    match command {
        CorrectionCommand::Add {
            text,
            entity_type,
            field,
            store,
            output,
        } => {
            let ws = Workspace::open_printing(&store, &output)?;
            let who = std::env::var("USER").unwrap_or_else(|_| "cli".to_owned());
            let new = NewCorrection {
                entity_type,
                field_name: field,
                text,
                created_by: format!("cli:{who}"),
            };
            let correction = ws
                .runtime
                .block_on(quarry_pipeline::corrections::add_correction(
                    ws.store.as_ref(),
                    &ws.project,
                    &new,
                ))
                .map_err(|error| Failure::coded(error.code(), error))?;
            if ws.json {
                return print_json(&correction);
            }
            println!("{}", correction.id);
            Ok(ExitCode::SUCCESS)
        }
        CorrectionCommand::List { store, output } => {
            let ws = Workspace::open_printing(&store, &output)?;
            let corrections = ws
                .runtime
                .block_on(ws.store.list_corrections(&ws.project))
                .map_err(storage)?;
            if ws.json {
                return print_json(&corrections);
            }
            let rows = corrections
                .into_iter()
                .map(|c| {
                    let scope = match (c.entity_type, c.field_name) {
                        (Some(slug), Some(field)) => format!("{slug}.{field}"),
                        (Some(slug), None) => slug,
                        (None, _) => "project".to_owned(),
                    };
                    vec![c.id, scope, c.text]
                })
                .collect();
            print_table(&["ID", "SCOPE", "RULE"], rows);
            Ok(ExitCode::SUCCESS)
        }
        CorrectionCommand::Rm { id, store } => {
            let ws = Workspace::open(&store)?;
            let removed = ws
                .runtime
                .block_on(ws.store.remove_correction(&ws.project, &id))
                .map_err(storage)?;
            if !removed {
                return Err(Failure::coded(
                    ErrorCode::NotFound,
                    format!(
                        "no correction '{id}' in this project; `quarry correction list` shows them"
                    ),
                ));
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
