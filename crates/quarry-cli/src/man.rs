//! `quarry man`: the man page, generated from the clap definition (`clap_mangen`).

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use clap::CommandFactory;

use crate::args::{Cli, ManArgs};
use crate::failure::Failure;

pub fn run(args: ManArgs) -> Result<ExitCode, Failure> {
    let command = Cli::command();
    match args.dir {
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .and_then(|()| clap_mangen::generate_to(command, &dir))
                .with_context(|| format!("writing the man pages into {}", dir.display()))?;
            eprintln!("wrote the man pages into {}", dir.display());
        }
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(command)
                .render(&mut page)
                .context("rendering the man page")?;
            write_stdout(&page)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes generated text to stdout (a closed pipe is not a failure: see `failure.rs`).
pub fn write_stdout(bytes: &[u8]) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .context("writing to stdout")?;
    Ok(())
}
