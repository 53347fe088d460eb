//! The search provider trait and what it returns, and what its providers share: the client for
//! a provider's API and the errors a provider's failure is told as.

use std::future::Future;
use std::pin::Pin;

use serde::Serialize;

use crate::agent::USER_AGENT;
use crate::error::WebError;

pub type SearchFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Vec<WebHit>, WebError>> + Send + 'a>>;

/// One search result: where it is and what the provider says about it. A hit is a lead, not
/// evidence: a value is cited from the page once it has been read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WebHit {
    pub url: String,
    pub title: String,
    /// The provider's excerpt of the page, when it gives one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
    /// When the page says it was published, as the provider wrote it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published: Option<String>,
}

/// A web search provider.
pub trait WebSearch: Send + Sync {
    /// The provider's name, for messages (`exa`, `searxng`).
    fn provider(&self) -> &'static str;
    /// At most `limit` results for `query`, best first.
    fn search<'a>(&'a self, query: &'a str, limit: usize) -> SearchFuture<'a>;
}

/// A provider's answer that is not a success, as the error the agent is told.
pub(crate) async fn provider_error(
    provider: &'static str,
    response: reqwest::Response,
) -> WebError {
    let status = response.status();
    let body = response.text().await.unwrap_or_default();
    let body: String = body.chars().take(300).collect();
    WebError::Search {
        provider,
        reason: format!("HTTP {}: {}", status.as_u16(), body.trim()),
    }
}

/// A transport failure talking to a provider.
pub(crate) fn transport_error(provider: &'static str, error: &reqwest::Error) -> WebError {
    WebError::Search {
        provider,
        reason: quarry_llm::transport::error_chain(error),
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
