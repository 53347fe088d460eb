//! The process's open-file limit, which bounds how many connections `quarry serve` can hold: each
//! is a file descriptor, and a server out of descriptors cannot accept the connection that would
//! have answered `/healthz`.

/// Descriptors kept free of connections: the database, index and model files, logs, and the
/// sockets of connections being closed.
const RESERVED: u64 = 256;

/// The connection cap to use for `wanted` connections: the soft open-file limit is raised toward
/// the hard limit as far as `wanted` needs, and the cap lowered to what the limit then allows.
#[cfg(unix)]
pub fn connection_cap(wanted: usize) -> usize {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

    let needed = (wanted as u64).saturating_add(RESERVED);
    let limit = getrlimit(Resource::Nofile);
    let Some(mut current) = limit.current else {
        return wanted; // unlimited
    };
    if current < needed {
        let raised = needed.min(limit.maximum.unwrap_or(u64::MAX));
        let new = Rlimit {
            current: Some(raised),
            maximum: limit.maximum,
        };
        if setrlimit(Resource::Nofile, new).is_ok() {
            current = raised;
        }
    }
    if current >= needed {
        return wanted;
    }
    let cap = current.saturating_sub(RESERVED).max(16) as usize;
    tracing::warn!(
        wanted,
        cap,
        open_file_limit = current,
        "the open-file limit allows fewer connections than --max-connections; capping them"
    );
    cap
}

#[cfg(not(unix))]
pub fn connection_cap(wanted: usize) -> usize {
    wanted
}
