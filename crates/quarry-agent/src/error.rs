//! Why an extraction could not run to an outcome. Unresolved fields are not errors: they are
//! [`Outcome::NeedsClarification`](crate::Outcome::NeedsClarification).

use quarry_core::ErrorCode;
use quarry_llm::{LlmError, Usage};
use thiserror::Error;

use crate::schema::SchemaError;

#[derive(Debug, Error)]
pub enum EngineError {
    #[error("model call failed: {0}")]
    Llm(#[from] LlmError),
    #[error(
        "token budget exceeded: the next model call may need up to {next_call} tokens, but only \
         {remaining} of the {budget}-token budget remain ({used} used); raise the budget \
         (--max-tokens-budget) or shorten the document"
    )]
    BudgetExceeded {
        budget: u64,
        used: u64,
        remaining: u64,
        next_call: u64,
        /// What the run had consumed when it stopped.
        usage: Usage,
    },
    /// The first model call for a document (or chunk) did not fit the model's context window.
    /// (When a later turn overflows, the loop stops and keeps what earlier turns found.)
    #[error(
        "the document does not fit the model's context window ({} tokens spent before): {error}; \
         use a model with a longer context or extract from a shorter text",
        usage.total()
    )]
    ContextOverflow {
        error: LlmError,
        /// What the run had consumed when it stopped.
        usage: Usage,
    },
    #[error("the document is empty; pass the text to extract from")]
    EmptyDocument,
    #[error(transparent)]
    Schema(#[from] SchemaError),
}

impl EngineError {
    /// The failure's row in the error-code table, as every host reports it.
    pub fn error_code(&self) -> ErrorCode {
        match self {
            EngineError::Llm(_) | EngineError::ContextOverflow { .. } => ErrorCode::ModelError,
            EngineError::BudgetExceeded { .. } => ErrorCode::BudgetExceeded,
            EngineError::EmptyDocument => ErrorCode::EmptyInput,
            EngineError::Schema(_) => ErrorCode::InvalidSchema,
        }
    }
}

/// Why a model client cannot be built, as a code: a missing key is `MissingApiKey` (the message
/// names its variable), settings that cannot work (a provider that needs a base URL without one)
/// `Usage`, a malformed model string `InvalidModel`; anything else `ModelError`.
pub fn llm_error_code(error: &LlmError) -> ErrorCode {
    match error {
        LlmError::MissingKey { .. } => ErrorCode::MissingApiKey,
        LlmError::Misconfigured { .. } => ErrorCode::Usage,
        LlmError::InvalidModel(_) => ErrorCode::InvalidModel,
        _ => ErrorCode::ModelError,
    }
}
