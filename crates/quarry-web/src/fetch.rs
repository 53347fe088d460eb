//! Reading one page within a crawler's limits: http(s) only, public addresses only (every hop),
//! `robots.txt` of every origin on the way, at most [`FetchLimits::max_redirects`] redirects,
//! the body cut at [`FetchLimits::max_bytes`] and the whole read (robots included) at
//! [`FetchLimits::timeout`]. Redirects are followed here, not by the client, so each hop is
//! checked like the first.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{CONTENT_TYPE, LOCATION};
use url::Url;

use crate::address::{CheckedResolver, HostPolicy};
use crate::readable::readable_text;
use crate::robots::{MAX_ROBOTS_BYTES, RobotsCache, Rules};
use crate::{USER_AGENT, WebError};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchLimits {
    /// Bytes of a page's body read; the rest is dropped (the page is marked truncated).
    pub max_bytes: usize,
    /// The whole fetch: `robots.txt`, redirects and body.
    pub timeout: Duration,
    pub max_redirects: usize,
}

impl Default for FetchLimits {
    fn default() -> Self {
        FetchLimits {
            max_bytes: 2 * 1024 * 1024,
            timeout: Duration::from_secs(15),
            max_redirects: 5,
        }
    }
}

/// A page read: its main text and where and when it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The URL asked for.
    pub requested_url: String,
    /// The URL the text came from, after redirects.
    pub url: String,
    pub title: String,
    pub text: String,
    /// RFC 3339, UTC.
    pub fetched_at: String,
    /// The body was longer than the size limit and was cut.
    pub truncated: bool,
}

#[derive(Clone)]
pub struct PageFetcher {
    client: reqwest::Client,
    limits: FetchLimits,
    hosts: HostPolicy,
    robots: RobotsCache,
}

impl std::fmt::Debug for PageFetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageFetcher")
            .field("limits", &self.limits)
            .field("hosts", &self.hosts)
            .finish_non_exhaustive()
    }
}

enum Kind {
    Html,
    Text,
}

impl PageFetcher {
    pub fn new(limits: FetchLimits, hosts: HostPolicy) -> Result<PageFetcher, WebError> {
        quarry_llm::install_crypto_provider();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            // A proxy would resolve the names itself, past the address check.
            .no_proxy()
            .dns_resolver(Arc::new(CheckedResolver(hosts.clone())))
            .connect_timeout(limits.timeout)
            .user_agent(USER_AGENT)
            .build()
            .map_err(|error| WebError::Request {
                url: String::new(),
                reason: quarry_llm::transport::error_chain(&error),
            })?;
        Ok(PageFetcher {
            client,
            limits,
            hosts,
            robots: RobotsCache::default(),
        })
    }

    /// Reads `url` and keeps its main text.
    pub async fn fetch(&self, url: &str) -> Result<Page, WebError> {
        let millis = self.limits.timeout.as_millis() as u64;
        tokio::time::timeout(self.limits.timeout, self.fetch_in_time(url))
            .await
            .map_err(|_| WebError::Timeout(millis))?
    }

    async fn fetch_in_time(&self, raw: &str) -> Result<Page, WebError> {
        let url = Url::parse(raw.trim()).map_err(|_| WebError::InvalidUrl(raw.to_owned()))?;
        let (response, url) = self.follow(url, true).await?;
        let status = response.status();
        if !status.is_success() {
            return Err(WebError::Status {
                url: url.to_string(),
                status: status.as_u16(),
            });
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let kind = if content_type.is_empty() || content_type.contains("html") {
            Kind::Html
        } else if content_type.starts_with("text/plain") {
            Kind::Text
        } else {
            return Err(WebError::ContentType {
                url: url.to_string(),
                content_type,
            });
        };
        let (body, truncated) = read_capped(response, self.limits.max_bytes).await?;
        let body = String::from_utf8_lossy(&body);
        let (title, text) = match kind {
            Kind::Html => {
                let readable = readable_text(&body, Some(url.as_str()));
                (readable.title, readable.text)
            }
            Kind::Text => (String::new(), body.trim().to_owned()),
        };
        Ok(Page {
            requested_url: raw.to_owned(),
            title: if title.is_empty() {
                url.to_string()
            } else {
                title
            },
            url: url.to_string(),
            text,
            fetched_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            truncated,
        })
    }

    /// GETs `url`, following redirects; each hop must be http(s), public (or allowed) and, when
    /// `robots` is set, allowed by its origin's `robots.txt`.
    async fn follow(
        &self,
        mut url: Url,
        robots: bool,
    ) -> Result<(reqwest::Response, Url), WebError> {
        for _ in 0..=self.limits.max_redirects {
            if !matches!(url.scheme(), "http" | "https") {
                return Err(WebError::Scheme(url.to_string()));
            }
            let host = url
                .host_str()
                .ok_or_else(|| WebError::InvalidUrl(url.to_string()))?;
            let port = url.port_or_known_default().unwrap_or(80);
            self.hosts.addresses(host, port).await?;
            if robots && !self.rules(&url).await.allows(&url) {
                return Err(WebError::RobotsDisallowed {
                    origin: url.origin().ascii_serialization(),
                    url: url.to_string(),
                });
            }
            let response = self
                .client
                .get(url.clone())
                .send()
                .await
                .map_err(|error| request_error(&url, &error))?;
            if !response.status().is_redirection() {
                return Ok((response, url));
            }
            let location = response
                .headers()
                .get(LOCATION)
                .and_then(|value| value.to_str().ok())
                .ok_or_else(|| WebError::BadRedirect(url.to_string()))?;
            url = url
                .join(location)
                .map_err(|_| WebError::BadRedirect(url.to_string()))?;
        }
        Err(WebError::TooManyRedirects(self.limits.max_redirects))
    }

    /// `url`'s origin's `robots.txt` rules, read on first use. An answer is kept; a failure to
    /// get one disallows this page and is tried again for the next.
    fn rules<'a>(&'a self, url: &'a Url) -> Pin<Box<dyn Future<Output = Rules> + Send + 'a>> {
        Box::pin(async move {
            let origin = url.origin().ascii_serialization();
            if let Some(rules) = self.robots.get(&origin) {
                return rules;
            }
            let Ok(robots_url) = url.join("/robots.txt") else {
                return Rules::DisallowAll;
            };
            let Ok((response, _)) = self.follow(robots_url, false).await else {
                return Rules::DisallowAll;
            };
            let status = response.status().as_u16();
            let body = if response.status().is_success() {
                match read_capped(response, MAX_ROBOTS_BYTES).await {
                    Ok((body, _)) => body,
                    Err(_) => return Rules::DisallowAll,
                }
            } else {
                Vec::new()
            };
            let rules = Rules::from_answer(status, &body);
            self.robots.put(origin, rules.clone());
            rules
        })
    }
}

fn request_error(url: &Url, error: &reqwest::Error) -> WebError {
    // The resolver's refusal, surfaced through the client: say it as itself.
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = source {
        if let Some(web) = cause.downcast_ref::<WebError>() {
            return web.clone();
        }
        source = cause.source();
    }
    WebError::Request {
        url: url.to_string(),
        reason: quarry_llm::transport::error_chain(error),
    }
}

/// The body, at most `max` bytes of it, and whether more was dropped.
pub(crate) async fn read_capped(
    mut response: reqwest::Response,
    max: usize,
) -> Result<(Vec<u8>, bool), WebError> {
    let url = response.url().to_string();
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|error| WebError::Request {
        url: url.clone(),
        reason: quarry_llm::transport::error_chain(&error),
    })? {
        let room = max - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, false))
}
