//! Delivering field actions' webhooks: the `delivery` job kind of the leased queue
//! (`quarry_queue`). A delivery is queued in the transaction of its event (a result extracted,
//! approved or rejected); any `quarry serve` (with workers) or `quarry worker` POSTs it:
//!
//! - the body is the delivery's JSON (`event`, `delivery_id`, `project_id`, `entity_id`,
//!   `field`, `result`), with `X-Quarry-Event` and `X-Quarry-Delivery` headers;
//! - with a secret (`QUARRY_WEBHOOK_SECRET`), `X-Quarry-Signature: sha256=<hex>` is the
//!   HMAC-SHA256 of the exact body bytes under it — the receiver recomputes and compares;
//! - a 2xx answer ends it `done`; any other answer, or none within 10 s, releases it for a retry
//!   after an exponential backoff, until its attempts run out (`failed`); every outcome is kept
//!   (`GET /v1/deliveries`).

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use hmac::{KeyInit, Mac};
use quarry_core::model::{Delivery, JobKind, Lease, Release};
use quarry_core::store::{QueueStore, Store, StoreError};
use quarry_queue::{JobEnd, JobRunner, QueueConfig, QueueControl, backoff, recorded};
use tokio::task::JoinHandle;

/// How long a receiver may take to answer.
const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);

/// The signature of `body` under `secret`: `sha256=` and the HMAC-SHA256 in lower-case hex.
pub fn signature(secret: &[u8], body: &[u8]) -> String {
    let mut mac = hmac::Hmac::<sha2_hmac::Sha256>::new_from_slice(secret)
        .expect("HMAC takes a key of any length");
    mac.update(body);
    let digest = mac.finalize().into_bytes();
    let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("sha256={hex}")
}

/// How the delivery worker runs.
#[derive(Debug, Clone)]
pub struct WebhookConfig {
    pub owner: String,
    /// Deliveries in flight at once.
    pub concurrency: usize,
    pub lease: Duration,
    /// The signing secret (`None`: bodies go unsigned).
    pub secret: Option<String>,
    /// The first retry's delay; doubled per attempt, at most a minute.
    pub retry_base: Duration,
}

impl Default for WebhookConfig {
    fn default() -> Self {
        WebhookConfig {
            owner: "quarry".to_owned(),
            concurrency: 4,
            lease: Duration::from_secs(30),
            secret: None,
            retry_base: Duration::from_secs(1),
        }
    }
}

struct Deliveries {
    store: Arc<dyn Store>,
    client: reqwest::Client,
    config: WebhookConfig,
}

impl JobRunner for Deliveries {
    type Job = Delivery;

    fn kind(&self) -> JobKind {
        JobKind::Delivery
    }

    fn store(&self) -> &dyn QueueStore {
        self.store.as_ref()
    }

    fn lease_of(&self, delivery: &Delivery) -> Option<Lease> {
        delivery.lease()
    }

    fn claim<'a>(
        &'a self,
        owner: &'a str,
        lease: Duration,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<Delivery>, StoreError>> {
        self.store.claim_deliveries(owner, lease, limit)
    }

    fn run(&self, delivery: Delivery) -> BoxFuture<'_, JobEnd> {
        Box::pin(self.deliver(delivery))
    }
}

impl Deliveries {
    async fn deliver(&self, delivery: Delivery) -> JobEnd {
        let Some(lease) = delivery.lease() else {
            return JobEnd::NotRecorded;
        };
        let body = serde_json::to_vec(&delivery.body).unwrap_or_default();
        let mut request = self
            .client
            .post(&delivery.url)
            .timeout(DELIVERY_TIMEOUT)
            .header("content-type", "application/json")
            .header("x-quarry-event", delivery.event.as_str())
            .header("x-quarry-delivery", &delivery.id);
        if let Some(secret) = &self.config.secret {
            request = request.header("x-quarry-signature", signature(secret.as_bytes(), &body));
        }
        let (status, error) = match request.body(body).send().await {
            Ok(answer) if answer.status().is_success() => {
                let status = Some(i64::from(answer.status().as_u16()));
                return recorded(
                    JobKind::Delivery,
                    self.store
                        .finish_delivery(&delivery.project_id, &lease, true, status, None)
                        .await,
                    JobEnd::Completed,
                );
            }
            Ok(answer) => (
                Some(i64::from(answer.status().as_u16())),
                format!("the receiver answered HTTP {}", answer.status().as_u16()),
            ),
            Err(error) => (None, format!("no answer: {error}")),
        };
        if delivery.attempts < delivery.max_attempts {
            let release = Release {
                error,
                retry_after: backoff(self.config.retry_base, delivery.attempts),
                tokens_used: 0,
                duration_ms: 0,
            };
            return match self
                .store
                .release_job(&delivery.project_id, &lease, &release)
                .await
            {
                Ok(()) => JobEnd::Released {
                    retry_after: release.retry_after,
                },
                Err(error) => recorded::<()>(JobKind::Delivery, Err(error), JobEnd::NotRecorded),
            };
        }
        let reason = format!("{error} (gave up after {} attempts)", delivery.attempts);
        recorded(
            JobKind::Delivery,
            self.store
                .finish_delivery(&delivery.project_id, &lease, false, status, Some(&reason))
                .await,
            JobEnd::Failed,
        )
    }
}

/// A running delivery worker; dropping it stops the worker after its deliveries in flight.
pub struct WebhookWorker {
    control: Arc<QueueControl>,
    task: Option<JoinHandle<()>>,
}

impl WebhookWorker {
    /// Spawns the worker on the current tokio runtime.
    pub fn start(store: Arc<dyn Store>, config: WebhookConfig) -> WebhookWorker {
        quarry_llm::install_crypto_provider();
        let control = QueueControl::new();
        let queue = QueueConfig {
            owner: config.owner.clone(),
            concurrency: config.concurrency.max(1),
            prefetch: 0,
            lease: config.lease,
            poll: Duration::from_millis(500),
        };
        let runner = Deliveries {
            store,
            client: reqwest::Client::new(),
            config,
        };
        let running = control.clone();
        let task = tokio::spawn(async move {
            if let Err(error) = quarry_queue::work(&runner, &queue, &running).await {
                tracing::warn!(%error, "the webhook worker stopped");
            }
            running.mark_stopped();
        });
        WebhookWorker {
            control,
            task: Some(task),
        }
    }

    /// Waits until no delivery is due or backing off (tests, shutdown).
    pub async fn wait_idle(&self) {
        self.control.wait_idle().await;
    }

    /// Stops claiming and waits for the deliveries in flight.
    pub async fn shutdown(mut self) {
        self.control.stop();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for WebhookWorker {
    fn drop(&mut self) {
        self.control.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_rfc_4231s_hmac_sha256() {
        // RFC 4231, test case 2.
        assert_eq!(
            signature(b"Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
