//! What a provider is made of, and the one client that drives any of them.
//!
//! A [`WireProtocol`] says only what is really its own: the URL and headers, the request body,
//! how a whole reply is parsed and how stream events are assembled. [`ProtocolClient`] does the
//! rest once for every provider: posting through the [`Transport`], falling back to a whole JSON
//! body when a server ignores `stream: true`, the SSE read loop and the truncation check.

use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::{Map, Value};

use crate::LlmError;
use crate::client::{BoxFuture, LlmClient, TokenSink};
use crate::sse::{SseEvent, SseParser};
use crate::transport::{Delivered, Endpoint, Transport, TransportConfig};
use crate::types::{ChatRequest, ChatResponse, ToolCall, Usage};

/// One provider's wire format. Implemented by unit types; every method is a pure function of
/// its arguments.
pub trait WireProtocol: Send + Sync + 'static {
    /// Builds a response from the SSE events of a streamed reply.
    type Assembler: Assembler;

    /// The full URL requests are posted to, from the endpoint's base URL (no trailing `/`).
    fn url(base_url: &str) -> String;

    /// Headers sent with every request (API version, key).
    fn headers(endpoint: &Endpoint) -> Result<HeaderMap, LlmError>;

    /// The JSON body for `request`, with `model` already resolved against the endpoint default
    /// and without [`ChatRequest::extra`] (the client adds those last).
    fn request_body(model: &str, request: &ChatRequest, stream: bool) -> Map<String, Value>;

    /// Parses a whole (non-streamed) reply.
    fn parse_reply(json: &Value) -> Result<Parsed, String>;

    /// Token usage in a reply or error body (see [`crate::transport::UsageReader`]).
    fn read_usage(json: &Value) -> Option<Usage>;

    /// The complaint when a stream ends before its end marker and without a finish reason.
    const TRUNCATED: &'static str;

    fn new_assembler() -> Self::Assembler {
        Self::Assembler::default()
    }
}

/// Accumulates a streamed reply event by event.
pub trait Assembler: Default + Send {
    /// Applies one event; `Ok(true)` once the event marks the end of the stream.
    fn apply(&mut self, event: &SseEvent, on_token: TokenSink<'_>) -> Result<bool, String>;

    /// Whether a finish (stop) reason has been seen; a stream that has one is complete even
    /// if the server omitted the end marker.
    fn has_finish_reason(&self) -> bool;

    fn finish(self) -> Parsed;
}

/// What one reply said, before transport facts (attempts, latency) are added.
#[derive(Debug, Default)]
pub struct Parsed {
    pub content: Option<String>,
    pub tool_calls: Vec<ToolCall>,
    pub finish_reason: Option<String>,
    pub usage: Usage,
}

impl Parsed {
    fn into_response<B>(self, delivered: &Delivered<B>) -> ChatResponse {
        let mut usage = delivered.failed_usage;
        usage.add(self.usage);
        ChatResponse {
            content: self.content.filter(|content| !content.is_empty()),
            tool_calls: self.tool_calls,
            finish_reason: self.finish_reason,
            usage,
            latency: delivered.started.elapsed(),
            attempts: delivered.attempts,
        }
    }
}

/// The API key as a header value (`prefix` + key), `None` when there is no key.
pub(crate) fn api_key_header(
    endpoint: &Endpoint,
    prefix: &str,
) -> Result<Option<HeaderValue>, LlmError> {
    let Some(key) = endpoint.api_key.as_deref().filter(|key| !key.is_empty()) else {
        return Ok(None);
    };
    HeaderValue::from_str(&format!("{prefix}{key}"))
        .map(Some)
        .map_err(|_| LlmError::Misconfigured {
            provider: endpoint.provider.clone(),
            reason: "the API key contains characters not allowed in an HTTP header".into(),
        })
}

/// An [`LlmClient`] speaking protocol `P`: [`OpenAiClient`](crate::OpenAiClient) and
/// [`AnthropicClient`](crate::AnthropicClient) are this type.
pub struct ProtocolClient<P: WireProtocol> {
    provider: String,
    model: String,
    url: String,
    headers: HeaderMap,
    transport: Transport,
    protocol: std::marker::PhantomData<P>,
}

impl<P: WireProtocol> ProtocolClient<P> {
    pub fn new(
        endpoint: Endpoint,
        transport: TransportConfig,
        concurrency: usize,
    ) -> Result<Self, LlmError> {
        let url = P::url(endpoint.base_url.trim_end_matches('/'));
        let headers = P::headers(&endpoint)?;
        let transport = Transport::new(&endpoint.provider, transport, concurrency, P::read_usage)?;
        Ok(ProtocolClient {
            provider: endpoint.provider,
            model: endpoint.model,
            url,
            headers,
            transport,
            protocol: std::marker::PhantomData,
        })
    }

