//! Bounds on the CPU-bound extraction work behind `/skill/extract`, `/skill/check` and the MCP
//! tools: how much input may be in flight (a byte-weighted budget, the proxy for memory, since a
//! detector holds a multiple of its input), and how many extractions run at once (about one per
//! CPU).
//!
//! A request first asks for its input's bytes from the budget; if it cannot get them within a
//! short wait it is answered 503 `Overloaded` (with `Retry-After`). Admitted requests then queue
//! for a CPU slot. Work that has not started when its request ends (the client went away, the
//! request deadline passed) is dropped with the request; work that has started runs to its end on
//! a blocking thread (the detectors have no cancellation points; they are linear in their input,
//! so its end is bounded) and keeps its budget and slot until then, so abandoned work still
//! counts against the limits.

use std::sync::Arc;
use std::time::Duration;

use quarry_core::ErrorCode;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::ApiError;

/// The limits, as configured.
#[derive(Debug, Clone, Copy)]
pub struct WorkLimits {
    /// Extractions running at once.
    pub max_concurrent: usize,
    /// Bytes of input admitted (queued or running) at once across requests.
    pub budget_bytes: usize,
    /// How long a request may wait for its share of the budget before it is answered 503.
    pub budget_wait: Duration,
}

impl Default for WorkLimits {
    fn default() -> Self {
        WorkLimits {
            max_concurrent: std::thread::available_parallelism().map_or(2, |n| n.get()),
            budget_bytes: DEFAULT_BUDGET_BYTES,
            budget_wait: Duration::from_secs(1),
        }
    }
}

/// Default input budget: four requests at the default 16 MiB input limit.
pub const DEFAULT_BUDGET_BYTES: usize = 64 * 1024 * 1024;

/// The server's one limiter, shared by every endpoint that runs detectors.
pub struct WorkLimiter {
    limits: WorkLimits,
    budget: Arc<Semaphore>,
    slots: Arc<Semaphore>,
}

/// What the limiter holds now (`/metrics`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkUsage {
    /// Extractions that may run at once.
    pub slots: usize,
    /// Extractions running now (abandoned ones included until they end).
    pub slots_in_use: usize,
    /// Input bytes admitted now, queued or running.
    pub budget_bytes_in_use: usize,
}

/// A request's share of the budget; released when dropped (or, once work started, when the work
/// ends).
pub struct Admission {
    budget: OwnedSemaphorePermit,
    slots: Arc<Semaphore>,
}

impl WorkLimiter {
    pub fn new(limits: WorkLimits) -> WorkLimiter {
        // Permits are counted in u32 by `acquire_many`; a budget beyond 4 GiB is clamped.
        let budget_bytes = limits.budget_bytes.clamp(1, u32::MAX as usize);
        WorkLimiter {
            limits: WorkLimits {
                budget_bytes,
                ..limits
            },
            budget: Arc::new(Semaphore::new(budget_bytes)),
            slots: Arc::new(Semaphore::new(limits.max_concurrent.max(1))),
        }
    }

    /// Slots and budget in use now.
    pub fn usage(&self) -> WorkUsage {
        let slots = self.limits.max_concurrent.max(1);
        WorkUsage {
            slots,
            slots_in_use: slots.saturating_sub(self.slots.available_permits()),
            budget_bytes_in_use: self
                .limits
                .budget_bytes
                .saturating_sub(self.budget.available_permits()),
        }
    }

    /// Takes `input_bytes` from the budget, waiting at most the configured wait; a request
    /// larger than the whole budget takes all of it (so it runs alone rather than never).
    pub async fn admit(&self, input_bytes: usize) -> Result<Admission, ApiError> {
        let weight = input_bytes.clamp(1, self.limits.budget_bytes) as u32;
        let acquire = self.budget.clone().acquire_many_owned(weight);
        match tokio::time::timeout(self.limits.budget_wait, acquire).await {
            Ok(Ok(budget)) => Ok(Admission {
                budget,
                slots: self.slots.clone(),
            }),
            Ok(Err(_closed)) => Err(internal()),
            Err(_elapsed) => Err(ApiError::new(
                ErrorCode::Overloaded,
                format!(
                    "the server is extracting as much text as it allows at once ({} bytes in flight); retry shortly",
                    self.limits.budget_bytes
                ),
            )),
        }
    }
}

impl Admission {
    /// Waits for a CPU slot, then runs `work` on a blocking thread. Dropping the returned future
    /// before the slot is granted drops the work unstarted.
    pub async fn run<T, F>(self, work: F) -> Result<T, ApiError>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let slot = self
            .slots
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| internal())?;
        let budget = self.budget;
        tokio::task::spawn_blocking(move || {
            // Held until the work ends, even when its request has gone.
            let _held = (budget, slot);
            work()
        })
        .await
        .map_err(|_| internal())
    }
}

fn internal() -> ApiError {
    ApiError::new(
        ErrorCode::Internal,
        "the extraction task failed; please report this input",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limiter(budget_bytes: usize) -> WorkLimiter {
        WorkLimiter::new(WorkLimits {
            max_concurrent: 1,
            budget_bytes,
            budget_wait: Duration::from_millis(50),
        })
    }

    #[tokio::test]
    async fn a_request_over_the_remaining_budget_is_overloaded() {
        let limiter = limiter(100);
        let held = limiter.admit(80).await.expect("fits");
        let refused = limiter.admit(30).await.err().expect("over budget");
        assert_eq!(refused.code, ErrorCode::Overloaded);
        drop(held);
        assert!(
            limiter.admit(30).await.is_ok(),
            "released with the admission"
        );
    }

    #[tokio::test]
    async fn a_request_larger_than_the_budget_runs_alone() {
        let limiter = limiter(100);
        let whole = limiter.admit(1_000).await.expect("takes the whole budget");
        assert_eq!(limiter.usage().budget_bytes_in_use, 100);
        assert!(limiter.admit(1).await.is_err());
        assert_eq!(whole.run(|| 7).await.expect("runs"), 7);
        assert_eq!(limiter.usage().budget_bytes_in_use, 0);
        assert!(limiter.admit(100).await.is_ok());
    }

    #[tokio::test]
    async fn unstarted_work_is_dropped_with_its_request() {
        let limiter = limiter(100);
        let (release, blocked) = std::sync::mpsc::channel::<()>();
        let first = limiter.admit(1).await.unwrap();
        let running = tokio::spawn(first.run(move || blocked.recv().ok()));
        tokio::task::yield_now().await;
        let ran = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = ran.clone();
        let queued = limiter.admit(1).await.unwrap().run(move || {
            flag.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        // The queued request goes away while the only slot is busy.
        assert!(
            tokio::time::timeout(Duration::from_millis(50), queued)
                .await
                .is_err()
        );
        assert_eq!(
            limiter.usage().slots_in_use,
            1,
            "the running work holds the slot"
        );
        release.send(()).unwrap();
        running.await.unwrap().unwrap();
        assert_eq!(limiter.usage().slots_in_use, 0);
        assert!(!ran.load(std::sync::atomic::Ordering::SeqCst));
        assert!(limiter.admit(100).await.is_ok(), "its budget came back");
    }
}
