//! Progress on stderr for long commands, drawn only when stderr is a terminal: in pipes, files
//! and tests every indicator is hidden, so output stays clean for scripts.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// A spinner with a message and the elapsed time (work of unknown length, e.g. `quarry run`).
pub fn spinner(message: &str) -> ProgressBar {
    shown(
        ProgressBar::new_spinner,
        "{spinner} {msg} {elapsed}",
        message,
    )
}

/// A bar over `len` items, e.g. the files of `quarry doc add`.
pub fn bar(len: usize, message: &str) -> ProgressBar {
    shown(
        || ProgressBar::new(len as u64),
        "{msg} [{bar:30}] {pos}/{len} {elapsed}",
        message,
    )
}

/// A counter of lines handled with their rate (a batch read from stdin, length unknown).
pub fn line_counter() -> ProgressBar {
    shown(
        ProgressBar::new_spinner,
        "{spinner} {pos} lines  {per_sec}  {elapsed}",
        "",
    )
}

fn shown(make: impl FnOnce() -> ProgressBar, template: &str, message: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let progress = make();
    progress.set_style(ProgressStyle::with_template(template).expect("the template is valid"));
    progress.set_message(message.to_owned());
    progress.enable_steady_tick(Duration::from_millis(100));
    progress
}
