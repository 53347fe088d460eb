//! Reading a document file for `quarry doc add`: UTF-8 text or Markdown as is, and the text
//! layer of a PDF (`pdf-extract`, offline). A PDF that cannot be read is an error naming the
//! file, never a crash.

use std::path::Path;

use quarry_core::ErrorCode;

use crate::extract::read_file;
use crate::failure::Failure;

fn is_pdf(path: &Path) -> bool {
    path.extension()
        .is_some_and(|extension| extension.eq_ignore_ascii_case("pdf"))
}

/// The text of `path`, at most `max_bytes` of file.
pub fn read_document(path: &Path, max_bytes: usize) -> Result<String, Failure> {
    if !is_pdf(path) {
        return Ok(read_file(path, max_bytes)?);
    }
    let unreadable = |reason: String| {
        Failure::coded(
            ErrorCode::UnreadablePdf,
            format!(
                "{}: {reason}; convert it to text (e.g. pdftotext) and add that",
                path.display()
            ),
        )
    };
    let size = std::fs::metadata(path)
        .map_err(|error| {
            Failure::coded(
                ErrorCode::UnreadableInput,
                format!("{}: {error}", path.display()),
            )
        })?
        .len();
    if size > max_bytes as u64 {
        return Err(Failure::coded(
            ErrorCode::InputTooLarge,
            format!(
                "{} is {size} bytes; the limit is {max_bytes}",
                path.display()
            ),
        ));
    }
    let bytes = std::fs::read(path).map_err(|error| {
        Failure::coded(
            ErrorCode::UnreadableInput,
            format!("{}: {error}", path.display()),
        )
    })?;
    // The PDF parser may panic on damaged files: that is the file's fault, reported as such.
    let extracted = std::panic::catch_unwind(|| pdf_extract::extract_text_from_mem(&bytes))
        .map_err(|_| unreadable("the PDF is damaged or uses features the reader lacks".into()))?
        .map_err(|error| unreadable(error.to_string()))?;
    if extracted.trim().is_empty() {
        return Err(unreadable(
            "the PDF has no text layer (a scan needs OCR first)".into(),
        ));
    }
    Ok(extracted)
}
