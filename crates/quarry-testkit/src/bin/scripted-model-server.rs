//! The scripted model server as a process, for tests written in another language: prints its
//! base URL (`http://127.0.0.1:PORT`, which serves `/v1/chat/completions`, `/v1/messages` and
//! `/api/chat`) on the first line of stdout, then serves until stdin closes. Replies are queued
//! through `POST /_testkit/script` (see `quarry_testkit`'s control routes).

use std::io::{Read, Write};

fn main() {
    let server = quarry_testkit::ScriptedServer::start();
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{}", server.anthropic_base_url()).expect("write the base URL to stdout");
    stdout.flush().expect("flush stdout");
    drop(stdout);
    // Serve until the parent closes our stdin (or dies): the server never outlives its test.
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
}
