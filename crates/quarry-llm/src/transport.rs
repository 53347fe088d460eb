//! The HTTP transport both providers share: timeouts, retries with backoff and jitter,
//! `Retry-After`, a per-provider concurrency limit, and failures that name provider, URL and status.
//!
//! What is retried: connection failures (refused, reset, connect timeout), HTTP 408, 429 and
//! every 5xx but 501 ([`is_transient_status`]). What is not: other 4xx (the request itself is
//! wrong; sending it again cannot help), 501 Not Implemented (the server will never do it), and a
//! request that timed out after it was sent (the model may still be generating; retrying would
//! pay for the generation twice). A 4xx whose body says the prompt is longer than the context
//! window becomes [`LlmError::ContextOverflow`].

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue, RETRY_AFTER};
use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::LlmError;
pub use crate::error::error_chain;
use crate::error::{is_context_overflow, is_transient_status};
use crate::http_clients::{ClientSettings, LazyClients};
use crate::types::Usage;

/// Timeouts and retry policy of one provider's transport.
#[derive(Debug, Clone, PartialEq)]
pub struct TransportConfig {
    /// Time allowed to open the TCP (and TLS) connection.
    pub connect_timeout: Duration,
    /// Time allowed for a whole non-streaming call, from sending to the last byte of the reply.
    /// Local models on a CPU can be slow, hence the generous default.
    pub request_timeout: Duration,
    /// For streaming calls: the longest silence allowed between two chunks of the reply.
    pub read_timeout: Duration,
    /// Attempts per call, the first included (1 disables retries).
    pub max_attempts: u32,
    /// Backoff before the first retry; doubled for each further retry, up to `backoff_max`.
    /// Half of each delay is random jitter so parallel callers do not retry in lockstep.
    pub backoff_base: Duration,
    pub backoff_max: Duration,
    /// The longest `Retry-After` Quarry will wait for; a server asking for more fails the call
    /// at once (with the status it sent) instead of stalling a run.
    pub retry_after_max: Duration,
}

impl Default for TransportConfig {
    fn default() -> Self {
        TransportConfig {
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(300),
            read_timeout: Duration::from_secs(120),
            max_attempts: 4,
            backoff_base: Duration::from_millis(500),
            backoff_max: Duration::from_secs(30),
            retry_after_max: Duration::from_secs(120),
        }
    }
}

/// Reads token usage out of a provider's JSON body (used for error bodies too, so tokens a
/// failed attempt reports are still counted).
pub(crate) type UsageReader = fn(&Value) -> Option<Usage>;

pub(crate) struct Transport {
    provider: String,
    /// Built on first use (see `http_clients.rs`: no certificate store for `http://`).
    http: LazyClients,
    config: TransportConfig,
    permits: Arc<Semaphore>,
    read_usage: UsageReader,
}

/// A successful (2xx) exchange and what it took to get it.
pub(crate) struct Delivered<B> {
    pub body: B,
    /// HTTP attempts made, this one included.
    pub attempts: u32,
    /// Tokens reported by failed attempts before this one.
    pub failed_usage: Usage,
    /// When the first attempt started (for latency across retries).
    pub started: Instant,
}

impl<B> Delivered<B> {
    /// The same exchange with its body converted.
    fn map<C>(self, convert: impl FnOnce(B) -> C) -> Delivered<C> {
        Delivered {
            body: convert(self.body),
            attempts: self.attempts,
            failed_usage: self.failed_usage,
            started: self.started,
        }
    }
}

/// Where a provider is and who is calling: what every client constructor takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Name used in `describe()` and errors: `openai`, `ollama`, `anthropic`, `vllm`, ….
    pub provider: String,
    /// Base URL without the API path, e.g. `https://api.openai.com/v1`, `http://localhost:11434/v1`
    /// (OpenAI-compatible) or `https://api.anthropic.com` (Anthropic). A trailing `/` is ignored.
    pub base_url: String,
    /// Model used when a [`ChatRequest`](crate::ChatRequest) leaves `model` empty.
    pub model: String,
    pub api_key: Option<String>,
}

/// How a streamed reply is cut into events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// Server-Sent Events (`text/event-stream`): OpenAI-compatible servers, Anthropic.
    Sse,
    /// One JSON document per line (`application/x-ndjson`): Ollama's native API.
    JsonLines,
}

/// A streaming reply: the body is read by the provider while the concurrency permit is held.
pub(crate) struct Streaming {
    response: reqwest::Response,
    _permit: OwnedSemaphorePermit,
}

