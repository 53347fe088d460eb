//! What a provider is made of, and the one client that drives any of them.
//!
//! A [`WireProtocol`] says only what is really its own: the URL and headers, the request body,
//! how a whole reply is parsed and how stream events are assembled, and which native structured
//! output it uses. [`ProtocolClient`] does the rest once for every provider: posting through the
//! [`Transport`], custom headers, the structured-output fallback (a server refusing the schema is
//! asked again without it, once, and the client remembers), mapping strict replies back, falling
//! back to a whole JSON body when a server ignores `stream: true`, the SSE or JSON-lines read
//! loop and the truncation check.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};

use crate::LlmError;
use crate::client::{BoxFuture, LlmClient, TokenSink};
use crate::json_lines::JsonLinesParser;
use crate::sse::{SseEvent, SseParser};
use crate::structured::{StructuredOutput, WireFormat, refuses_structured_output};
use crate::transport::{Delivered, Endpoint, Framing, Transport, TransportConfig};
use crate::types::{ChatRequest, ChatResponse, Role, ToolCall, ToolSpec, Usage};

/// One provider's wire format: a value (e.g. the OpenAI protocol carries its structured-output
/// mode and Azure's deployment); every method is a pure function of its arguments.
pub trait WireProtocol: Send + Sync + 'static {
    /// Builds a response from the events of a streamed reply.
    type Assembler: Assembler;

    /// The full URL requests are posted to, from the endpoint's base URL (no trailing `/`).
    fn url(&self, base_url: &str) -> String;

    /// Headers sent with every request (API version, key).
    fn headers(&self, endpoint: &Endpoint) -> Result<HeaderMap, LlmError>;

    /// The JSON body for `request`, with `model` already resolved against the endpoint default,
    /// `format` in place of [`ChatRequest::response_format`] (`None` once the server refused it)
    /// and without [`ChatRequest::extra`] (the client adds those last).
    fn request_body(
        &self,
        model: &str,
        request: &ChatRequest,
        format: Option<&WireFormat>,
        stream: bool,
    ) -> Map<String, Value>;

    /// Parses a whole (non-streamed) reply.
    fn parse_reply(json: &Value) -> Result<Parsed, String>;

    /// Token usage in a reply or error body (see [`crate::transport::UsageReader`]).
    fn read_usage(json: &Value) -> Option<Usage>;

    /// How this protocol makes replies follow a schema.
    fn structured_output(&self) -> StructuredOutput;

    /// The reply to a request that carried `format`, as the caller expects it (Anthropic moves
    /// the forced tool's input into `content`). Unchanged by default.
    fn adopt_reply(&self, parsed: Parsed, _format: &WireFormat) -> Parsed {
        parsed
    }

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

/// Headers carrying the endpoint's key, when there is one, as a bearer token in `Authorization`
/// (the OpenAI-compatible API and Ollama's).
pub(crate) fn bearer_headers(endpoint: &Endpoint) -> Result<HeaderMap, LlmError> {
    let mut headers = HeaderMap::new();
    if let Some(value) = api_key_header(endpoint, "Bearer ")? {
        headers.insert(AUTHORIZATION, value);
    }
    Ok(headers)
}

/// The body's first field, the resolved `model`.
pub(crate) fn body_with_model(model: &str) -> Map<String, Value> {
    let mut body = Map::new();
    body.insert("model".into(), Value::String(model.to_owned()));
    body
}

/// Tools in the OpenAI shape (`{type: function, function: {name, description, parameters}}`),
/// which Ollama's native API takes too.
pub(crate) fn openai_tools(tools: &[ToolSpec]) -> Value {
    tools
        .iter()
        .map(|tool| {
            json!({
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                }
            })
        })
        .collect()
}

/// A message's `role` in the OpenAI shape (Ollama's native API uses the same names).
pub(crate) fn openai_role(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

/// Tool-call arguments as the JSON object Ollama and Anthropic take; arguments the model once
/// sent malformed are replayed as an empty object (the tool result that followed already told
/// the model what was wrong).
pub(crate) fn arguments_object(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => value,
        _ => json!({}),
    }
}

/// Custom headers (`Name: value` pairs the user configured, e.g. for a gateway), checked and
/// added over the protocol's own.
pub(crate) fn add_custom_headers(
    headers: &mut HeaderMap,
    custom: &[(String, String)],
    provider: &str,
) -> Result<(), LlmError> {
    for (name, value) in custom {
        let misconfigured = |what: &str| LlmError::Misconfigured {
            provider: provider.to_owned(),
            reason: format!("the custom header '{name}' has an invalid {what}"),
        };
        let header =
            HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| misconfigured("name"))?;
        let value = HeaderValue::from_str(value.trim()).map_err(|_| misconfigured("value"))?;
        headers.insert(header, value);
    }
    Ok(())
}

