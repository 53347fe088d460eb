//! Who this process is when it claims leased work (graph episodes, field tasks):
//! `pid@host:start_unix_ms`, unique per process run, readable in `lease_owner` columns.

use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

/// This process's owner name for leases: `{pid}@{host}:{start_unix_ms}`, the same for the whole
/// process (the start time is taken at the first call). The host comes from `/etc/hostname`,
/// else `$HOSTNAME`, else `localhost`.
pub fn worker_owner() -> String {
    static OWNER: OnceLock<String> = OnceLock::new();
    OWNER
        .get_or_init(|| {
            let started = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |since| since.as_millis());
            format!("{}@{}:{started}", std::process::id(), host_name())
        })
        .clone()
}

fn host_name() -> String {
    let from_file = std::fs::read_to_string("/etc/hostname").ok();
    let from_env = || std::env::var("HOSTNAME").ok();
    [from_file, from_env()]
        .into_iter()
        .flatten()
        .map(|name| name.trim().to_owned())
        .find(|name| !name.is_empty())
        .unwrap_or_else(|| "localhost".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owner_names_pid_host_and_start_and_stays_the_same() {
        let owner = worker_owner();
        let (pid, rest) = owner.split_once('@').expect("pid@host:start");
        assert_eq!(pid, std::process::id().to_string());
        let (host, start) = rest.rsplit_once(':').expect("host:start");
        assert!(!host.is_empty());
        assert!(start.parse::<u128>().is_ok(), "{owner}");
        assert_eq!(worker_owner(), owner);
    }
}
