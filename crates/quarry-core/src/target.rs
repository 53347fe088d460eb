//! The extraction targets of the `extract` skill.

use std::fmt;
use std::str::FromStr;

use crate::error::SkillError;

/// What the `extract` skill looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    Email,
    Url,
    Date,
    Entity,
    Name,
    Phone,
    Ip,
}

impl Target {
    pub const ALL: [Target; 7] = [
        Target::Email,
        Target::Url,
        Target::Date,
        Target::Entity,
        Target::Name,
        Target::Phone,
        Target::Ip,
    ];

    /// The name users type and the key of the skill's output object.
    pub fn as_str(self) -> &'static str {
        match self {
            Target::Email => "email",
            Target::Url => "url",
            Target::Date => "date",
            Target::Entity => "entity",
            Target::Name => "name",
            Target::Phone => "phone",
            Target::Ip => "ip",
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
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
