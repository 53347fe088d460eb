//! `quarry model pull | list | path | rm` against a local server shaped like the Hugging Face
//! hub (`/OWNER/REPO/resolve/REVISION/FILE` answering with a redirect that announces the file's
//! SHA-256 and size, as the hub does for LFS files): a download cut off halfway resumes with a
//! `Range` request, a wrong checksum installs nothing; and, with SmolLM2 installed as the
//! default model (QUARRY_TEST_GGUF), `extract --schema` works with no model named.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::{quarry, stderr, stdout};
use sha2::{Digest, Sha256};

/// A fake GGUF: the magic bytes and 256 KiB of filler.
fn model_bytes() -> Vec<u8> {
    let mut bytes = b"GGUF".to_vec();
    bytes.extend((0..256 * 1024u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8));
    bytes
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What the hub-shaped server saw and how it behaves.
struct Hub {
    addr: SocketAddr,
    /// The `Range` header of each content request, in order.
    ranges: Arc<Mutex<Vec<Option<String>>>>,
    /// Content requests still to cut off halfway.
    cut_offs: Arc<AtomicUsize>,
    /// How much of the content the CDN holds (a whole, well-formed answer of that many bytes),
    /// while the hub announces the whole size.
    served: Arc<AtomicUsize>,
}

impl Hub {
    fn start(content: Vec<u8>, announced_sha256: String) -> Hub {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let ranges = Arc::new(Mutex::new(Vec::new()));
        let cut_offs = Arc::new(AtomicUsize::new(0));
        let served = Arc::new(AtomicUsize::new(content.len()));
        let (seen, cuts, held) = (ranges.clone(), cut_offs.clone(), served.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let held = &content[..held.load(Ordering::SeqCst).min(content.len())];
                serve(stream, held, content.len(), &announced_sha256, &seen, &cuts);
            }
        });
        Hub {
            addr,
            ranges,
            cut_offs,
            served,
        }
    }

    fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }
}

