//! The repairs and coercions the lenient parser can make, each with a cost.
//!
//! Costs follow BAML's `jsonish` idea: a parse that needed fewer or cheaper repairs is more likely
//! to be what the model meant, so candidates are ranked by the sum of their flag costs.

use serde::Serialize;

/// One repair (while reading JSON) or coercion (while fitting a value to a schema).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Flag {
    // Where the value was found.
    /// The value came from a fenced code block (```json … ```).
    ExtractedFromFence,
    /// The value was cut out of surrounding prose.
    ExtractedFromProse,
    /// The value was the arguments of a tool call the model wrote as plain content.
    UnwrappedToolCall,
    /// Text around or between values was skipped.
    SkippedText,

    // Syntax repairs.
    /// A comma before a closing bracket (or a leading one) was dropped.
    TrailingComma,
    /// A string used single, curly or back quotes instead of double quotes.
    SingleQuotes,
    /// An object key had no quotes.
    UnquotedKey,
    /// A value was bare text and became a string.
    UnquotedString,
    /// A `//`, `/* */` or `#` comment was removed.
    Comment,
    /// `True`/`False`/`None`, `undefined`, a tuple or a set was read as its JSON equivalent.
    PythonLiteral,
    /// A comma between two members or elements was missing.
    MissingComma,
    /// A colon between a key and its value was missing.
    MissingColon,
    /// A key had no value; null was used.
    MissingValue,
    /// A string had no closing quote.
    UnclosedString,
    /// A quote inside a string was not escaped.
    UnescapedQuote,
    /// A backslash escape was invalid and was dropped, or a lone surrogate replaced.
    InvalidEscape,
    /// A raw control character (newline, tab) appeared inside a string.
    ControlCharacter,
    /// Objects, arrays or strings were still open at the end of the text.
    Truncated,
    /// The text held more than one JSON value.
    MultipleValues,
    /// A closing bracket without an opening one was skipped.
    StrayCloser,
    /// A number was cut off (`1.`, `2e`, `-`) or not valid JSON (`1.1.1`, `007`).
    NumberRepaired,
    /// A placeholder ellipsis (`...`) was removed.
    Ellipsis,
    /// A function-call wrapper (`callback(...)`, `NumberLong("2")`) was removed.
    FunctionCall,
    /// Strings joined with `+` were concatenated.
    ConcatenatedStrings,
    /// Members after a closed object (`{…}, "b": 1}`) were merged into it.
    MergedMembers,
    /// A key appeared twice; the last value won.
    DuplicateKey,
    /// The whole document was a JSON string with escaped quotes.
    EscapedJson,

    // Schema coercions.
    /// A string was parsed as a number.
    StringToNumber,
    /// A number or boolean was turned into a string.
    ToString,
    /// A float with no fraction was used as an integer.
    FloatToInt,
    /// A string or number was read as a boolean.
    ToBool,
    /// A single value was wrapped into a list.
    SingleToList,
    /// A one-element list was unwrapped into a single value.
    ListToSingle,
    /// An enum value matched only ignoring case, spaces or punctuation.
    EnumNormalized,
    /// A key matched a property only ignoring case or snake/camel style.
    KeyNormalized,
    /// A schema property was absent and became null.
    MissingProperty,
    /// A property the schema does not know was dropped.
    ExtraPropertyDropped,
    /// A date or date-time was rewritten to ISO 8601.
    DateNormalized,
    /// A string holding JSON was parsed into the object or array the schema wants.
    ParsedEmbeddedJson,
    /// A value did not fit the schema and was kept as it was (see the coercion errors).
    Unfitted,
}

impl Flag {
    /// How much this repair lowers confidence; lower totals rank first.
    pub fn cost(self) -> u32 {
        use Flag::*;
        match self {
            ExtractedFromFence | ExtractedFromProse | Comment | TrailingComma | EscapedJson => 1,
            KeyNormalized | EnumNormalized | DateNormalized | PythonLiteral | Ellipsis => 1,
            UnwrappedToolCall | SingleQuotes | UnquotedKey | StringToNumber | ToString => 2,
            FloatToInt | ToBool | SingleToList | ListToSingle | ControlCharacter => 2,
            MissingProperty | ExtraPropertyDropped | ParsedEmbeddedJson | FunctionCall => 2,
            ConcatenatedStrings | StrayCloser | InvalidEscape | NumberRepaired => 2,
            UnquotedString | MissingComma | MissingColon | DuplicateKey | MergedMembers => 3,
            UnclosedString | UnescapedQuote | Truncated | MultipleValues | SkippedText => 4,
            MissingValue => 4,
            Unfitted => 10,
        }
    }

    /// Whether a strict reader (one that refuses what it would have to guess) rejects this repair.
    pub fn refused_in_strict_mode(self) -> bool {
        use Flag::*;
        matches!(
            self,
            MissingValue
                | MissingColon
                | MultipleValues
                | DuplicateKey
                | UnclosedString
                | Truncated
                | MergedMembers
                | SkippedText
        )
    }
}

/// The sum of the costs of `flags`.
pub fn total_cost(flags: &[Flag]) -> u32 {
    flags.iter().map(|flag| flag.cost()).sum()
}
