//! The OpenAI-compatible embeddings API: `POST {base}/embeddings`.
//!
//! One client serves OpenAI, Azure OpenAI deployments, Gemini, Ollama (`/v1`), vLLM, the llama.cpp server and LM Studio. The
//! request is `{"model": ..., "input": [texts]}`; the reply's `data[i].embedding` vectors are put
//! back in input order by their `index`. Inputs are sent in batches (64 texts per request by
//! default), one batch after another, through the same [`transport`](crate::transport) as chat:
//! retries, `Retry-After`, timeouts, a concurrency limit, and errors naming provider, URL and
//! status. Anthropic has no embeddings endpoint; [`build_embedder`] says so.

use std::time::Instant;

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName};
use serde_json::{Value, json};

use crate::LlmError;
use crate::model_spec::{
    Api, ModelSpec, Provider, ProviderSettings, azure_deployment, resolve_endpoint,
};
use crate::openai::AzureDeployment;
use crate::protocol::{add_custom_headers, api_key_header};
use crate::transport::{Endpoint, Transport, TransportConfig};
pub use crate::types::Embeddings;
use crate::types::Usage;

/// Texts per request unless [`EmbeddingsClient::with_batch_size`] says otherwise. OpenAI accepts
/// up to 2048 inputs per request; local servers are happier with small batches.
pub const DEFAULT_BATCH_SIZE: usize = 64;

/// A client for the OpenAI-compatible embeddings API. `endpoint.api_key` is sent as a bearer
/// token when present; local servers need none.
pub struct EmbeddingsClient {
    provider: String,
    model: String,
    url: String,
    headers: HeaderMap,
    transport: Transport,
    batch_size: usize,
}

impl std::fmt::Debug for EmbeddingsClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddingsClient")
            .field("provider", &self.provider)
            .field("model", &self.model)
            .field("url", &self.url)
            .field("batch_size", &self.batch_size)
            .finish_non_exhaustive()
    }
}

impl EmbeddingsClient {
    /// A client for `{endpoint.base_url}/embeddings`. `concurrency` is the number of requests
    /// in flight at once through this client (0: unlimited); batches of one call are sent one
    /// after another, so it matters only when the client is shared by concurrent callers.
    pub fn new(
        endpoint: Endpoint,
        transport: TransportConfig,
        concurrency: usize,
    ) -> Result<EmbeddingsClient, LlmError> {
        EmbeddingsClient::build(endpoint, None, transport, concurrency)
    }

    /// A client for an Azure OpenAI embeddings deployment:
    /// `{endpoint.base_url}/openai/deployments/{deployment}/embeddings?api-version=…`, the key in
    /// `api-key`.
    pub fn azure(
        endpoint: Endpoint,
        deployment: &AzureDeployment,
        transport: TransportConfig,
        concurrency: usize,
    ) -> Result<EmbeddingsClient, LlmError> {
        EmbeddingsClient::build(endpoint, Some(deployment), transport, concurrency)
    }

    fn build(
        endpoint: Endpoint,
        azure: Option<&AzureDeployment>,
        transport: TransportConfig,
        concurrency: usize,
    ) -> Result<EmbeddingsClient, LlmError> {
        let base_url = endpoint.base_url.trim_end_matches('/');
        let mut headers = HeaderMap::new();
        let url = match azure {
            Some(azure) => {
                if let Some(value) = api_key_header(&endpoint, "")? {
                    headers.insert(HeaderName::from_static("api-key"), value);
                }
                format!(
                    "{base_url}/openai/deployments/{}/embeddings?api-version={}",
                    azure.deployment, azure.api_version
                )
            }
            None => {
                if let Some(value) = api_key_header(&endpoint, "Bearer ")? {
                    headers.insert(AUTHORIZATION, value);
                }
                format!("{base_url}/embeddings")
            }
        };
        let transport = Transport::new(&endpoint.provider, transport, concurrency, read_usage)?;
        Ok(EmbeddingsClient {
            provider: endpoint.provider,
            model: endpoint.model,
            url,
            headers,
            transport,
            batch_size: DEFAULT_BATCH_SIZE,
        })
    }

    /// Sends these headers with every request too, over the client's own (`Name`, `value`).
    pub fn with_headers(mut self, headers: &[(String, String)]) -> Result<Self, LlmError> {
        add_custom_headers(&mut self.headers, headers, &self.provider)?;
        Ok(self)
    }

    /// Sends at most `batch_size` texts per request (0 is taken as 1).
    pub fn with_batch_size(mut self, batch_size: usize) -> EmbeddingsClient {
        self.batch_size = batch_size.max(1);
        self
    }

    /// The model named in every request.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// `provider:model`, as in a model string.
    pub fn describe(&self) -> String {
        format!("{}:{}", self.provider, self.model)
    }

    /// The URL requests go to: `{base_url}/embeddings`.
    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn batch_size(&self) -> usize {
        self.batch_size
    }

