//! Plain, aligned tables for people; `--json` is for programs.

use std::process::ExitCode;

use quarry_core::model::ExtractionResult;
use serde::Serialize;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use crate::failure::Failure;

/// Prints `value` as pretty JSON (`--json`).
pub fn print_json<T: Serialize>(value: &T) -> Result<ExitCode, Failure> {
    println!(
        "{}",
        serde_json::to_string_pretty(value).map_err(|e| Failure::Other(e.into()))?
    );
    Ok(ExitCode::SUCCESS)
}

/// Prints `rows` under `headers`, each column as wide as its widest cell (capped at 60
/// terminal cells); see [`render_table`].
pub fn print_table(headers: &[&str], rows: Vec<Vec<String>>) {
    print!("{}", render_table(headers, &rows));
}

/// The widest a column gets, in terminal cells; longer cells end in `…`.
const MAX_CELLS: usize = 60;

/// `rows` under `headers`, aligned by display width (a CJK character or an emoji takes two
/// terminal cells, a combining mark none), so columns line up whatever the script.
pub fn render_table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(|cell| clip(cell, MAX_CELLS)).collect())
        .collect();
    let widths: Vec<usize> = (0..headers.len())
        .map(|i| {
            rows.iter()
                .filter_map(|row| row.get(i))
                .map(|cell| cell.width())
                .chain([headers[i].width()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let padded: Vec<String> = cells
            .zip(&widths)
            .map(|(cell, &width)| format!("{cell}{}", " ".repeat(width - cell.width())))
            .collect();
        format!("{}\n", padded.join("  ").trim_end())
    };
    let mut out = line(&mut headers.iter().copied());
    for row in &rows {
        out.push_str(&line(&mut row.iter().map(String::as_str)));
    }
    out
}

/// `cell` cut to at most `max` terminal cells, ending in `…` when cut; line breaks become
/// spaces so a row stays one line.
fn clip(cell: &str, max: usize) -> String {
    let cell = cell.replace(['\n', '\r', '\t'], " ");
    if cell.width() <= max {
        return cell;
    }
    let mut out = String::new();
    let mut used = 0;
    for c in cell.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > max - 1 {
            break;
        }
        used += w;
        out.push(c);
    }
    out + "…"
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: columns were padded by character count, so a row with CJK text pushed the
    /// next column two cells right per character.
    #[test]
    fn cjk_cells_align_by_display_width() {
        let rows = vec![
            vec!["東京タワー".to_owned(), "landmark".to_owned()],
            vec!["Acme".to_owned(), "company".to_owned()],
        ];
        let table = render_table(&["name", "type"], &rows);
        let columns: Vec<usize> = table
            .lines()
            .map(|line| {
                let name_end = line.find("  ").unwrap();
                let rest = &line[name_end..];
                line[..name_end].width() + (rest.len() - rest.trim_start().len())
            })
            .collect();
        assert_eq!(columns, vec![12, 12, 12], "{table}");
    }

    #[test]
    fn long_cells_are_cut_by_width_and_stay_on_one_line() {
        let cut = clip(&"漢".repeat(40), 60);
        assert!(cut.width() <= 60 && cut.width() >= 59, "{cut}");
        assert!(cut.ends_with('…'));
        assert_eq!(clip("a\nb", 60), "a b");
    }
}
