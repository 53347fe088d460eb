//! The one leased queue every kind of background work goes through: a job is claimed under a
//! lease (an owner and an expiry), kept alive by a heartbeat, and ended — completed, or released
//! for a retry after a backoff — only while that exact lease still holds it (the fence). A job
//! whose lease expired (its worker died or stalled) is taken over by the next claim.
//!
//! Field tasks (a workflow run's fields) and episodes (conversation turns for the graph) are the
//! two kinds today; the store keeps each kind's jobs in its own table, under one set of
//! statements, and `quarry_queue` works every kind with one loop.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// A kind of work on the leased queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    /// One field of a workflow run ([`FieldTask`](super::FieldTask)).
    FieldTask,
    /// One conversation turn to extract into the graph ([`Episode`](super::Episode)).
    Episode,
    /// One webhook to deliver ([`Delivery`]).
    Delivery,
}

impl JobKind {
    /// Every kind, in a fixed order.
    pub const ALL: [JobKind; 3] = [JobKind::FieldTask, JobKind::Episode, JobKind::Delivery];

    /// The name used in logs, notifications and the store.
    pub fn as_str(self) -> &'static str {
        match self {
            JobKind::FieldTask => "field_task",
            JobKind::Episode => "episode",
            JobKind::Delivery => "delivery",
        }
    }

    /// What one job of the kind is called in messages.
    pub fn noun(self) -> &'static str {
        match self {
            JobKind::FieldTask => "task",
            JobKind::Episode => "episode",
            JobKind::Delivery => "delivery",
        }
    }

    /// The kind named `name` ([`as_str`](Self::as_str)).
    pub fn parse(name: &str) -> Option<JobKind> {
        JobKind::ALL.into_iter().find(|kind| kind.as_str() == name)
    }
}

/// Who holds a claimed job and which claim it is (the fencing token): a completion, a release
/// or a renewal is accepted only while the job is still running under exactly this owner and
/// attempt.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Lease {
    pub kind: JobKind,
    pub job_id: String,
    pub owner: String,
    pub attempt: i64,
}

/// A transient failure's end of an attempt: the job goes back to the queue, claimable after
/// `retry_after`, with `error` kept as its last error and what the attempt cost added to the
/// job's totals (where its kind keeps them).
#[derive(Debug, Clone, PartialEq)]
pub struct Release {
    pub error: String,
    pub retry_after: Duration,
    pub tokens_used: i64,
    pub duration_ms: i64,
}

/// A webhook a field's action planned, written with the event that fires it (in the same
/// transaction) and delivered by the queue's workers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedDelivery {
    pub event: super::ActionEvent,
    pub url: String,
}

/// A delivery's state: `queued` (waiting or backing off), `running` (held under a lease),
/// `done` (answered 2xx) or `dead` (dead-lettered: every attempt was refused or unanswered, or
/// its target is not allowed; `POST /v1/deliveries/{id}/redeliver` queues it again).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum DeliveryState {
    Queued,
    Running,
    Done,
    /// Rows written before dead-lettering had a name say `failed`.
    #[serde(alias = "failed")]
    Dead,
}

/// One webhook delivery and its log: the body is signed and POSTed to `url`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Delivery {
    pub id: String,
    pub project_id: String,
    pub event: super::ActionEvent,
    pub entity_id: String,
    pub field_name: String,
    pub result_id: String,
    pub url: String,
    /// What is POSTed: `{"event", "delivery_id", "project_id", "entity_id", "field", "result"}`.
    pub body: serde_json::Value,
    pub state: DeliveryState,
    pub attempts: i64,
    pub max_attempts: i64,
    pub last_error: Option<String>,
    /// The HTTP status of the last answer.
    pub response_status: Option<i64>,
    pub created_at: String,
    pub updated_at: String,
    #[serde(default)]
    pub lease_owner: Option<String>,
    #[serde(default)]
    pub lease_expires_at: Option<String>,
    #[serde(default)]
    pub available_at: Option<String>,
}

impl Delivery {
    /// The fencing token of the current claim.
    pub fn lease(&self) -> Option<Lease> {
        self.lease_owner.as_ref().map(|owner| Lease {
            kind: JobKind::Delivery,
            job_id: self.id.clone(),
            owner: owner.clone(),
            attempt: self.attempts,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_through_their_names() {
        for kind in JobKind::ALL {
            assert_eq!(JobKind::parse(kind.as_str()), Some(kind));
            assert_eq!(
                serde_json::to_value(kind).unwrap(),
                serde_json::Value::String(kind.as_str().to_owned())
            );
        }
        assert_eq!(JobKind::parse("fieldtask"), None);
    }
}