    /// One vector per text, in the order of `texts`. No request is made for no texts.
    ///
    /// Fails with the transport's errors, or [`LlmError::BadReply`] when a reply is not the
    /// embeddings shape, has another number of vectors than inputs, repeats or skips an
    /// `index`, or its vectors differ in length.
    pub async fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, LlmError> {
        Ok(self.embed_with_usage(texts).await?.vectors)
    }

    /// [`embed`](Self::embed), with token usage, attempts and latency.
    pub async fn embed_with_usage(&self, texts: &[&str]) -> Result<Embeddings, LlmError> {
        let started = Instant::now();
        let mut vectors: Vec<Vec<f32>> = Vec::with_capacity(texts.len());
        let mut usage = Usage::default();
        let mut attempts = 0;
        for batch in texts.chunks(self.batch_size) {
            let outcome = self.embed_batch(batch).await;
            crate::metrics::record_embeddings(&self.provider, &self.model, &outcome);
            let embedded = outcome?;
            attempts += embedded.attempts;
            usage.add(embedded.usage);
            if let (Some(first), Some(new)) = (vectors.first(), embedded.vectors.first())
                && first.len() != new.len()
            {
                return Err(self.bad_reply(format!(
                    "vectors of {} and {} dimensions in one call",
                    first.len(),
                    new.len()
                )));
            }
            vectors.extend(embedded.vectors);
        }
        Ok(Embeddings {
            vectors,
            usage,
            attempts,
            latency: started.elapsed(),
        })
    }

    /// One request: the vectors of `batch`, in its order (what the process-wide
    /// [`metrics`](crate::metrics) count as one embeddings call).
    async fn embed_batch(&self, batch: &[&str]) -> Result<Embeddings, LlmError> {
        let started = Instant::now();
        let body = json!({"model": self.model, "input": batch});
        let delivered = self.transport.post(&self.url, &self.headers, &body).await?;
        let mut usage = delivered.failed_usage;
        let json: Value = serde_json::from_slice(&delivered.body).map_err(|err| {
            self.bad_reply(format!(
                "the body is not JSON ({err}): {}",
                crate::transport::truncate(&String::from_utf8_lossy(&delivered.body), 200)
            ))
        })?;
        if let Some(reported) = read_usage(&json) {
            usage.add(reported);
        }
        let vectors =
            parse_embeddings(&json, batch.len()).map_err(|reason| self.bad_reply(reason))?;
        Ok(Embeddings {
            vectors,
            usage,
            attempts: delivered.attempts,
            latency: started.elapsed(),
        })
    }

    fn bad_reply(&self, reason: String) -> LlmError {
        LlmError::BadReply {
            provider: self.provider.clone(),
            url: self.url.clone(),
            reason,
        }
    }
}

/// The embeddings client for `spec`, with the base URL, key and transport resolved as
/// [`build_client`](crate::build_client) resolves them for chat (`--base-url`, then the host
/// variable: `OLLAMA_HOST`, `AZURE_OPENAI_ENDPOINT`, then the provider's default; Ollama's
/// embeddings are under `/v1`, an `azure:DEPLOYMENT` embeds at its deployment).
///
/// Fails with [`LlmError::Misconfigured`] for `anthropic` (it has no embeddings API) and for
/// `openai-compatible` without a base URL, and with [`LlmError::MissingKey`] for `openai` at its
/// cloud URL without a key.
pub fn build_embedder(
    spec: &ModelSpec,
    settings: ProviderSettings,
) -> Result<EmbeddingsClient, LlmError> {
    let provider = spec.provider;
    if provider == Provider::Local {
        return Err(LlmError::Misconfigured {
            provider: provider.name().to_string(),
            reason: "local models do not embed; use the minilm or hashing embedder, or a \
                     provider's embeddings model"
                .into(),
        });
    }
    if provider == Provider::Anthropic {
        return Err(LlmError::Misconfigured {
            provider: provider.name().to_string(),
            reason: "Anthropic has no embeddings API; use an OpenAI-compatible provider for \
                     embeddings, e.g. openai:text-embedding-3-small or ollama:nomic-embed-text"
                .into(),
        });
    }
    let endpoint = resolve_endpoint(spec, &settings, Api::Embeddings)?;
    let client = match provider {
        Provider::Azure => EmbeddingsClient::azure(
            endpoint,
            &azure_deployment(spec, &settings)?,
            settings.transport,
            settings.concurrency,
        )?,
        _ => EmbeddingsClient::new(endpoint, settings.transport, settings.concurrency)?,
    };
    client.with_headers(&settings.headers)
}

/// `usage.prompt_tokens` (or `total_tokens`, which some servers send alone).
fn read_usage(json: &Value) -> Option<Usage> {
    let usage = json.get("usage").filter(|usage| usage.is_object())?;
    let prompt_tokens = usage["prompt_tokens"]
        .as_u64()
        .or_else(|| usage["total_tokens"].as_u64())
        .unwrap_or(0);
    Some(Usage {
        prompt_tokens,
        completion_tokens: 0,
        ..Usage::default()
    })
}

