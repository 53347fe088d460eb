//! Downloading a model file (`quarry model pull`): resumable, and checked before it is kept.
//!
//! The bytes go to `DEST.part`; a download that stops (a dropped connection, Ctrl-C) leaves the
//! part, and the next one asks for the rest with a `Range` request (a server that ignores it
//! starts the file over). The file is kept (renamed to `DEST`) only once its size is the one
//! announced and its SHA-256 is the one expected: given by the caller, or announced by the
//! server as Hugging Face does for LFS files (`X-Linked-ETag`, `X-Linked-Size` on the answer
//! that redirects to the content). A checksum that does not match removes the part.
//! Redirects are followed by hand (at most [`MAX_REDIRECTS`]) so those headers are seen.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{CONTENT_RANGE, HeaderMap, LOCATION, RANGE};
use sha2::{Digest, Sha256};

/// Redirects followed from the URL asked for to the file's content.
pub const MAX_REDIRECTS: usize = 8;

/// What to fetch, and where to keep it.
#[derive(Debug, Clone)]
pub struct DownloadRequest {
    pub url: String,
    pub destination: PathBuf,
    /// The SHA-256 the file must have (hex); `None` trusts the server's announced one, if any.
    pub sha256: Option<String>,
}

/// A file kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Downloaded {
    pub bytes: u64,
    pub sha256: String,
    /// Bytes a previous, interrupted download had fetched already.
    pub resumed_from: u64,
    /// Whether a checksum was known and matched (given, or announced by the server).
    pub verified: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum DownloadError {
    #[error("cannot reach {url}: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("{url} answered HTTP {status}")]
    Status { url: String, status: u16 },
    #[error("{url} redirected more than {MAX_REDIRECTS} times")]
    TooManyRedirects { url: String },
    #[error("{url} sent {got} bytes of {expected}; run the same command again to fetch the rest")]
    Incomplete {
        url: String,
        got: u64,
        expected: u64,
    },
    #[error("the file's SHA-256 is {got}, not {expected}; the download was removed")]
    Checksum { expected: String, got: String },
    #[error("{path}: {reason}")]
    Io { path: String, reason: String },
}

/// Fetches `request.url` into `request.destination`, reporting `(bytes so far, total)` as it
/// goes.
pub async fn download(
    request: &DownloadRequest,
    on_progress: &mut (dyn FnMut(u64, Option<u64>) + Send),
) -> Result<Downloaded, DownloadError> {
    let part = part_path(&request.destination);
    let io = |path: &Path, error: std::io::Error| DownloadError::Io {
        path: path.display().to_string(),
        reason: error.to_string(),
    };
    if let Some(parent) = request.destination.parent() {
        std::fs::create_dir_all(parent).map_err(|error| io(parent, error))?;
    }
    let already = std::fs::metadata(&part).map_or(0, |meta| meta.len());
    let client = client(&request.url)?;
    let (mut response, announced) = follow(&client, &request.url, already).await?;
    let url = response.url().to_string();
    let status = response.status();
    let (resumed_from, total) = match status {
        StatusCode::PARTIAL_CONTENT => (already, range_total(response.headers())),
        StatusCode::OK => (0, response.content_length()),
        // The part holds the whole file already.
        StatusCode::RANGE_NOT_SATISFIABLE if already > 0 => (already, Some(already)),
        other => {
            return Err(DownloadError::Status {
                url,
                status: other.as_u16(),
            });
        }
    };
    let total = total.or(announced.size);
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(resumed_from > 0)
        .write(true)
        .truncate(resumed_from == 0)
        .open(&part)
        .map_err(|error| io(&part, error))?;
    let mut fetched = resumed_from;
    on_progress(fetched, total);
    if status != StatusCode::RANGE_NOT_SATISFIABLE {
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|error| unreachable(&url, &error))?
        {
            file.write_all(&chunk).map_err(|error| io(&part, error))?;
            fetched += chunk.len() as u64;
            on_progress(fetched, total);
        }
    }
    file.sync_all().map_err(|error| io(&part, error))?;
    drop(file);
    if let Some(expected) = total
        && fetched != expected
    {
        return Err(DownloadError::Incomplete {
            url,
            got: fetched,
            expected,
        });
    }
    let sha256 = file_sha256(&part).map_err(|error| io(&part, error))?;
    let expected = request
        .sha256
        .clone()
        .or(announced.sha256)
        .map(|hex| hex.to_ascii_lowercase());
    if let Some(expected) = &expected
        && *expected != sha256
    {
        let _ = std::fs::remove_file(&part);
        return Err(DownloadError::Checksum {
            expected: expected.clone(),
            got: sha256,
        });
    }
    std::fs::rename(&part, &request.destination)
        .map_err(|error| io(&request.destination, error))?;
    Ok(Downloaded {
        bytes: fetched,
        sha256,
        resumed_from,
        verified: expected.is_some(),
    })
}

