//! Delivering field actions' webhooks: the `delivery` job kind of the leased queue
//! (`quarry_queue`). A delivery is queued in the transaction of its event (a result extracted,
//! approved or rejected); any `quarry serve` (with workers) or `quarry worker` POSTs it:
//!
//! - the body is the delivery's JSON (`event`, `delivery_id`, `project_id`, `entity_id`,
//!   `field`, `result`), with `X-Quarry-Event` and `X-Quarry-Delivery` headers;
//! - with a secret (`QUARRY_WEBHOOK_SECRET`), `X-Quarry-Signature: sha256=<hex>` is the
//!   HMAC-SHA256 of the exact body bytes under it — the receiver recomputes and compares;
//! - the target obeys the one outbound policy (`quarry_llm::outbound`): a private or local
//!   address is refused unless its host is allowed by name, checked before the request and again
//!   when the name is resolved; redirects are not followed (a 3xx is an answer like a 500);
//! - a 2xx answer ends it `done`; any other answer, or none within the timeout, is a transient
//!   failure: the queue's one retry policy (`quarry_queue::settle`) releases it for a retry
//!   after an exponential backoff (30 s doubled up to an hour by default: hours of tries), until
//!   its attempts run out: then it is `dead` (dead-lettered), as is at once a delivery whose
//!   target is refused. `POST /v1/deliveries/{id}/redeliver` queues it again;
//! - one project holds at most its share of the worker's slots, so hanging receivers of one
//!   project cannot hold up another's deliveries;
//! - every outcome is kept (`GET /v1/deliveries`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::future::BoxFuture;
use hmac::{KeyInit, Mac};
use quarry_core::model::{Delivery, JobKind, Lease};
use quarry_core::store::{DeliveryStore, QueueStore, Store, StoreError};
use quarry_llm::outbound::{AddressError, HostPolicy, outbound_client, refusal};
use quarry_queue::{
    Attempts, Failure, JobRunner, Outcome, QueueConfig, QueueControl, RetryPolicy, Retryable,
};
use tokio::task::JoinHandle;

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
    /// Deliveries of one project in flight at once (at most `concurrency`).
    pub per_project: usize,
    pub lease: Duration,
    /// The signing secret (`None`: bodies go unsigned).
    pub secret: Option<String>,
    /// The first retry's delay; doubled per attempt, at most `retry_max`.
    pub retry_base: Duration,
    pub retry_max: Duration,
    /// How long a receiver may take to answer, connecting included.
    pub timeout: Duration,
    /// Private hosts receivers may be on (the outbound policy's allow-list).
    pub hosts: HostPolicy,
}

impl Default for WebhookConfig {
    fn default() -> Self {
        WebhookConfig {
            owner: "quarry".to_owned(),
            concurrency: 4,
            per_project: 2,
            lease: Duration::from_secs(30),
            secret: None,
            retry_base: Duration::from_secs(30),
            retry_max: Duration::from_secs(3600),
            timeout: Duration::from_secs(10),
            hosts: HostPolicy::default(),
        }
    }
}

/// The store roles the delivery worker uses: the queue and the deliveries.
pub trait DeliveryQueue: QueueStore + DeliveryStore {
    /// This store as the queue's role.
    fn queue(&self) -> &dyn QueueStore;
}

impl<S: QueueStore + DeliveryStore> DeliveryQueue for S {
    fn queue(&self) -> &dyn QueueStore {
        self
    }
}

/// The whole store, as the processes open it.
impl DeliveryQueue for dyn Store {
    fn queue(&self) -> &dyn QueueStore {
        self
    }
}

struct Deliveries<S: ?Sized> {
    store: Arc<S>,
    /// The outbound client, or why it could not be built (each attempt then says so).
    client: Result<reqwest::Client, String>,
    config: WebhookConfig,
    /// This worker's deliveries in flight, per project.
    in_flight: Arc<Mutex<HashMap<String, usize>>>,
}

/// One slot of a project's share, given back when the delivery ends (or its future is dropped).
struct Slot {
    in_flight: Arc<Mutex<HashMap<String, usize>>>,
    project: String,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut in_flight = self
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = in_flight.get_mut(&self.project) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                in_flight.remove(&self.project);
            }
        }
    }
}

