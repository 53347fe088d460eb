//! The one outbound policy: every request Quarry makes on a user's behalf (web pages, search
//! results, webhooks, model downloads) may reach public addresses only, unless the operator
//! allows a host by name (an intranet wiki, a test server). The check runs before each request
//! (and each redirect hop, which callers follow by hand) and again in the client's resolver, so
//! the address connected to is the address checked. [`outbound_client`] builds the client with
//! that resolver, no proxy (a proxy would resolve names past the check) and no automatic
//! redirects; [`without_credentials`] drops `user:password@` from a URL before it is kept.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Why an outbound request may not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddressError {
    #[error(
        "'{0}' is a private or local address; only public addresses are reached unless \
         QUARRY_OUTBOUND_ALLOW_HOSTS names the host"
    )]
    Private(String),
    #[error("'{0}' names no host")]
    NoHost(String),
    #[error("cannot resolve host '{host}': {reason}")]
    Resolve { host: String, reason: String },
}

/// Hosts (names or IP literals, lowercased) reached even though they are private.
#[derive(Debug, Clone, Default)]
pub struct HostPolicy {
    allowed_private: Arc<HashSet<String>>,
}

impl HostPolicy {
    pub fn allowing<I: IntoIterator<Item = S>, S: AsRef<str>>(hosts: I) -> HostPolicy {
        HostPolicy {
            allowed_private: Arc::new(
                hosts
                    .into_iter()
                    .map(|h| normalise_host(h.as_ref()))
                    .filter(|h| !h.is_empty())
                    .collect(),
            ),
        }
    }

    /// This policy, also allowing the host of `url`: for a request whose URL the operator named
    /// (a model download's URL or hub); its redirects to other hosts are still checked.
    pub fn also_allowing(&self, url: &str) -> HostPolicy {
        let mut allowed = (*self.allowed_private).clone();
        if let Some(host) = reqwest::Url::parse(url.trim())
            .ok()
            .and_then(|parsed| parsed.host_str().map(normalise_host))
        {
            allowed.insert(host);
        }
        HostPolicy {
            allowed_private: Arc::new(allowed),
        }
    }

    fn allows_private(&self, host: &str) -> bool {
        self.allowed_private.contains(&normalise_host(host))
    }

    /// Why `host` can be seen to be private without resolving it (an IP literal that is not
    /// public, or `localhost` and its subdomains), unless it is allowed; `None` otherwise. For
    /// checks at load time; a name is still checked when it is resolved.
    pub fn literal_problem(&self, host: &str) -> Option<AddressError> {
        let bare = normalise_host(host);
        if bare.is_empty() || self.allows_private(&bare) {
            return None;
        }
        let private = match bare.parse::<IpAddr>() {
            Ok(ip) => !is_public(ip),
            Err(_) => bare == "localhost" || bare.ends_with(".localhost"),
        };
        private.then(|| AddressError::Private(host.to_owned()))
    }

    /// [`HostPolicy::literal_problem`] of `url`'s host (`None` for a URL without one).
    pub fn literal_url_problem(&self, url: &str) -> Option<AddressError> {
        let parsed = reqwest::Url::parse(url.trim()).ok()?;
        let host = match parsed.host()? {
            url::Host::Domain(name) => name.to_owned(),
            url::Host::Ipv4(ip) => ip.to_string(),
            url::Host::Ipv6(ip) => ip.to_string(),
        };
        self.literal_problem(&host)
    }

    /// The addresses `url`'s host may be connected to: the check each request and each
    /// redirect hop makes before it is sent ([`HostPolicy::addresses`] of its host and port).
    pub async fn check_url(&self, url: &reqwest::Url) -> Result<Vec<SocketAddr>, AddressError> {
        let host = url
            .host_str()
            .ok_or_else(|| AddressError::NoHost(url.to_string()))?;
        self.addresses(host, url.port_or_known_default().unwrap_or(80))
            .await
    }

    /// The addresses `host` may be connected to: all of them for an allowed host, else the
    /// public ones, and an error when none is left.
    pub async fn addresses(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, AddressError> {
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let resolved: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
            Ok(ip) => vec![SocketAddr::new(ip, port)],
            Err(_) => tokio::net::lookup_host((bare, port))
                .await
                .map_err(|error| AddressError::Resolve {
                    host: host.to_owned(),
                    reason: error.to_string(),
                })?
                .collect(),
        };
        if self.allows_private(bare) {
            return Ok(resolved);
        }
        let public: Vec<SocketAddr> = resolved
            .iter()
            .copied()
            .filter(|address| is_public(address.ip()))
            .collect();
        if public.is_empty() {
            return Err(AddressError::Private(host.to_owned()));
        }
        Ok(public)
    }
}

