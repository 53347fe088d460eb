//! The extraction targets of the `extract` skill. Parsing one from its name (`FromStr`) lives
//! in `error.rs`, next to the error it fails with.

use std::fmt;

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
