//! The one retry policy of every job kind. A runner attempts a job and says how it went
//! ([`Outcome`]); [`settle`] decides and writes the rest under the job's lease:
//!
//! - a claim past the job's attempt limit (a worker died on its last attempt) fails it without
//!   trying, naming the last error;
//! - a transient failure with attempts left releases the job for a retry after an exponential
//!   backoff ([`RetryPolicy`]);
//! - a transient failure on the last attempt, or a permanent one, is the job's failure record
//!   (the runner's [`Retryable::record_failure`], e.g. a failed task, a failed episode, a
//!   dead-lettered delivery);
//! - an end the runner wrote itself (a completion) counts as it was written.
//!
//! A write refused because the lease was taken over is `LeaseLost` (nothing written); a write
//! that failed otherwise is `NotRecorded` (the job is taken over once its lease expires).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::future::BoxFuture;
use quarry_core::model::{Lease, Release};
use quarry_core::store::{QueueStore, StoreError};

/// How an attempt at a job runs and ends, for the one retry policy ([`settle`]).
pub trait Retryable: Send + Sync {
    type Job: Send;

    /// What a completed attempt yields (the runner's own record of it).
    type Done: Send;

    /// The queue's store: releases, renewals and wake-ups (a [`QueueStore`] is all the loop
    /// needs).
    fn store(&self) -> &dyn QueueStore;

    /// The job's attempts (this claim included), its limit and the error before.
    fn attempts<'a>(&self, job: &'a Self::Job) -> Attempts<'a>;

    /// The project the job belongs to (its release is written there).
    fn project<'a>(&self, job: &'a Self::Job) -> &'a str;

    /// How a released job backs off.
    fn retry_policy(&self) -> RetryPolicy;

    /// One attempt at a claimed job: a completion is written by the runner under `lease`
    /// ([`Outcome::Ended`]); a failure is reported, and [`settle`] applies the retry policy.
    fn attempt<'a>(
        &'a self,
        job: &'a Self::Job,
        lease: &'a Lease,
    ) -> BoxFuture<'a, Outcome<Self::Done>>;

    /// Writes `failure` as the job's end under `lease` (the job failed for good).
    fn record_failure<'a>(
        &'a self,
        job: &'a Self::Job,
        lease: &'a Lease,
        failure: &'a Failure,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
}

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobEnd {
    /// Done and recorded.
    Completed,
    /// Failed for good and recorded.
    Failed,
    /// Failed transiently: back in the queue, claimable after `retry_after`.
    Released { retry_after: Duration },
    /// The lease was taken over before the end was written: nothing written.
    LeaseLost,
    /// Writing the end failed: the job stays held until its lease expires and a claim takes
    /// it over.
    NotRecorded,
}

/// How a released job backs off: `base · 2^(attempt-1)`, at most `cap`, ±20 % jitter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    pub base: Duration,
    pub cap: Duration,
}

impl RetryPolicy {
    /// The cap of jobs whose retries should come within minutes (field tasks, episodes).
    pub const MINUTE: Duration = Duration::from_secs(60);

    /// Backoff from `base`, at most a minute.
    pub fn from_base(base: Duration) -> RetryPolicy {
        RetryPolicy {
            base,
            cap: Self::MINUTE,
        }
    }

    /// The wait before the retry of a job whose attempt `attempt` (1-based) failed.
    pub fn delay(&self, attempt: i64) -> Duration {
        backoff_up_to(self.base, attempt, self.cap)
    }
}

/// `base · 2^(attempt-1)`, at most a minute, ±20 % jitter so retries of many jobs spread out.
pub fn backoff(base: Duration, attempt: i64) -> Duration {
    RetryPolicy::from_base(base).delay(attempt)
}

/// [`backoff`] at most `cap` (before the jitter): for jobs whose retries may span hours, such as
/// webhook deliveries to a receiver that is down.
pub fn backoff_up_to(base: Duration, attempt: i64, cap: Duration) -> Duration {
    let exponent = u32::try_from(attempt.saturating_sub(1).clamp(0, 24)).unwrap_or(24);
    let delay = base.saturating_mul(2_u32.saturating_pow(exponent)).min(cap);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    // A factor in [0.8, 1.2) from the clock's low bits: enough to spread, no generator needed.
    let factor = 0.8 + f64::from(nanos % 1000) / 2500.0;
    delay.mul_f64(factor)
}

/// Where a claimed job stands: its attempts (this claim included), its limit, and the error of
/// the attempt before.
#[derive(Debug, Clone, Copy)]
pub struct Attempts<'a> {
    pub made: i64,
    pub max: i64,
    pub last_error: Option<&'a str>,
}

/// A failed attempt: why, what it spent, and (deliveries) the status the receiver answered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Failure {
    pub reason: String,
    pub tokens_used: i64,
    pub duration_ms: i64,
    pub status: Option<i64>,
}

impl Failure {
    pub fn new(reason: impl Into<String>) -> Failure {
        Failure {
            reason: reason.into(),
            ..Failure::default()
        }
    }
}