    /// The JSON body sent for `request`.
    pub fn request_body(&self, request: &ChatRequest, stream: bool) -> Value {
        let model = if request.model.is_empty() {
            &self.model
        } else {
            &request.model
        };
        let mut body = P::request_body(model, request, stream);
        // Vendor fields last, so a caller can override anything the protocol set.
        for (key, value) in &request.extra {
            body.insert(key.clone(), value.clone());
        }
        Value::Object(body)
    }

    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let body = self.request_body(request, false);
        let delivered = self.transport.post(&self.url, &self.headers, &body).await?;
        let parsed = self.parse_body(&delivered.body)?;
        Ok(parsed.into_response(&delivered))
    }

    async fn complete_streaming(
        &self,
        request: &ChatRequest,
        on_token: TokenSink<'_>,
    ) -> Result<ChatResponse, LlmError> {
        let body = self.request_body(request, true);
        let mut delivered = self
            .transport
            .post_streaming(&self.url, &self.headers, &body)
            .await?;
        let stream = &mut delivered.body;
        if !stream.is_event_stream() {
            let mut bytes = Vec::new();
            while let Some(chunk) = stream.next_chunk().await.map_err(|r| self.bad_reply(r))? {
                bytes.extend_from_slice(&chunk);
            }
            let parsed = self.parse_body(&bytes)?;
            if let Some(content) = &parsed.content {
                on_token(content);
            }
            return Ok(parsed.into_response(&delivered));
        }

        let mut parser = SseParser::new();
        let mut assembler = P::new_assembler();
        let mut ended = false;
        'read: while let Some(chunk) = stream.next_chunk().await.map_err(|r| self.bad_reply(r))? {
            for event in parser.feed(&chunk) {
                ended = assembler
                    .apply(&event, on_token)
                    .map_err(|reason| self.bad_reply(reason))?;
                if ended {
                    break 'read;
                }
            }
        }
        if let Some(event) = parser.finish().filter(|_| !ended) {
            ended = assembler
                .apply(&event, on_token)
                .map_err(|reason| self.bad_reply(reason))?;
        }
        // A stream cut off early would pass for a short answer; say so instead.
        if !ended && !assembler.has_finish_reason() {
            return Err(self.bad_reply(P::TRUNCATED.into()));
        }
        Ok(assembler.finish().into_response(&delivered))
    }

    fn parse_body(&self, bytes: &[u8]) -> Result<Parsed, LlmError> {
        let json: Value = serde_json::from_slice(bytes)
            .map_err(|err| self.bad_reply(format!("the body is not JSON ({err})")))?;
        P::parse_reply(&json).map_err(|reason| self.bad_reply(reason))
    }

    fn bad_reply(&self, reason: String) -> LlmError {
        LlmError::BadReply {
            provider: self.provider.clone(),
            url: self.url.clone(),
            reason,
        }
    }
}

impl<P: WireProtocol> LlmClient for ProtocolClient<P> {
    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(self.complete(request))
    }

    fn chat_stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_token: TokenSink<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(self.complete_streaming(request, on_token))
    }

    fn describe(&self) -> String {
        format!("{}:{}", self.provider, self.model)
    }
}
