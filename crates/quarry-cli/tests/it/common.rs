//! Helpers for tests that drive the real `quarry` binary and its real HTTP server.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, ChildStderr, Command, Output, Stdio};
use std::time::Duration;

use quarry_testkit::ScriptedServer;

pub const NOW: &str = "2024-01-10T12:00:00Z";

/// The binary, with the model-free hashing embedder (tests stay deterministic and fast even
/// where the MiniLM files are installed).
pub fn quarry() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_quarry"));
    command.env("QUARRY_EMBEDDER", "hashing");
    // The user's own ~/.config/quarry/quarry.toml must not change what the tests see.
    command.env(
        "XDG_CONFIG_HOME",
        std::env::temp_dir().join("quarry-tests-no-config"),
    );
    // Nor may the user's installed GGUF models become the model of a test that names none.
    command.env(
        "QUARRY_MODELS_DIR",
        std::env::temp_dir().join("quarry-tests-no-models"),
    );
    command
}

/// A temporary folder with its own `quarry.db`, and a scripted model server; the folder goes
/// when the sandbox is dropped.
pub struct Sandbox {
    pub dir: PathBuf,
    pub model: ScriptedServer,
}

impl Sandbox {
    pub fn new(name: &str) -> Sandbox {
        let dir = std::env::temp_dir().join(format!("quarry-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("the sandbox folder can be made");
        Sandbox {
            dir,
            model: ScriptedServer::start(),
        }
    }

    pub fn db(&self) -> String {
        self.dir.join("quarry.db").display().to_string()
    }

    /// `quarry ARGS --db <the sandbox's database>`, with the database, model and project taken
    /// from flags only.
    pub fn quarry(&self, args: &[&str]) -> Output {
        quarry()
            .args(args)
            .args(["--db", &self.db()])
            .env_remove("QUARRY_MODEL")
            .env_remove("QUARRY_DB")
            .env_remove("QUARRY_PROJECT")
            .output()
            .expect("quarry runs")
    }

    /// Like `quarry`, failing the test unless it succeeds; returns stdout.
    pub fn quarry_ok(&self, args: &[&str]) -> String {
        let output = self.quarry(args);
        assert!(
            output.status.success(),
            "quarry {args:?}: {}",
            stderr(&output)
        );
        stdout(&output)
    }

    /// Loads entity types from YAML text (written to `types.yaml` in the sandbox).
    pub fn load_types(&self, yaml: &str) {
        let types = self.dir.join("types.yaml");
        std::fs::write(&types, yaml).expect("the types file is written");
        self.quarry_ok(&["type", "load", &types.display().to_string()]);
    }

    /// Adds an entity of type `slug` titled `title`; answers its id.
    pub fn add_entity(&self, slug: &str, title: &str) -> String {
        self.quarry_ok(&["entity", "add", "--type", slug, "--title", title])
            .trim()
            .to_owned()
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs `quarry` with `args` and `stdin`, returning its output.
pub fn run(args: &[&str], stdin: &str) -> Output {
    let mut command = quarry();
    command.args(args);
    run_with_stdin(command, stdin)
}

/// Runs a prepared `quarry` command with `stdin` written to it, returning its output.
pub fn run_with_stdin(mut command: Command, stdin: &str) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the quarry binary starts");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(stdin.as_bytes())
        .expect("stdin accepts the input");
    child.wait_with_output().expect("quarry exits")
}

/// `quarry ARGS --db DB`, which must succeed, with only its flags deciding the database, model
/// and project; returns its stdout.
pub fn quarry_on(db: &str, args: &[&str]) -> String {
    let output = quarry()
        .args(args)
        .args(["--db", db])
        .env_remove("QUARRY_MODEL")
        .env_remove("QUARRY_DB")
        .env_remove("QUARRY_PROJECT")
        .output()
        .expect("quarry runs");
    assert!(
        output.status.success(),
        "quarry {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("UTF-8 output")
}

/// Polls `probe` until it answers `Some`, failing after a generous deadline.
pub fn eventually<T>(what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(found) = probe() {
            return found;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never happened: {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("stderr is UTF-8")
}

/// `quarry extract --target T --text TEXT --now NOW` → (exit code, stdout, stderr).
pub fn extract(target: &str, text: &str) -> (i32, String, String) {
    let output = run(
        &["extract", "--target", target, "--text", text, "--now", NOW],
        "",
    );
    (
        output.status.code().unwrap_or(-1),
        stdout(&output),
        stderr(&output),
    )
}

/// A `quarry serve` process on a free loopback port, killed when dropped.
pub struct Server {
    child: Child,
    pub addr: SocketAddr,
}

/// Starts `quarry serve` on a free loopback port with `args` (after `configure` adjusts the
/// command) and reads its stderr up to the `listening on` line: answers the process, its address
/// and the rest of its stderr, which the caller must keep reading so the server never blocks on
/// a full pipe.
pub fn spawn_serve(
    args: &[&str],
    configure: impl FnOnce(&mut Command),
) -> (Child, SocketAddr, BufReader<ChildStderr>) {
    let mut command = quarry();
    command
        .args(["serve", "--addr", "127.0.0.1:0"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    configure(&mut command);
    let mut child = command.spawn().expect("quarry serve starts");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr is piped"));
    let mut line = String::new();
    let addr = loop {
        line.clear();
        let read = stderr.read_line(&mut line).expect("stderr is readable");
        assert!(read > 0, "quarry serve exited before listening");
        if let Some(addr) = line.trim().strip_prefix("listening on http://") {
            break addr.parse().expect("a socket address");
        }
    };
    (child, addr, stderr)
}

/// Sends one HTTP/1.1 request with `headers` on a new connection and answers (status, head,
/// body), a chunked body decoded. The read timeout is a hang detector, not a timing assertion.
pub fn http_request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, String, String) {
    let mut stream = TcpStream::connect(addr).expect("the server accepts connections");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("a read timeout can be set");
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream
        .write_all(head.as_bytes())
        .expect("the request head is sent");
    // A server may answer (e.g. 413) before reading the whole body; ignore a reset here.
    let _ = stream.write_all(body);
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let response = String::from_utf8(raw).expect("the response is UTF-8");
    let (head, body) = response
        .split_once("\r\n\r\n")
        .expect("the response has a head and a body");
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .expect("a status code");
    let chunked = header(head, "transfer-encoding").is_some_and(|value| value.contains("chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_owned()
    };
    (status, head.to_owned(), body)
}

/// The value of header `name` (any case) in a response head.
pub fn header<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines().find_map(|line| {
        let (field, value) = line.split_once(':')?;
        field.eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

impl Server {
    pub fn start(extra_args: &[&str]) -> Server {
        Server::start_with(extra_args, |_| {})
    }

    /// [`start`](Self::start) after `configure` adjusts the command (e.g. its environment).
    pub fn start_with(extra_args: &[&str], configure: impl FnOnce(&mut Command)) -> Server {
        let (child, addr, mut stderr) = spawn_serve(extra_args, configure);
        // Keep draining stderr so the server never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut sink = String::new();
            let _ = stderr.read_to_string(&mut sink);
        });
        Server { child, addr }
    }

    /// Sends one HTTP/1.1 request and returns (status, content type, body).
    pub fn request(
        &self,
        method: &str,
        path: &str,
        content_type: Option<&str>,
        body: &[u8],
    ) -> (u16, String, String) {
        self.request_as(None, method, path, content_type, body)
    }

    /// A JSON call as `key`: the status and the parsed body (`Null` when it is not JSON).
    pub fn call(
        &self,
        key: &str,
        method: &str,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> (u16, serde_json::Value) {
        let bytes = body.map(|b| b.to_string()).unwrap_or_default();
        let (status, _, response) = self.request_as(
            Some(key),
            method,
            path,
            Some("application/json"),
            bytes.as_bytes(),
        );
        (
            status,
            serde_json::from_str(&response).unwrap_or(serde_json::Value::Null),
        )
    }

    /// Waits (polling) until the episode's extraction ended, and returns it.
    pub fn finished_episode(&self, key: &str, id: &str) -> serde_json::Value {
        eventually("the episode's extraction ended", || {
            let (status, episode) = self.call(key, "GET", &format!("/v1/episodes/{id}"), None);
            assert_eq!(status, 200, "{episode}");
            (episode["status"] == "done" || episode["status"] == "failed").then_some(episode)
        })
    }

    /// Queues an episode with pre-structured `entities` (a worker needs no model for it) and
    /// waits until it is done.
    pub fn ingest(&self, key: &str, user: &str, entities: serde_json::Value) -> serde_json::Value {
        let (status, episode) = self.call(
            key,
            "POST",
            "/v1/episodes",
            Some(serde_json::json!({
                "user_message": user, "assistant_response": "Noted.", "entities": entities
            })),
        );
        assert_eq!(status, 202, "{episode}");
        let done = self.finished_episode(key, episode["id"].as_str().unwrap());
        assert_eq!(done["status"], "done", "{done}");
        done
    }

    /// Like `request`, with `Authorization: Bearer <key>` when a key is given.
    pub fn request_as(
        &self,
        key: Option<&str>,
        method: &str,
        path: &str,
        content_type: Option<&str>,
        body: &[u8],
    ) -> (u16, String, String) {
        let authorization = key.map(|key| format!("Bearer {key}"));
        let mut headers = Vec::new();
        if let Some(content_type) = content_type {
            headers.push(("Content-Type", content_type));
        }
        if let Some(authorization) = &authorization {
            headers.push(("Authorization", authorization.as_str()));
        }
        let (status, head, body) = http_request(self.addr, method, path, &headers, body);
        let content_type = header(&head, "content-type").unwrap_or_default().to_owned();
        (status, content_type, body)
    }

    /// Sends SIGTERM and waits for the process to exit, at most `bound` (a hang detector);
    /// `None` when it was still running then.
    pub fn terminate(&mut self, bound: Duration) -> Option<std::process::ExitStatus> {
        self.stop_with("TERM", bound)
    }

    /// Sends `signal` (`TERM`, `INT`) and waits for the exit as [`Server::terminate`] does.
    pub fn stop_with(&mut self, signal: &str, bound: Duration) -> Option<std::process::ExitStatus> {
        signal_and_wait(&mut self.child, signal, bound)
    }

    pub fn post_json(&self, path: &str, body: &str) -> (u16, String) {
        let (status, _, body) =
            self.request("POST", path, Some("application/json"), body.as_bytes());
        (status, body)
    }
}

/// Sends `signal` (`TERM`, `INT`) to `child` and waits for it to exit, at most `bound` (a hang
/// detector); `None` when it was still running then.
pub fn signal_and_wait(
    child: &mut Child,
    signal: &str,
    bound: Duration,
) -> Option<std::process::ExitStatus> {
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "SIG{signal} was sent");
    let until = std::time::Instant::now() + bound;
    while std::time::Instant::now() < until {
        if let Some(status) = child.try_wait().expect("the child can be polled") {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

/// Decodes an HTTP/1.1 chunked body.
fn dechunk(mut raw: &str) -> String {
    let mut body = String::new();
    while let Some((size_line, rest)) = raw.split_once("\r\n") {
        let size = usize::from_str_radix(size_line.trim(), 16).expect("a chunk size");
        if size == 0 {
            break;
        }
        body.push_str(&rest[..size]);
        raw = &rest[size + 2..];
    }
    body
}

/// The `(event, data)` pairs of a Server-Sent Events body.
pub fn sse_events(body: &str) -> Vec<(String, serde_json::Value)> {
    body.split("\n\n")
        .filter_map(|block| {
            let mut name = None;
            let mut data = String::new();
            for line in block.lines() {
                if let Some(value) = line.strip_prefix("event:") {
                    name = Some(value.trim().to_owned());
                } else if let Some(value) = line.strip_prefix("data:") {
                    data.push_str(value.trim_start());
                }
            }
            let name = name?;
            Some((
                name,
                serde_json::from_str(&data).expect("event data is JSON"),
            ))
        })
        .collect()
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The flags that point a command at the sandbox's scripted model, with no retries.
pub fn model_args(sandbox: &Sandbox) -> Vec<String> {
    vec![
        "--model".to_owned(),
        "openai-compatible:m-chat".to_owned(),
        "--base-url".to_owned(),
        sandbox.model.base_url(),
        "--retries".to_owned(),
        "0".to_owned(),
    ]
}

/// `quarry serve` on the sandbox's database with its scripted model (`model_args`).
pub fn serve_with_model(sandbox: &Sandbox) -> Server {
    let mut args = vec!["--db".to_owned(), sandbox.db()];
    args.extend(model_args(sandbox));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Server::start(&args)
}

/// What `seed_keys` made: keys of three kinds and an entity in another project.
pub struct SeededKeys {
    pub admin: String,
    pub reader: String,
    pub other: String,
    pub other_entity: String,
}

/// Through the real binary: a key with every scope named `admin_name` and a reader key
/// ("Rita Reader", `entities:read`) in the default project, and in project "other" a key with
/// every scope ("Otto Outsider"), the types of `types` (a file) and a company "Umbrella
/// Holdings".
pub fn seed_keys(sandbox: &Sandbox, types: &str, admin_name: &str) -> SeededKeys {
    let key = |project: &str, name: &str, scopes: &str| {
        sandbox
            .quarry_ok(&[
                "key",
                "create",
                "--project",
                project,
                "--name",
                name,
                "--scopes",
                scopes,
            ])
            .trim()
            .to_owned()
    };
    let all_scopes = quarry_server::keys::SCOPES.join(",");
    let admin = key("default", admin_name, &all_scopes);
    let reader = key("default", "Rita Reader", "entities:read");
    let other = key("other", "Otto Outsider", &all_scopes);
    sandbox.quarry_ok(&["type", "load", types, "--project", "other"]);
    let other_entity = sandbox
        .quarry_ok(&[
            "entity",
            "add",
            "--type",
            "company",
            "--title",
            "Umbrella Holdings",
            "--project",
            "other",
        ])
        .trim()
        .to_owned();
    SeededKeys {
        admin,
        reader,
        other,
        other_entity,
    }
}

/// What a scripted model reads of a chat request: its messages, the system prompt (the first
/// message's text) and all the messages' text joined by newlines.
pub struct ModelRequest {
    pub messages: Vec<serde_json::Value>,
    pub system: String,
    pub all_text: String,
}

impl ModelRequest {
    pub fn of(request: &serde_json::Value) -> ModelRequest {
        let messages = request["messages"].as_array().cloned().unwrap_or_default();
        let text_of =
            |message: &serde_json::Value| message["content"].as_str().unwrap_or("").to_owned();
        let system = messages.first().map(text_of).unwrap_or_default();
        let all_text = messages.iter().map(text_of).collect::<Vec<_>>().join("\n");
        ModelRequest {
            messages,
            system,
            all_text,
        }
    }
}

/// A field agent's `search_documents` call with `query`.
pub fn search_documents(query: &str) -> quarry_testkit::Scripted {
    quarry_testkit::Reply::tool_call(
        "search_documents",
        serde_json::json!({"query": query}).to_string(),
    )
    .into()
}

/// A field agent's `submit_value` call: the value with high confidence, or none with low.
pub fn submit_value(value: Option<&str>) -> quarry_testkit::Scripted {
    quarry_testkit::Reply::tool_call(
        "submit_value",
        serde_json::json!({"value": value, "confidence": if value.is_some() { "high" } else { "low" }})
            .to_string(),
    )
    .into()
}

/// The text between the first `open` and the next `close` after it.
pub fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let len = text[start..].find(close)?;
    Some(&text[start..start + len])
}

/// A PyPI package a test drives, installed by `scripts/<script>` under `target/` (see
/// `scripts/pip-target.sh`).
pub struct PythonPackage<'a> {
    /// Its name, for messages.
    pub name: &'a str,
    /// The variable `scripts/test.sh` sets to the install folder.
    pub env: &'a str,
    /// The install folder under the workspace's `target/` when the variable is unset.
    pub default_dir: &'a str,
    /// What `python3 -c` runs to check it imports.
    pub imports: &'a str,
    /// The script that installs it.
    pub script: &'a str,
}

impl PythonPackage<'_> {
    /// The folder to put on PYTHONPATH, or `None` (after a visible SKIPPED notice) when the
    /// package does not import outside CI; in CI it must, so the test fails instead.
    pub fn locate(&self) -> Option<PathBuf> {
        let pythonpath = std::env::var_os(self.env)
            .filter(|path| !path.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../../target")
                    .join(self.default_dir)
            });
        let importable = Command::new("python3")
            .args(["-c", self.imports])
            .env("PYTHONPATH", &pythonpath)
            .output()
            .is_ok_and(|output| output.status.success());
        if importable {
            return Some(pythonpath);
        }
        let (name, script, env) = (self.name, self.script, self.env);
        if std::env::var_os("CI").is_some_and(|ci| !ci.is_empty()) {
            panic!(
                "{name} is not importable from {} while CI is set: run scripts/{script} \
                 (export {env}=$(scripts/{script}))",
                pythonpath.display()
            );
        }
        // Written past the test harness's capture so the skip is visible.
        let _ = writeln!(
            std::io::stderr(),
            "NOTICE: the {name} test is SKIPPED: {name} is not importable from {} (run \
             scripts/{script})",
            pythonpath.display()
        );
        None
    }
}
