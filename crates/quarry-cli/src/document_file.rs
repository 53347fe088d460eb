//! Reading a document file for `quarry doc add`: the file's bytes (at most `max_bytes`), turned
//! into text by the one implementation the server's upload shares
//! ([`quarry_pipeline::document_text`]): UTF-8 text or Markdown as is, the text layer of a PDF.
//! A PDF that cannot be read is an error naming the file, never a crash.

use std::io::{self, IsTerminal, Read};
use std::path::Path;

use anyhow::Context;
use quarry_core::{ErrorCode, SkillError};
use quarry_pipeline::document_text::{DocumentFormat, DocumentTextError, document_text};

use crate::args::InputArgs;
use crate::failure::Failure;

/// The text of `path`, at most `max_bytes` of file.
pub fn read_document(path: &Path, max_bytes: usize) -> Result<String, Failure> {
    let unreadable_file = |error: std::io::Error| {
        Failure::coded(
            ErrorCode::UnreadableInput,
            format!("{}: {error}", path.display()),
        )
    };
    let size = std::fs::metadata(path).map_err(unreadable_file)?.len();
    if size > max_bytes as u64 {
        return Err(Failure::coded(
            ErrorCode::InputTooLarge,
            format!(
                "{} is {size} bytes; the limit is {max_bytes}",
                path.display()
            ),
        ));
    }
    let bytes = std::fs::read(path).map_err(unreadable_file)?;
    let format = DocumentFormat::from_file_name(&path.to_string_lossy());
    document_text(&bytes, format).map_err(|error| {
        let code = match error {
            DocumentTextError::NotUtf8(_) => ErrorCode::InvalidUtf8,
            DocumentTextError::UnreadablePdf(_) => ErrorCode::UnreadablePdf,
            DocumentTextError::NoTextLayer => ErrorCode::PdfWithoutText,
        };
        Failure::coded(code, format!("{}: {error}", path.display()))
    })
}

/// The source text from `--text`, `--file` or piped stdin, checked for size and UTF-8.
pub fn read_text(args: &InputArgs) -> Result<String, Failure> {
    if let Some(text) = &args.text {
        return Ok(text.clone());
    }
    if let Some(path) = &args.file {
        return Ok(read_file(path, args.max_bytes)?);
    }
    let stdin = io::stdin();
    if stdin.is_terminal() {
        return Err(anyhow::anyhow!(
            "no input: pass --text TEXT, --file PATH, --jsonl, or pipe text on stdin"
        )
        .into());
    }
    let mut bytes = Vec::new();
    stdin
        .lock()
        .take(args.max_bytes as u64 + 1)
        .read_to_end(&mut bytes)
        .context("reading stdin")?;
    if bytes.len() > args.max_bytes {
        return Err(SkillError::InputTooLarge {
            size: bytes.len(),
            limit: args.max_bytes,
        }
        .into());
    }
    Ok(decode_utf8(bytes)?)
}

/// Reads a UTF-8 file, refusing an oversize one before loading it.
pub fn read_file(path: &Path, max_bytes: usize) -> Result<String, SkillError> {
    let unreadable = |error: io::Error| SkillError::UnreadableInput {
        path: path.display().to_string(),
        reason: error.to_string(),
    };
    let size = std::fs::metadata(path).map_err(unreadable)?.len();
    if size > max_bytes as u64 {
        return Err(SkillError::InputTooLarge {
            size: usize::try_from(size).unwrap_or(usize::MAX),
            limit: max_bytes,
        });
    }
    decode_utf8(std::fs::read(path).map_err(unreadable)?)
}

pub fn decode_utf8(bytes: Vec<u8>) -> Result<String, SkillError> {
    String::from_utf8(bytes).map_err(|error| SkillError::InvalidUtf8 {
        offset: error.utf8_error().valid_up_to(),
    })
}
