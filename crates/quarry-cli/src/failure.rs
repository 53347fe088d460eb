//! How a command fails: a skill error prints the contract's `Error: <Code> - <message>`; anything
//! else prints its cause chain. Both exit with status 1. A closed stdout (`quarry … | head`) is
//! not a failure.

use std::io;
use std::process::ExitCode;

use quarry_core::SkillError;

#[derive(Debug)]
pub enum Failure {
    Skill(SkillError),
    /// A failure with a stable code outside the skill's own (e.g. `ModelError`, `InvalidSchema`).
    Coded {
        code: &'static str,
        message: String,
    },
    Other(anyhow::Error),
}

/// A database failure (`StorageError`).
pub fn storage(error: impl ToString) -> Failure {
    Failure::coded("StorageError", error)
}

impl Failure {
    pub fn coded(code: &'static str, message: impl ToString) -> Self {
        Failure::Coded {
            code,
            message: message.to_string(),
        }
    }
}

impl Failure {
    pub fn report(self) -> ExitCode {
        match self {
            Failure::Skill(error) => eprintln!("Error: {} - {error}", error.code()),
            Failure::Coded { code, message } => eprintln!("Error: {code} - {message}"),
            Failure::Other(error) => {
                if is_broken_pipe(&error) {
                    return ExitCode::SUCCESS;
                }
                eprintln!("Error: {error:#}");
            }
        }
        ExitCode::FAILURE
    }
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error
        .chain()
        .filter_map(|cause| cause.downcast_ref::<io::Error>())
        .any(|io_error| io_error.kind() == io::ErrorKind::BrokenPipe)
}

impl From<SkillError> for Failure {
    fn from(error: SkillError) -> Self {
        Failure::Skill(error)
    }
}

impl From<anyhow::Error> for Failure {
    fn from(error: anyhow::Error) -> Self {
        Failure::Other(error)
    }
}

impl From<io::Error> for Failure {
    fn from(error: io::Error) -> Self {
        Failure::Other(error.into())
    }
}