/// The vectors of one reply in input order, checked against the number of inputs sent.
fn parse_embeddings(json: &Value, expected: usize) -> Result<Vec<Vec<f32>>, String> {
    let Some(data) = json.get("data").and_then(Value::as_array) else {
        return Err("no `data` array in the reply".into());
    };
    if data.len() != expected {
        return Err(format!("{} embeddings for {expected} inputs", data.len()));
    }
    let mut slots: Vec<Option<Vec<f32>>> = vec![None; expected];
    for (position, item) in data.iter().enumerate() {
        // A missing index means the server kept input order.
        let index = match item.get("index") {
            None | Some(Value::Null) => position,
            Some(index) => index
                .as_u64()
                .and_then(|index| usize::try_from(index).ok())
                .ok_or_else(|| format!("`data[{position}].index` is not an integer: {index}"))?,
        };
        if index >= expected {
            return Err(format!(
                "`data[{position}].index` is {index}, but only {expected} inputs were sent"
            ));
        }
        let vector = parse_vector(item.get("embedding"))
            .map_err(|reason| format!("`data[{position}].embedding` {reason}"))?;
        if slots[index].replace(vector).is_some() {
            return Err(format!("index {index} appears twice in `data`"));
        }
    }
    let vectors: Vec<Vec<f32>> = slots.into_iter().flatten().collect();
    if let Some(first) = vectors.first()
        && let Some(other) = vectors.iter().find(|vector| vector.len() != first.len())
    {
        return Err(format!(
            "vectors of {} and {} dimensions in one reply",
            first.len(),
            other.len()
        ));
    }
    Ok(vectors)
}

fn parse_vector(embedding: Option<&Value>) -> Result<Vec<f32>, String> {
    match embedding {
        Some(Value::Array(values)) => values
            .iter()
            .map(|value| value.as_f64().map(|number| number as f32))
            .collect::<Option<Vec<f32>>>()
            .ok_or_else(|| "holds something other than numbers".to_string()),
        Some(Value::String(_)) => {
            Err("is a string (base64?); Quarry asks for float arrays".to_string())
        }
        Some(other) => Err(format!("is not an array: {other}")),
        None => Err("is missing".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_are_put_in_input_order() {
        let reply = json!({"data": [
            {"index": 2, "embedding": [2.0, 2.5]},
            {"index": 0, "embedding": [0.0, 0.5]},
            {"index": 1, "embedding": [1.0, 1.5]},
        ]});
        assert_eq!(
            parse_embeddings(&reply, 3).unwrap(),
            vec![vec![0.0, 0.5], vec![1.0, 1.5], vec![2.0, 2.5]]
        );
    }

    #[test]
    fn malformed_replies_are_named() {
        let cases = [
            (json!({}), "no `data`"),
            (
                json!({"data": [{"index": 0, "embedding": [1.0]}]}),
                "1 embeddings for 2",
            ),
            (
                json!({"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [2.0]}]}),
                "appears twice",
            ),
            (
                json!({"data": [{"index": 0, "embedding": [1.0]}, {"index": 5, "embedding": [2.0]}]}),
                "is 5",
            ),
            (
                json!({"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": "AAAA"}]}),
                "base64",
            ),
            (
                json!({"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [1.0, 2.0]}]}),
                "dimensions",
            ),
        ];
        for (reply, expected) in cases {
            let err = parse_embeddings(&reply, 2).unwrap_err();
            assert!(err.contains(expected), "{err} should contain {expected}");
        }
    }

    #[test]
    fn anthropic_has_no_embeddings() {
        let spec = ModelSpec::parse("anthropic:claude-sonnet-4-5").unwrap();
        let err = build_embedder(&spec, ProviderSettings::default()).unwrap_err();
        assert!(matches!(err, LlmError::Misconfigured { .. }));
        assert!(err.to_string().contains("no embeddings API"), "{err}");
    }

    #[test]
    fn base_urls_resolve_like_chat() {
        let ollama = ModelSpec::parse("ollama:nomic-embed-text").unwrap();
        let settings = ProviderSettings {
            host: Some("gpu-box:11434".into()),
            ..ProviderSettings::default()
        };
        let client = build_embedder(&ollama, settings).unwrap();
        assert_eq!(client.url(), "http://gpu-box:11434/v1/embeddings");
        assert_eq!(client.model(), "nomic-embed-text");
        assert_eq!(client.describe(), "ollama:nomic-embed-text");

        let openai = ModelSpec::parse("openai:text-embedding-3-small").unwrap();
        assert!(matches!(
            build_embedder(&openai, ProviderSettings::default()),
            Err(LlmError::MissingKey { .. })
        ));
        let compatible = ModelSpec::parse("openai-compatible:e5").unwrap();
        assert!(matches!(
            build_embedder(&compatible, ProviderSettings::default()),
            Err(LlmError::Misconfigured { .. })
        ));
    }
}
