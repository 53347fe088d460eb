//! Downloading a model file (`quarry model pull`): resumable, and checked before it is kept.
//!
//! The bytes go to `DEST.part`; a download that stops (a dropped connection, Ctrl-C) leaves the
//! part, and the next one asks for the rest with a `Range` request (a server that ignores it
//! starts the file over). The file is kept (renamed to `DEST`) only once its size is every size
//! announced (`Content-Length`, the total of `Content-Range`, and Hugging Face's `X-Linked-Size`
//! on the answer that redirects to the content: all that are known must agree), its SHA-256 is
//! the one expected (given by the caller, or announced as `X-Linked-ETag`), and it starts with
//! GGUF's magic bytes. A body cut short keeps the part for the next run; a checksum that does
//! not match, or a file that is not a GGUF, removes it. Until that one rename, a model installed
//! under the same name stays as it was. Redirects are followed by hand (at most
//! [`MAX_REDIRECTS`]) so those headers are seen.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{CONTENT_RANGE, HeaderMap, LOCATION, RANGE};
use sha2::{Digest, Sha256};

use crate::outbound::{HostPolicy, outbound_client, refusal};

/// Redirects followed from the URL asked for to the file's content.
pub const MAX_REDIRECTS: usize = 8;

/// What to fetch, and where to keep it.
#[derive(Debug, Clone)]
pub struct DownloadRequest {
    pub url: String,
    pub destination: PathBuf,
    /// The SHA-256 the file must have (hex); `None` trusts the server's announced one, if any.
    pub sha256: Option<String>,
    /// The outbound policy every hop obeys (the URL's own host is allowed by whoever names it:
    /// see [`HostPolicy::also_allowing`]).
    pub hosts: HostPolicy,
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
    #[error(
        "{url} stopped sending after {got} bytes ({reason}); run the same command again to fetch the rest"
    )]
    Interrupted {
        url: String,
        got: u64,
        reason: String,
    },
    #[error("{url} sent {got} bytes, more than the {expected} announced; the download was removed")]
    TooLong {
        url: String,
        got: u64,
        expected: u64,
    },
    #[error(
        "{url} answered with bytes from {start}, not from {asked} as asked; the partial download \
         was removed, run the same command again"
    )]
    WrongRange { url: String, asked: u64, start: u64 },
    #[error("the file's SHA-256 is {got}, not {expected}; the download was removed")]
    Checksum { expected: String, got: String },
    #[error(
        "{url} is not a GGUF model file (it does not start with the bytes \"GGUF\"); nothing was \
         installed"
    )]
    NotGguf { url: String },
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
    let client = client(&request.url, &request.hosts)?;
    let mut from = already;
    let (mut response, mut announced) = follow(&client, &request.hosts, &request.url, from).await?;
    if response.status() == StatusCode::RANGE_NOT_SATISFIABLE
        && range_total(response.headers()).or(announced.size).is_none()
    {
        // Nothing says how long the file is, so nothing says the part is all of it: start over.
        from = 0;
        (response, announced) = follow(&client, &request.hosts, &request.url, from).await?;
    }
    let url = response.url().to_string();
    let status = response.status();
    let headers = response.headers();
    // Every size the answers announced for the whole file; the bytes kept must match each.
    let (resumed_from, mut sizes) = match status {
        StatusCode::PARTIAL_CONTENT => {
            let start = range_start(headers);
            if start != Some(from) {
                let _ = std::fs::remove_file(&part);
                return Err(DownloadError::WrongRange {
                    url,
                    asked: from,
                    start: start.unwrap_or(0),
                });
            }
            (
                from,
                vec![
                    range_total(headers),
                    response.content_length().map(|body| from + body),
                ],
            )
        }
        StatusCode::OK => (0, vec![response.content_length()]),
        // The part holds the whole file already (its size is checked below).
        StatusCode::RANGE_NOT_SATISFIABLE if from > 0 => (from, vec![range_total(headers)]),
        other => {
            return Err(DownloadError::Status {
                url,
                status: other.as_u16(),
            });
        }
    };
    sizes.push(announced.size);
    let sizes: Vec<u64> = sizes.into_iter().flatten().collect();
    let total = sizes.iter().copied().max();
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
        loop {
            let chunk = match response.chunk().await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => break,
                // The connection ended before the body did: the part is kept for the next run.
                Err(error) => {
                    let _ = file.sync_all();
                    return Err(match total {
                        Some(expected) if expected > fetched => DownloadError::Incomplete {
                            url,
                            got: fetched,
                            expected,
                        },
                        _ => DownloadError::Interrupted {
                            got: fetched,
                            reason: crate::transport::error_chain(&error),
                            url,
                        },
                    });
                }
            };
            file.write_all(&chunk).map_err(|error| io(&part, error))?;
            fetched += chunk.len() as u64;
            on_progress(fetched, total);
        }
    }
    file.sync_all().map_err(|error| io(&part, error))?;
    drop(file);
    if let Some(&expected) = sizes.iter().find(|&&size| size != fetched) {
        if fetched < expected {
            return Err(DownloadError::Incomplete {
                url,
                got: fetched,
                expected,
            });
        }
        let _ = std::fs::remove_file(&part);
        return Err(DownloadError::TooLong {
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
    install(&part, &request.destination, &url)?;
    Ok(Downloaded {
        bytes: fetched,
        sha256,
        resumed_from,
        verified: expected.is_some(),
    })
}

/// Puts a complete, checked `part` in place as `destination`: it must be a GGUF file (else it
/// is removed and `destination` is left as it was), then one rename in the same folder replaces
/// whatever was installed there, so a reader sees the old model or the new one, never neither.
/// `url` names where the file came from, for the error.
pub fn install(part: &Path, destination: &Path, url: &str) -> Result<(), DownloadError> {
    if !is_gguf(part) {
        let _ = std::fs::remove_file(part);
        return Err(DownloadError::NotGguf {
            url: url.to_owned(),
        });
    }
    std::fs::rename(part, destination).map_err(|error| DownloadError::Io {
        path: destination.display().to_string(),
        reason: error.to_string(),
    })
}

/// Whether the file starts with GGUF's magic bytes.
pub fn is_gguf(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut file| file.read_exact(&mut magic))
        .is_ok()
        && &magic == b"GGUF"
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

/// GETs `url` from byte `from`, following redirects by hand (each hop's host checked against
/// `hosts`); answers the final response and what the responses on the way announced.
async fn follow(
    client: &reqwest::Client,
    hosts: &HostPolicy,
    url: &str,
    from: u64,
) -> Result<(reqwest::Response, Announced), DownloadError> {
    let mut announced = Announced::default();
    let mut current = reqwest::Url::parse(url).map_err(|error| DownloadError::Unreachable {
        url: url.to_owned(),
        reason: format!("not a URL: {error}"),
    })?;
    for _ in 0..=MAX_REDIRECTS {
        hosts
            .check_url(&current)
            .await
            .map_err(|refused| DownloadError::Unreachable {
                url: current.to_string(),
                reason: refused.to_string(),
            })?;
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

/// `a` of `Content-Range: bytes a-b/total`.
fn range_start(headers: &HeaderMap) -> Option<u64> {
    let value = headers.get(CONTENT_RANGE)?.to_str().ok()?;
    let range = value.trim().strip_prefix("bytes")?.trim_start();
    range.split_once('-')?.0.trim().parse().ok()
}

fn client(url: &str, hosts: &HostPolicy) -> Result<reqwest::Client, DownloadError> {
    outbound_client(hosts, Duration::from_secs(15))
        .read_timeout(Duration::from_secs(60))
        .user_agent(concat!("quarry/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|error| unreachable(url, &error))
}

fn unreachable(url: &str, error: &reqwest::Error) -> DownloadError {
    let reason = match refusal(error) {
        Some(refused) => refused.to_string(),
        None => crate::transport::error_chain(error),
    };
    DownloadError::Unreachable {
        url: url.to_owned(),
        reason,
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
        assert_eq!(range_start(&headers), Some(100));
    }

    /// A server answering each connection with the next of `answers` (raw HTTP, sent as is,
    /// then the connection closed), after reading the request's head.
    fn answering(answers: Vec<Vec<u8>>) -> String {
        use std::io::BufRead;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for (stream, answer) in listener.incoming().zip(answers) {
                let mut stream = stream.unwrap();
                let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                while reader.read_line(&mut line).unwrap_or(0) > 0 && !line.trim().is_empty() {
                    line.clear();
                }
                let _ = stream.write_all(&answer);
            }
        });
        format!("http://{addr}")
    }

    fn model(len: usize) -> Vec<u8> {
        let mut bytes = b"GGUF".to_vec();
        bytes.resize(len, 7);
        bytes
    }

    fn folder(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "quarry-model-download-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    async fn fetch(url: String, destination: &Path) -> Result<Downloaded, DownloadError> {
        let hosts = HostPolicy::default().also_allowing(&url);
        let request = DownloadRequest {
            url,
            destination: destination.to_owned(),
            sha256: None,
            hosts,
        };
        download(&request, &mut |_, _| {}).await
    }

    // Downloads obey the one outbound policy: the named hub may be on this network, but a
    // redirect from it to an internal address is refused before anything is asked there.
    #[tokio::test]
    async fn a_redirect_to_an_internal_address_is_refused() {
        for internal in [
            "http://169.254.169.254/latest/m.gguf",
            "http://localhost:9/m.gguf",
        ] {
            let redirect = format!(
                "HTTP/1.1 302 Found\r\nConnection: close\r\nLocation: {internal}\r\n\
                 Content-Length: 0\r\n\r\n"
            );
            let base = answering(vec![redirect.into_bytes()]);
            let destination = folder("internal").join("m.gguf");
            let error = fetch(format!("{base}/m.gguf"), &destination)
                .await
                .unwrap_err();
            let said = error.to_string();
            assert!(
                said.contains("private or local address") && said.contains(internal),
                "{said}"
            );
            assert!(!destination.exists());
        }
    }

    // A body that ended before its Content-Length was installed when nothing else was known.
    #[tokio::test]
    async fn a_body_cut_short_is_incomplete_and_kept_for_the_next_run() {
        let mut answer =
            b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1000\r\n\r\n".to_vec();
        answer.extend(model(500));
        let base = answering(vec![answer]);
        let destination = folder("cut").join("m.gguf");
        let error = fetch(format!("{base}/m.gguf"), &destination)
            .await
            .unwrap_err();
        assert!(
            matches!(
                error,
                DownloadError::Incomplete {
                    got: 500,
                    expected: 1000,
                    ..
                }
            ),
            "{error}"
        );
        assert!(error.to_string().contains("run the same command again"));
        assert!(!destination.exists());
        assert_eq!(
            std::fs::metadata(part_path(&destination)).unwrap().len(),
            500
        );
    }

    // The hub's X-Linked-Size was ignored when the content came with a Content-Length.
    #[tokio::test]
    async fn the_hubs_announced_size_is_checked_beside_the_content_length() {
        let redirect = b"HTTP/1.1 302 Found\r\nConnection: close\r\nLocation: /cdn/m.gguf\r\n\
                         X-Linked-Size: 1000\r\nContent-Length: 0\r\n\r\n"
            .to_vec();
        let mut content =
            b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 500\r\n\r\n".to_vec();
        content.extend(model(500));
        let base = answering(vec![redirect, content]);
        let destination = folder("linked-size").join("m.gguf");
        let error = fetch(format!("{base}/m.gguf"), &destination)
            .await
            .unwrap_err();
        assert!(
            matches!(
                error,
                DownloadError::Incomplete {
                    got: 500,
                    expected: 1000,
                    ..
                }
            ),
            "{error}"
        );
        assert!(!destination.exists());
    }

    // A file that was not a GGUF replaced the installed model before it was checked.
    #[tokio::test]
    async fn a_file_that_is_not_a_gguf_leaves_the_installed_model_alone() {
        let page = b"<html>not a model</html>";
        let mut answer = format!(
            "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
            page.len()
        )
        .into_bytes();
        answer.extend(page);
        let base = answering(vec![answer]);
        let destination = folder("not-gguf").join("m.gguf");
        std::fs::write(&destination, model(64)).unwrap();
        let error = fetch(format!("{base}/m.gguf"), &destination)
            .await
            .unwrap_err();
        assert!(matches!(error, DownloadError::NotGguf { .. }), "{error}");
        assert_eq!(std::fs::read(&destination).unwrap(), model(64));
        assert!(!part_path(&destination).exists());
    }
}
