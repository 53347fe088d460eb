//! The crate's error ([`WebError`]), and the outbound policy's address refusals read as one.

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
