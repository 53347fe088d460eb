//! Exa's search API (`POST {base}/search` with an `x-api-key` header), the reference's web
//! search. Each hit's highlights are its snippet.

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

use crate::error::WebError;
use crate::search::{SearchFuture, WebHit, WebSearch, api_client, provider_error, transport_error};

const PROVIDER: &str = "exa";
/// Characters of highlights asked for per hit.
const HIGHLIGHT_CHARS: u32 = 600;

pub struct ExaSearch {
    client: reqwest::Client,
    endpoint: String,
    api_key: String,
}

impl std::fmt::Debug for ExaSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExaSearch")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
struct ExaResponse {
    #[serde(default)]
    results: Vec<ExaResult>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExaResult {
    url: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    published_date: Option<String>,
    #[serde(default)]
    highlights: Vec<String>,
    #[serde(default)]
    text: Option<String>,
}

impl ExaSearch {
    /// `base_url` is the API's root (`https://api.exa.ai`).
    pub fn new(base_url: &str, api_key: &str, timeout: Duration) -> Result<ExaSearch, WebError> {
        Ok(ExaSearch {
            client: api_client(base_url, timeout)?,
            endpoint: format!("{}/search", base_url.trim_end_matches('/')),
            api_key: api_key.to_owned(),
        })
    }
}

impl WebSearch for ExaSearch {
    fn provider(&self) -> &'static str {
        PROVIDER
    }

    fn search<'a>(&'a self, query: &'a str, limit: usize) -> SearchFuture<'a> {
        Box::pin(async move {
            let body = json!({
                "query": query,
                "type": "auto",
                "numResults": limit,
                "contents": {"highlights": {"maxCharacters": HIGHLIGHT_CHARS}},
            });
            let response = self
                .client
                .post(&self.endpoint)
                .header("x-api-key", &self.api_key)
                .json(&body)
                .send()
                .await
                .map_err(|error| transport_error(PROVIDER, &error))?;
            if !response.status().is_success() {
                return Err(provider_error(PROVIDER, response).await);
            }
            let answer: ExaResponse = response
                .json()
                .await
                .map_err(|error| transport_error(PROVIDER, &error))?;
            Ok(answer
                .results
                .into_iter()
                .take(limit)
                .map(|result| {
                    let snippet = if result.highlights.is_empty() {
                        result.text
                    } else {
                        Some(result.highlights.join(" … "))
                    };
                    WebHit {
                        title: result.title.unwrap_or_else(|| result.url.clone()),
                        url: result.url,
                        snippet,
                        published: result.published_date,
                    }
                })
                .collect())
        })
    }
}
