//! The web app's server side through the real binary: the embedded assets, sign-in with an API
//! key (the session cookie and its attributes, CSRF and Origin checks, sign-out, a session taken
//! by another server on the same database, `quarry key revoke` ending sessions), and `/v1/chat` behind a key with conversations that
//! survive a restart.

use crate::common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use common::{Sandbox, Server, sse_events};
use quarry_testkit::{Reply, ScriptedServer};
use serde_json::{Value, json};

/// One HTTP answer: status, headers (names lowercased) and body.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }

    fn error(&self) -> (u16, String) {
        (
            self.status,
            self.json()["error"].as_str().unwrap_or_default().to_owned(),
        )
    }
}

/// Sends `method path` with `headers` (and a JSON body when given) over a fresh connection.
fn send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> Answer {
    let mut stream = TcpStream::connect(addr).expect("the server accepts connections");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("a read timeout can be set");
    let body = body.map(Value::to_string).unwrap_or_default();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !body.is_empty() {
        head.push_str("Content-Type: application/json\r\n");
    }
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).expect("the head is sent");
    stream.write_all(body.as_bytes()).expect("the body is sent");
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let response = String::from_utf8(raw).expect("a UTF-8 response");
    let (head, body) = response.split_once("\r\n\r\n").expect("a head and a body");
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|code| code.parse().ok())
        .expect("a status line");
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(name, value)| name == "transfer-encoding" && value.contains("chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Answer {
        status,
        headers,
        body,
    }
}

fn dechunk(mut raw: &str) -> String {
    let mut body = String::new();
    while let Some((size, rest)) = raw.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).expect("a chunk size");
        if size == 0 {
            break;
        }
        body.push_str(&rest[..size]);
        raw = &rest[size + 2..];
    }
    body
}

fn key(sandbox: &Sandbox, project: &str, name: &str, scopes: &str) -> String {
    sandbox
        .quarry_ok(&[
            "key",
            "create",
            "--scopes",
            scopes,
            "--name",
            name,
            "--project",
            project,
        ])
        .trim()
        .to_owned()
}

/// Signs in with `key`: (the cookie header to send, the CSRF token, the whole answer).
fn sign_in(addr: SocketAddr, key: &str) -> (String, String, Answer) {
    let answer = send(addr, "POST", "/v1/session", &[], Some(&json!({"key": key})));
    assert_eq!(answer.status, 200, "{}", answer.body);
    let set_cookie = answer.header("set-cookie").expect("a session cookie");
    let pair = set_cookie.split(';').next().unwrap().trim().to_owned();
    let csrf = answer.json()["csrf_token"].as_str().unwrap().to_owned();
    (pair, csrf, answer)
}

