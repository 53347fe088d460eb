//! The web source's settings, from the environment: which search provider, its key and base
//! URL, the fetch limits and the private hosts pages may still be read from.

use std::time::Duration;

use crate::fetch::FetchLimits;
use quarry_llm::outbound::HostPolicy;

/// Exa's API root.
pub const EXA_BASE_URL: &str = "https://api.exa.ai";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WebProvider {
    Exa { base_url: String, api_key: String },
    Searxng { base_url: String },
}

#[derive(Debug, Clone)]
pub struct WebConfig {
    pub provider: WebProvider,
    pub limits: FetchLimits,
    pub hosts: HostPolicy,
}

/// A setting that cannot be used, named with what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct WebConfigError(pub String);

impl WebConfig {
    /// From `QUARRY_WEB_SEARCH` (`exa` or `searxng`; unset: no web source),
    /// `QUARRY_WEB_SEARCH_URL` (the provider's base URL: Exa's by default, required for
    /// SearXNG), `QUARRY_WEB_SEARCH_KEY` (Exa's API key; `EXA_API_KEY` also read),
    /// `QUARRY_WEB_MAX_PAGE_BYTES`, `QUARRY_WEB_TIMEOUT` (seconds), `QUARRY_WEB_MAX_REDIRECTS` and
    /// `QUARRY_OUTBOUND_ALLOW_HOSTS` or `QUARRY_WEB_ALLOW_HOSTS` (comma-separated private hosts
    /// pages may be read from; see [`allowed_hosts`]).
    pub fn from_env() -> Result<Option<WebConfig>, WebConfigError> {
        Self::from_lookup(|name| std::env::var(name).ok().filter(|v| !v.trim().is_empty()))
    }

    pub fn from_lookup(
        get: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<WebConfig>, WebConfigError> {
        let Some(provider) = get("QUARRY_WEB_SEARCH") else {
            return Ok(None);
        };
        let base_url = get("QUARRY_WEB_SEARCH_URL");
        let provider = match provider.trim().to_ascii_lowercase().as_str() {
            "exa" => WebProvider::Exa {
                base_url: base_url.unwrap_or_else(|| EXA_BASE_URL.to_owned()),
                api_key: get("QUARRY_WEB_SEARCH_KEY")
                    .or_else(|| get("EXA_API_KEY"))
                    .ok_or_else(|| {
                        WebConfigError(
                            "QUARRY_WEB_SEARCH=exa needs an API key: set QUARRY_WEB_SEARCH_KEY \
                             (or EXA_API_KEY)"
                                .to_owned(),
                        )
                    })?,
            },
            "searxng" => WebProvider::Searxng {
                base_url: base_url.ok_or_else(|| {
                    WebConfigError(
                        "QUARRY_WEB_SEARCH=searxng needs the instance's address: set \
                         QUARRY_WEB_SEARCH_URL (e.g. http://localhost:8888)"
                            .to_owned(),
                    )
                })?,
            },
            other => {
                return Err(WebConfigError(format!(
                    "QUARRY_WEB_SEARCH='{other}' is not a search provider; use exa or searxng"
                )));
            }
        };
        let defaults = FetchLimits::default();
        let number = |name: &str, default: u64| -> Result<u64, WebConfigError> {
            match get(name) {
                None => Ok(default),
                Some(raw) => raw
                    .trim()
                    .parse::<u64>()
                    .map_err(|_| WebConfigError(format!("{name}='{raw}' is not a whole number"))),
            }
        };
        let limits = FetchLimits {
            max_bytes: number("QUARRY_WEB_MAX_PAGE_BYTES", defaults.max_bytes as u64)? as usize,
            timeout: Duration::from_secs(number("QUARRY_WEB_TIMEOUT", defaults.timeout.as_secs())?),
            max_redirects: number("QUARRY_WEB_MAX_REDIRECTS", defaults.max_redirects as u64)?
                as usize,
        };
        if limits.max_bytes == 0 || limits.timeout.is_zero() {
            return Err(WebConfigError(
                "QUARRY_WEB_MAX_PAGE_BYTES and QUARRY_WEB_TIMEOUT must be above 0".to_owned(),
            ));
        }
        let hosts = HostPolicy::allowing(allowed_hosts(&get));
        Ok(Some(WebConfig {
            provider,
            limits,
            hosts,
        }))
    }
}

/// The private hosts outbound requests may reach: `QUARRY_OUTBOUND_ALLOW_HOSTS` (every outbound
/// request: pages, webhooks) and `QUARRY_WEB_ALLOW_HOSTS` (its older name, pages only before),
/// comma-separated.
pub fn allowed_hosts(get: &impl Fn(&str) -> Option<String>) -> Vec<String> {
    ["QUARRY_OUTBOUND_ALLOW_HOSTS", "QUARRY_WEB_ALLOW_HOSTS"]
        .iter()
        .filter_map(|name| get(name))
        .flat_map(|list| {
            list.split(',')
                .map(|host| host.trim().to_owned())
                .filter(|host| !host.is_empty())
                .collect::<Vec<_>>()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(pairs: &[(&str, &str)]) -> Result<Option<WebConfig>, WebConfigError> {
        WebConfig::from_lookup(|name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        })
    }

    #[test]
    fn providers_are_chosen_by_name_and_say_what_they_lack() {
        assert!(config(&[]).unwrap().is_none());
        let exa = config(&[("QUARRY_WEB_SEARCH", "exa"), ("EXA_API_KEY", "k")])
            .unwrap()
            .unwrap();
        assert_eq!(
            exa.provider,
            WebProvider::Exa {
                base_url: EXA_BASE_URL.to_owned(),
                api_key: "k".to_owned()
            }
        );
        let error = config(&[("QUARRY_WEB_SEARCH", "exa")]).unwrap_err();
        assert!(error.0.contains("QUARRY_WEB_SEARCH_KEY"), "{error}");
        let error = config(&[("QUARRY_WEB_SEARCH", "searxng")]).unwrap_err();
        assert!(error.0.contains("QUARRY_WEB_SEARCH_URL"), "{error}");
        let error = config(&[("QUARRY_WEB_SEARCH", "bing")]).unwrap_err();
        assert!(error.0.contains("exa or searxng"), "{error}");
        let error = config(&[
            ("QUARRY_WEB_SEARCH", "searxng"),
            ("QUARRY_WEB_SEARCH_URL", "http://x"),
            ("QUARRY_WEB_TIMEOUT", "soon"),
        ])
        .unwrap_err();
        assert!(error.0.contains("QUARRY_WEB_TIMEOUT"), "{error}");
    }
}
