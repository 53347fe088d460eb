//! The one table of error codes both hosts use: each code's stable name, HTTP status, CLI exit
//! status and a one-line hint. The HTTP host answers `{"error": "<Code>", "message": …}` with the
//! code's HTTP status; the CLI prints `Error: <Code> - <message>` and exits with its exit status.
//!
//! Exit statuses stay few: 1 error, 2 usage, 3 a person must answer, 4 a unit of work ended
//! failed, 5 storage failed or is unreachable (0, success, is not a code).
//!
//! Choices worth knowing: `NeedsPerson` is 409 for a request that cannot go on without an answer
//! (the chat endpoint instead reports an open question as `status: needs_clarification` in a 200
//! answer); `ExtractionFailed` is 502 because a unit of work fails when the model behind it does.

use std::fmt;

macro_rules! error_codes {
    ($($(#[$doc:meta])* $code:ident => $http:literal, $exit:literal, $hint:literal;)+) => {
        /// A stable, machine-readable failure name shared by the CLI and the HTTP API.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorCode {
            $($(#[$doc])* $code,)+
        }

        impl ErrorCode {
            /// Every code, in table order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$code,)+];

            /// The stable name, e.g. `"NotFound"`.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$code => stringify!($code),)+
                }
            }

            /// The HTTP status the API answers with.
            pub const fn http_status(self) -> u16 {
                match self {
                    $(ErrorCode::$code => $http,)+
                }
            }

            /// The CLI's exit status (never 0).
            pub const fn exit_status(self) -> u8 {
                match self {
                    $(ErrorCode::$code => $exit,)+
                }
            }

            /// One line on what to do about it.
            pub const fn hint(self) -> &'static str {
                match self {
                    $(ErrorCode::$code => $hint,)+
                }
            }
        }
    };
}

