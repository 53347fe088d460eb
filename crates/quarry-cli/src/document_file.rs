//! Reading a document file for `quarry doc add`: the file's bytes (at most `max_bytes`), turned
//! into text by the one implementation the server's upload shares
//! ([`quarry_pipeline::document_text`]): UTF-8 text or Markdown as is, the text layer of a PDF.
//! A PDF that cannot be read is an error naming the file, never a crash.

use std::path::Path;

use quarry_core::ErrorCode;
use quarry_pipeline::document_text::{DocumentFormat, DocumentTextError, document_text};

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
