//! The HTTP clients of a transport, built on first use and per URL scheme.
//!
//! Building a client with TLS loads the system's certificate store (on Linux, every file of
//! `/etc/ssl/certs`: about 19 M instructions, most of a CLI call's start-up), which a model on a
//! plain `http://` URL (Ollama, vLLM, llama.cpp, a gateway on loopback) never uses. So an
//! `http://` URL goes through a client with no trust roots at all, and the certificate store is
//! read only when the first `https://` request is made. A plain-HTTP server that redirects to
//! `https://` is not followed into TLS (the redirect fails verification): point `--base-url` at
//! the `https://` URL instead.

use std::sync::OnceLock;
use std::time::Duration;

use crate::LlmError;

/// What every client of one transport shares.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ClientSettings {
    pub connect_timeout: Duration,
    pub read_timeout: Duration,
}

/// A plain-HTTP client and a TLS client, each built once, when first needed.
pub(crate) struct LazyClients {
    provider: String,
    settings: ClientSettings,
    plain: OnceLock<Result<reqwest::Client, String>>,
    tls: OnceLock<Result<reqwest::Client, String>>,
}

impl LazyClients {
    pub fn new(provider: String, settings: ClientSettings) -> LazyClients {
        LazyClients {
            provider,
            settings,
            plain: OnceLock::new(),
            tls: OnceLock::new(),
        }
    }

    /// The client for `url`: without trust roots for `http://`, with the system's for anything
    /// else.
    pub fn for_url(&self, url: &str) -> Result<&reqwest::Client, LlmError> {
        let plain = url
            .get(..7)
            .is_some_and(|scheme| scheme.eq_ignore_ascii_case("http://"));
        let (cell, roots) = if plain {
            (&self.plain, Roots::None)
        } else {
            (&self.tls, Roots::System)
        };
        cell.get_or_init(|| self.build(roots))
            .as_ref()
            .map_err(|reason| LlmError::Misconfigured {
                provider: self.provider.clone(),
                reason: reason.clone(),
            })
    }

    fn build(&self, roots: Roots) -> Result<reqwest::Client, String> {
        install_crypto_provider();
        let builder = reqwest::Client::builder()
            .connect_timeout(self.settings.connect_timeout)
            .read_timeout(self.settings.read_timeout)
            .user_agent(concat!("quarry/", env!("CARGO_PKG_VERSION")));
        let builder = match roots {
            // No roots: no certificate is read, and no TLS connection can be verified.
            Roots::None => builder.tls_certs_only([]),
            Roots::System => builder,
        };
        builder.build().map_err(|error| {
            format!(
                "cannot build the HTTP client: {}",
                crate::error::error_chain(&error)
            )
        })
    }
}

/// reqwest is built without a default TLS crypto provider (to avoid building aws-lc); install
/// rustls' `ring` provider unless the program already chose one. Model clients do this when they
/// first connect; a program that builds its own reqwest client first calls it itself.
pub fn install_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Losing a race to another thread installing a provider is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

#[derive(Debug, Clone, Copy)]
enum Roots {
    None,
    System,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clients() -> LazyClients {
        LazyClients::new(
            "test".to_owned(),
            ClientSettings {
                connect_timeout: Duration::from_secs(1),
                read_timeout: Duration::from_secs(1),
            },
        )
    }

    #[test]
    fn a_plain_http_url_never_loads_the_certificate_store() {
        let clients = clients();
        clients
            .for_url("http://127.0.0.1:11434/v1")
            .expect("builds");
        clients.for_url("HTTP://localhost/v1").expect("builds");
        assert!(clients.plain.get().is_some());
        assert!(
            clients.tls.get().is_none(),
            "no TLS client for http:// URLs"
        );
    }

    #[test]
    fn an_https_url_gets_the_client_with_the_system_roots() {
        let clients = clients();
        clients
            .for_url("https://api.openai.com/v1")
            .expect("builds");
        assert!(clients.tls.get().is_some());
        assert!(clients.plain.get().is_none());
    }
}
