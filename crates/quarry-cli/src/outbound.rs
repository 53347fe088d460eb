//! The outbound policy's settings from the environment: the private hosts requests made on a
//! user's behalf may reach (`QUARRY_OUTBOUND_ALLOW_HOSTS`), and how webhooks are delivered.

use std::time::Duration;

use quarry_core::ErrorCode;
use quarry_llm::outbound::HostPolicy;
use quarry_webhooks::WebhookConfig;

use crate::config::env;
use crate::failure::Failure;

/// The one outbound policy's allow-list, from `QUARRY_OUTBOUND_ALLOW_HOSTS` (and
/// `QUARRY_WEB_ALLOW_HOSTS`, its older name for pages).
pub fn outbound_policy() -> HostPolicy {
    HostPolicy::allowing(quarry_web::allowed_hosts(&env))
}

/// How this process delivers webhooks: `QUARRY_WEBHOOK_SECRET` signs the bodies,
/// `QUARRY_WEBHOOK_RETRY_BASE_SECS` and `QUARRY_WEBHOOK_RETRY_MAX_SECS` shape the backoff (30 s
/// doubled up to 3600 s by default), `QUARRY_WEBHOOK_TIMEOUT_SECS` bounds an attempt (10 s),
/// and [`outbound_policy`] names the private hosts receivers may be on.
pub fn webhook_config(owner: String, lease: Duration) -> Result<WebhookConfig, Failure> {
    let defaults = WebhookConfig::default();
    Ok(WebhookConfig {
        owner,
        lease,
        secret: env("QUARRY_WEBHOOK_SECRET"),
        retry_base: seconds("QUARRY_WEBHOOK_RETRY_BASE_SECS", defaults.retry_base)?,
        retry_max: seconds("QUARRY_WEBHOOK_RETRY_MAX_SECS", defaults.retry_max)?,
        timeout: seconds("QUARRY_WEBHOOK_TIMEOUT_SECS", defaults.timeout)?,
        hosts: outbound_policy(),
        ..defaults
    })
}

/// Environment variable `name` as a positive number of seconds, else `default`.
fn seconds(name: &str, default: Duration) -> Result<Duration, Failure> {
    let Some(raw) = env(name) else {
        return Ok(default);
    };
    raw.trim()
        .parse::<f64>()
        .ok()
        .filter(|secs| secs.is_finite() && *secs > 0.0 && *secs < 1e9)
        .map(Duration::from_secs_f64)
        .ok_or_else(|| {
            Failure::coded(
                ErrorCode::InvalidArguments,
                format!("{name}='{raw}' is not a number of seconds above 0"),
            )
        })
}