fn normalise_host(host: &str) -> String {
    host.trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

/// A client whose every connection obeys `policy`: names resolve only to allowed addresses, no
/// proxy, no automatic redirects (follow them by hand, checking each hop with
/// [`HostPolicy::addresses`]), connecting within `connect_timeout`. Callers add their own
/// overall timeout and user agent.
pub fn outbound_client(policy: &HostPolicy, connect_timeout: Duration) -> reqwest::ClientBuilder {
    crate::install_crypto_provider();
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .dns_resolver(Arc::new(CheckedResolver(policy.clone())))
        .connect_timeout(connect_timeout)
}

/// `url` without a user name or password (`https://user:secret@host/` → `https://host/`), as it
/// may be stored, logged or cited.
pub fn without_credentials(mut url: reqwest::Url) -> reqwest::Url {
    if url.has_host() {
        let _ = url.set_username("");
        let _ = url.set_password(None);
    }
    url
}

/// The refusal of the policy inside a request error, if that is why the request failed.
pub fn refusal(error: &(dyn std::error::Error + 'static)) -> Option<AddressError> {
    let mut source = Some(error);
    while let Some(cause) = source {
        if let Some(refused) = cause.downcast_ref::<AddressError>() {
            return Some(refused.clone());
        }
        source = cause.source();
    }
    None
}

/// The client's resolver: a name resolves only to the addresses [`HostPolicy::addresses`]
/// allows.
struct CheckedResolver(HostPolicy);

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.0.clone();
        Box::pin(async move {
            let addresses = policy
                .addresses(name.as_str(), 0)
                .await
                .map_err(|error| Box::new(error) as Box<dyn std::error::Error + Send + Sync>)?;
            Ok(Box::new(addresses.into_iter()) as Addrs)
        })
    }
}

/// Whether `ip` is a public unicast address: not loopback, private, link-local, shared (CGNAT),
/// unspecified, broadcast, multicast, documentation, benchmarking or reserved; IPv4-mapped and
/// NAT64 IPv6 addresses are judged by their IPv4 address.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 198 && (18..20).contains(&b)) // benchmarking
        || a >= 240) // reserved
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    let segments = ip.segments();
    // NAT64 (64:ff9b::/96) carries an IPv4 address in its last 32 bits.
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let [.., high, low] = segments;
        return is_public_v4(Ipv4Addr::from((u32::from(high) << 16) | u32::from(low)));
    }
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || (segments[0] & 0xfe00) == 0xfc00 // unique local
        || (segments[0] & 0xffc0) == 0xfe80 // link-local
        || (segments[0] == 0x2001 && segments[1] == 0x0db8) // documentation
        || segments[..6] == [0, 0, 0, 0, 0, 0]) // IPv4-compatible and other ::/96
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_and_special_addresses_are_not_public() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "192.0.2.1",
            "198.18.0.1",
            "240.0.0.1",
            "::1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "ff02::1",
            "2001:db8::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a00:1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in [
            "8.8.8.8",
            "1.1.1.1",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
        ] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    #[test]
    fn private_literals_are_seen_at_load_unless_allowed() {
        let policy = HostPolicy::allowing(["127.0.0.1"]);
        for private in [
            "[::1]",
            "169.254.169.254",
            "localhost",
            "api.localhost",
            "10.0.0.1",
        ] {
            assert_eq!(
                policy.literal_problem(private),
                Some(AddressError::Private(private.to_owned())),
                "{private}"
            );
        }
        for fine in ["127.0.0.1", "hooks.example.com", "8.8.8.8"] {
            assert_eq!(policy.literal_problem(fine), None, "{fine}");
        }
    }

    #[test]
    fn credentials_are_dropped_from_urls() {
        let url = reqwest::Url::parse("https://user:secret@example.com/a?b=c").unwrap();
        assert_eq!(
            without_credentials(url).as_str(),
            "https://example.com/a?b=c"
        );
    }

    #[tokio::test]
    async fn an_allowed_host_may_be_private_and_others_may_not() {
        let policy = HostPolicy::allowing(["127.0.0.1"]);
        assert!(policy.addresses("127.0.0.1", 80).await.is_ok());
        assert_eq!(
            policy.addresses("localhost", 80).await,
            Err(AddressError::Private("localhost".to_owned()))
        );
        assert_eq!(
            HostPolicy::default().addresses("10.0.0.7", 80).await,
            Err(AddressError::Private("10.0.0.7".to_owned()))
        );
    }
}
