//! Plain, aligned tables for people; `--json` is for programs.

use std::process::ExitCode;

use quarry_core::model::ExtractionResult;
use serde::Serialize;

use crate::failure::Failure;

/// Prints `value` as pretty JSON (`--json`).
pub fn print_json<T: Serialize>(value: &T) -> Result<ExitCode, Failure> {
    println!(
        "{}",
        serde_json::to_string_pretty(value).map_err(|e| Failure::Other(e.into()))?
    );
    Ok(ExitCode::SUCCESS)
}

/// Prints `rows` under `headers`, each column as wide as its widest cell (capped at 60).
pub fn print_table(headers: &[&str], rows: Vec<Vec<String>>) {
    const MAX: usize = 60;
    let clip = |cell: &str| -> String {
        if cell.chars().count() > MAX {
            cell.chars().take(MAX - 1).collect::<String>() + "…"
        } else {
            cell.to_owned()
        }
    };
    let rows: Vec<Vec<String>> = rows
        .into_iter()
        .map(|row| row.iter().map(|cell| clip(cell)).collect())
        .collect();
    let widths: Vec<usize> = (0..headers.len())
        .map(|i| {
            rows.iter()
                .filter_map(|row| row.get(i))
                .map(|cell| cell.chars().count())
                .chain([headers[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        println!("{}", padded.join("  ").trim_end());
    };
    line(headers.to_vec());
    for row in &rows {
        line(row.iter().map(String::as_str).collect());
    }
}

pub fn print_results(results: &[ExtractionResult]) {
    let rows = results
        .iter()
        .map(|r| {
            vec![
                r.id.clone(),
                r.field_name.clone(),
                r.value.to_string(),
                label(&r.status),
                label(&r.confidence),
                r.agent_id.clone(),
                r.rejection_reason.clone().unwrap_or_default(),
            ]
        })
        .collect();
    print_table(
        &[
            "result",
            "field",
            "value",
            "status",
            "confidence",
            "agent",
            "reason",
        ],
        rows,
    );
}

/// The snake_case name a serialisable enum goes by in JSON (`pending`, `high`, …).
pub fn label<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_else(|| "?".to_owned())
}