error_codes! {
    // The extract skill's input errors (see `SkillError`).
    InvalidTarget => 400, 1, "pass one of email, url, date, entity, name, phone, ip";
    MissingTarget => 400, 1, "pass a target with --target or a JSON 'target' field";
    EmptyInput => 400, 1, "pass non-empty text";
    InputTooLarge => 413, 1, "split the input into smaller pieces or raise the size limit";
    InvalidUtf8 => 400, 1, "convert the input to UTF-8 first";
    InvalidNow => 400, 1, "give the reference time in RFC 3339, e.g. 2024-01-15T09:30:00Z";
    InvalidRegion => 400, 1, "give a two-letter ISO 3166 country code such as US or GB";
    UnreadableInput => 400, 1, "check the path exists and is readable";
    /// `entity` or `name` in a build that loads the entity data separately (the browser package),
    /// before it was loaded.
    EntityDataNotLoaded => 503, 1, "load the entity data first (loadEntityData in the JavaScript package)";
    UnreadablePdf => 400, 1, "check the file is an undamaged PDF, or extract its text first";
    /// A PDF whose pages are images only (a scan).
    PdfWithoutText => 422, 1, "run OCR on the scan first (e.g. ocrmypdf), or add its text";
    // Request shape (HTTP host).
    MalformedRequest => 400, 1, "send a JSON body matching the endpoint's schema";
    UnsupportedContentType => 400, 1, "send the body with Content-Type: application/json";
    /// An upload of a media type the endpoint does not read.
    UnsupportedMediaType => 415, 1, "send text/plain, text/markdown or application/pdf";
    MethodNotAllowed => 405, 1, "use the method the route documents (see GET /openapi.json)";
    /// A request line (method, URI, version) longer than the server accepts.
    UriTooLong => 414, 1, "move long parameters into a POST body, or raise --max-uri-bytes";
    // Load (HTTP host): the server refuses or ends work rather than fall over.
    /// The server's extraction budget or connection cap is full; the answer has `Retry-After`.
    Overloaded => 503, 1, "retry after the Retry-After seconds, or send less text at once";
    /// A request was not answered within the server's request deadline.
    DeadlineExceeded => 504, 1, "send a smaller input, or raise the server's --request-timeout-secs";
    // Who may do what.
    Unauthorized => 401, 1, "send a valid API key as 'Authorization: Bearer <key>'";
    Forbidden => 403, 1, "use a key with the needed scope for this project";
    /// A request with the web app's session cookie that lacks its CSRF token or comes from
    /// another site.
    CsrfRejected => 403, 1, "reload the page and sign in again";
    // Stored things.
    NotFound => 404, 1, "check the id; list what exists first";
    UnknownConversation => 404, 1, "start a new conversation; this one is unknown or expired";
    Conflict => 409, 1, "it already exists or changed meanwhile; re-read and retry";
    InvalidState => 409, 1, "the item is not in a state that allows this; check its status";
    /// A value was given for a locked field.
    FieldLocked => 409, 1, "unlock the field first (DELETE /v1/entities/{id}/locks/{field})";
    /// A worker's lease on a task ran out and another worker may own it now.
    LeaseLost => 409, 1, "another worker took over the task; drop this result";
    StorageError => 500, 5, "check the database is reachable and retry";
    // Arguments and definitions.
    /// A command-line usage error (clap's own errors also exit 2).
    Usage => 400, 2, "see --help for the command's arguments";
    InvalidArguments => 400, 2, "see --help for which arguments go together";
    /// The settings file `quarry.toml` cannot be read or holds an unknown key or a wrong type.
    InvalidConfig => 400, 2, "fix the key the message names in the quarry.toml it names";
    InvalidSchema => 400, 1, "fix the JSON Schema named in the message";
    InvalidEntityType => 400, 1, "fix the entity type definition named in the message";
    UnknownEntityType => 400, 1, "load the entity type first (quarry type load)";
    InvalidEntity => 400, 1, "fix the entity's fields to match its type";
    UnknownField => 400, 1, "use a field the entity type defines";
    InvalidValue => 400, 1, "give a value of the field's type";
    /// A project correction without text, too long, or scoped to a field without its type.
    InvalidCorrection => 400, 1, "give a rule of 1 to 500 characters; a field scope needs its type";
    InvalidScopes => 400, 1, "use the scopes the message lists, comma-separated";
    InvalidGraph => 400, 1, "fix the graph JSON named in the message";
    InvalidGraphTypes => 400, 1, "fix the graph types file named in the message";
    InvalidLimit => 400, 1, "give a limit within the range the message names";
    InvalidDepth => 400, 1, "give a depth within the range the message names";
    // Models, indexes and configuration.
    MissingModel => 503, 1, "pass --model provider:model or set QUARRY_MODEL";
    /// The model's provider needs an API key and none was given.
    MissingApiKey => 503, 2, "set the variable the message names (or QUARRY_API_KEY)";
    InvalidModel => 400, 1, "give the model as provider:model, e.g. ollama:qwen2.5:3b";
    ModelError => 502, 1, "check the model provider's URL, key and status, then retry";
    /// `quarry model pull` could not fetch or verify a model file.
    DownloadFailed => 502, 1, "check the source and your network and run it again: it resumes";
    ModelNotConfigured => 503, 1, "start the server with a model configured";
    PipelineNotConfigured => 503, 1, "start the server with a store and a model configured";
    StoreNotConfigured => 503, 1, "start the server with a store configured";
    BudgetExceeded => 422, 1, "raise the token budget or shorten the document";
    InvalidEmbedder => 400, 1, "name a known embedder, e.g. minilm";
    EmbedderUnavailable => 503, 1, "install or download the embedder's model files";
    IndexError => 500, 1, "rebuild the index and retry";
    KeyError => 500, 1, "retry; the system's random source failed";
    BenchError => 500, 1, "check the benchmark's corpus and output paths";
    Internal => 500, 1, "retry; report it if it persists";
    // The output guardrail's verdict kinds (`quarry check`, POST /skill/check): why an output
    // was rejected. /skill/check answers them inside its 200 verdict; the CLI exits 1.
    /// The output is not JSON the lenient parser can read.
    MalformedOutput => 422, 1, "return one JSON object, e.g. {\"email\": \"…\"}";
    /// The output lacks the target's field or has fields it should not.
    SchemaViolation => 422, 1, "return an object with exactly the target's field";
    /// A value of the wrong type or format (e.g. a number where a string is due).
    TypeMismatch => 422, 1, "give each value the type and format the target names";
    /// A well-formed value that cannot be right (e.g. a date in year 0).
    ImplausibleValue => 422, 1, "check the value against the text; it cannot be what the text means";
    /// A value the source text does not contain.
    Hallucination => 422, 1, "return only values that appear in the text";
    // Outcomes of a unit of work.
    /// Fields stay unresolved until a person answers.
    NeedsPerson => 409, 3, "answer the question (e.g. with --interactive) or review the result";
    /// A unit of work ended failed.
    ExtractionFailed => 502, 4, "see the run's history for why, then rerun it";
}

impl ErrorCode {
    /// The code named `name`, if any (the inverse of [`ErrorCode::as_str`]).
    pub fn parse(name: &str) -> Option<ErrorCode> {
        ErrorCode::ALL
            .iter()
            .copied()
            .find(|code| code.as_str() == name)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_are_unique_and_round_trip() {
        let mut seen = HashSet::new();
        for &code in ErrorCode::ALL {
            assert!(seen.insert(code.as_str()), "duplicate name {code}");
            assert_eq!(ErrorCode::parse(code.as_str()), Some(code));
        }
        assert_eq!(ErrorCode::parse("NoSuchCode"), None);
    }

    #[test]
    fn statuses_are_failures() {
        for &code in ErrorCode::ALL {
            assert!(
                (400..600).contains(&code.http_status()),
                "{code}: {}",
                code.http_status()
            );
            assert!(code.exit_status() >= 1, "{code}");
            assert!(
                !code.hint().is_empty() && !code.hint().contains('\n'),
                "{code}"
            );
        }
    }

    #[test]
    fn the_documented_exit_statuses() {
        assert_eq!(ErrorCode::NotFound.exit_status(), 1);
        assert_eq!(ErrorCode::Usage.exit_status(), 2);
        assert_eq!(ErrorCode::NeedsPerson.exit_status(), 3);
        assert_eq!(ErrorCode::ExtractionFailed.exit_status(), 4);
        assert_eq!(ErrorCode::StorageError.exit_status(), 5);
        assert_eq!(ErrorCode::LeaseLost.http_status(), 409);
    }
}
