//! Which links the scan finds and how strict it is ([`LinkOptions`]).

/// Which links to find and how strict to be; [`Default`] is what `url::find` and `email::find` use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkOptions {
    pub urls: bool,
    pub emails: bool,
    /// `false` (default) also finds `example.org/x` and `www.example.org`, when the top-level
    /// domain is a known one.
    pub url_must_have_scheme: bool,
    /// Whether hosts may hold non-ASCII letters (`bürger.de`); default `true`.
    pub url_can_be_iri: bool,
    /// Whether `root@localhost` is rejected; default `true`.
    pub email_domain_must_have_dot: bool,
    /// Whether a bare IPv4 address (`4.4.4.4/x`) is a URL; default `false` because the `ip`
    /// detector reports bare addresses.
    pub fuzzy_ip: bool,
}

impl Default for LinkOptions {
    fn default() -> Self {
        LinkOptions {
            urls: true,
            emails: true,
            url_must_have_scheme: false,
            url_can_be_iri: true,
            email_domain_must_have_dot: true,
            fuzzy_ip: false,
        }
    }
}
