//! The web as a source for field agents (`sources: [web]`).
//!
//! - [`WebSearch`]: a search provider behind a small trait. [`ExaSearch`] speaks Exa's search API
//!   (the reference's provider), [`SearxngSearch`] a SearXNG instance's JSON endpoint; which one
//!   runs is configuration ([`WebConfig`], `QUARRY_WEB_SEARCH=exa|searxng`).
//! - [`PageFetcher`]: reads a page the agent chose, within limits a crawler keeps: only http and
//!   https, only public addresses (checked at every hop and again when connecting, so a name that
//!   changes its address between the check and the connection is still refused), `robots.txt`
//!   honoured, redirects bounded, the body cut at a size and the whole fetch at a time.
//! - [`readable_text`]: a page's main content as text (Readability.js's algorithm).
//!
//! Storing a fetched page as a document, and citing it, is the pipeline's part.

mod config;
mod exa;
mod fetch;
mod readable;
mod robots;
mod search;
mod searxng;

pub use config::{WebConfig, WebConfigError, WebProvider, allowed_hosts};
pub use exa::ExaSearch;
pub use fetch::{FetchLimits, Page, PageFetcher};
pub use quarry_llm::outbound::{HostPolicy, is_public};
pub use readable::{Readable, readable_text};
pub use search::{SearchFuture, WebHit, WebSearch};
pub use searxng::SearxngSearch;

use std::sync::Arc;

/// The user agent pages and `robots.txt` are asked with; `robots.txt` rules for `QuarryBot`
/// (or `*`) apply.
pub const USER_AGENT: &str = concat!("QuarryBot/", env!("CARGO_PKG_VERSION"));
/// The product token `robots.txt` groups are matched against.
pub const ROBOTS_AGENT: &str = "QuarryBot";

/// Why a search or a fetch gave nothing. The message is what the agent (and the log) is told.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebError {
    #[error("'{0}' is not a URL")]
    InvalidUrl(String),
    #[error("only http and https pages are read, not '{0}'")]
    Scheme(String),
    #[error(
        "'{0}' is a private or local address; only public addresses are read unless \
         QUARRY_OUTBOUND_ALLOW_HOSTS names the host"
    )]
    PrivateAddress(String),
    #[error("cannot resolve host '{host}': {reason}")]
    Resolve { host: String, reason: String },
    #[error("robots.txt of {origin} disallows '{url}'")]
    RobotsDisallowed { origin: String, url: String },
    #[error("more than {0} redirects")]
    TooManyRedirects(usize),
    #[error("a redirect without a usable Location header from '{0}'")]
    BadRedirect(String),
    #[error("the page took longer than {0} ms")]
    Timeout(u64),
    #[error("'{url}' answered HTTP {status}")]
    Status { url: String, status: u16 },
    #[error("'{url}' is {content_type}; only HTML and plain text pages are read")]
    ContentType { url: String, content_type: String },
    #[error("request to '{url}' failed: {reason}")]
    Request { url: String, reason: String },
    /// Reading the text out of a page that was fetched failed (its reader stopped).
    #[error("the text of '{url}' could not be read: {reason}")]
    Unreadable { url: String, reason: String },
    #[error("{provider} search failed: {reason}")]
    Search {
        provider: &'static str,
        reason: String,
    },
}

impl From<quarry_llm::outbound::AddressError> for WebError {
    fn from(error: quarry_llm::outbound::AddressError) -> Self {
        use quarry_llm::outbound::AddressError;
        match error {
            AddressError::Private(host) => WebError::PrivateAddress(host),
            AddressError::Resolve { host, reason } => WebError::Resolve { host, reason },
            AddressError::NoHost(url) => WebError::InvalidUrl(url),
        }
    }
}

/// Search and fetch together: what a field with `sources: [web]` uses.
#[derive(Clone)]
pub struct Web {
    pub search: Arc<dyn WebSearch>,
    pub fetcher: PageFetcher,
}

impl Web {
    /// The configured provider and a fetcher with the configured limits.
    pub fn from_config(config: &WebConfig) -> Result<Web, WebError> {
        let search: Arc<dyn WebSearch> = match &config.provider {
            WebProvider::Exa { base_url, api_key } => {
                Arc::new(ExaSearch::new(base_url, api_key, config.limits.timeout)?)
            }
            WebProvider::Searxng { base_url } => {
                Arc::new(SearxngSearch::new(base_url, config.limits.timeout)?)
            }
        };
        let fetcher = PageFetcher::new(config.limits.clone(), config.hosts.clone())?;
        Ok(Web { search, fetcher })
    }
}

/// A client for a search provider's API, under the one outbound policy: the provider's own host
/// is allowed by being configured (a self-hosted SearXNG may well run on this network), and
/// nothing else private is reached; redirects are not followed.
pub(crate) fn api_client(
    base_url: &str,
    timeout: std::time::Duration,
) -> Result<reqwest::Client, WebError> {
    let hosts = quarry_llm::outbound::HostPolicy::default().also_allowing(base_url);
    quarry_llm::outbound::outbound_client(&hosts, timeout)
        .timeout(timeout)
        .user_agent(USER_AGENT)
        .build()
        .map_err(|error| WebError::Request {
            url: String::new(),
            reason: quarry_llm::transport::error_chain(&error),
        })
}