/// An [`LlmClient`] speaking protocol `P`: [`OpenAiClient`](crate::OpenAiClient),
/// [`AnthropicClient`](crate::AnthropicClient) and [`OllamaClient`](crate::OllamaClient) are
/// this type.
pub struct ProtocolClient<P: WireProtocol> {
    protocol: P,
    provider: String,
    model: String,
    url: String,
    headers: HeaderMap,
    transport: Transport,
    /// Set once the server refused a structured-output request: later requests go without it.
    schema_refused: AtomicBool,
}

impl<P: WireProtocol + Default> ProtocolClient<P> {
    /// A client with the protocol's default settings.
    pub fn new(
        endpoint: Endpoint,
        transport: TransportConfig,
        concurrency: usize,
    ) -> Result<Self, LlmError> {
        ProtocolClient::with_protocol(P::default(), endpoint, transport, concurrency)
    }
}

impl<P: WireProtocol> ProtocolClient<P> {
    pub fn with_protocol(
        protocol: P,
        endpoint: Endpoint,
        transport: TransportConfig,
        concurrency: usize,
    ) -> Result<Self, LlmError> {
        let url = protocol.url(endpoint.base_url.trim_end_matches('/'));
        let headers = protocol.headers(&endpoint)?;
        let transport = Transport::new(&endpoint.provider, transport, concurrency, P::read_usage)?;
        Ok(ProtocolClient {
            protocol,
            provider: endpoint.provider,
            model: endpoint.model,
            url,
            headers,
            transport,
            schema_refused: AtomicBool::new(false),
        })
    }

    /// Sends these headers with every request too, over the protocol's own (`Name`, `value`).
    pub fn with_headers(mut self, headers: &[(String, String)]) -> Result<Self, LlmError> {
        add_custom_headers(&mut self.headers, headers, &self.provider)?;
        Ok(self)
    }

    /// The URL requests are posted to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// How replies are made to follow a schema now: the protocol's way, or
    /// [`StructuredOutput::None`] once the server refused it.
    pub fn structured_output(&self) -> StructuredOutput {
        if self.schema_refused.load(Ordering::Relaxed) {
            StructuredOutput::None
        } else {
            self.protocol.structured_output()
        }
    }

    /// The request's response format as this client sends it now.
    fn wire_format(&self, request: &ChatRequest) -> Option<WireFormat> {
        if self.schema_refused.load(Ordering::Relaxed) {
            return None;
        }
        let mode = self.protocol.structured_output();
        request
            .response_format
            .as_ref()
            .map(|format| WireFormat::new(format, mode))
    }

    /// The JSON body sent for `request`.
    pub fn request_body(&self, request: &ChatRequest, stream: bool) -> Value {
        self.body(request, self.wire_format(request).as_ref(), stream)
    }

    fn body(&self, request: &ChatRequest, format: Option<&WireFormat>, stream: bool) -> Value {
        let model = if request.model.is_empty() {
            &self.model
        } else {
            &request.model
        };
        let mut body = self.protocol.request_body(model, request, format, stream);
        // Vendor fields last, so a caller can override anything the protocol set; an object
        // (Ollama's `options`) is merged key by key into the protocol's own.
        for (key, value) in &request.extra {
            match (body.get_mut(key), value) {
                (Some(Value::Object(set)), Value::Object(extra)) => {
                    for (name, field) in extra {
                        set.insert(name.clone(), field.clone());
                    }
                }
                _ => {
                    body.insert(key.clone(), value.clone());
                }
            }
        }
        Value::Object(body)
    }

    /// Whether `error` is the server refusing the structured output `format` asked for; if so
    /// the client remembers it.
    fn refused(&self, error: &LlmError, format: Option<&WireFormat>) -> bool {
        let refused = format.is_some()
            && matches!(error, LlmError::Status { status, body, .. }
                if refuses_structured_output(*status, body));
        if refused {
            self.schema_refused.store(true, Ordering::Relaxed);
        }
        refused
    }

    /// The parsed reply as the caller expects it: the forced tool adopted, strict replies mapped
    /// back to the caller's schema.
    fn finish(&self, parsed: Parsed, format: Option<&WireFormat>) -> Parsed {
        let Some(format) = format else {
            return parsed;
        };
        let mut parsed = self.protocol.adopt_reply(parsed, format);
        parsed.content = format.restore(parsed.content);
        parsed
    }