/// A claimed delivery, holding its project's slot until it is dropped.
struct Claimed {
    delivery: Delivery,
    _slot: Slot,
}

impl<S: DeliveryQueue + ?Sized> JobRunner for Deliveries<S> {
    type Job = Claimed;
    type Retry = Self;

    fn kind(&self) -> JobKind {
        JobKind::Delivery
    }

    fn retryable(&self) -> &Self {
        self
    }

    fn lease_of(&self, claimed: &Claimed) -> Option<Lease> {
        claimed.delivery.lease()
    }

    /// One at a time, passing over the projects that hold their share of the slots.
    fn claim<'a>(
        &'a self,
        owner: &'a str,
        lease: Duration,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<Claimed>, StoreError>> {
        Box::pin(async move {
            let mut claimed = Vec::new();
            while claimed.len() < limit {
                let busy = self.busy_projects();
                let mut one = self.store.claim_deliveries(owner, lease, 1, &busy).await?;
                let Some(delivery) = one.pop() else { break };
                *self
                    .in_flight
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .entry(delivery.project_id.clone())
                    .or_default() += 1;
                let slot = Slot {
                    in_flight: self.in_flight.clone(),
                    project: delivery.project_id.clone(),
                };
                claimed.push(Claimed {
                    delivery,
                    _slot: slot,
                });
            }
            Ok(claimed)
        })
    }
}

impl<S: DeliveryQueue + ?Sized> Retryable for Deliveries<S> {
    type Job = Claimed;
    type Done = ();

    fn store(&self) -> &dyn QueueStore {
        self.store.queue()
    }

    fn attempts<'a>(&self, claimed: &'a Claimed) -> Attempts<'a> {
        Attempts {
            made: claimed.delivery.attempts,
            max: claimed.delivery.max_attempts,
            last_error: claimed.delivery.last_error.as_deref(),
        }
    }

    fn project<'a>(&self, claimed: &'a Claimed) -> &'a str {
        &claimed.delivery.project_id
    }

    fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy {
            base: self.config.retry_base,
            cap: self.config.retry_max,
        }
    }

    fn attempt<'a>(&'a self, claimed: &'a Claimed, lease: &'a Lease) -> BoxFuture<'a, Outcome<()>> {
        Box::pin(self.deliver(&claimed.delivery, lease))
    }

    /// Dead-letters the delivery with the failure's reason (and the status it got, if any).
    fn record_failure<'a>(
        &'a self,
        claimed: &'a Claimed,
        lease: &'a Lease,
        failure: &'a Failure,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let delivery = &claimed.delivery;
        Box::pin(async move {
            self.store
                .finish_delivery(
                    &delivery.project_id,
                    lease,
                    false,
                    failure.status,
                    Some(&failure.reason),
                )
                .await
                .map(drop)
        })
    }
}

/// Why an attempt did not deliver: worth retrying, or never (the target is refused).
enum Undelivered {
    Retry { status: Option<i64>, reason: String },
    Refused(String),
}

