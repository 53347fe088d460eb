//! `quarry serve` against hostile or careless clients, through a real server on a loopback port:
//! slow request heads, more connections than the cap, over-long URIs and other framework
//! rejections, shutdown with requests in flight, and more extraction work than the budget; and
//! every long-running command (`serve` with and without a database, `worker`, `mcp`) stopped by
//! SIGTERM and SIGINT, exiting 0 — `serve` also with an embedded-model reply in flight.

use crate::common;

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{Sandbox, Server, quarry, signal_and_wait};
use serde_json::Value;

/// How long a test waits for something that should happen in well under a second (a hang
/// detector, never a performance figure).
const HANG: Duration = Duration::from_secs(30);

/// Opens a connection and sends the start of a request head that never ends.
fn slow_client(server: &Server) -> TcpStream {
    let mut stream = TcpStream::connect(server.addr).expect("the server accepts connections");
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: slow\r\n")
        .expect("a partial head is sent");
    stream
}

/// Keeps sending one header line at a time (a slowloris) until the server closes the
/// connection; false if it is still open after [`HANG`].
fn trickle_until_closed(stream: &mut TcpStream) -> bool {
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let until = Instant::now() + HANG;
    let mut buf = [0u8; 1024];
    while Instant::now() < until {
        if stream.write_all(b"X-Slow: 1\r\n").is_err() {
            return true;
        }
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(error) if matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => return true,
        }
    }
    false
}

/// Whether the server has closed `stream` (read sees the end, or a reset), waiting up to
/// [`HANG`].
fn closed_by_server(stream: &mut TcpStream) -> bool {
    stream.set_read_timeout(Some(HANG)).unwrap();
    let mut buf = [0u8; 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(error) if matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return false;
            }
            Err(_) => return true,
        }
    }
}