#[test]
fn the_app_is_embedded_with_its_security_headers() {
    let sandbox = Sandbox::new("web-assets");
    let server = Server::start(&["--db", &sandbox.db(), "--no-worker"]);
    let index = send(server.addr, "GET", "/", &[], None);
    assert_eq!(index.status, 200);
    assert_eq!(
        index.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert!(index.body.contains("<html"), "{}", index.body);
    assert_eq!(
        index.header("content-security-policy"),
        Some(
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
             connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
        )
    );
    assert_eq!(index.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(index.header("referrer-policy"), Some("same-origin"));
    assert_eq!(index.header("cache-control"), Some("no-cache"));
    let etag = index.header("etag").expect("an ETag").to_owned();
    let again = send(server.addr, "GET", "/", &[("If-None-Match", &etag)], None);
    assert_eq!((again.status, again.body.as_str()), (304, ""));
    assert_eq!(again.header("etag"), Some(etag.as_str()));

    for (file, content_type) in [
        ("app.js", "text/javascript; charset=utf-8"),
        ("api.js", "text/javascript; charset=utf-8"),
        ("chat.js", "text/javascript; charset=utf-8"),
        ("app.css", "text/css; charset=utf-8"),
    ] {
        let asset = send(server.addr, "GET", &format!("/assets/{file}"), &[], None);
        assert_eq!(asset.status, 200, "{file}");
        assert_eq!(asset.header("content-type"), Some(content_type), "{file}");
        assert_eq!(asset.header("cache-control"), Some("no-cache"));
        let etag = asset.header("etag").expect("an ETag").to_owned();
        assert_ne!(Some(etag.as_str()), index.header("etag"));
        let revalidated = send(
            server.addr,
            "GET",
            &format!("/assets/{file}"),
            &[("If-None-Match", &etag)],
            None,
        );
        assert_eq!(revalidated.status, 304, "{file}");
    }
    for missing in ["/assets/nope.js", "/assets/..%2Fsrc%2Flib.rs"] {
        let answer = send(server.addr, "GET", missing, &[], None);
        assert_eq!(answer.error(), (404, "NotFound".to_owned()), "{missing}");
    }

    let spec = send(server.addr, "GET", "/openapi.json", &[], None).json();
    for path in [
        "/v1/session",
        "/v1/chat/conversations",
        "/v1/chat/conversations/{id}",
    ] {
        assert!(spec["paths"].get(path).is_some(), "{path} is documented");
    }

    // Without a database the app is served all the same, and says the REST API is off.
    let bare = Server::start(&[]);
    assert_eq!(send(bare.addr, "GET", "/", &[], None).status, 200);
    assert_eq!(
        send(bare.addr, "GET", "/v1/session", &[], None).error(),
        (503, "StoreNotConfigured".to_owned())
    );
}

#[test]
fn sessions_stand_in_for_the_key_and_guard_against_other_sites() {
    let sandbox = Sandbox::new("web-sessions");
    let editor = key(
        &sandbox,
        "default",
        "ann",
        "entities:read,entities:write,extraction:trigger",
    );
    let server = Server::start(&["--db", &sandbox.db(), "--no-worker"]);
    let addr = server.addr;

    // A wrong key, a malformed one and a missing one are refused.
    for body in [
        json!({"key": "qk_00000000_forgedforgedforgedforgedforgedforg"}),
        json!({"key": "not a key"}),
        json!({"key": format!("{editor}x")}),
    ] {
        let answer = send(addr, "POST", "/v1/session", &[], Some(&body));
        assert_eq!(answer.error(), (401, "Unauthorized".to_owned()), "{body}");
        assert_eq!(answer.header("set-cookie"), None);
    }
    assert_eq!(
        send(addr, "POST", "/v1/session", &[], Some(&json!({}))).error(),
        (400, "MalformedRequest".to_owned())
    );

    let (cookie, csrf, answer) = sign_in(addr, &editor);
    let set_cookie = answer.header("set-cookie").unwrap();
    let token = cookie
        .strip_prefix("quarry_session=")
        .expect("the cookie's name");
    assert_eq!(token.len(), 64);
    assert!(token.bytes().all(|b| b.is_ascii_hexdigit()));
    let attributes: Vec<&str> = set_cookie.split(';').skip(1).map(str::trim).collect();
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=43200"] {
        assert!(
            attributes.contains(&attribute),
            "{attribute} in {set_cookie}"
        );
    }
    assert!(!attributes.contains(&"Secure"), "plain HTTP: {set_cookie}");
    let session = answer.json();
    assert_eq!(session["key_name"], "ann");
    assert_eq!(
        session["scopes"],
        json!(["entities:read", "entities:write", "extraction:trigger"])
    );
    assert_eq!(csrf.len(), 64);
    assert!(
        session["project_id"]
            .as_str()
            .is_some_and(|p| !p.is_empty())
    );
    assert!(session["expires_at"].as_str().is_some());
    // The page names the project as the CLI does (the default project is "default").
    assert_eq!(session["project_name"], "default");

    // Behind a TLS proxy the cookie is Secure.
    let proxied = send(
        addr,
        "POST",
        "/v1/session",
        &[("X-Forwarded-Proto", "https")],
        Some(&json!({"key": editor})),
    );
    assert!(
        proxied
            .header("set-cookie")
            .unwrap()
            .split(';')
            .any(|attribute| attribute.trim() == "Secure")
    );

    // The cookie reads; the page recovers its CSRF token after a reload.
    let with_cookie = [("Cookie", cookie.as_str())];
    let current = send(addr, "GET", "/v1/session", &with_cookie, None);
    assert_eq!(current.status, 200, "{}", current.body);
    assert_eq!(current.json()["csrf_token"], csrf.as_str());
    assert_eq!(
        send(addr, "GET", "/v1/entities", &with_cookie, None).status,
        200
    );
    assert_eq!(
        send(addr, "GET", "/v1/session", &[], None).error(),
        (401, "Unauthorized".to_owned())
    );

    // A mutation with the cookie needs the CSRF token, and an Origin of this server.
    let company = json!({"fields": [{"name": "ceo"}]});
    let without = send(
        addr,
        "PUT",
        "/v1/entity-types/company",
        &with_cookie,
        Some(&company),
    );
    assert_eq!(without.error(), (403, "CsrfRejected".to_owned()));
    let wrong = send(
        addr,
        "PUT",
        "/v1/entity-types/company",
        &[("Cookie", &cookie), ("X-CSRF-Token", &"0".repeat(64))],
        Some(&company),
    );
    assert_eq!(wrong.error(), (403, "CsrfRejected".to_owned()));
    let foreign = send(
        addr,
        "PUT",
        "/v1/entity-types/company",
        &[
            ("Cookie", &cookie),
            ("X-CSRF-Token", &csrf),
            ("Origin", "http://evil.example"),
        ],
        Some(&company),
    );
    assert_eq!(foreign.error(), (403, "CsrfRejected".to_owned()));
    assert_eq!(
        send(
            addr,
            "GET",
            "/v1/entities",
            &[("Cookie", &cookie), ("Origin", "http://evil.example")],
            None
        )
        .error(),
        (403, "CsrfRejected".to_owned())
    );
    let own_origin = format!("http://{addr}");
    let allowed = send(
        addr,
        "PUT",
        "/v1/entity-types/company",
        &[
            ("Cookie", &cookie),
            ("X-CSRF-Token", &csrf),
            ("Origin", &own_origin),
        ],
        Some(&company),
    );
    assert_eq!(allowed.status, 200, "{}", allowed.body);
    let created = send(
        addr,
        "POST",
        "/v1/entities",
        &[("Cookie", &cookie), ("X-CSRF-Token", &csrf)],
        Some(&json!({"entity_type": "company", "title": "Acme Corp"})),
    );
    assert_eq!(created.status, 201, "{}", created.body);

    // A key still works as a bearer (the scheme in any case), with no CSRF token.
    let bearer = format!("bearer {editor}");
    assert_eq!(
        send(
            addr,
            "GET",
            "/v1/entities",
            &[("Authorization", &bearer)],
            None
        )
        .status,
        200
    );

    // Another server on the same database accepts the session.
    let other = Server::start(&["--db", &sandbox.db(), "--no-worker"]);
    let elsewhere = send(other.addr, "GET", "/v1/entities", &with_cookie, None);
    assert_eq!(elsewhere.status, 200, "{}", elsewhere.body);
    assert_eq!(elsewhere.json()[0]["title"], "Acme Corp");

    // Signing out needs the CSRF token too; then the cookie is dead on every server.
    assert_eq!(
        send(addr, "DELETE", "/v1/session", &with_cookie, None).error(),
        (403, "CsrfRejected".to_owned())
    );
    let out = send(
        addr,
        "DELETE",
        "/v1/session",
        &[("Cookie", &cookie), ("X-CSRF-Token", &csrf)],
        None,
    );
    assert_eq!(out.status, 204);
    let cleared = out.header("set-cookie").expect("the cookie is cleared");
    assert!(cleared.starts_with("quarry_session=;"), "{cleared}");
    assert!(cleared.contains("Max-Age=0"), "{cleared}");
    for server_addr in [addr, other.addr] {
        for (method, path) in [("GET", "/v1/session"), ("GET", "/v1/entities")] {
            assert_eq!(
                send(server_addr, method, path, &with_cookie, None).error(),
                (401, "Unauthorized".to_owned()),
                "{method} {path}"
            );
        }
    }
    // Signing out again is harmless.
    assert_eq!(
        send(addr, "DELETE", "/v1/session", &with_cookie, None).status,
        204
    );

    // Revoking a key ends its sessions at once, on every server, and the key itself.
    let (cookie, _, _) = sign_in(addr, &editor);
    let with_cookie = [("Cookie", cookie.as_str())];
    assert_eq!(
        send(other.addr, "GET", "/v1/session", &with_cookie, None).status,
        200
    );
    let prefix = &editor[..11];
    let revoked = sandbox.quarry_ok(&["key", "revoke", prefix, "--project", "default"]);
    assert_eq!(revoked.trim(), format!("revoked {prefix}"));
    for server_addr in [addr, other.addr] {
        assert_eq!(
            send(server_addr, "GET", "/v1/session", &with_cookie, None).error(),
            (401, "Unauthorized".to_owned())
        );
        assert_eq!(
            send(
                server_addr,
                "GET",
                "/v1/entities",
                &[("Authorization", &bearer)],
                None
            )
            .error(),
            (401, "Unauthorized".to_owned())
        );
    }
    assert_eq!(
        send(
            addr,
            "POST",
            "/v1/session",
            &[],
            Some(&json!({"key": editor}))
        )
        .error(),
        (401, "Unauthorized".to_owned())
    );
    // An unknown key, or another project's, is not found.
    let again = sandbox.quarry(&["key", "revoke", "qk_00000000", "--project", "default"]);
    assert_eq!(again.status.code(), Some(1));
}

const DOCUMENT: &str = "Invoice from Acme Supplies Ltd, 15 January 2024. Total due: $1,200.";

fn schema() -> Value {
    json!({"type": "object", "required": ["vendor", "total"], "properties": {
        "vendor": {"type": "string"}, "total": {"type": "number"}}})
}

fn events_named(events: &[(String, Value)], name: &str) -> Vec<Value> {
    events
        .iter()
        .filter(|(n, _)| n == name)
        .map(|(_, data)| data.clone())
        .collect()
}

#[test]
fn chat_needs_a_key_and_its_conversations_survive_a_restart() {
    let sandbox = Sandbox::new("web-chat");
    let trigger = key(&sandbox, "default", "ann", "extraction:trigger");
    let reader = key(&sandbox, "default", "bob", "entities:read");
    let outsider = key(&sandbox, "other", "eve", "extraction:trigger");
    let model = ScriptedServer::with_script([
        Reply::content("Here it is: ```json\n{\"vendor\": \"Acme Supplies Ltd\"}\n```"),
        Reply::tool_call("submit", r#"{"vendor": "Acme Supplies Ltd"}"#),
        Reply::tool_call("submit", r#"{"vendor": "Acme Supplies Ltd"}"#),
        Reply::tool_call(
            "submit",
            r#"{"vendor": "Acme Supplies Ltd", "total": 1200}"#,
        ),
    ]);
    let url = model.base_url();
    let args = [
        "--db",
        &sandbox.db(),
        "--no-worker",
        "--model",
        "openai-compatible:test-model",
        "--base-url",
        &url,
        "--retries",
        "0",
    ];
    let server = Server::start(&args);
    let start = json!({"message": DOCUMENT, "schema": schema()});

    // With a database, the chat needs a key with extraction:trigger.
    assert_eq!(
        send(server.addr, "POST", "/v1/chat", &[], Some(&start)).error(),
        (401, "Unauthorized".to_owned())
    );
    let as_reader = format!("Bearer {reader}");
    assert_eq!(
        send(
            server.addr,
            "POST",
            "/v1/chat",
            &[("Authorization", &as_reader)],
            Some(&start)
        )
        .error(),
        (403, "Forbidden".to_owned())
    );
    // A signed-in page needs its CSRF token on the chat too.
    let (cookie, _, _) = sign_in(server.addr, &trigger);
    assert_eq!(
        send(
            server.addr,
            "POST",
            "/v1/chat",
            &[("Cookie", &cookie)],
            Some(&start)
        )
        .error(),
        (403, "CsrfRejected".to_owned())
    );
    assert_eq!(model.request_count(), 0);

    let auth = format!("Bearer {trigger}");
    let with_key = [("Authorization", auth.as_str())];
    let first = send(server.addr, "POST", "/v1/chat", &with_key, Some(&start));
    assert_eq!(first.status, 200, "{}", first.body);
    let events = sse_events(&first.body);
    let id = events_named(&events, "conversation")[0]["conversation_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        events_named(&events, "result")[0]["status"],
        "needs_clarification"
    );
    let question = events_named(&events, "message")[0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(question.contains("total"), "{question}");

    let listed = send(
        server.addr,
        "GET",
        "/v1/chat/conversations",
        &with_key,
        None,
    );
    assert_eq!(listed.status, 200, "{}", listed.body);
    let listed = listed.json();
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(listed[0]["id"], id.as_str());
    assert_eq!(listed[0]["title"], &DOCUMENT[..60]);
    assert_eq!(listed[0]["status"], "needs_clarification");

    // The server goes away; another one on the same database picks the conversation up.
    drop(server);
    let server = Server::start(&args);
    let path = format!("/v1/chat/conversations/{id}");
    let reopened = send(server.addr, "GET", &path, &with_key, None);
    assert_eq!(reopened.status, 200, "{}", reopened.body);
    let reopened = reopened.json();
    assert_eq!(reopened["status"], "needs_clarification");
    assert_eq!(reopened["document"], DOCUMENT);
    assert_eq!(reopened["schema"], schema());
    assert_eq!(
        reopened["messages"],
        json!([{"role": "user", "content": DOCUMENT},
               {"role": "assistant", "content": question}])
    );
    assert_eq!(reopened["result"]["value"]["vendor"], "Acme Supplies Ltd");

    // Another project sees nothing of it.
    let as_outsider = format!("Bearer {outsider}");
    let foreign = [("Authorization", as_outsider.as_str())];
    assert_eq!(
        send(server.addr, "GET", &path, &foreign, None).error(),
        (404, "UnknownConversation".to_owned())
    );
    let answer = json!({"conversation_id": id, "message": "The total is 1200 dollars."});
    assert_eq!(
        send(server.addr, "POST", "/v1/chat", &foreign, Some(&answer)).error(),
        (404, "UnknownConversation".to_owned())
    );
    assert_eq!(
        send(server.addr, "GET", "/v1/chat/conversations", &foreign, None).json(),
        json!([])
    );

    let second = send(server.addr, "POST", "/v1/chat", &with_key, Some(&answer));
    assert_eq!(second.status, 200, "{}", second.body);
    let events = sse_events(&second.body);
    let result = &events_named(&events, "result")[0];
    assert_eq!(result["status"], "complete", "{result}");
    assert_eq!(
        result["value"],
        json!({"vendor": "Acme Supplies Ltd", "total": 1200})
    );
    let done = send(server.addr, "GET", &path, &with_key, None).json();
    assert_eq!(done["status"], "complete");
    let roles: Vec<&str> = done["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant"]);
    assert_eq!(done["messages"][2]["content"], "The total is 1200 dollars.");
    assert_eq!(done["result"]["value"]["total"], 1200);
}
