//! The skill's failure modes. Each has a stable code (`InvalidTarget`, `EmptyInput`, …) that the
//! CLI prints as `Error: <code> - <message>` and the HTTP host returns as `{"error", "message"}`.
//! Also parsing a [`Target`] from its name (`impl FromStr for Target`), which fails with
//! [`SkillError::InvalidTarget`].

use std::str::FromStr;

use thiserror::Error;

use crate::{ErrorCode, Target};

/// Why the `extract` skill refused an input. Every variant is the caller's fault and is reported,
/// never retried.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SkillError {
    #[error("unknown target '{0}'")]
    InvalidTarget(String),
    #[error(
        "text is empty; pass the text to extract from with --text, --file or a JSON 'text' field"
    )]
    EmptyInput,
    #[error("input is {size} bytes, over the limit of {limit} bytes; split it into smaller pieces")]
    InputTooLarge { size: usize, limit: usize },
    #[error(
        "input is not valid UTF-8 (first bad byte at offset {offset}); convert it to UTF-8 first"
    )]
    InvalidUtf8 { offset: usize },
    #[error("invalid reference time '{0}': expected RFC 3339, e.g. 2024-01-15T09:30:00Z")]
    InvalidNow(String),
    #[error("invalid region '{0}': expected a two-letter ISO 3166 country code such as US or GB")]
    InvalidRegion(String),
    #[error("no target given; pass one of email, url, date, entity, name, phone, ip")]
    MissingTarget,
    #[error("cannot read '{path}': {reason}")]
    UnreadableInput { path: String, reason: String },
    #[error("invalid request: {0}")]
    MalformedRequest(String),
    /// A build without compiled-in entity data (the browser package) was asked for `entity` or
    /// `name` before the data was loaded.
    #[error(
        "target '{0}' needs the entity data, which this build loads separately; load it first (loadEntityData in the JavaScript package)"
    )]
    EntityDataNotLoaded(Target),
}

impl SkillError {
    /// The stable, machine-readable name of the failure.
    pub fn code(&self) -> &'static str {
        self.error_code().as_str()
    }

    /// The failure's row in the [`ErrorCode`] table.
    pub fn error_code(&self) -> ErrorCode {
        match self {
            SkillError::InvalidTarget(_) => ErrorCode::InvalidTarget,
            SkillError::EmptyInput => ErrorCode::EmptyInput,
            SkillError::InputTooLarge { .. } => ErrorCode::InputTooLarge,
            SkillError::InvalidUtf8 { .. } => ErrorCode::InvalidUtf8,
            SkillError::InvalidNow(_) => ErrorCode::InvalidNow,
            SkillError::InvalidRegion(_) => ErrorCode::InvalidRegion,
            SkillError::MissingTarget => ErrorCode::MissingTarget,
            SkillError::UnreadableInput { .. } => ErrorCode::UnreadableInput,
            SkillError::MalformedRequest(_) => ErrorCode::MalformedRequest,
            SkillError::EntityDataNotLoaded(_) => ErrorCode::EntityDataNotLoaded,
        }
    }
}

impl FromStr for Target {
    type Err = SkillError;

    /// Accepts the canonical names case-insensitively, with surrounding whitespace ignored.
    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        let wanted = raw.trim();
        Target::ALL
            .into_iter()
            .find(|target| target.as_str().eq_ignore_ascii_case(wanted))
            .ok_or_else(|| SkillError::InvalidTarget(raw.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_canonical_name_and_rejects_others() {
        for target in Target::ALL {
            assert_eq!(target.as_str().parse::<Target>().unwrap(), target);
        }
        assert_eq!(" EMAIL ".parse::<Target>().unwrap(), Target::Email);
        let err = "fax".parse::<Target>().unwrap_err();
        assert_eq!(err.to_string(), "unknown target 'fax'");
        assert_eq!(err.code(), "InvalidTarget");
    }
}
