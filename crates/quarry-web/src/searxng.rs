//! A SearXNG instance's JSON endpoint (`GET {base}/search?q=…&format=json`; the instance must
//! list `json` among its `search.formats`).

use std::time::Duration;

use serde::Deserialize;

use crate::error::WebError;
use crate::search::{SearchFuture, WebHit, WebSearch, api_client, provider_error, transport_error};

const PROVIDER: &str = "searxng";

#[derive(Debug)]
pub struct SearxngSearch {
    client: reqwest::Client,
    endpoint: String,
}

#[derive(Deserialize)]
struct SearxngResponse {
    #[serde(default)]
    results: Vec<SearxngResult>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SearxngResult {
    url: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    published_date: Option<String>,
}

impl SearxngSearch {
    /// `base_url` is the instance's root (`http://localhost:8888`).
    pub fn new(base_url: &str, timeout: Duration) -> Result<SearxngSearch, WebError> {
        Ok(SearxngSearch {
            client: api_client(base_url, timeout)?,
            endpoint: format!("{}/search", base_url.trim_end_matches('/')),
        })
    }
}

impl WebSearch for SearxngSearch {
    fn provider(&self) -> &'static str {
        PROVIDER
    }

    fn search<'a>(&'a self, query: &'a str, limit: usize) -> SearchFuture<'a> {
        Box::pin(async move {
            let url =
                url::Url::parse_with_params(&self.endpoint, [("q", query), ("format", "json")])
                    .map_err(|error| WebError::Search {
                        provider: PROVIDER,
                        reason: format!("bad base URL '{}': {error}", self.endpoint),
                    })?;
            let response = self
                .client
                .get(url)
                .send()
                .await
                .map_err(|error| transport_error(PROVIDER, &error))?;
            if !response.status().is_success() {
                return Err(provider_error(PROVIDER, response).await);
            }
            let answer: SearxngResponse = response
                .json()
                .await
                .map_err(|error| transport_error(PROVIDER, &error))?;
            let mut hits: Vec<WebHit> = Vec::new();
            for result in answer.results {
                // Several engines often return one page: keep its first (best) listing.
                if hits.len() >= limit || hits.iter().any(|hit| hit.url == result.url) {
                    continue;
                }
                hits.push(WebHit {
                    title: result
                        .title
                        .filter(|t| !t.is_empty())
                        .unwrap_or_else(|| result.url.clone()),
                    url: result.url,
                    snippet: result.content.filter(|c| !c.is_empty()),
                    published: result.published_date,
                });
            }
            Ok(hits)
        })
    }
}
