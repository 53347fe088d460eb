//! The pipeline's error ([`PipelineError`]): what a run, a review or a correction could not do,
//! with the stable code both hosts answer with.

use quarry_core::ErrorCode;
use quarry_core::model::EntityTypeError;
use quarry_core::store::StoreError;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum PipelineError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    EntityType(#[from] EntityTypeError),
    #[error("no entity '{0}' in this project")]
    EntityNotFound(String),
    #[error("entity type '{0}' is not defined in this project")]
    EntityTypeNotFound(String),
    #[error("entity type '{entity_type}' has no field '{field}'")]
    UnknownField { entity_type: String, field: String },
    #[error("no extraction result '{0}' in this project")]
    ResultNotFound(String),
    #[error("no workflow run '{0}' in this project")]
    RunNotFound(String),
    #[error("field '{field}': {message}")]
    InvalidValue { field: String, message: String },
    #[error("field '{field}' is locked; unlock it before giving it a value")]
    FieldLocked { field: String },
    #[error("{0}")]
    InvalidCorrection(String),
}

impl PipelineError {
    /// The stable code both hosts answer with (HTTP status, exit status from the one table).
    pub fn code(&self) -> ErrorCode {
        match self {
            PipelineError::Store(error) => error.code(),
            PipelineError::EntityType(_) => ErrorCode::InvalidEntityType,
            PipelineError::EntityNotFound(_)
            | PipelineError::ResultNotFound(_)
            | PipelineError::RunNotFound(_) => ErrorCode::NotFound,
            PipelineError::EntityTypeNotFound(_) => ErrorCode::UnknownEntityType,
            PipelineError::UnknownField { .. } => ErrorCode::UnknownField,
            PipelineError::InvalidValue { .. } => ErrorCode::InvalidValue,
            PipelineError::FieldLocked { .. } => ErrorCode::FieldLocked,
            PipelineError::InvalidCorrection(_) => ErrorCode::InvalidCorrection,
        }
    }
}
