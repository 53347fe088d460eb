//! Progress on stderr for long commands, drawn only when stderr is a terminal: in pipes, files
//! and tests every indicator is hidden, so output stays clean for scripts. Work that waits on a
//! model still says what it waits for once it has taken a second ([`announced`]), in a terminal
//! or not, so a slow or unreachable model never looks like a hang.

use std::future::Future;
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

/// A bar over bytes, e.g. a model file being downloaded (its length set once known).
pub fn bytes(message: &str) -> ProgressBar {
    shown(
        ProgressBar::new_spinner,
        "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} {eta}",
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

/// How long work may run before it says what it waits for.
pub const ANNOUNCE_AFTER: Duration = Duration::from_secs(1);

/// Runs `work`; once it has taken [`ANNOUNCE_AFTER`], says `what` it waits for on stderr: a
/// spinner with the elapsed time in a terminal, else one line.
pub async fn announced<F: Future>(what: &str, work: F) -> F::Output {
    tokio::pin!(work);
    tokio::select! {
        output = &mut work => return output,
        () = tokio::time::sleep(ANNOUNCE_AFTER) => {}
    }
    let progress = spinner(what);
    if progress.is_hidden() {
        eprintln!("{what} …");
    }
    let output = work.await;
    progress.finish_and_clear();
    output
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
