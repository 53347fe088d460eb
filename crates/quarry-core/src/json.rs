//! JSON text in the contract's house style: one line, `", "` between items and `": "` after keys
//! (what Python's `json.dumps` prints), so CLI and HTTP outputs are byte-identical to the contract.

use std::io;

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, Serializer};

/// Serialises `value` on one line with a space after every `:` and `,`.
pub fn to_spaced_string<T: Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::new();
    let mut serializer = Serializer::with_formatter(&mut out, SpacedFormatter);
    value
        .serialize(&mut serializer)
        .expect("serialising to memory with string keys cannot fail");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// The kind of a JSON value as a phrase for messages: `null`, `a boolean`, `a number`,
/// `a string`, `an array`, `an object`.
pub fn type_phrase(value: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

struct SpacedFormatter;

impl Formatter for SpacedFormatter {
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f64) -> io::Result<()> {
        CompactFormatter.write_f64(w, value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prints_like_python_json_dumps() {
        let value = json!({"email": ["a@b.rs", "c@d.rs"], "n": {"x": 1}});
        assert_eq!(
            to_spaced_string(&value),
            r#"{"email": ["a@b.rs", "c@d.rs"], "n": {"x": 1}}"#
        );
        assert_eq!(to_spaced_string(&json!({"email": []})), r#"{"email": []}"#);
    }
}