/// `DEST.part`, where a download in progress is written.
pub fn part_path(destination: &Path) -> PathBuf {
    let mut name = destination.as_os_str().to_owned();
    name.push(".part");
    PathBuf::from(name)
}

/// What a server announced of the file on the way to it (Hugging Face's LFS headers).
#[derive(Debug, Default)]
struct Announced {
    sha256: Option<String>,
    size: Option<u64>,
}

impl Announced {
    fn read(&mut self, headers: &HeaderMap) {
        let text = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
        if let Some(etag) = text("x-linked-etag") {
            let hex = etag.trim().trim_start_matches("W/").trim_matches('"');
            if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                self.sha256 = Some(hex.to_owned());
            }
        }
        if let Some(size) = text("x-linked-size").and_then(|size| size.trim().parse().ok()) {
            self.size = Some(size);
        }
    }
}

/// GETs `url` from byte `from`, following redirects by hand; answers the final response and
/// what the responses on the way announced.
async fn follow(
    client: &reqwest::Client,
    url: &str,
    from: u64,
) -> Result<(reqwest::Response, Announced), DownloadError> {
    let mut announced = Announced::default();
    let mut current = reqwest::Url::parse(url).map_err(|error| DownloadError::Unreachable {
        url: url.to_owned(),
        reason: format!("not a URL: {error}"),
    })?;
    for _ in 0..=MAX_REDIRECTS {
        let mut asked = client.get(current.clone());
        if from > 0 {
            asked = asked.header(RANGE, format!("bytes={from}-"));
        }
        let response = asked
            .send()
            .await
            .map_err(|error| unreachable(current.as_str(), &error))?;
        announced.read(response.headers());
        if !response.status().is_redirection() {
            return Ok((response, announced));
        }
        let location = response
            .headers()
            .get(LOCATION)
            .and_then(|value| value.to_str().ok())
            .ok_or_else(|| DownloadError::Status {
                url: current.to_string(),
                status: response.status().as_u16(),
            })?;
        current = current
            .join(location)
            .map_err(|error| DownloadError::Unreachable {
                url: current.to_string(),
                reason: format!("a redirect to a bad URL: {error}"),
            })?;
    }
    Err(DownloadError::TooManyRedirects {
        url: url.to_owned(),
    })
}

/// `total` of `Content-Range: bytes a-b/total`.
fn range_total(headers: &HeaderMap) -> Option<u64> {
    let value = headers.get(CONTENT_RANGE)?.to_str().ok()?;
    value.rsplit_once('/')?.1.trim().parse().ok()
}

fn client(url: &str) -> Result<reqwest::Client, DownloadError> {
    crate::http_clients::install_crypto_provider();
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(15))
        .read_timeout(Duration::from_secs(60))
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("quarry/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|error| unreachable(url, &error))
}

fn unreachable(url: &str, error: &reqwest::Error) -> DownloadError {
    DownloadError::Unreachable {
        url: url.to_owned(),
        reason: crate::transport::error_chain(error),
    }
}

/// The SHA-256 of the file at `path`, in hex.
pub fn file_sha256(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0; 1 << 20];
    loop {
        let read = file.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hugging_face_announcements_are_read() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "x-linked-etag",
            format!("\"{}\"", "a".repeat(64)).parse().unwrap(),
        );
        headers.insert("x-linked-size", "98362432".parse().unwrap());
        let mut announced = Announced::default();
        announced.read(&headers);
        assert_eq!(announced.sha256.as_deref(), Some("a".repeat(64).as_str()));
        assert_eq!(announced.size, Some(98_362_432));
    }

    #[test]
    fn the_total_comes_from_the_content_range() {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_RANGE, "bytes 100-199/1000".parse().unwrap());
        assert_eq!(range_total(&headers), Some(1000));
    }
}
