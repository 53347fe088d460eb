//! A small Server-Sent Events parser over a byte stream.
//!
//! Providers feed it the chunks of a streaming HTTP body as they arrive; it yields one
//! [`SseEvent`] per blank-line-terminated event. Chunk boundaries may fall anywhere, even inside a
//! multi-byte character or between `\r` and `\n`: only complete lines are decoded.

/// One dispatched event: its `event:` name, if any, and its `data:` lines joined by `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

impl SseEvent {
    /// The OpenAI-style end-of-stream sentinel `data: [DONE]`.
    pub fn is_done(&self) -> bool {
        self.data.trim() == "[DONE]"
    }

    /// The `data:` payload as JSON; the error quotes it.
    pub(crate) fn json(&self) -> Result<serde_json::Value, String> {
        serde_json::from_str(&self.data)
            .map_err(|err| format!("a stream event is not JSON ({err}): {}", self.data))
    }
}

#[derive(Debug, Default)]
pub struct SseParser {
    /// Bytes of the current, not yet terminated line.
    line: Vec<u8>,
    event: Option<String>,
    data: String,
    has_data: bool,
}

impl SseParser {
    pub fn new() -> Self {
        SseParser::default()
    }

    /// Feeds the next chunk of the body; returns the events it completed, in order.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let mut events = Vec::new();
        for &byte in chunk {
            if byte == b'\n' {
                let mut line = std::mem::take(&mut self.line);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                if let Some(event) = self.process_line(&line) {
                    events.push(event);
                }
            } else {
                self.line.push(byte);
            }
        }
        events
    }

    /// Ends the stream: a final event without its trailing blank line is still delivered.
    pub fn finish(&mut self) -> Option<SseEvent> {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            // A line cut off by the end of the stream still counts; only the blank line is missing.
            let _ = self.process_line(&line);
        }
        self.dispatch()
    }

    fn process_line(&mut self, line: &[u8]) -> Option<SseEvent> {
        if line.is_empty() {
            return self.dispatch();
        }
        let line = String::from_utf8_lossy(line);
        if line.starts_with(':') {
            return None; // comment / keep-alive
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_ref(), ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = Some(value.to_string()),
            _ => {} // `id`, `retry` and unknown fields do not matter to a model stream
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
        if !self.has_data {
            return None;
        }
        self.has_data = false;
        Some(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_in_chunks(body: &[u8], chunk_size: usize) -> Vec<SseEvent> {
        let mut parser = SseParser::new();
        let mut events: Vec<SseEvent> = body
            .chunks(chunk_size)
            .flat_map(|chunk| parser.feed(chunk))
            .collect();
        events.extend(parser.finish());
        events
    }

    #[test]
    fn events_survive_any_chunking() {
        let body = "event: message_start\r\ndata: {\"a\":\"é\"}\r\n\r\n: ping\n\ndata: one\ndata: two\n\ndata: [DONE]\n\n";
        let expected = vec![
            SseEvent {
                event: Some("message_start".into()),
                data: "{\"a\":\"é\"}".into(),
            },
            SseEvent {
                event: None,
                data: "one\ntwo".into(),
            },
            SseEvent {
                event: None,
                data: "[DONE]".into(),
            },
        ];
        for size in 1..body.len() {
            assert_eq!(
                parse_in_chunks(body.as_bytes(), size),
                expected,
                "chunk size {size}"
            );
        }
        assert!(expected[2].is_done());
    }

    #[test]
    fn unterminated_last_event_is_delivered() {
        let events = parse_in_chunks(b"data: {\"x\":1}", 4);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data, "{\"x\":1}");
    }

    #[test]
    fn event_name_without_data_is_dropped() {
        assert!(parse_in_chunks(b"event: ping\n\n", 3).is_empty());
    }
}
