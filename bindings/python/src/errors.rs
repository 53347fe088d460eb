//! Failures as Python exceptions: the class is `quarry.errors.<Code>`, looked up by the code's
//! name, so the Python side defines the hierarchy (and its docs) once.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use quarry_core::{ErrorCode, SkillError};

/// The exception for `code` with `message`.
pub fn raised(code: ErrorCode, message: impl Into<String>) -> PyErr {
    let message = message.into();
    Python::attach(|py| {
        match py
            .import("quarry.errors")
            .and_then(|errors| errors.getattr("error_for"))
            .and_then(|error_for| error_for.call1((code.as_str(), message.as_str())))
        {
            Ok(error) => PyErr::from_value(error),
            // The package's Python half is missing (the module imported on its own).
            Err(_) => PyRuntimeError::new_err(format!("{}: {message}", code.as_str())),
        }
    })
}

pub fn skill_error(error: SkillError) -> PyErr {
    raised(error.error_code(), error.to_string())
}

/// Every row of the table: `(name, http_status, hint)`, in table order.
#[pyfunction]
pub fn error_codes() -> Vec<(&'static str, u16, &'static str)> {
    ErrorCode::ALL
        .iter()
        .map(|code| (code.as_str(), code.http_status(), code.hint()))
        .collect()
}
