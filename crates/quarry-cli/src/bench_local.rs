//! `quarry bench --local-model MODEL.gguf`: the embedded model's speed, as figures to put beside
//! llama.cpp's (`scripts/local_model_bench.py` runs both on the same GGUF and threads):
//! prompt tokens per second, generated tokens per second and time to first token on one prompt
//! (unconstrained, run to `--generate` tokens past any end of turn); the token mask's cost per
//! generated token in a constrained, grounded extraction; peak memory; and the wall time of
//! `quarry extract --schema` on a 1 KB text with a 4-field schema in a fresh process.

use std::path::Path;
use std::process::{Command, ExitCode};
use std::time::Instant;

use anyhow::Context;
use quarry_core::ErrorCode;
use quarry_llm::local::LocalClient;
use quarry_llm::{ChatRequest, LlmClient, Message, ResponseFormat};
use serde_json::json;

use crate::args::BenchArgs;
use crate::failure::Failure;

/// A 1 KB invoice, the text of the extraction figure.
const INVOICE: &str = "INVOICE 2024-117\n\nFrom: Acme Supplies Ltd, 12 Harbour Road, Springfield. \
    VAT number GB 123 4567 89.\nTo: Globex Corporation, attention of the accounts payable team, \
    400 Market Street, Shelbyville.\n\nDate of issue: 15 February 2024. Payment is due within \
    thirty days, by 15 March 2024, by bank transfer to the account named below.\n\nItems: 40 \
    boxes of A4 paper at 18.50 each; 12 toner cartridges at 42.00 each; delivery and handling \
    20.00. Subtotal 1,264.00. A volume discount of 64.00 applies to orders over 1,000.00.\n\n\
    Total due: 1,200.00 USD.\n\nQuestions about this invoice go to billing@acme-supplies.example \
    or to Jane Doe, the accounts manager, on +44 20 7946 0958. Late payments carry interest of \
    1.5% a month. Thank you for your custom; we look forward to serving Globex again this \
    year.\n";

const SCHEMA: &str = r#"{"type": "object", "required": ["vendor", "customer", "total", "due"],
 "properties": {
  "vendor": {"type": "string", "description": "Who issued the invoice"},
  "customer": {"type": "string", "description": "Who must pay"},
  "total": {"type": "number", "description": "Amount due"},
  "due": {"type": ["string", "null"], "format": "date", "description": "Due date"}}}"#;

pub fn run(args: &BenchArgs, model: &Path) -> Result<ExitCode, Failure> {
    let bench = |error: anyhow::Error| Failure::coded(ErrorCode::BenchError, format!("{error:#}"));
    let prompt = match &args.prompt_file {
        Some(path) => std::fs::read_to_string(path)
            .with_context(|| format!("reading {}", path.display()))
            .map_err(bench)?,
        None => INVOICE.repeat(4),
    };
    // No prefix kept: every prompt is read in full, as llama.cpp's side reads it
    // (`cache_prompt: false`).
    let uncached = quarry_llm::LocalSettings {
        cache_mib: Some(0),
        ..quarry_llm::LocalSettings::default()
    };
    let client = LocalClient::new(
        quarry_llm::local::load_unshared(model, &uncached).map_err(crate::model::model_failure)?,
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;

    // Speed: one prompt, then --generate tokens, unconstrained.
    let generate = args.generate.max(1) as u32;
    let mut extra = serde_json::Map::new();
    extra.insert("ignore_eos".to_owned(), json!(true));
    let request = ChatRequest {
        model: "bench".to_owned(),
        messages: vec![Message::user(prompt)],
        max_tokens: Some(generate),
        temperature: Some(0.0),
        extra,
        ..ChatRequest::default()
    };
    // The first call warms caches up; the second is measured, as the llama.cpp side does.
    for _ in 0..2 {
        runtime
            .block_on(client.chat(&request))
            .map_err(crate::model::model_failure)?;
    }
    let speed = client
        .model()
        .last_stats()
        .context("no decoding statistics")
        .map_err(bench)?;

    // The mask's cost: a constrained, grounded extraction.
    let schema: serde_json::Value = serde_json::from_str(SCHEMA).expect("a valid constant");
    let constrained = ChatRequest {
        model: "bench".to_owned(),
        messages: vec![
            Message::system("Extract the fields of the schema from the user's text as JSON."),
            Message::user(INVOICE),
        ],
        response_format: Some(ResponseFormat::JsonSchema {
            name: "invoice".to_owned(),
            schema,
            strict: true,
        }),
        temperature: Some(0.0),
        max_tokens: Some(256),
        grounding: Some(INVOICE.to_owned()),
        ..ChatRequest::default()
    };
    runtime
        .block_on(client.chat(&constrained))
        .map_err(crate::model::model_failure)?;
    let masked = client
        .model()
        .last_stats()
        .context("no decoding statistics")
        .map_err(bench)?;
    let peak_rss_mib = peak_rss_mib();

    let extract_ms = extract_wall_ms(model).map_err(bench)?;

    let per_second = |tokens: usize, ms: f64| tokens as f64 / (ms / 1e3).max(1e-9);
    let decode_steps = speed.generated_tokens.saturating_sub(1).max(1);
    let masked_steps = masked.generated_tokens.max(1);
    let figures = json!({
        "prompt_tokens": speed.prompt_tokens,
        "prompt_tokens_per_second": per_second(speed.prompt_tokens, speed.prompt_ms),
        "generated_tokens": speed.generated_tokens,
        "generated_tokens_per_second": per_second(decode_steps, speed.decode_ms),
        "time_to_first_token_ms": speed.first_token_ms,
        "mask_ms_per_token": masked.mask_ms / masked_steps as f64,
        "mask_share_of_decode": masked.mask_ms / (masked.decode_ms + masked.mask_ms).max(1e-9),
        "peak_rss_mib": peak_rss_mib,
        "extract_schema_wall_ms": extract_ms,
    });
    if args.json {
        println!("{figures}");
    } else {
        for (name, value) in figures.as_object().expect("an object") {
            println!("{name:<30} {value}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `quarry extract --schema` on the 1 KB invoice in a fresh process, model load included.
fn extract_wall_ms(model: &Path) -> anyhow::Result<f64> {
    let dir = std::env::temp_dir().join(format!("quarry-bench-local-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let schema = dir.join("schema.json");
    let text = dir.join("invoice.txt");
    std::fs::write(&schema, SCHEMA)?;
    std::fs::write(&text, INVOICE)?;
    let started = Instant::now();
    let output = Command::new(std::env::current_exe()?)
        .args(["extract", "--schema"])
        .arg(&schema)
        .arg("--file")
        .arg(&text)
        .arg("--model")
        .arg(format!("local:{}", model.display()))
        .output()?;
    let elapsed = started.elapsed().as_secs_f64() * 1e3;
    let _ = std::fs::remove_dir_all(&dir);
    anyhow::ensure!(
        matches!(output.status.code(), Some(0 | 3)),
        "extract --schema failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(elapsed)
}

/// This process's peak resident memory (`VmHWM`), in MiB.
fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status.lines().find_map(|line| {
                let kib = line.strip_prefix("VmHWM:")?.trim().strip_suffix("kB")?;
                kib.trim().parse::<f64>().ok()
            })
        })
        .map_or(0.0, |kib| kib / 1024.0)
}
