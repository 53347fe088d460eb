//! Batch mode: one JSON request per stdin line in, one result per stdout line out, in order.
//! Lines are read one at a time with a size cap, so memory stays flat however long the stream;
//! a bad line answers with an error object on its own line and the rest go on.

use std::io::{self, BufRead, BufWriter, Read, Write};
use std::process::ExitCode;

use anyhow::Context;
use indicatif::ProgressBar;
use quarry_core::SkillError;
use quarry_core::json::to_spaced_string;
use quarry_detect::skill::{self, SkillDefaults, SkillInput};
use serde_json::json;

use crate::document_file::decode_utf8;
use crate::failure::Failure;

pub fn run(defaults: &SkillDefaults) -> Result<ExitCode, Failure> {
    let stdin = io::stdin();
    let out = BufWriter::new(io::stdout().lock());
    let summary = stream(stdin.lock(), out, defaults, crate::progress::line_counter())?;
    if summary.failures > 0 {
        eprintln!(
            "{} lines read, {} answered with an error object",
            summary.lines, summary.failures
        );
    }
    Ok(summary.exit_code())
}

/// How many lines a stream had and how many of them were answered with an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamSummary {
    pub lines: usize,
    pub failures: usize,
}

impl StreamSummary {
    /// Success while at least one line was answered (a script reads the error objects of the
    /// others); 1 when every line failed, so a batch that did nothing cannot pass for one that
    /// worked. An empty stream is a success.
    pub fn exit_code(self) -> ExitCode {
        if self.lines > 0 && self.failures == self.lines {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        }
    }
}

/// Answers every line of `reader` on `out`, one line each, in order.
pub fn stream(
    mut reader: impl BufRead,
    mut out: impl Write,
    defaults: &SkillDefaults,
    progress: ProgressBar,
) -> anyhow::Result<StreamSummary> {
    // A line may carry a whole max-size text plus its JSON escaping and other fields.
    let line_limit = defaults
        .max_input_bytes
        .saturating_mul(2)
        .saturating_add(4096);
    let (mut lines, mut failures) = (0usize, 0usize);
    let mut buffer = Vec::new();
    while let Some(line) =
        next_line(&mut reader, &mut buffer, line_limit).context("reading stdin")?
    {
        lines += 1;
        let answer = match line.and_then(|text| answer_line(text, defaults)) {
            Ok(answer) => answer,
            Err(error) => {
                failures += 1;
                error_line(&error, lines)
            }
        };
        writeln!(out, "{answer}").context("writing to stdout")?;
        progress.inc(1);
    }
    out.flush().context("writing to stdout")?;
    progress.finish_and_clear();
    Ok(StreamSummary { lines, failures })
}

fn answer_line(line: Vec<u8>, defaults: &SkillDefaults) -> Result<String, SkillError> {
    let line = decode_utf8(line)?;
    let input = SkillInput::from_json(line.as_bytes())?;
    skill::run(&input, defaults).map(|value| to_spaced_string(&value))
}

fn error_line(error: &SkillError, line: usize) -> String {
    to_spaced_string(&json!({"error": error.code(), "message": error.to_string(), "line": line}))
}

/// The next line without its line ending: `None` at end of input, `Some(Err)` for a line over
/// `limit` bytes (which is skipped to its end, so the next line is still read).
pub fn next_line(
    reader: &mut impl BufRead,
    buffer: &mut Vec<u8>,
    limit: usize,
) -> io::Result<Option<Result<Vec<u8>, SkillError>>> {
    buffer.clear();
    let read = reader
        .by_ref()
        .take(limit as u64 + 1)
        .read_until(b'\n', buffer)?;
    if read == 0 {
        return Ok(None);
    }
    let complete = buffer.last() == Some(&b'\n');
    if !complete && buffer.len() > limit {
        let mut skipped = buffer.len();
        let mut sink = Vec::new();
        loop {
            sink.clear();
            let read = reader
                .by_ref()
                .take(64 * 1024)
                .read_until(b'\n', &mut sink)?;
            skipped += read;
            if read == 0 || sink.last() == Some(&b'\n') {
                break;
            }
        }
        return Ok(Some(Err(SkillError::InputTooLarge {
            size: skipped,
            limit,
        })));
    }
    while matches!(buffer.last(), Some(b'\n' | b'\r')) {
        buffer.pop();
    }
    Ok(Some(Ok(std::mem::take(buffer))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_lines_and_skips_an_oversize_one_without_losing_the_next() {
        let data = b"ab\r\n0123456789012\nlast";
        let mut reader = io::BufReader::with_capacity(4, &data[..]);
        let mut buffer = Vec::new();
        let mut lines = Vec::new();
        while let Some(line) = next_line(&mut reader, &mut buffer, 8).unwrap() {
            lines.push(line.map_err(|e| e.code()));
        }
        assert_eq!(
            lines,
            vec![
                Ok(b"ab".to_vec()),
                Err("InputTooLarge"),
                Ok(b"last".to_vec())
            ]
        );
    }
}
