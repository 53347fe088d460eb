//! Byte offsets (what Rust slices use) to Unicode code-point offsets (what users and JSON
//! outputs count), in one forward pass for sorted offsets.

/// Converts byte offsets of one text to code-point offsets. Queries in non-decreasing order cost
/// O(distance moved); a query behind the cursor restarts from the beginning, so callers sort first.
pub struct CodePointCursor<'t> {
    text: &'t str,
    byte: usize,
    code_points: usize,
}

impl<'t> CodePointCursor<'t> {
    pub fn new(text: &'t str) -> Self {
        CodePointCursor {
            text,
            byte: 0,
            code_points: 0,
        }
    }

    /// The code-point offset of `byte`, which must lie on a char boundary of the text.
    ///
    /// # Panics
    /// If `byte` is past the end of the text or inside a multi-byte character; both are bugs in
    /// the caller, never a property of user input.
    pub fn code_point_at(&mut self, byte: usize) -> usize {
        assert!(
            self.text.is_char_boundary(byte),
            "byte offset {byte} is not a char boundary"
        );
        if byte < self.byte {
            self.byte = 0;
            self.code_points = 0;
        }
        self.code_points += count_chars(&self.text.as_bytes()[self.byte..byte]);
        self.byte = byte;
        self.code_points
    }
}

/// Number of UTF-8 encoded characters in `bytes` (which hold whole characters).
fn count_chars(bytes: &[u8]) -> usize {
    // Every char has exactly one byte that is not a continuation byte (0b10xx_xxxx).
    bytes.iter().filter(|&&b| (b as i8) >= -0x40).count()
}

/// The byte offset of code point `index` in `text`, or `None` when `index` is past the end.
/// `index == text.chars().count()` maps to `text.len()`.
pub fn byte_of_code_point(text: &str, index: usize) -> Option<usize> {
    if index == 0 {
        return Some(0);
    }
    match text.char_indices().nth(index) {
        Some((byte, _)) => Some(byte),
        None if text.chars().count() == index => Some(text.len()),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_code_points_not_bytes() {
        let text = "Café ☕ at 東京 tomorrow";
        let mut cursor = CodePointCursor::new(text);
        for (code_point, (byte, _)) in text.char_indices().enumerate() {
            assert_eq!(cursor.code_point_at(byte), code_point);
        }
        assert_eq!(cursor.code_point_at(text.len()), text.chars().count());
        // Going backwards restarts instead of returning a wrong answer.
        assert_eq!(cursor.code_point_at(0), 0);
    }

    #[test]
    fn maps_code_points_back_to_bytes() {
        let text = "東京 x";
        assert_eq!(byte_of_code_point(text, 0), Some(0));
        assert_eq!(byte_of_code_point(text, 1), Some(3));
        assert_eq!(byte_of_code_point(text, 4), Some(text.len()));
        assert_eq!(byte_of_code_point(text, 5), None);
    }
}
