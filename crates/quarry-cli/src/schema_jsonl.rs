//! `quarry extract --schema S --jsonl`: batch schema extraction. Each stdin line is one document
//! as a JSON object `{"text": "..."}`; each stdout line is, in the same order, that document's
//! object (every schema property, null where the text has none) or, for a line that failed,
//! `{"error": "<Code>", "message", "line"}` (a document whose fields stay unresolved is
//! `NeedsPerson` with the question as message and the partial object as `"value"`).
//!
//! `--concurrency` documents are extracted at once; lines are read on their own thread with the
//! skill batch's size cap, and at most that many are held, so memory stays flat however long the
//! stream. The exit status is 0 unless every line failed (then 1), like the skill's `--jsonl`.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use futures_util::StreamExt;
use quarry_agent::{Extraction, Extractor, Schema, UnreadChunk};
use quarry_core::json::to_spaced_string;
use quarry_core::{ErrorCode, SkillError};
use quarry_detect::skill::check_text;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::args::ExtractArgs;
use crate::document_file::decode_utf8;
use crate::failure::Failure;
use crate::failure::engine_code;
use crate::jsonl::{StreamSummary, next_line};
use crate::model::client_from;
use crate::model::config_for;

/// One input line.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Document {
    text: String,
}

/// Why one line has no object: its code, a message, and the partial object if any.
struct LineFailure {
    code: String,
    message: String,
    partial: Option<Value>,
}

impl From<SkillError> for LineFailure {
    fn from(error: SkillError) -> Self {
        LineFailure {
            code: error.code().to_owned(),
            message: error.to_string(),
            partial: None,
        }
    }
}

impl LineFailure {
    fn coded(code: ErrorCode, message: impl ToString) -> Self {
        LineFailure {
            code: code.as_str().to_owned(),
            message: message.to_string(),
            partial: None,
        }
    }

    fn to_line(&self, line: usize) -> String {
        let mut object = json!({"error": self.code, "message": self.message, "line": line});
        if let Some(partial) = &self.partial {
            object["value"] = partial.clone();
        }
        to_spaced_string(&object)
    }
}

pub fn run(
    args: &ExtractArgs,
    schema: Schema,
    config: &crate::config::Config,
) -> Result<ExitCode, Failure> {
    if args.interactive || args.explain {
        return Err(Failure::coded(
            ErrorCode::InvalidArguments,
            "--interactive and --explain work on one document; with --jsonl each line's \
             outcome is its output line",
        ));
    }
    let (client, spec) = client_from(&args.model, config)?;
    let extractor = Arc::new(Extractor::new(
        client,
        spec.model.clone(),
        config_for(args)?,
    ));
    let schema = Arc::new(schema);
    let max_bytes = args.input.max_bytes;
    let concurrency = args.model.concurrency.max(1);
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let lines = read_lines(max_bytes, concurrency);
    let progress = crate::progress::line_counter();
    let summary = runtime.block_on(async {
        let answers = lines
            .map(|line| {
                let (extractor, schema) = (extractor.clone(), schema.clone());
                tokio::spawn(async move {
                    match line {
                        Ok(bytes) => Ok(extract_line(&extractor, &schema, bytes, max_bytes).await),
                        Err(error) => Err(error),
                    }
                })
            })
            .buffered(concurrency);
        let mut answers = std::pin::pin!(answers);
        let mut out = BufWriter::new(io::stdout().lock());
        let mut summary = StreamSummary {
            lines: 0,
            failures: 0,
        };
        while let Some(answer) = answers.next().await {
            let answer = answer.context("an extraction task ended abnormally")?;
            let answer = answer.context("reading stdin")?;
            summary.lines += 1;
            for unread in &answer.unread {
                eprintln!(
                    "warning: line {}: {}",
                    summary.lines,
                    unread_warning(unread)
                );
            }
            let text = match answer.answer {
                Ok(value) => to_spaced_string(&value),
                Err(failure) => {
                    summary.failures += 1;
                    failure.to_line(summary.lines)
                }
            };
            writeln!(out, "{text}")
                .and_then(|()| out.flush())
                .context("writing to stdout")?;
            progress.inc(1);
        }
        progress.finish_and_clear();
        anyhow::Ok(summary)
    })?;
    if summary.failures > 0 {
        eprintln!(
            "{} lines read, {} answered with an error object",
            summary.lines, summary.failures
        );
    }
    Ok(summary.exit_code())
}

/// Stdin's lines, read on a thread of their own (a slow writer never stalls extractions in
/// flight), at most `window` ahead of the consumer.
fn read_lines(
    max_bytes: usize,
    window: usize,
) -> impl futures_util::Stream<Item = io::Result<Result<Vec<u8>, SkillError>>> {
    // A line carries a whole max-size text plus its JSON escaping.
    let limit = max_bytes.saturating_mul(2).saturating_add(4096);
    let (sender, receiver) = tokio::sync::mpsc::channel(window);
    std::thread::spawn(move || {
        let stdin = io::stdin();
        let mut reader = stdin.lock();
        let mut buffer = Vec::new();
        loop {
            let line = next_line(&mut reader, &mut buffer, limit).transpose();
            let Some(line) = line else { break };
            let failed = line.is_err();
            if sender.blocking_send(line).is_err() || failed {
                break;
            }
        }
    });
    futures_util::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|line| (line, receiver))
    })
}

/// One line's outcome: the extracted object, or why there is none, and the chunks of its text
/// the model could not read.
struct LineOutcome {
    answer: Result<Value, LineFailure>,
    unread: Vec<UnreadChunk>,
}

async fn extract_line(
    extractor: &Extractor,
    schema: &Schema,
    line: Result<Vec<u8>, SkillError>,
    max_bytes: usize,
) -> LineOutcome {
    let extraction = match read_and_extract(extractor, schema, line, max_bytes).await {
        Ok(extraction) => extraction,
        Err(failure) => {
            return LineOutcome {
                answer: Err(failure),
                unread: Vec::new(),
            };
        }
    };
    let answer = match extraction.question() {
        None => Ok(extraction.value),
        Some(question) => Err(LineFailure {
            code: ErrorCode::NeedsPerson.as_str().to_owned(),
            message: question.to_owned(),
            partial: Some(extraction.value),
        }),
    };
    LineOutcome {
        answer,
        unread: extraction.unread_chunks,
    }
}

async fn read_and_extract(
    extractor: &Extractor,
    schema: &Schema,
    line: Result<Vec<u8>, SkillError>,
    max_bytes: usize,
) -> Result<Extraction, LineFailure> {
    let line = decode_utf8(line?)?;
    let document: Document = serde_json::from_str(&line).map_err(|error| {
        LineFailure::coded(
            ErrorCode::MalformedRequest,
            format!("expected a JSON object like {{\"text\": \"...\"}}: {error}"),
        )
    })?;
    check_text(&document.text, max_bytes)?;
    extractor
        .extract(schema, &document.text, &[])
        .await
        .map_err(|error| LineFailure::coded(engine_code(&error), error))
}

/// What to tell the person about a chunk of the document the model never read.
pub fn unread_warning(unread: &UnreadChunk) -> String {
    format!(
        "characters {}..{} of the document were not read, as they did not fit the model's \
         context window ({}); fields found elsewhere are kept",
        unread.span.start, unread.span.end, unread.error
    )
}
