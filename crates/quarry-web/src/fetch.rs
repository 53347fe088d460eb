//! Reading one page within a crawler's limits: http(s) only, public addresses only (every hop),
//! `robots.txt` of every origin on the way, at most [`FetchLimits::max_redirects`] redirects,
//! the body cut at [`FetchLimits::max_bytes`] and the whole read (robots and the reading of the
//! text included) at [`FetchLimits::timeout`]. Redirects are followed here, not by the client,
//! so each hop is checked like the first. The body is decoded by its declared charset, and its
//! text is read on a blocking thread (it is CPU work, bounded by [`crate::readable`]'s caps).
//! Credentials in a URL are sent but never kept: a page's URLs and the errors name it without.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use encoding_rs::{Encoding, UTF_8};
use quarry_llm::outbound::{HostPolicy, outbound_client, refusal, without_credentials};
use reqwest::header::{CONTENT_TYPE, LOCATION};
use url::Url;

use crate::agent::USER_AGENT;
use crate::error::WebError;
use crate::readable::readable_text;
use crate::robots::{MAX_ROBOTS_BYTES, RobotsCache, Rules};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchLimits {
    /// Bytes of a page's body read; the rest is dropped (the page is marked truncated).
    pub max_bytes: usize,
    /// The whole fetch: `robots.txt`, redirects, body and the reading of its text.
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
    /// The URL asked for (without user name or password, as every URL here).
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

#[derive(Clone, Copy)]
enum Kind {
    Html,
    Text,
}

impl PageFetcher {
    pub fn new(limits: FetchLimits, hosts: HostPolicy) -> Result<PageFetcher, WebError> {
        let client = outbound_client(&hosts, limits.timeout)
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

    /// `url` as a page's URLs are kept and said: without a user name or password (text that is
    /// not a URL, as given). For callers that keep the URL of a page they could not read.
    pub fn shown_url(url: &str) -> String {
        Url::parse(url.trim()).map_or_else(|_| url.to_owned(), |url| shown(&url))
    }

    /// Reads `url` and keeps its main text.
    pub async fn fetch(&self, url: &str) -> Result<Page, WebError> {
        let millis = self.limits.timeout.as_millis() as u64;
        tokio::time::timeout(self.limits.timeout, self.fetch_in_time(url))
            .await
            .map_err(|_| WebError::Timeout(millis))?
    }

    async fn fetch_in_time(&self, raw: &str) -> Result<Page, WebError> {
        let requested = Url::parse(raw.trim()).map_err(|_| WebError::InvalidUrl(raw.to_owned()))?;
        let requested_url = shown(&requested);
        let (response, url) = self.follow(requested, true).await?;
        let url = shown(&url);
        let status = response.status();
        if !status.is_success() {
            return Err(WebError::Status {
                url,
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
            return Err(WebError::ContentType { url, content_type });
        };
        let (body, truncated) = read_capped(response, self.limits.max_bytes).await?;
        // Decoding and reading the text is CPU work: off the async threads, and still under
        // the fetch's timeout (this await is inside it).
        let page_url = url.clone();
        let (title, text) = tokio::task::spawn_blocking(move || {
            let body = decode(&body, &content_type, kind);
            match kind {
                Kind::Html => {
                    let readable = readable_text(&body, Some(&page_url));
                    (readable.title, readable.text)
                }
                Kind::Text => (String::new(), body.trim().to_owned()),
            }
        })
        .await
        .map_err(|error| WebError::Unreadable {
            url: url.clone(),
            reason: error.to_string(),
        })?;
        Ok(Page {
            requested_url,
            title: if title.is_empty() { url.clone() } else { title },
            url,
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
                return Err(WebError::Scheme(shown(&url)));
            }
            self.hosts.check_url(&url).await?;
            if robots && !self.rules(&url).await?.allows(&url) {
                return Err(WebError::RobotsDisallowed {
                    origin: url.origin().ascii_serialization(),
                    url: shown(&url),
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
                .ok_or_else(|| WebError::BadRedirect(shown(&url)))?;
            url = url
                .join(location)
                .map_err(|_| WebError::BadRedirect(shown(&url)))?;
        }
        Err(WebError::TooManyRedirects(self.limits.max_redirects))
    }

    /// `url`'s origin's `robots.txt` rules, read on first use. An answer is kept. A host that
    /// cannot be reached (no connection, a TLS failure) fails the fetch with that reason; any
    /// other failure to get an answer (a bad redirect, a body cut off) disallows this page and
    /// is tried again for the next.
    fn rules<'a>(
        &'a self,
        url: &'a Url,
    ) -> Pin<Box<dyn Future<Output = Result<Rules, WebError>> + Send + 'a>> {
        Box::pin(async move {
            let origin = url.origin().ascii_serialization();
            if let Some(rules) = self.robots.get(&origin) {
                return Ok(rules);
            }
            let Ok(robots_url) = url.join("/robots.txt") else {
                return Ok(Rules::DisallowAll);
            };
            let response = match self.follow(robots_url, false).await {
                Ok((response, _)) => response,
                // Not robots.txt's answer but the host's silence: say so, as for the page.
                Err(
                    unreachable @ (WebError::Request { .. }
                    | WebError::Resolve { .. }
                    | WebError::PrivateAddress(_)),
                ) => return Err(unreachable),
                Err(_) => return Ok(Rules::DisallowAll),
            };
            let status = response.status().as_u16();
            let body = if response.status().is_success() {
                match read_capped(response, MAX_ROBOTS_BYTES).await {
                    Ok((body, _)) => body,
                    Err(_) => return Ok(Rules::DisallowAll),
                }
            } else {
                Vec::new()
            };
            let rules = Rules::from_answer(status, &body);
            self.robots.put(origin, rules.clone());
            Ok(rules)
        })
    }
}

/// `url` as it is kept and shown: without a user name or password.
fn shown(url: &Url) -> String {
    without_credentials(url.clone()).to_string()
}

/// `body` as text: decoded by the charset `content_type` declares, else (for HTML) the one a
/// `<meta>` in its first 1024 bytes declares, else as UTF-8. A byte order mark wins over both,
/// as in a browser; bytes the encoding cannot map become U+FFFD.
fn decode(body: &[u8], content_type: &str, kind: Kind) -> String {
    let declared = charset_parameter(content_type)
        .and_then(|label| Encoding::for_label(label.as_bytes()))
        .or_else(|| match kind {
            Kind::Html => meta_charset(&body[..body.len().min(1024)]),
            Kind::Text => None,
        })
        .unwrap_or(UTF_8);
    let (text, _, _) = declared.decode(body);
    text.into_owned()
}

/// `charset` of a `Content-Type` (`text/html; charset="Shift_JIS"`).
fn charset_parameter(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|parameter| {
        let (name, value) = parameter.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches(|c| c == '"' || c == '\'').trim())
            .filter(|label| !label.is_empty())
    })
}

/// The encoding a `<meta charset=…>` or `<meta http-equiv="Content-Type" content="…;
/// charset=…">` in `head` declares. A declared UTF-16 is read as UTF-8 (a page whose `<meta>`
/// could be read as ASCII is not UTF-16), as a browser does.
fn meta_charset(head: &[u8]) -> Option<&'static Encoding> {
    let lower = head.to_ascii_lowercase();
    let mut from = 0;
    while let Some(offset) = find(&lower[from..], b"<meta") {
        let start = from + offset + b"<meta".len();
        let end = find(&lower[start..], b">").map_or(lower.len(), |offset| start + offset);
        if let Some(encoding) = meta_tag_charset(&lower[start..end]) {
            return Some(encoding.output_encoding());
        }
        from = end;
    }
    None
}

/// The charset one `<meta>` tag's attributes (lowercased) declare: its `charset`, or the
/// `charset=` in its `content` when it has `http-equiv="content-type"`.
fn meta_tag_charset(tag: &[u8]) -> Option<&'static Encoding> {
    let attributes = attributes(tag);
    let value = |name: &[u8]| {
        attributes
            .iter()
            .find(|(attribute, _)| *attribute == name)
            .map(|(_, value)| *value)
    };
    if let Some(label) = value(b"charset") {
        return Encoding::for_label(label.trim_ascii());
    }
    if value(b"http-equiv").map(<[u8]>::trim_ascii) != Some(b"content-type") {
        return None;
    }
    let content = value(b"content")?;
    let at = find(content, b"charset")?;
    let label = content[at + b"charset".len()..]
        .trim_ascii_start()
        .strip_prefix(b"=")?
        .trim_ascii_start();
    let label = label
        .strip_prefix(b"\"")
        .or_else(|| label.strip_prefix(b"'"))
        .unwrap_or(label);
    let end = label
        .iter()
        .position(|&b| matches!(b, b'"' | b'\'' | b';') || b.is_ascii_whitespace())
        .unwrap_or(label.len());
    Encoding::for_label(&label[..end])
}

/// A tag's attributes (after its name) as name and value, quotes removed.
fn attributes(tag: &[u8]) -> Vec<(&[u8], &[u8])> {
    // Where the bytes from `i` on stop being `such`.
    let past = |mut i: usize, such: &dyn Fn(u8) -> bool| {
        while i < tag.len() && such(tag[i]) {
            i += 1;
        }
        i
    };
    let space = |b: u8| b.is_ascii_whitespace();
    let mut found = Vec::new();
    let mut i = 0;
    loop {
        i = past(i, &|b| space(b) || b == b'/');
        if i >= tag.len() {
            return found;
        }
        let name_start = i;
        i = past(i + 1, &|b| !space(b) && b != b'=' && b != b'/');
        let name = &tag[name_start..i];
        i = past(i, &space);
        if tag.get(i) != Some(&b'=') {
            found.push((name, &b""[..]));
            continue;
        }
        i = past(i + 1, &space);
        let value = match tag.get(i) {
            Some(&quote @ (b'"' | b'\'')) => {
                let start = i + 1;
                let end = past(start, &|b| b != quote);
                i = end + 1;
                &tag[start..end]
            }
            _ => {
                let start = i;
                i = past(i, &|b| !space(b));
                &tag[start..i]
            }
        };
        found.push((name, value));
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

fn request_error(url: &Url, error: &reqwest::Error) -> WebError {
    // The resolver's refusal, surfaced through the client: say it as itself.
    if let Some(refused) = refusal(error) {
        return refused.into();
    }
    WebError::Request {
        url: shown(url),
        reason: quarry_llm::transport::error_chain(error),
    }
}

/// The body, at most `max` bytes of it, and whether more was dropped.
pub(crate) async fn read_capped(
    mut response: reqwest::Response,
    max: usize,
) -> Result<(Vec<u8>, bool), WebError> {
    let url = shown(response.url());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_declared_charset_is_found_in_the_header_or_a_meta_tag() {
        assert_eq!(
            charset_parameter("text/html; charset=\"shift_jis\""),
            Some("shift_jis")
        );
        assert_eq!(charset_parameter("text/html"), None);
        let meta = |head: &str| meta_charset(head.as_bytes()).map(Encoding::name);
        assert_eq!(meta("<meta charset='ISO-8859-1'>"), Some("windows-1252"));
        assert_eq!(
            meta(
                "<meta name=description content=\"charset\"><META HTTP-EQUIV=Content-Type \
                 CONTENT=\"text/html; charset=Shift_JIS\">"
            ),
            Some("Shift_JIS")
        );
        assert_eq!(meta("<meta charset=utf-16le>"), Some("UTF-8"));
        assert_eq!(meta("<meta name=x content=\"a; charset=koi8-r\">"), None);
        let latin1 = decode(b"caf\xe9", "text/html", Kind::Html);
        assert_eq!(latin1, "caf\u{fffd}", "undeclared: UTF-8");
        let latin1 = decode(b"<meta charset=latin1>caf\xe9", "text/html", Kind::Html);
        assert!(latin1.ends_with("café"), "{latin1}");
    }
}
