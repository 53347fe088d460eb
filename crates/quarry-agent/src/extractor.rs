//! The public entry point: one extraction of a schema from a text, chunked when long.

use std::sync::Arc;

use futures_util::{StreamExt, TryStreamExt, stream};
use quarry_llm::{LlmClient, TokenSink};

use crate::agent::{RunContext, RunOutcome, run};
use crate::budget::Budget;
use crate::chunk::{chunk, merge};
use crate::config::ExtractorConfig;
use crate::error::EngineError;
use crate::ground::Evidence;
use crate::report::{Extraction, assemble};
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

    /// Extracts `schema` from `text`. `clarifications` are a person's answers to earlier
    /// questions (oldest first); they reach the model as user messages and may ground values.
    ///
    /// Unresolved fields are not an error: see [`Outcome`](crate::Outcome).
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
        let runs: Vec<(RunOutcome, Span)> = stream::iter(pending)
            .buffered(self.config.chunk_concurrency.max(1))
            .try_collect()
            .await?;
        let (states, usage, calls) = merge(schema, runs);
        Ok(assemble(schema, states, usage, calls, chunk_count))
    }
}

async fn run_chunk(
    context: &RunContext<'_>,
    text: &str,
    offset: Span,
) -> Result<(RunOutcome, Span), EngineError> {
    run(context, text).await.map(|outcome| (outcome, offset))
}