    /// Posts `request` with `post` (whole or streaming reply); when the server refuses its
    /// structured output, posts it once more without. Returns the exchange and the format the
    /// accepted request carried.
    async fn post_with_fallback<T, Post, Sent>(
        &self,
        request: &ChatRequest,
        stream: bool,
        post: Post,
    ) -> Result<(Delivered<T>, Option<WireFormat>), LlmError>
    where
        Post: Fn(Value) -> Sent,
        Sent: Future<Output = Result<Delivered<T>, LlmError>>,
    {
        let format = self.wire_format(request);
        match post(self.body(request, format.as_ref(), stream)).await {
            Err(error) if self.refused(&error, format.as_ref()) => {
                let delivered = post(self.body(request, None, stream)).await?;
                Ok((delivered, None))
            }
            other => Ok((other?, format)),
        }
    }

    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let (delivered, format) = self
            .post_with_fallback(request, false, |body| async move {
                self.transport.post(&self.url, &self.headers, &body).await
            })
            .await?;
        let parsed = self.parse_body(&delivered.body)?;
        Ok(self
            .finish(parsed, format.as_ref())
            .into_response(&delivered))
    }

    async fn complete_streaming(
        &self,
        request: &ChatRequest,
        on_token: TokenSink<'_>,
    ) -> Result<ChatResponse, LlmError> {
        let (mut delivered, format) = self
            .post_with_fallback(request, true, |body| async move {
                self.transport
                    .post_streaming(&self.url, &self.headers, &body)
                    .await
            })
            .await?;
        let stream = &mut delivered.body;
        let mut frames = match stream.framing() {
            Some(Framing::Sse) => Frames::Sse(SseParser::new()),
            Some(Framing::JsonLines) => Frames::Lines(JsonLinesParser::default()),
            None => {
                let mut bytes = Vec::new();
                while let Some(chunk) = stream.next_chunk().await.map_err(|r| self.bad_reply(r))? {
                    bytes.extend_from_slice(&chunk);
                }
                let parsed = self.parse_body(&bytes)?;
                if let Some(content) = &parsed.content {
                    on_token(content);
                }
                return Ok(self
                    .finish(parsed, format.as_ref())
                    .into_response(&delivered));
            }
        };

        let mut assembler = P::new_assembler();
        let mut ended = false;
        'read: while let Some(chunk) = stream.next_chunk().await.map_err(|r| self.bad_reply(r))? {
            for event in frames.feed(&chunk) {
                ended = assembler
                    .apply(&event, on_token)
                    .map_err(|reason| self.bad_reply(reason))?;
                if ended {
                    break 'read;
                }
            }
        }
        if let Some(event) = frames.finish().filter(|_| !ended) {
            ended = assembler
                .apply(&event, on_token)
                .map_err(|reason| self.bad_reply(reason))?;
        }
        // A stream cut off early would pass for a short answer; say so instead.
        if !ended && !assembler.has_finish_reason() {
            return Err(self.bad_reply(P::TRUNCATED.into()));
        }
        Ok(self
            .finish(assembler.finish(), format.as_ref())
            .into_response(&delivered))
    }

    /// Counts an ended call in the process-wide [`metrics`](crate::metrics), under the model
    /// the request was sent to.
    fn count(&self, request: &ChatRequest, outcome: &Result<ChatResponse, LlmError>) {
        let model = if request.model.is_empty() {
            &self.model
        } else {
            &request.model
        };
        crate::metrics::record(&self.provider, model, outcome);
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

/// The event parser for a stream's framing.
enum Frames {
    Sse(SseParser),
    Lines(JsonLinesParser),
}

impl Frames {
    fn feed(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        match self {
            Frames::Sse(parser) => parser.feed(chunk),
            Frames::Lines(parser) => parser.feed(chunk),
        }
    }

    fn finish(&mut self) -> Option<SseEvent> {
        match self {
            Frames::Sse(parser) => parser.finish(),
            Frames::Lines(parser) => parser.finish(),
        }
    }
}

impl<P: WireProtocol> LlmClient for ProtocolClient<P> {
    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let outcome = self.complete(request).await;
            self.count(request, &outcome);
            outcome
        })
    }

    fn chat_stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_token: TokenSink<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let outcome = self.complete_streaming(request, on_token).await;
            self.count(request, &outcome);
            outcome
        })
    }

    fn describe(&self) -> String {
        format!("{}:{}", self.provider, self.model)
    }

    fn structured_output(&self) -> StructuredOutput {
        ProtocolClient::structured_output(self)
    }
}