impl Streaming {
    /// How the reply is streamed, from its content type; `None` when it is not (some servers
    /// ignore `stream: true` and answer one JSON body).
    pub fn framing(&self) -> Option<Framing> {
        let content_type = self
            .response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())?;
        if content_type.starts_with("text/event-stream") {
            Some(Framing::Sse)
        } else if content_type.starts_with("application/x-ndjson")
            || content_type.starts_with("application/jsonl")
        {
            Some(Framing::JsonLines)
        } else {
            None
        }
    }

    /// The next chunk of the body, `None` at its end; the error says why the stream broke off.
    pub async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, String> {
        match self.response.chunk().await {
            Ok(chunk) => Ok(chunk.map(|bytes| bytes.to_vec())),
            Err(err) => Err(format!("the stream broke off: {}", error_chain(&err))),
        }
    }
}

enum Failure {
    Status {
        status: StatusCode,
        retry_after: Option<Duration>,
        body: String,
    },
    Transport(reqwest::Error),
}

enum Reply {
    Full(Vec<u8>),
    Stream(Streaming),
}

impl Transport {
    /// `concurrency` is the number of calls in flight at once through this transport; 0 means
    /// unlimited.
    pub fn new(
        provider: impl Into<String>,
        config: TransportConfig,
        concurrency: usize,
        read_usage: UsageReader,
    ) -> Result<Transport, LlmError> {
        let provider = provider.into();
        let http = LazyClients::new(
            provider.clone(),
            ClientSettings {
                connect_timeout: config.connect_timeout,
                read_timeout: config.read_timeout,
            },
        );
        let permits = if concurrency == 0 {
            Semaphore::MAX_PERMITS
        } else {
            concurrency
        };
        Ok(Transport {
            provider,
            http,
            config,
            permits: Arc::new(Semaphore::new(permits)),
            read_usage,
        })
    }

    /// POSTs `body` and reads the whole reply, retrying as the policy says.
    pub async fn post(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: &Value,
    ) -> Result<Delivered<Vec<u8>>, LlmError> {
        let delivered = self.exchange(url, headers, body, false).await?;
        Ok(delivered.map(|reply| match reply {
            Reply::Full(bytes) => bytes,
            Reply::Stream(_) => unreachable!("exchange(streaming = false) reads the body"),
        }))
    }

    /// POSTs `body` and hands back the open reply once the status is 2xx. Retries happen only
    /// before that point: once tokens flow to the caller a retry would repeat them.
    pub async fn post_streaming(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: &Value,
    ) -> Result<Delivered<Streaming>, LlmError> {
        let delivered = self.exchange(url, headers, body, true).await?;
        Ok(delivered.map(|reply| match reply {
            Reply::Stream(streaming) => streaming,
            Reply::Full(_) => unreachable!("exchange(streaming = true) leaves the body open"),
        }))
    }

