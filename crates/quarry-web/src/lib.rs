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

mod agent;
mod config;
mod error;
mod exa;
mod fetch;
mod readable;
mod robots;
mod search;
mod searxng;

pub use agent::{ROBOTS_AGENT, USER_AGENT};
pub use config::{WebConfig, WebConfigError, WebProvider, allowed_hosts};
pub use error::WebError;
pub use exa::ExaSearch;
pub use fetch::{FetchLimits, Page, PageFetcher};
pub use quarry_llm::outbound::{HostPolicy, is_public};
pub use readable::{Readable, readable_text};
pub use search::{SearchFuture, WebHit, WebSearch};
pub use searxng::SearxngSearch;

use std::sync::Arc;

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
