//! Newline-delimited JSON streams (`application/x-ndjson`, Ollama's native API): one JSON
//! document per line. Chunk boundaries may fall anywhere; only complete lines are yielded, each
//! as an [`SseEvent`] without a name so the providers' assemblers read both framings alike.

use crate::sse::SseEvent;

#[derive(Debug, Default)]
pub struct JsonLinesParser {
    line: Vec<u8>,
}

impl JsonLinesParser {
    /// Feeds the next chunk of the body; returns the non-blank lines it completed, in order.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let mut events = Vec::new();
        for &byte in chunk {
            if byte == b'\n' {
                let line = std::mem::take(&mut self.line);
                events.extend(event(&line));
            } else {
                self.line.push(byte);
            }
        }
        events
    }

    /// Ends the stream: a last line without its newline still counts.
    pub fn finish(&mut self) -> Option<SseEvent> {
        let line = std::mem::take(&mut self.line);
        event(&line)
    }
}

fn event(line: &[u8]) -> Option<SseEvent> {
    let text = String::from_utf8_lossy(line);
    let text = text.trim();
    (!text.is_empty()).then(|| SseEvent {
        event: None,
        data: text.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_anywhere_are_joined() {
        let mut parser = JsonLinesParser::default();
        let text = "{\"a\":1}\r\n\n{\"bé\":2}\n{\"c\":3}".as_bytes();
        // Cut inside the two bytes of 'é'.
        let cut = text.iter().position(|&byte| byte == 0xC3).unwrap() + 1;
        let mut events = parser.feed(&text[..cut]);
        events.extend(parser.feed(&text[cut..]));
        events.extend(parser.finish());
        let data: Vec<&str> = events.iter().map(|event| event.data.as_str()).collect();
        assert_eq!(data, ["{\"a\":1}", "{\"bé\":2}", "{\"c\":3}"]);
    }
}