/// How one attempt went, as its runner reports it.
#[derive(Debug)]
pub enum Outcome<T> {
    /// The runner wrote the job's end under its lease (`written`); `failed` when that end is a
    /// failure (a field task whose extraction failed, recorded with its result).
    Ended {
        written: Result<T, StoreError>,
        failed: bool,
    },
    /// Worth another attempt (a model or a receiver that did not answer, a busy store).
    Transient(Failure),
    /// Not worth another.
    Failed(Failure),
}

/// What the policy made of an attempt, and whether its write landed.
#[derive(Debug)]
pub enum Settled<T> {
    /// Ended by the runner's own write.
    Ended { value: T, failed: bool },
    /// Failed and recorded (`reason` names the attempts when they ran out).
    Failed { reason: String },
    /// Back in the queue, claimable after `retry_after`.
    Released {
        reason: String,
        retry_after: Duration,
    },
    /// The lease was taken over before the end was written: nothing written.
    LeaseLost(String),
    /// Writing the end failed: the job stays held until its lease expires.
    NotRecorded { reason: String, cause: StoreError },
}

impl<T> Settled<T> {
    /// How the loop counts it.
    pub fn end(&self) -> JobEnd {
        match self {
            Settled::Ended { failed: false, .. } => JobEnd::Completed,
            Settled::Ended { failed: true, .. } | Settled::Failed { .. } => JobEnd::Failed,
            Settled::Released { retry_after, .. } => JobEnd::Released {
                retry_after: *retry_after,
            },
            Settled::LeaseLost(_) => JobEnd::LeaseLost,
            Settled::NotRecorded { .. } => JobEnd::NotRecorded,
        }
    }
}

/// One attempt at `job`, claimed under `lease`, settled by the policy (see the module docs).
pub async fn settle<R: Retryable + ?Sized>(
    runner: &R,
    job: &R::Job,
    lease: &Lease,
) -> Settled<R::Done> {
    let attempts = runner.attempts(job);
    let max = attempts.max.max(1);
    if attempts.made > max {
        let last = attempts
            .last_error
            .unwrap_or("the workers holding it stopped before finishing");
        let reason = format!("gave up after {max} attempts (the last: {last})");
        return fail(runner, job, lease, Failure::new(reason)).await;
    }
    match runner.attempt(job, lease).await {
        Outcome::Ended { written, failed } => match written {
            Ok(value) => Settled::Ended { value, failed },
            Err(StoreError::LeaseLost(lost)) => Settled::LeaseLost(lost),
            Err(cause) => Settled::NotRecorded {
                reason: "recording the job's end failed".to_owned(),
                cause,
            },
        },
        Outcome::Transient(failure) if attempts.made < max => {
            let release = Release {
                error: failure.reason,
                retry_after: runner.retry_policy().delay(attempts.made),
                tokens_used: failure.tokens_used,
                duration_ms: failure.duration_ms,
            };
            match runner
                .store()
                .release_job(runner.project(job), lease, &release)
                .await
            {
                Ok(()) => Settled::Released {
                    reason: release.error,
                    retry_after: release.retry_after,
                },
                Err(StoreError::LeaseLost(lost)) => Settled::LeaseLost(lost),
                Err(cause) => Settled::NotRecorded {
                    reason: release.error,
                    cause,
                },
            }
        }
        Outcome::Transient(failure) => {
            let reason = format!(
                "{} (gave up after {} attempts)",
                failure.reason, attempts.made
            );
            fail(runner, job, lease, Failure { reason, ..failure }).await
        }
        Outcome::Failed(failure) => fail(runner, job, lease, failure).await,
    }
}

/// Records `failure` as the job's end.
async fn fail<R: Retryable + ?Sized>(
    runner: &R,
    job: &R::Job,
    lease: &Lease,
    failure: Failure,
) -> Settled<R::Done> {
    match runner.record_failure(job, lease, &failure).await {
        Ok(()) => Settled::Failed {
            reason: failure.reason,
        },
        Err(StoreError::LeaseLost(lost)) => Settled::LeaseLost(lost),
        Err(cause) => Settled::NotRecorded {
            reason: failure.reason,
            cause,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_is_capped_and_jittered() {
        let base = Duration::from_secs(1);
        for attempt in 1..=10_i64 {
            let nominal = Duration::from_secs(1 << (attempt - 1)).min(Duration::from_secs(60));
            let delay = backoff(base, attempt);
            assert!(delay >= nominal.mul_f64(0.8), "{attempt}: {delay:?}");
            assert!(delay < nominal.mul_f64(1.2), "{attempt}: {delay:?}");
        }
        assert_eq!(backoff(Duration::ZERO, 3), Duration::ZERO);
    }

    #[test]
    fn backoff_up_to_an_hour_spans_hours() {
        let (base, hour) = (Duration::from_secs(30), Duration::from_secs(3600));
        let nominal = |attempt: i64| Duration::from_secs(30 << (attempt - 1)).min(hour);
        let total: Duration = (1..=14).map(nominal).sum();
        assert!(total > Duration::from_secs(8 * 3600), "{total:?}");
        for attempt in [1, 7, 8, 20, 40] {
            let delay = backoff_up_to(base, attempt, hour);
            let nominal = nominal(attempt.min(20));
            assert!(delay >= nominal.mul_f64(0.8), "{attempt}: {delay:?}");
            assert!(delay < nominal.mul_f64(1.2), "{attempt}: {delay:?}");
        }
    }
}