    async fn exchange(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: &Value,
        streaming: bool,
    ) -> Result<Delivered<Reply>, LlmError> {
        let started = Instant::now();
        let payload = serde_json::to_vec(body).expect("a serde_json::Value always serializes");
        let max_attempts = self.config.max_attempts.max(1);
        let mut failed_usage = Usage::default();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let permit = Arc::clone(&self.permits)
                .acquire_owned()
                .await
                .expect("the semaphore is never closed");
            let mut request = self
                .http
                .for_url(url)?
                .post(url)
                .headers(headers.clone())
                .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
                .body(payload.clone());
            if !streaming {
                request = request.timeout(self.config.request_timeout);
            }
            let failure = match request.send().await {
                Ok(response) if response.status().is_success() => {
                    if streaming {
                        return Ok(Delivered {
                            body: Reply::Stream(Streaming {
                                response,
                                _permit: permit,
                            }),
                            attempts: attempt,
                            failed_usage,
                            started,
                        });
                    }
                    match response.bytes().await {
                        Ok(bytes) => {
                            return Ok(Delivered {
                                body: Reply::Full(bytes.to_vec()),
                                attempts: attempt,
                                failed_usage,
                                started,
                            });
                        }
                        Err(err) => Failure::Transport(err),
                    }
                }
                Ok(response) => {
                    let status = response.status();
                    let retry_after = match status {
                        StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE => {
                            parse_retry_after(response.headers())
                        }
                        _ => None,
                    };
                    let body = response.text().await.unwrap_or_default();
                    if let Some(usage) = serde_json::from_str::<Value>(&body)
                        .ok()
                        .and_then(|json| (self.read_usage)(&json))
                    {
                        failed_usage.add(usage);
                    }
                    Failure::Status {
                        status,
                        retry_after,
                        body,
                    }
                }
                Err(err) => Failure::Transport(err),
            };
            drop(permit);

            let retryable = match &failure {
                Failure::Status { status, .. } => is_transient_status(status.as_u16()),
                // A connect timeout is a connection failure; any other timeout means the server
                // took the request and may be generating.
                Failure::Transport(err) => err.is_connect() || !err.is_timeout(),
            };
            if !retryable || attempt >= max_attempts {
                return Err(self.error(url, attempt, failure));
            }
            let delay = match &failure {
                Failure::Status {
                    retry_after: Some(wait),
                    ..
                } => {
                    if *wait > self.config.retry_after_max {
                        return Err(self.error(url, attempt, failure));
                    }
                    *wait
                }
                _ => self.backoff(attempt),
            };
            tokio::time::sleep(delay).await;
        }
    }

    /// Exponential backoff with "equal jitter": half the delay fixed, half random.
    fn backoff(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1));
        let ceiling = self
            .config
            .backoff_base
            .saturating_mul(factor)
            .min(self.config.backoff_max);
        let half = ceiling / 2;
        half + half.mul_f64(jitter())
    }

    fn error(&self, url: &str, attempts: u32, failure: Failure) -> LlmError {
        match failure {
            Failure::Status {
                status,
                retry_after,
                body,
            } => {
                let mut body = truncate(body.trim(), 2000);
                if let Some(wait) = retry_after.filter(|wait| *wait > self.config.retry_after_max) {
                    body.push_str(&format!(
                        " (the server asked to retry after {}s, beyond the {}s Quarry waits)",
                        wait.as_secs(),
                        self.config.retry_after_max.as_secs()
                    ));
                }
                if status.is_client_error() && is_context_overflow(&body) {
                    return LlmError::ContextOverflow {
                        provider: self.provider.clone(),
                        url: url.to_string(),
                        status: status.as_u16(),
                        body,
                    };
                }
                LlmError::Status {
                    provider: self.provider.clone(),
                    url: url.to_string(),
                    status: status.as_u16(),
                    attempts,
                    body,
                }
            }
            Failure::Transport(err) => {
                let reason = if err.is_timeout() && !err.is_connect() {
                    format!(
                        "no complete reply within {}s (request timeout)",
                        self.config.request_timeout.as_secs_f64()
                    )
                } else {
                    error_chain(&err)
                };
                LlmError::Unreachable {
                    provider: self.provider.clone(),
                    url: url.to_string(),
                    attempts,
                    reason,
                }
            }
        }
    }
}

/// `Retry-After` as delay-seconds or an HTTP date (RFC 9110 §10.2.3).
fn parse_retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    if let Ok(seconds) = value.parse::<f64>() {
        return Duration::try_from_secs_f64(seconds).ok();
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(
        date.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// A number in [0, 1) without a random-number crate: `RandomState` is seeded per instance.
fn jitter() -> f64 {
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u128(
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos(),
    );
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

pub(crate) fn truncate(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_seconds_and_dates() {
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, HeaderValue::from_static("7"));
        assert_eq!(parse_retry_after(&headers), Some(Duration::from_secs(7)));

        let later = SystemTime::now() + Duration::from_secs(30);
        let date = httpdate::fmt_http_date(later);
        headers.insert(RETRY_AFTER, HeaderValue::from_str(&date).unwrap());
        let wait = parse_retry_after(&headers).unwrap();
        assert!(wait <= Duration::from_secs(30) && wait >= Duration::from_secs(25));

        headers.insert(
            RETRY_AFTER,
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(parse_retry_after(&headers), Some(Duration::ZERO));

        headers.insert(RETRY_AFTER, HeaderValue::from_static("soon"));
        assert_eq!(parse_retry_after(&headers), None);
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        let config = TransportConfig {
            backoff_base: Duration::from_millis(100),
            backoff_max: Duration::from_millis(350),
            ..TransportConfig::default()
        };
        let transport = Transport::new("test", config, 1, |_| None).unwrap();
        for _ in 0..20 {
            let first = transport.backoff(1);
            assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
            let second = transport.backoff(2);
            assert!(second >= Duration::from_millis(100) && second <= Duration::from_millis(200));
            let capped = transport.backoff(10);
            assert!(capped >= Duration::from_millis(175) && capped <= Duration::from_millis(350));
        }
    }

    #[test]
    fn truncate_counts_characters() {
        assert_eq!(truncate("héllo", 2), "hé…");
        assert_eq!(truncate("hé", 2), "hé");
    }
}