fn error_code(status: u16, content_type: &str, body: &str) -> String {
    assert!(
        content_type.starts_with("application/json"),
        "{status} answered {content_type}: {body}"
    );
    let error: Value = serde_json::from_str(body).expect("the error body is JSON");
    assert!(
        error["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{body}"
    );
    error["error"].as_str().expect("an error code").to_owned()
}

#[test]
fn a_slow_request_head_is_dropped_after_the_header_timeout_while_others_are_served() {
    let server = Server::start(&["--header-timeout-secs", "1"]);
    let mut slow = slow_client(&server);
    let (status, body) = server.post_json(
        "/skill/extract",
        r#"{"text": "mail ops@agent.rs", "target": "email"}"#,
    );
    assert_eq!(
        (status, body.as_str()),
        (200, r#"{"email": "ops@agent.rs"}"#)
    );
    // Sending a header line now and then does not keep the head alive (idle timeout is 60 s,
    // so only the 1 s header timeout can end it before the hang detector).
    assert!(
        trickle_until_closed(&mut slow),
        "the slow head was never dropped"
    );
}

#[test]
fn a_silent_connection_is_closed_after_the_idle_timeout() {
    let server = Server::start(&["--idle-timeout-secs", "1"]);
    let mut silent = TcpStream::connect(server.addr).unwrap();
    assert!(closed_by_server(&mut silent));
}

/// Well-behaved means: sends its request head as soon as it is connected. Such a client is
/// served while the cap is filled by slow heads, because a new connection at the cap closes
/// the oldest one that has no request in flight.
#[test]
fn slow_connections_at_the_cap_do_not_keep_out_a_prompt_client() {
    let server = Server::start(&["--max-connections", "20"]);
    let mut slow: Vec<TcpStream> = (0..40).map(|_| slow_client(&server)).collect();
    for _ in 0..3 {
        let (status, content_type, body) = server.request("GET", "/healthz", None, b"");
        assert_eq!((status, body.as_str()), (200, r#"{"status":"ok"}"#));
        assert!(content_type.starts_with("application/json"));
    }
    // The oldest slow connections made room (the header timeout, 10 s, has not passed).
    assert!(closed_by_server(&mut slow[0]));
}

#[test]
fn framework_rejections_answer_in_the_error_shape() {
    let server = Server::start(&["--max-body-bytes", "1000", "--max-uri-bytes", "2048"]);
    let cases: Vec<(String, &str, Vec<u8>, u16, &str)> = vec![
        // Over the configured limit, and over hyper's own 64 KiB URI limit.
        (
            format!("/healthz?{}", "a".repeat(4096)),
            "GET",
            vec![],
            414,
            "UriTooLong",
        ),
        (
            format!("/{}", "a".repeat(100_000)),
            "GET",
            vec![],
            414,
            "UriTooLong",
        ),
        (
            "/skill/extract".into(),
            "POST",
            format!(r#"{{"text": "{}", "target": "email"}}"#, "a".repeat(2000)).into_bytes(),
            413,
            "InputTooLarge",
        ),
        ("/healthz".into(), "DELETE", vec![], 405, "MethodNotAllowed"),
        ("/no/such/route".into(), "GET", vec![], 404, "NotFound"),
    ];
    for (path, method, body, status, code) in cases {
        let (answered, content_type, response) =
            server.request(method, &path, Some("application/json"), &body);
        assert_eq!(answered, status, "{method} {:.40}: {response}", path);
        assert_eq!(error_code(answered, &content_type, &response), code);
    }
    // The connection-level 414 still lets the next request through on a new connection.
    let (status, _, _) = server.request("GET", "/healthz", None, b"");
    assert_eq!(status, 200);
}

#[test]
fn query_and_path_rejections_answer_in_the_error_shape() {
    let sandbox = Sandbox::new("hardening-rejections");
    let key = sandbox
        .quarry_ok(&[
            "key",
            "create",
            "--scopes",
            "entities:read",
            "--project",
            "default",
            "--name",
            "t",
        ])
        .trim()
        .to_owned();
    let server = Server::start(&["--db", &sandbox.db(), "--no-worker"]);
    for path in ["/v1/entities?limit=abc", "/v1/entities/%FF%FE"] {
        let (status, content_type, body) = server.request_as(Some(&key), "GET", path, None, b"");
        assert_eq!(status, 400, "{path}: {body}");
        assert_eq!(error_code(status, &content_type, &body), "MalformedRequest");
    }
}

#[test]
fn sigterm_with_requests_in_flight_exits_within_the_grace_period() {
    let mut server = Server::start(&["--shutdown-grace-secs", "1"]);
    // In flight: its head was read, its body never finishes.
    let mut stalled = TcpStream::connect(server.addr).unwrap();
    stalled
        .write_all(
            b"POST /skill/extract HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n\
              Content-Length: 1000\r\n\r\n{\"text\": \"",
        )
        .unwrap();
    // In flight: extraction work on a large text.
    let text = "Ada Lovelace wrote to Charles Babbage from London. ".repeat(200_000);
    let body = serde_json::json!({"text": text, "target": "entity"}).to_string();
    let addr = server.addr;
    let working = std::thread::spawn(move || {
        let mut stream = TcpStream::connect(addr).unwrap();
        let head = format!(
            "POST /skill/extract HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n\r\n",
            body.len()
        );
        let _ = stream.write_all(head.as_bytes());
        let _ = stream.write_all(body.as_bytes());
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
    });
    // The server serves others meanwhile.
    let (status, _, _) = server.request("GET", "/healthz", None, b"");
    assert_eq!(status, 200);
    let exit = server
        .terminate(HANG)
        .expect("the server exits after SIGTERM");
    assert!(exit.success(), "{exit:?}");
    assert!(
        closed_by_server(&mut stalled),
        "the stalled request's connection is closed"
    );
    working.join().unwrap();
}

#[test]
fn a_request_in_flight_at_sigterm_is_answered_within_the_grace_period() {
    let mut server = Server::start(&[]);
    let body = br#"{"text": "mail ops@agent.rs", "target": "email"}"#;
    let mut stream = TcpStream::connect(server.addr).unwrap();
    let head = format!(
        "POST /skill/extract HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(&body[..10]).unwrap();
    // Wait for the head to be read (it is, once a later request is answered), then signal.
    assert_eq!(server.request("GET", "/healthz", None, b"").0, 200);
    let addr = server.addr;
    let signal = std::thread::spawn(move || server.terminate(HANG));
    // The listener closes at the signal; then the body's rest arrives.
    let until = Instant::now() + HANG;
    while TcpStream::connect(addr).is_ok() {
        assert!(Instant::now() < until, "the listener never closed");
        std::thread::sleep(Duration::from_millis(20));
    }
    stream.write_all(&body[10..]).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with(r#"{"email": "ops@agent.rs"}"#), "{answer}");
    let exit = signal.join().unwrap().expect("the server exits");
    assert!(exit.success());
}

#[test]
fn a_request_past_its_deadline_gets_504_deadline_exceeded() {
    let server = Server::start(&["--request-timeout-secs", "1"]);
    let mut stream = TcpStream::connect(server.addr).unwrap();
    stream
        .write_all(
            b"POST /skill/extract HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n\
              Content-Length: 1000\r\n\r\n{\"text\": \"",
        )
        .unwrap();
    stream.set_read_timeout(Some(HANG)).unwrap();
    let mut answer = vec![0u8; 4096];
    let read = stream
        .read(&mut answer)
        .expect("an answer before the hang detector");
    let answer = String::from_utf8_lossy(&answer[..read]);
    assert!(answer.starts_with("HTTP/1.1 504"), "{answer}");
    assert!(answer.contains(r#""error":"DeadlineExceeded""#), "{answer}");
}

/// Eight requests at once, each the size of the whole budget: one is extracted at a time and
/// the others, unable to get budget within 1 ms, are refused with 503 and Retry-After.
#[test]
fn requests_over_the_extraction_budget_get_503_overloaded_with_retry_after() {
    let text = "Grace Hopper met Alan Turing in Paris. ".repeat(50_000);
    let body = serde_json::json!({"text": text, "target": "entity"}).to_string();
    let budget = body.len().to_string();
    let server = Server::start(&[
        "--extraction-budget-bytes",
        &budget,
        "--overload-wait-ms",
        "1",
    ]);
    let answers: Vec<String> = std::thread::scope(|scope| {
        let sent: Vec<_> = (0..8)
            .map(|_| {
                let addr = server.addr;
                let body = &body;
                scope.spawn(move || {
                    let mut stream = TcpStream::connect(addr).unwrap();
                    let head = format!(
                        "POST /skill/extract HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n\
                         Connection: close\r\nContent-Length: {}\r\n\r\n",
                        body.len()
                    );
                    stream.write_all(head.as_bytes()).unwrap();
                    stream.write_all(body.as_bytes()).unwrap();
                    let mut answer = String::new();
                    stream.read_to_string(&mut answer).unwrap();
                    answer
                })
            })
            .collect();
        sent.into_iter().map(|s| s.join().unwrap()).collect()
    });
    let ok = answers
        .iter()
        .filter(|a| a.starts_with("HTTP/1.1 200"))
        .count();
    let refused: Vec<&String> = answers
        .iter()
        .filter(|a| a.starts_with("HTTP/1.1 503"))
        .collect();
    assert_eq!(ok + refused.len(), 8, "{answers:?}");
    assert!(ok >= 1, "the budget admits one at a time");
    assert!(!refused.is_empty(), "eight at once cannot all fit");
    for answer in refused {
        let lower = answer.to_ascii_lowercase();
        assert!(lower.contains("\r\nretry-after: 1\r\n"), "{answer}");
        assert!(answer.contains(r#""error":"Overloaded""#), "{answer}");
    }
}

/// The two signals that stop a long-running command.
const STOP_SIGNALS: [&str; 2] = ["TERM", "INT"];

/// Found by a hostile test: `quarry serve --db …` panicked on every SIGTERM or SIGINT (exit
/// 101, "there is no reactor running": a timer made outside the runtime).
#[test]
fn serve_with_and_without_a_database_exits_0_on_sigterm_and_sigint() {
    let sandbox = Sandbox::new("stop-serve");
    let db = sandbox.db();
    for signal in STOP_SIGNALS {
        for args in [
            vec!["--db", db.as_str()],
            vec![],
            vec!["--db", db.as_str(), "--no-worker"],
        ] {
            let mut server = Server::start(&args);
            assert_eq!(server.request("GET", "/healthz", None, b"").0, 200);
            let exit = server
                .stop_with(signal, HANG)
                .unwrap_or_else(|| panic!("serve {args:?} exits after SIG{signal}"));
            assert!(exit.success(), "serve {args:?} on SIG{signal}: {exit:?}");
        }
    }
}

#[test]
fn worker_exits_0_on_sigterm_and_sigint() {
    let sandbox = Sandbox::new("stop-worker");
    for signal in STOP_SIGNALS {
        let mut worker = quarry()
            .args([
                "worker",
                "--db",
                &sandbox.db(),
                "--shutdown-grace-secs",
                "1",
            ])
            .env_remove("QUARRY_MODEL")
            .env("QUARRY_LOG", "info")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("quarry worker starts");
        let mut stderr = std::io::BufReader::new(worker.stderr.take().unwrap());
        let mut line = String::new();
        loop {
            line.clear();
            let read = std::io::BufRead::read_line(&mut stderr, &mut line).unwrap();
            assert!(read > 0, "the worker exited before it started");
            if line.contains("worker started") {
                break;
            }
        }
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        let exit = signal_and_wait(&mut worker, signal, HANG)
            .unwrap_or_else(|| panic!("the worker exits after SIG{signal}"));
        assert!(exit.success(), "worker on SIG{signal}: {exit:?}");
    }
}

#[test]
fn mcp_on_stdio_exits_0_on_sigterm_and_sigint() {
    let sandbox = Sandbox::new("stop-mcp");
    for signal in STOP_SIGNALS {
        let mut mcp = quarry()
            .args(["mcp", "--db", &sandbox.db()])
            .env_remove("QUARRY_MODEL")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("quarry mcp starts");
        // Serving: it answers the client's first request. Stdin stays open.
        let mut stdin = mcp.stdin.take().unwrap();
        writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-03-26","capabilities":{{}},"clientInfo":{{"name":"stop-test","version":"1"}}}}}}"#
        )
        .unwrap();
        let mut stdout = std::io::BufReader::new(mcp.stdout.take().unwrap());
        let mut answer = String::new();
        std::io::BufRead::read_line(&mut stdout, &mut answer).unwrap();
        assert!(answer.contains(r#""id":1"#), "{answer}");
        let exit = signal_and_wait(&mut mcp, signal, HANG)
            .unwrap_or_else(|| panic!("mcp exits after SIG{signal}"));
        assert!(exit.success(), "mcp on SIG{signal}: {exit:?}");
        drop(stdin);
    }
}

/// With an embedded-model reply decoding, the panic also skipped the shutdown path and the
/// process lingered until the decode ended. Now it exits 0 within its grace period.
#[test]
fn serve_with_a_database_exits_0_on_sigterm_with_an_embedded_model_reply_in_flight() {
    let Some(gguf) = quarry_testkit::test_gguf() else {
        return;
    };
    let sandbox = Sandbox::new("stop-decoding");
    let key = sandbox
        .quarry_ok(&["key", "create", "--scopes", "extraction:trigger"])
        .trim()
        .to_owned();
    let model = format!("local:{}", gguf.display());
    let mut server = Server::start(&[
        "--db",
        &sandbox.db(),
        "--model",
        &model,
        "--shutdown-grace-secs",
        "1",
    ]);
    let schema = serde_json::json!({"type": "object", "required": ["summary"],
        "properties": {"summary": {"type": "string", "description": "A long summary"}}});
    let body = serde_json::json!({"message": "Invoice from Acme Supplies Ltd. Total due: \
        1200 USD. ".repeat(40), "schema": schema})
    .to_string();
    let mut chat = TcpStream::connect(server.addr).unwrap();
    chat.set_read_timeout(Some(HANG)).unwrap();
    write!(
        chat,
        "POST /v1/chat HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {key}\r\nContent-Type: \
         application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    // Decoding: the first token has streamed.
    let mut seen = Vec::new();
    let mut chunk = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains("event: token") {
        let read = chat.read(&mut chunk).expect("the chat streams");
        assert!(
            read > 0,
            "the chat ended before a token: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&chunk[..read]);
    }
    let exit = server
        .terminate(HANG)
        .expect("the server exits after SIGTERM mid-decode");
    assert!(exit.success(), "{exit:?}");
}
