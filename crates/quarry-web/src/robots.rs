//! `robots.txt`, read once per origin and kept for the fetcher's life. As RFC 9309 says: a
//! missing file (4xx) allows everything; a server error disallows everything (the site may be
//! down or refusing crawlers), as does a file that cannot be had for another reason (a bad
//! redirect, a body cut off; not kept, tried again for the next page); rules for `QuarryBot`,
//! else `*`, decide each path. A host that cannot be reached at all (no connection, TLS, DNS)
//! is not a `robots.txt` answer: the fetcher fails the page with that reason. The fetcher reads
//! the file (following redirects as for pages).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use texting_robots::Robot;
use url::Url;

use crate::agent::ROBOTS_AGENT;

/// What an origin's `robots.txt` says.
#[derive(Clone)]
pub(crate) enum Rules {
    AllowAll,
    DisallowAll,
    Parsed(Arc<Robot>),
}

impl Rules {
    /// The rules an answer for `robots.txt` gives: its status and, for a success, its body.
    pub(crate) fn from_answer(status: u16, body: &[u8]) -> Rules {
        match status {
            200..=299 => match Robot::new(ROBOTS_AGENT, body) {
                Ok(robot) => Rules::Parsed(Arc::new(robot)),
                // Unparseable rules say nothing: allowed, as for a missing file.
                Err(_) => Rules::AllowAll,
            },
            400..=499 => Rules::AllowAll,
            _ => Rules::DisallowAll,
        }
    }

    pub(crate) fn allows(&self, url: &Url) -> bool {
        match self {
            Rules::AllowAll => true,
            Rules::DisallowAll => false,
            Rules::Parsed(robot) => robot.allowed(url.as_str()),
        }
    }
}

/// Bytes of `robots.txt` read (Google's limit is 500 KiB).
pub(crate) const MAX_ROBOTS_BYTES: usize = 512 * 1024;

/// Each origin's rules, once read.
#[derive(Clone, Default)]
pub(crate) struct RobotsCache {
    origins: Arc<Mutex<HashMap<String, Rules>>>,
}

impl RobotsCache {
    pub(crate) fn get(&self, origin: &str) -> Option<Rules> {
        self.origins
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get(origin)
            .cloned()
    }

    pub(crate) fn put(&self, origin: String, rules: Rules) {
        self.origins
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(origin, rules);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_follow_rfc_9309_for_each_answer() {
        let page = Url::parse("https://example.org/private/a").unwrap();
        let open = Url::parse("https://example.org/public").unwrap();
        let rules = Rules::from_answer(200, b"User-agent: *\nDisallow: /private\n");
        assert!(!rules.allows(&page));
        assert!(rules.allows(&open));
        let ours = Rules::from_answer(
            200,
            b"User-agent: *\nDisallow: /\n\nUser-agent: QuarryBot\nAllow: /\n",
        );
        assert!(ours.allows(&page), "the QuarryBot group wins over *");
        assert!(Rules::from_answer(404, b"").allows(&page));
        assert!(!Rules::from_answer(503, b"").allows(&open));
    }
}
