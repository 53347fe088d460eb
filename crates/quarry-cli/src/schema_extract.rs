//! `quarry extract --schema SCHEMA`: the schema agent from the command line.
//!
//! stdout gets one JSON object with every schema property (null where the text has no value).
//! When fields stay unresolved after the attempt budget, the partial object still goes to stdout,
//! the question to stderr, and the exit status is 3; with `--interactive` the question is asked
//! and the answer fed back until the extraction completes or the person answers nothing.

use std::io::{self, BufRead, Write};
use std::process::ExitCode;

use anyhow::Context;
use quarry_agent::{Decoding, EngineError, Extraction, Extractor, Schema};
use quarry_core::ErrorCode;
use quarry_core::json::to_spaced_string;
use quarry_detect::skill::check_text;

use crate::args::ExtractArgs;
use crate::document_file::{read_file, read_text};
use crate::failure::Failure;
use crate::failure::engine_code;
use crate::model::{client_from, config_for};
use crate::schema_jsonl::unread_warning;
use crate::table::label;

pub fn run(args: ExtractArgs, config: &crate::config::Config) -> Result<ExitCode, Failure> {
    let schema = load_schema(&args)?;
    if args.jsonl {
        return crate::schema_jsonl::run(&args, schema, config);
    }
    if args.interactive && args.input.text.is_none() && args.input.file.is_none() {
        return Err(Failure::coded(
            ErrorCode::InvalidArguments,
            "--interactive reads answers from stdin, so pass the document with --text or --file",
        ));
    }
    let text = read_text(&args.input)?;
    check_text(&text, args.input.max_bytes)?;
    let (client, spec) = client_from(&args.model, config)?;
    let extractor = Extractor::new(client, spec.model.clone(), config_for(&args)?);
    // One conversation at a time: a current-thread runtime spares the worker threads' start-up.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;

    let mut clarifications = Vec::new();
    let extraction = loop {
        let extraction = runtime
            .block_on(crate::progress::announced(
                &format!("waiting for {spec} to fill the schema's fields"),
                extractor.extract(&schema, &text, &clarifications),
            ))
            .map_err(engine_failure)?;
        let Some(question) = extraction.question() else {
            break extraction;
        };
        if !args.interactive {
            break extraction;
        }
        match ask(question)? {
            Some(answer) => clarifications.push(answer),
            None => break extraction,
        }
    };

    writeln!(
        io::stdout().lock(),
        "{}",
        to_spaced_string(&extraction.value)
    )
    .context("writing the result to stdout")?;
    if args.explain {
        eprint!("{}", explain(&extraction));
    }
    for unread in &extraction.unread_chunks {
        eprintln!("warning: {}", unread_warning(unread));
    }
    match extraction.question() {
        None => Ok(ExitCode::SUCCESS),
        Some(question) => {
            eprintln!("{question}");
            // A person must answer before the extraction can complete (exit 3).
            Ok(ExitCode::from(ErrorCode::NeedsPerson.exit_status()))
        }
    }
}

/// The schema of `--schema`, parsed (JSON Schema or Quarry YAML).
fn load_schema(args: &ExtractArgs) -> Result<Schema, Failure> {
    let schema_path = args
        .schema
        .as_deref()
        .expect("dispatched only with --schema");
    let schema_text = read_file(schema_path, args.input.max_bytes)?;
    Schema::parse(&schema_text).map_err(|error| {
        Failure::coded(
            ErrorCode::InvalidSchema,
            format!("{}: {error}", schema_path.display()),
        )
    })
}

/// Asks `question` on stderr and reads one line of answer from stdin; `None` for no answer.
fn ask(question: &str) -> Result<Option<String>, Failure> {
    eprintln!("{question}");
    eprint!("> ");
    let mut answer = String::new();
    io::stdin()
        .lock()
        .read_line(&mut answer)
        .context("reading the answer from stdin")?;
    let answer = answer.trim();
    Ok((!answer.is_empty()).then(|| answer.to_owned()))
}

fn engine_failure(error: EngineError) -> Failure {
    Failure::coded(engine_code(&error), error)
}

/// How a field's value came to be, in words.
fn decoding_label(decoding: Decoding) -> String {
    match decoding {
        Decoding::Candidates {
            detector,
            offered: 0,
        } => format!("null: the {} detector found none", detector.as_str()),
        Decoding::Candidates { detector, offered } => format!(
            "chosen among {offered} {} candidate(s) the detectors found",
            detector.as_str()
        ),
        Decoding::GroundedSpan => "copied from the text (grounded span)".to_owned(),
        Decoding::Constrained => "written under the schema's grammar".to_owned(),
        Decoding::Free => "written freely".to_owned(),
    }
}

/// A table of every field: value, spans, grounding, confidence, attempts; then the run's tokens.
fn explain(extraction: &Extraction) -> String {
    let mut out = format!(
        "{:<20} {:<28} {:<16} {:<12} {:<10} {:<9} {}\n",
        "field", "value", "spans", "grounding", "confidence", "attempts", "decoded as"
    );
    for field in &extraction.fields {
        let spans = field
            .spans
            .iter()
            .map(|span| format!("{}..{}", span.start, span.end))
            .collect::<Vec<_>>()
            .join(",");
        let mut value = field.value.to_string();
        if value.chars().count() > 28 {
            value = value.chars().take(27).collect::<String>() + "…";
        }
        out.push_str(&format!(
            "{:<20} {:<28} {:<16} {:<12} {:<10} {:<9} {}\n",
            field.name,
            value,
            if spans.is_empty() {
                "-".to_owned()
            } else {
                spans
            },
            label(&field.grounding),
            label(&field.confidence),
            field.attempts,
            decoding_label(field.decoding)
        ));
    }
    out.push_str(&format!(
        "tokens: {} prompt ({} cached) + {} completion = {} over {} model call(s), {} chunk(s)",
        extraction.usage.prompt_tokens,
        extraction.usage.cached_tokens(),
        extraction.usage.completion_tokens,
        extraction.usage.total(),
        extraction.model_calls,
        extraction.chunks
    ));
    if !extraction.unread_chunks.is_empty() {
        out.push_str(&format!(
            ", {} not read (too long for the context window)",
            extraction.unread_chunks.len()
        ));
    }
    out.push('\n');
    out
}