fn serve(
    mut stream: TcpStream,
    content: &[u8],
    linked_size: usize,
    sha256: &str,
    ranges: &Mutex<Vec<Option<String>>>,
    cut_offs: &AtomicUsize,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let mut range = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("range")
        {
            range = Some(value.trim().to_owned());
        }
    }
    let path = request_line.split_whitespace().nth(1).unwrap_or("/");
    if path == "/owner/tiny-model/resolve/main/tiny.gguf" {
        let _ = write!(
            stream,
            "HTTP/1.1 302 Found\r\nLocation: /cdn/tiny.gguf?signed=1\r\nX-Linked-Etag: \"{sha256}\"\r\n\
             X-Linked-Size: {linked_size}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
        return;
    }
    if !path.starts_with("/cdn/tiny.gguf") {
        let _ = write!(
            stream,
            "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
        return;
    }
    ranges.lock().unwrap().push(range.clone());
    let start = range
        .as_deref()
        .and_then(|range| range.strip_prefix("bytes="))
        .and_then(|range| range.strip_suffix('-'))
        .and_then(|start| start.parse::<usize>().ok())
        .unwrap_or(0);
    let body = &content[start..];
    let head = if start > 0 {
        format!(
            "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {start}-{}/{}\r\n",
            content.len() - 1,
            content.len()
        )
    } else {
        "HTTP/1.1 200 OK\r\n".to_owned()
    };
    let _ = write!(
        stream,
        "{head}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let cut = cut_offs
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok();
    let sent = if cut { &body[..body.len() / 2] } else { body };
    let _ = stream.write_all(sent);
    let _ = stream.flush();
    // Dropping the stream closes it: a cut-off body ends early.
}

fn pull(models: &Path, hub: &Hub, extra: &[&str]) -> Output {
    quarry()
        .args(["model", "pull", "owner/tiny-model", "--file", "tiny.gguf"])
        .args(extra)
        .env("QUARRY_MODELS_DIR", models)
        .env("HF_ENDPOINT", hub.endpoint())
        .output()
        .expect("quarry runs")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("quarry-models-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn a_download_cut_off_halfway_resumes_and_is_verified() {
    let content = model_bytes();
    let hub = Hub::start(content.clone(), sha256_hex(&content));
    let models = temp_dir("resume");
    hub.cut_offs.store(1, Ordering::SeqCst);

    let first = pull(&models, &hub, &[]);
    assert_eq!(first.status.code(), Some(1), "{}", stderr(&first));
    assert!(
        stderr(&first).starts_with("Error: DownloadFailed - "),
        "{}",
        stderr(&first)
    );
    let part = models.join("tiny.gguf.part");
    let kept = std::fs::metadata(&part).expect("the part is kept").len();
    assert!(kept > 0 && (kept as usize) < content.len());

    let second = pull(&models, &hub, &[]);
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    let installed = models.join("tiny.gguf");
    assert_eq!(stdout(&second).trim(), installed.display().to_string());
    assert_eq!(std::fs::read(&installed).unwrap(), content);
    assert!(!part.exists());
    assert!(
        stderr(&second).contains(", verified"),
        "{}",
        stderr(&second)
    );
    assert_eq!(
        *hub.ranges.lock().unwrap(),
        vec![None, Some(format!("bytes={kept}-"))],
        "the second request asks for the rest only"
    );

    // list, path, rm.
    let listed = quarry()
        .args(["model", "list", "--json"])
        .env("QUARRY_MODELS_DIR", &models)
        .output()
        .unwrap();
    let listed: serde_json::Value = serde_json::from_str(&stdout(&listed)).unwrap();
    assert_eq!(listed[0]["name"], "tiny");
    assert_eq!(listed[0]["bytes"], content.len());
    let path = quarry()
        .args(["model", "path", "tiny"])
        .env("QUARRY_MODELS_DIR", &models)
        .output()
        .unwrap();
    assert_eq!(stdout(&path).trim(), installed.display().to_string());
    let again = pull(&models, &hub, &[]);
    assert_eq!(again.status.code(), Some(1), "installed already");
    assert!(stderr(&again).starts_with("Error: Conflict - "));
    let removed = quarry()
        .args(["model", "rm", "tiny"])
        .env("QUARRY_MODELS_DIR", &models)
        .output()
        .unwrap();
    assert!(removed.status.success(), "{}", stderr(&removed));
    assert!(!installed.exists());
    let missing = quarry()
        .args(["model", "path", "tiny"])
        .env("QUARRY_MODELS_DIR", &models)
        .output()
        .unwrap();
    assert!(stderr(&missing).starts_with("Error: NotFound - "));
    let _ = std::fs::remove_dir_all(&models);
}

#[test]
fn a_file_whose_checksum_differs_is_not_installed() {
    let content = model_bytes();
    let hub = Hub::start(content.clone(), "0".repeat(64));
    let models = temp_dir("checksum");
    let output = pull(&models, &hub, &[]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(&format!("not {}", "0".repeat(64))),
        "{}",
        stderr(&output)
    );
    assert!(!models.join("tiny.gguf").exists());
    assert!(!models.join("tiny.gguf.part").exists());
    // An explicit checksum wins over the announced one.
    let output = pull(&models, &hub, &["--sha256", &sha256_hex(&content)]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let _ = std::fs::remove_dir_all(&models);
}

fn pull_args(models: &Path, args: &[&str]) -> Output {
    quarry()
        .args(["model", "pull"])
        .args(args)
        .env("QUARRY_MODELS_DIR", models)
        .output()
        .expect("quarry runs")
}

/// Asserts `output` is a failed pull that installed nothing.
fn assert_refused(output: &Output, says: &str) {
    assert_eq!(output.status.code(), Some(1), "{}", stderr(output));
    assert!(
        stderr(output).starts_with("Error: DownloadFailed - ") && stderr(output).contains(says),
        "{}",
        stderr(output)
    );
    assert!(output.stdout.is_empty(), "{}", stdout(output));
}

// `pull FILE --name N --force` renamed FILE over N.gguf before checking it was a GGUF: "nothing
// was installed" was printed and the model installed before was gone.
#[test]
fn a_forced_pull_of_a_file_that_is_not_a_gguf_keeps_the_installed_model() {
    let models = temp_dir("forced-not-gguf");
    std::fs::create_dir_all(&models).unwrap();
    let content = model_bytes();
    let good = models.join("good.bin");
    std::fs::write(&good, &content).unwrap();
    let installed = pull_args(&models, &[good.to_str().unwrap(), "--name", "kept"]);
    assert_eq!(installed.status.code(), Some(0), "{}", stderr(&installed));
    let model = models.join("kept.gguf");
    assert_eq!(std::fs::read(&model).unwrap(), content);

    let page = b"<!doctype html><title>Not found</title>".repeat(100);
    let bad = models.join("bad.gguf");
    std::fs::write(&bad, &page).unwrap();
    let forced = pull_args(
        &models,
        &[bad.to_str().unwrap(), "--name", "kept", "--force"],
    );
    assert_refused(&forced, "is not a GGUF model file");
    assert!(
        stderr(&forced).contains("'kept' is unchanged"),
        "{}",
        stderr(&forced)
    );
    assert_eq!(
        std::fs::read(&model).unwrap(),
        content,
        "the installed model is kept"
    );
    assert!(!models.join("kept.gguf.part").exists());

    // The same over HTTP: a page served where the model was expected, its checksum right.
    let hub = Hub::start(page.clone(), sha256_hex(&page));
    let forced = pull(&models, &hub, &["--name", "kept", "--force"]);
    assert_refused(&forced, "is not a GGUF model file");
    assert_eq!(
        std::fs::read(&model).unwrap(),
        content,
        "the installed model is kept"
    );
    assert!(!models.join("kept.gguf.part").exists());
    let _ = std::fs::remove_dir_all(&models);
}

// A plain URL (no announced checksum) cut off halfway: the message must say how to go on, and
// the next run must fetch only the rest.
#[test]
fn a_plain_url_cut_off_halfway_installs_nothing_and_resumes() {
    let content = model_bytes();
    let hub = Hub::start(content.clone(), String::new());
    let models = temp_dir("plain-cut");
    hub.cut_offs.store(1, Ordering::SeqCst);
    let url = format!("{}/cdn/tiny.gguf", hub.endpoint());

    let first = pull_args(&models, &[&url]);
    assert_refused(&first, "run the same command again");
    assert!(!models.join("tiny.gguf").exists());
    let kept = std::fs::metadata(models.join("tiny.gguf.part"))
        .expect("the part is kept")
        .len();
    assert!(kept > 0 && (kept as usize) < content.len());

    let second = pull_args(&models, &[&url]);
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    assert_eq!(std::fs::read(models.join("tiny.gguf")).unwrap(), content);
    assert_eq!(
        *hub.ranges.lock().unwrap(),
        vec![None, Some(format!("bytes={kept}-"))]
    );
    let _ = std::fs::remove_dir_all(&models);
}

// The hub's X-Linked-Size was ignored when the content came with a Content-Length: a CDN holding
// half the file, answering it whole and well-formed, was installed (exit 0) when the hub
// announced no checksum.
#[test]
fn a_download_shorter_than_the_hubs_announced_size_installs_nothing() {
    let content = model_bytes();
    let hub = Hub::start(content.clone(), String::new());
    hub.served.store(content.len() / 2, Ordering::SeqCst);
    let models = temp_dir("linked-size");
    let output = pull(&models, &hub, &[]);
    assert_refused(
        &output,
        &format!(
            "sent {} bytes of {}; run the same command again",
            content.len() / 2,
            content.len()
        ),
    );
    assert!(!models.join("tiny.gguf").exists());
    let _ = std::fs::remove_dir_all(&models);
}

#[test]
fn a_repository_without_a_file_is_a_usage_error() {
    let output = quarry()
        .args(["model", "pull", "owner/repo"])
        .env("QUARRY_MODELS_DIR", temp_dir("usage"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("--file"), "{}", stderr(&output));
}

/// SmolLM2 installed as the default model: `extract --schema` names no model and gets a
/// conforming object whose strings are the text's.
#[test]
fn the_installed_default_model_extracts_a_schema_with_no_model_named() {
    let Some(gguf) = std::env::var_os("QUARRY_TEST_GGUF").map(PathBuf::from) else {
        assert!(
            std::env::var_os("CI").is_none_or(|ci| ci.is_empty()),
            "QUARRY_TEST_GGUF must be set in CI"
        );
        eprintln!("NOTICE: SKIPPED: QUARRY_TEST_GGUF is unset");
        return;
    };
    let models = temp_dir("default");
    let installed = quarry()
        .args(["model", "pull", gguf.to_str().unwrap(), "--name", "default"])
        .env("QUARRY_MODELS_DIR", &models)
        .output()
        .unwrap();
    assert!(installed.status.success(), "{}", stderr(&installed));
    let schema = models.join("schema.json");
    std::fs::write(
        &schema,
        r#"{"type": "object", "required": ["vendor", "customer"], "properties": {
            "vendor": {"type": "string", "description": "Who issued the invoice"},
            "customer": {"type": "string", "description": "Who must pay"}}}"#,
    )
    .unwrap();
    let text = "Invoice 2024-117 from Acme Supplies Ltd to Globex Corporation. Total: 1200 USD.";
    let output = quarry()
        .args([
            "extract",
            "--schema",
            schema.to_str().unwrap(),
            "--text",
            text,
        ])
        .env("QUARRY_MODELS_DIR", &models)
        .env_remove("QUARRY_MODEL")
        .output()
        .unwrap();
    // 0 when both fields are found, 3 when the small model leaves one to a person.
    assert!(
        matches!(output.status.code(), Some(0 | 3)),
        "{}",
        stderr(&output)
    );
    let value: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    for field in ["vendor", "customer"] {
        if let Some(found) = value[field].as_str() {
            assert!(text.contains(found), "{field} = {found:?}");
        }
    }
    assert!(
        value["vendor"].is_string() || value["customer"].is_string(),
        "{value}"
    );

    // With no model installed and none named, the error names the ways to get one.
    let empty = temp_dir("none");
    let output = quarry()
        .args([
            "extract",
            "--schema",
            schema.to_str().unwrap(),
            "--text",
            text,
        ])
        .env("QUARRY_MODELS_DIR", &empty)
        .env_remove("QUARRY_MODEL")
        .output()
        .unwrap();
    assert!(
        stderr(&output).starts_with("Error: MissingModel - "),
        "{}",
        stderr(&output)
    );
    assert!(
        stderr(&output).contains("quarry model pull"),
        "{}",
        stderr(&output)
    );
    let _ = std::fs::remove_dir_all(&models);
}

/// `model list` reads each installed file's header: the real SmolLM2 GGUF the test command
/// installs is a llama model quantized to Q4_1.
#[test]
fn the_list_shows_each_models_architecture_and_quantization() {
    let Some(gguf) = quarry_testkit::test_gguf() else {
        return;
    };
    let models = std::env::temp_dir().join(format!("quarry-model-facts-{}", std::process::id()));
    std::fs::create_dir_all(&models).unwrap();
    std::os::unix::fs::symlink(&gguf, models.join("smollm2.gguf")).unwrap();
    let listed = quarry()
        .args(["model", "list", "--json"])
        .env("QUARRY_MODELS_DIR", &models)
        .output()
        .unwrap();
    let listed: serde_json::Value = serde_json::from_str(&stdout(&listed)).unwrap();
    assert_eq!(listed[0]["name"], "smollm2");
    assert_eq!(listed[0]["architecture"], "llama");
    assert_eq!(listed[0]["quantization"], "Q4_1");
    let _ = std::fs::remove_dir_all(&models);
}
