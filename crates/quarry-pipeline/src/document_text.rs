//! The text of an uploaded or added document, from its bytes and format: UTF-8 text and
//! Markdown as they are (Markdown keeps its markup, so cited spans match what a reader sees in
//! the source), and the text layer of a PDF (`pdf-extract`, offline). The one implementation
//! `quarry doc add` and `POST /v1/documents/upload` share. A PDF that cannot be read is an
//! error, never a crash.

use thiserror::Error;

/// What a document's bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocumentFormat {
    Text,
    Markdown,
    Pdf,
}

impl DocumentFormat {
    /// The format of a media type (`text/plain`, `text/markdown`, `text/x-markdown`,
    /// `application/pdf`; parameters such as `; charset=utf-8` ignored), `None` for others.
    pub fn from_media_type(media_type: &str) -> Option<DocumentFormat> {
        let essence = media_type
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        match essence.as_str() {
            "text/plain" => Some(DocumentFormat::Text),
            "text/markdown" | "text/x-markdown" => Some(DocumentFormat::Markdown),
            "application/pdf" => Some(DocumentFormat::Pdf),
            _ => None,
        }
    }

    /// The format a file name's extension names: `.pdf` is a PDF, `.md`/`.markdown` Markdown,
    /// anything else text.
    pub fn from_file_name(name: &str) -> DocumentFormat {
        let extension = name
            .rsplit_once('.')
            .map(|(_, extension)| extension.to_ascii_lowercase());
        match extension.as_deref() {
            Some("pdf") => DocumentFormat::Pdf,
            Some("md" | "markdown") => DocumentFormat::Markdown,
            _ => DocumentFormat::Text,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DocumentTextError {
    /// Text or Markdown that is not UTF-8.
    #[error("the text is not UTF-8 (invalid at byte {0}); convert it to UTF-8 first")]
    NotUtf8(usize),
    /// A PDF the reader cannot parse.
    #[error("{0}; convert it to text (e.g. pdftotext) and add that")]
    UnreadablePdf(String),
    /// A PDF without a text layer (a scan).
    #[error(
        "the PDF has no text layer (a scan needs OCR first, e.g. ocrmypdf); add its text instead"
    )]
    NoTextLayer,
}

/// The text of `bytes` read as `format`.
pub fn document_text(bytes: &[u8], format: DocumentFormat) -> Result<String, DocumentTextError> {
    match format {
        DocumentFormat::Text | DocumentFormat::Markdown => match std::str::from_utf8(bytes) {
            Ok(text) => Ok(text.to_owned()),
            Err(error) => Err(DocumentTextError::NotUtf8(error.valid_up_to())),
        },
        DocumentFormat::Pdf => pdf_text(bytes),
    }
}

fn pdf_text(bytes: &[u8]) -> Result<String, DocumentTextError> {
    // The PDF parser may panic on damaged files: that is the file's fault, reported as such.
    let extracted = std::panic::catch_unwind(|| pdf_extract::extract_text_from_mem(bytes))
        .map_err(|_| {
            DocumentTextError::UnreadablePdf(
                "the PDF is damaged or uses features the reader lacks".into(),
            )
        })?
        .map_err(|error| DocumentTextError::UnreadablePdf(error.to_string()))?;
    if extracted.trim().is_empty() {
        return Err(DocumentTextError::NoTextLayer);
    }
    Ok(extracted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_and_file_names_name_formats() {
        assert_eq!(
            DocumentFormat::from_media_type("text/plain; charset=utf-8"),
            Some(DocumentFormat::Text)
        );
        assert_eq!(
            DocumentFormat::from_media_type("Text/Markdown"),
            Some(DocumentFormat::Markdown)
        );
        assert_eq!(
            DocumentFormat::from_media_type("application/pdf"),
            Some(DocumentFormat::Pdf)
        );
        assert_eq!(DocumentFormat::from_media_type("image/png"), None);
        assert_eq!(
            DocumentFormat::from_file_name("a/Report.PDF"),
            DocumentFormat::Pdf
        );
        assert_eq!(
            DocumentFormat::from_file_name("notes.md"),
            DocumentFormat::Markdown
        );
        assert_eq!(
            DocumentFormat::from_file_name("notes"),
            DocumentFormat::Text
        );
    }

    #[test]
    fn text_is_kept_and_bad_bytes_are_named() {
        assert_eq!(
            document_text("# 标题\nJane 😀".as_bytes(), DocumentFormat::Markdown).unwrap(),
            "# 标题\nJane 😀"
        );
        assert_eq!(
            document_text(b"ab\xffcd", DocumentFormat::Text),
            Err(DocumentTextError::NotUtf8(2))
        );
        assert!(matches!(
            document_text(b"%PDF-1.4\nnot really a pdf", DocumentFormat::Pdf),
            Err(DocumentTextError::UnreadablePdf(_))
        ));
    }
}
