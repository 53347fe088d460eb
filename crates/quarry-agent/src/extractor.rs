//! The public entry point: one extraction of a schema from a text, chunked when long.

use std::sync::Arc;

use futures_util::{StreamExt, stream};
use quarry_llm::{LlmClient, TokenSink};

use crate::agent::{RunContext, RunOutcome, run};
use crate::budget::Budget;
use crate::chunk::{chunk, merge};
use crate::config::ExtractorConfig;
use crate::error::EngineError;
use crate::ground::Evidence;
use crate::report::{Extraction, UnreadChunk, assemble};
use crate::schema::Schema;
use crate::span::Span;

/// Extracts schemas from texts with one model. Cheap to share (`Arc` it); holds no per-call state.
pub struct Extractor {
    client: Arc<dyn LlmClient>,
    model: String,
    config: ExtractorConfig,
}

impl Extractor {
    pub fn new(
        client: Arc<dyn LlmClient>,
        model: impl Into<String>,
        config: ExtractorConfig,
    ) -> Self {
        Extractor {
            client,
            model: model.into(),
            config,
        }
    }

    pub fn config(&self) -> &ExtractorConfig {
        &self.config
    }

    /// This extractor with relative dates in the text read against `now` (see
    /// [`ExtractorConfig::now`]): a server's turns each take their own time.
    pub fn at(&self, now: chrono::DateTime<chrono::FixedOffset>) -> Extractor {
        Extractor {
            client: self.client.clone(),
            model: self.model.clone(),
            config: ExtractorConfig {
                now: Some(now),
                ..self.config.clone()
            },
        }
    }

    /// Extracts `schema` from `text`. `clarifications` are a person's answers to earlier
    /// questions (oldest first); they reach the model as user messages and may ground values.
    ///
    /// Unresolved fields are not an error: see [`Outcome`](crate::Outcome). Nor is a chunk of a
    /// long document that does not fit the model's context window, while another chunk does:
    /// see [`Extraction::unread_chunks`].
    pub async fn extract(
        &self,
        schema: &Schema,
        text: &str,
        clarifications: &[String],
    ) -> Result<Extraction, EngineError> {
        self.extract_inner(schema, text, clarifications, None).await
    }

    /// Like [`extract`](Self::extract), streaming the model's text to `on_token` as it arrives.
    pub async fn extract_streaming(
        &self,
        schema: &Schema,
        text: &str,
        clarifications: &[String],
        on_token: TokenSink<'_>,
    ) -> Result<Extraction, EngineError> {
        self.extract_inner(schema, text, clarifications, Some(on_token))
            .await
    }

    async fn extract_inner(
        &self,
        schema: &Schema,
        text: &str,
        clarifications: &[String],
        on_token: Option<TokenSink<'_>>,
    ) -> Result<Extraction, EngineError> {
        if text.trim().is_empty() {
            return Err(EngineError::EmptyDocument);
        }
        let budget = Budget::new(self.config.max_tokens_budget);
        let clarification_evidence: Vec<Evidence<'_>> =
            clarifications.iter().map(|c| Evidence::new(c)).collect();
        let chunks = if text.len() > self.config.chunk_bytes {
            chunk(text, self.config.chunk_bytes, self.config.chunk_overlap)
        } else {
            vec![crate::chunk::Chunk {
                text,
                offset: Span {
                    start: 0,
                    end: 0,
                    byte_start: 0,
                    byte_end: 0,
                },
            }]
        };
        let context = RunContext {
            client: self.client.as_ref(),
            model: &self.model,
            config: &self.config,
            schema,
            clarifications,
            clarification_evidence: &clarification_evidence,
            budget: &budget,
            on_token,
            enforce_required: chunks.len() == 1,
        };
        let chunk_count = chunks.len();
        // Futures built up front by a named async fn: a closure over `Chunk<'_>` would make the
        // returned future fail to be `Send` (a higher-ranked lifetime limitation of rustc).
        let pending: Vec<_> = chunks
            .iter()
            .map(|piece| run_chunk(&context, piece.text, piece.offset))
            .collect();
        let mut results = stream::iter(pending).buffered(self.config.chunk_concurrency.max(1));
        let mut runs: Vec<(RunOutcome, Span)> = Vec::with_capacity(chunk_count);
        let mut unread = Vec::new();
        let mut first_overflow = None;
        // `buffered` answers in chunk order. Any other error ends the extraction (dropping the
        // stream cancels the chunks still running), as before.
        for piece in &chunks {
            let result = results.next().await.expect("one result per chunk");
            match result {
                Ok(run) => runs.push(run),
                // This chunk's first call did not fit: keep the others' results, and leave its
                // fields to be found elsewhere or escalated.
                Err(EngineError::ContextOverflow { error, .. }) => {
                    let span = Span {
                        end: piece.offset.start + piece.text.chars().count(),
                        byte_end: piece.offset.byte_start + piece.text.len(),
                        ..piece.offset
                    };
                    unread.push(UnreadChunk {
                        span,
                        error: error.to_string(),
                    });
                    runs.push((RunOutcome::unread(schema, span), piece.offset));
                    first_overflow.get_or_insert(error);
                }
                Err(error) => return Err(error),
            }
        }
        if unread.len() == chunk_count
            && let Some(error) = first_overflow
        {
            return Err(EngineError::ContextOverflow {
                error,
                usage: budget.usage(),
            });
        }
        let (states, usage, calls) = merge(schema, runs);
        Ok(assemble(schema, states, usage, calls, chunk_count, unread))
    }
}

async fn run_chunk(
    context: &RunContext<'_>,
    text: &str,
    offset: Span,
) -> Result<(RunOutcome, Span), EngineError> {
    run(context, text).await.map(|outcome| (outcome, offset))
}
