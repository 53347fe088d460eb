//! How a command fails: a coded failure (a skill error included) prints the contract's
//! `Error: <Code> - <message>` and exits with its code's status from [`ErrorCode`]'s table (1 for
//! most, 5 for storage; see README "Exit statuses"); anything else prints its cause chain and
//! exits 1. A closed stdout (`quarry … | head`) is not a failure.

use std::any::Any;
use std::io;
use std::process::ExitCode;

use quarry_agent::EngineError;
use quarry_core::store::StoreError;
use quarry_core::{ErrorCode, SkillError};

#[derive(Debug)]
pub enum Failure {
    Skill(SkillError),
    /// A failure with a stable code outside the skill's own (e.g. `ModelError`, `InvalidSchema`).
    Coded {
        code: ErrorCode,
        message: String,
    },
    Other(anyhow::Error),
}

/// A database failure: a [`StoreError`] keeps its own code (`NotFound`, `Conflict`, `LeaseLost`,
/// …, as over HTTP); anything else is `StorageError`.
pub fn storage<E: ToString + 'static>(error: E) -> Failure {
    let code = (&error as &dyn Any)
        .downcast_ref::<StoreError>()
        .map_or(ErrorCode::StorageError, StoreError::code);
    Failure::coded(code, error)
}

impl Failure {
    pub fn coded(code: ErrorCode, message: impl ToString) -> Self {
        Failure::Coded {
            code,
            message: message.to_string(),
        }
    }
}

impl Failure {
    pub fn report(self) -> ExitCode {
        let code = match self {
            Failure::Skill(error) => {
                eprintln!("Error: {} - {error}", error.code());
                error.error_code()
            }
            Failure::Coded { code, message } => {
                eprintln!("Error: {code} - {message}");
                code
            }
            Failure::Other(error) => {
                if is_broken_pipe(&error) {
                    return ExitCode::SUCCESS;
                }
                eprintln!("Error: {error:#}");
                return ExitCode::FAILURE;
            }
        };
        ExitCode::from(code.exit_status())
    }
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error
        .chain()
        .filter_map(|cause| cause.downcast_ref::<io::Error>())
        .any(|io_error| io_error.kind() == io::ErrorKind::BrokenPipe)
}

/// `<Code> - <message>`, as `report` prints it after `Error: `.
impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Skill(error) => write!(f, "{} - {error}", error.code()),
            Failure::Coded { code, message } => write!(f, "{code} - {message}"),
            Failure::Other(error) => write!(f, "{error:#}"),
        }
    }
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

/// The code an extraction's failure is reported with.
pub fn engine_code(error: &EngineError) -> ErrorCode {
    error.error_code()
}