impl<S: DeliveryQueue + ?Sized> Deliveries<S> {
    fn busy_projects(&self) -> Vec<String> {
        let share = self
            .config
            .per_project
            .clamp(1, self.config.concurrency.max(1));
        self.in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|(_, count)| **count >= share)
            .map(|(project, _)| project.clone())
            .collect()
    }

    /// One attempt: POST it; a 2xx answer ends it `done` under the lease, anything else is a
    /// failure for the retry policy (a refused target is not retried).
    async fn deliver(&self, delivery: &Delivery, lease: &Lease) -> Outcome<()> {
        match self.post(delivery).await {
            Ok(status) => Outcome::Ended {
                written: self
                    .store
                    .finish_delivery(&delivery.project_id, lease, true, Some(status), None)
                    .await
                    .map(drop),
                failed: false,
            },
            Err(Undelivered::Refused(reason)) => {
                tracing::warn!(delivery = %delivery.id, url = %delivery.url, %reason, "webhook target refused");
                Outcome::Failed(Failure::new(reason))
            }
            Err(Undelivered::Retry { status, reason }) => {
                tracing::warn!(
                    delivery = %delivery.id,
                    url = %delivery.url,
                    attempt = delivery.attempts,
                    %reason,
                    "webhook not delivered"
                );
                Outcome::Transient(Failure {
                    status,
                    ..Failure::new(reason)
                })
            }
        }
    }

    /// POSTs the delivery; its 2xx status, or why not.
    async fn post(&self, delivery: &Delivery) -> Result<i64, Undelivered> {
        let url = checked_target(&self.config.hosts, &delivery.url).await?;
        let client = self.client.as_ref().map_err(|reason| Undelivered::Retry {
            status: None,
            reason: reason.clone(),
        })?;
        let body = serde_json::to_vec(&delivery.body).unwrap_or_default();
        let mut request = client
            .post(url)
            .timeout(self.config.timeout)
            .header("content-type", "application/json")
            .header("x-quarry-event", delivery.event.as_str())
            .header("x-quarry-delivery", &delivery.id);
        if let Some(secret) = &self.config.secret {
            request = request.header("x-quarry-signature", signature(secret.as_bytes(), &body));
        }
        let answer = request
            .body(body)
            .send()
            .await
            .map_err(|error| self.unanswered(&error))?;
        let status = answer.status();
        if status.is_success() {
            return Ok(i64::from(status.as_u16()));
        }
        let reason = if status.is_redirection() {
            format!(
                "the receiver answered HTTP {} (a redirect; webhooks do not follow redirects: \
                 give the final URL)",
                status.as_u16()
            )
        } else {
            format!("the receiver answered HTTP {}", status.as_u16())
        };
        Err(Undelivered::Retry {
            status: Some(i64::from(status.as_u16())),
            reason,
        })
    }

    /// What a request that got no answer says, in words: refused by the policy, timed out,
    /// could not connect, or the error's own chain.
    fn unanswered(&self, error: &reqwest::Error) -> Undelivered {
        if let Some(refused) = refusal(error) {
            return refused_target(refused);
        }
        let chain = quarry_llm::transport::error_chain(error);
        let reason = if error.is_timeout() {
            format!(
                "no answer within {} s (timed out): {chain}",
                self.config.timeout.as_secs_f64()
            )
        } else if error.is_connect() {
            format!("cannot connect to the receiver: {chain}")
        } else {
            format!("no answer: {chain}")
        };
        Undelivered::Retry {
            status: None,
            reason,
        }
    }
}

/// `url` if the outbound policy lets a delivery go there: http(s), and a host whose addresses
/// are public or allowed. A name that cannot be resolved now may resolve later (a retry).
async fn checked_target(hosts: &HostPolicy, url: &str) -> Result<reqwest::Url, Undelivered> {
    let parsed = reqwest::Url::parse(url.trim())
        .ok()
        .filter(|parsed| matches!(parsed.scheme(), "http" | "https"))
        .ok_or_else(|| Undelivered::Refused(format!("'{url}' is not an http(s) URL")))?;
    match hosts.check_url(&parsed).await {
        Ok(_) => Ok(parsed),
        Err(unresolved @ AddressError::Resolve { .. }) => Err(Undelivered::Retry {
            status: None,
            reason: unresolved.to_string(),
        }),
        Err(refused) => Err(refused_target(refused)),
    }
}

fn refused_target(refused: AddressError) -> Undelivered {
    Undelivered::Refused(format!("refused: {refused}"))
}

/// A running delivery worker; dropping it stops the worker after its deliveries in flight.
pub struct WebhookWorker {
    control: Arc<QueueControl>,
    task: Option<JoinHandle<()>>,
}

impl WebhookWorker {
    /// Spawns the worker on the current tokio runtime.
    pub fn start<S: DeliveryQueue + ?Sized + 'static>(
        store: Arc<S>,
        config: WebhookConfig,
    ) -> WebhookWorker {
        quarry_llm::install_crypto_provider();
        let control = QueueControl::new();
        let queue = QueueConfig {
            owner: config.owner.clone(),
            concurrency: config.concurrency.max(1),
            prefetch: 0,
            lease: config.lease,
            poll: Duration::from_millis(500),
        };
        // The per-attempt timeout bounds connecting too; the request's own timeout is set per
        // attempt (`post`).
        let client = outbound_client(&config.hosts, config.timeout)
            .build()
            .map_err(|error| {
                format!(
                    "the webhook client could not be built: {}",
                    quarry_llm::transport::error_chain(&error)
                )
            });
        let runner = Deliveries {
            store,
            client,
            config,
            in_flight: Arc::default(),
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
