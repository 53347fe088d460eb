//! Durable work: a workflow run's fields as tasks on a leased queue, and the rules that move
//! them (`settle`). Plain data and pure functions; the store applies them inside its
//! transactions, so every process that looks at a run agrees on its state.
//!
//! A task is claimed with a lease: an owner (process id, host, start time) and an expiry that the
//! owner's heartbeat pushes forward. Only an expired lease is taken over; the owner and the
//! attempt number together are the fencing token, so a worker whose lease was taken over cannot
//! write a second result.

use serde::{Deserialize, Serialize};

use super::queue::{JobKind, Lease};
use super::records::RunStatus;

/// A field task's state (the workflow node state of the field-extraction reference).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum NodeState {
    /// Waits for fields of the same run it depends on.
    Pending,
    /// Ready; a worker may claim it (once `available_at` has passed).
    Queued,
    /// Claimed by a worker under a lease.
    Running,
    /// Waits for a person: a `human_input` field without an answer, or a `requires_approval`
    /// value not yet approved.
    WaitingHuman,
    Done,
    Failed,
    /// A field it depends on failed or is blocked, or has no value.
    Blocked,
    /// Locked (`metadata.locked_fields`): never extracted.
    Skipped,
}

impl NodeState {
    pub const ALL: [NodeState; 8] = [
        NodeState::Pending,
        NodeState::Queued,
        NodeState::Running,
        NodeState::WaitingHuman,
        NodeState::Done,
        NodeState::Failed,
        NodeState::Blocked,
        NodeState::Skipped,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            NodeState::Pending => "pending",
            NodeState::Queued => "queued",
            NodeState::Running => "running",
            NodeState::WaitingHuman => "waiting_human",
            NodeState::Done => "done",
            NodeState::Failed => "failed",
            NodeState::Blocked => "blocked",
            NodeState::Skipped => "skipped",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        NodeState::ALL.into_iter().find(|s| s.as_str() == raw)
    }

    /// Nothing will happen to the task unless someone retries it.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            NodeState::Done | NodeState::Failed | NodeState::Blocked | NodeState::Skipped
        )
    }
}

/// One field of one run on the durable queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct FieldTask {
    pub id: String,
    pub project_id: String,
    pub run_id: String,
    /// The run that started it all: the run itself, or for a cascade's run the run whose field
    /// created the entity (a CLI `quarry run` waits for everything under its root).
    pub root_run_id: String,
    pub entity_id: String,
    pub field_name: String,
    pub state: NodeState,
    /// Fields of the same run this task waits for.
    pub depends_on: Vec<String>,
    /// `human_input` or `requires_approval`: done only when a person answers or approves.
    pub gated: bool,
    /// Claims so far (each claim is one attempt).
    pub attempts: i64,
    pub max_attempts: i64,
    pub last_error: Option<String>,
    /// The reviewer's feedback sentence of a feedback rerun.
    pub feedback: Option<String>,
    /// The trigger's instructions for this field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Cascade depth of the run (0 for runs started by a person or an agent).
    pub depth: i64,
    pub triggered_by: String,
    pub lease_owner: Option<String>,
    pub lease_expires_at: Option<String>,
    /// A queued task is not claimed before this time (retry backoff).
    pub available_at: String,
    /// The winning result, once recorded.
    pub result_id: Option<String>,
    pub tokens_used: i64,
    pub duration_ms: i64,
    pub created_at: String,
    pub updated_at: String,
    /// Every attempt as it ended, oldest first.
    pub attempt_log: Vec<AttemptRecord>,
}

/// One attempt at a task, as it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct AttemptRecord {
    pub attempt: i64,
    /// The lease holder of the attempt (`None` for an abandoned one: its claim was taken over).
    pub owner: Option<String>,
    /// `done`, `waiting_human`, `failed`, `retry` (a transient failure, queued again after a
    /// backoff), `abandoned` (its worker stopped; the lease expired and another worker took
    /// the task over), or `retried` (a marker: a retry started the task over, attempt 0).
    pub outcome: String,
    pub error: Option<String>,
    pub tokens_used: i64,
    pub duration_ms: i64,
    pub ended_at: Option<String>,
}

/// The outcome of the marker a retry adds to the log (attempts count from zero after it).
pub const RETRIED: &str = "retried";

impl AttemptRecord {
    /// The log after a person (or agent) asked to retry the task.
    pub fn retried(log: &[AttemptRecord], at: &str) -> Vec<AttemptRecord> {
        let mut log = log.to_vec();
        log.push(AttemptRecord {
            attempt: 0,
            owner: None,
            outcome: RETRIED.to_owned(),
            error: None,
            tokens_used: 0,
            duration_ms: 0,
            ended_at: Some(at.to_owned()),
        });
        log
    }

    /// The log after the attempt `held` ended with `outcome`: attempts missing before it (their
    /// workers died) are recorded as abandoned first.
    pub fn append(
        log: &[AttemptRecord],
        held: &Lease,
        outcome: &str,
        error: Option<&str>,
        tokens_used: i64,
        duration_ms: i64,
        ended_at: &str,
    ) -> Vec<AttemptRecord> {
        let mut log = log.to_vec();
        // Attempts count from zero again after a retry (its marker has attempt 0).
        let since_retry = log
            .iter()
            .rposition(|r| r.outcome == RETRIED)
            .map_or(0, |i| i + 1);
        let last = log[since_retry..]
            .iter()
            .map(|r| r.attempt)
            .max()
            .unwrap_or(0);
        for attempt in last + 1..held.attempt {
            log.push(AttemptRecord {
                attempt,
                owner: None,
                outcome: "abandoned".to_owned(),
                error: Some("its worker stopped before it ended; the lease expired".to_owned()),
                tokens_used: 0,
                duration_ms: 0,
                ended_at: None,
            });
        }
        log.push(AttemptRecord {
            attempt: held.attempt,
            owner: Some(held.owner.clone()),
            outcome: outcome.to_owned(),
            error: error.map(str::to_owned),
            tokens_used,
            duration_ms,
            ended_at: Some(ended_at.to_owned()),
        });
        log
    }
}

impl FieldTask {
    /// What [`settle`] and [`shown_state`] read of it.
    pub fn view(&self) -> TaskView<'_> {
        TaskView {
            field_name: &self.field_name,
            state: self.state,
            depends_on: &self.depends_on,
            last_error: self.last_error.as_deref(),
        }
    }

    /// The fencing token of the current claim.
    pub fn lease(&self) -> Option<Lease> {
        self.lease_owner.as_ref().map(|owner| Lease {
            kind: JobKind::FieldTask,
            job_id: self.id.clone(),
            owner: owner.clone(),
            attempt: self.attempts,
        })
    }
}

/// A task to create with its run.
#[derive(Debug, Clone, PartialEq)]
pub struct NewFieldTask {
    pub field_name: String,
    /// `Pending`, `Queued`, `WaitingHuman`, `Done` (an answered `human_input`), `Blocked` or
    /// `Skipped`; [`settle`] moves pending tasks on at once.
    pub state: NodeState,
    pub depends_on: Vec<String>,
    pub gated: bool,
    pub feedback: Option<String>,
    /// Why a task is created blocked.
    pub error: Option<String>,
    /// The trigger's instructions for this field ([`RunInstructions::for_field`]).
    ///
    /// [`RunInstructions::for_field`]: super::RunInstructions::for_field
    pub instructions: Option<String>,
}

/// A workflow run and its tasks, created in one transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct NewWorkflow {
    pub entity_id: String,
    pub scope: super::records::RunScope,
    pub triggered_by: String,
    pub fields_requested: Option<Vec<String>>,
    /// `None`: the run is its own root.
    pub root_run_id: Option<String>,
    pub depth: i64,
    pub max_attempts: i64,
    pub tasks: Vec<NewFieldTask>,
    /// The trigger's instructions, recorded on the run (each task carries its field's share).
    pub instructions: Option<super::RunInstructions>,
}

/// How a claimed task ended.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskEnd {
    /// A value was recorded (`result_id`: the winner among the recorded results). A gated field
    /// goes to `waiting_human` until approved; others are done.
    Extracted { winner: usize },
    /// No value, permanently (every agent failed, or consensus failed; losing values may still
    /// be recorded as superseded).
    Failed { reason: String },
}

/// What a worker writes when a claimed task ends: in one transaction, fenced by the lease.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskCompletion {
    pub end: TaskEnd,
    /// Results to record (superseding earlier ones of the field).
    pub results: Vec<super::records::NewResult>,
    pub tokens_used: i64,
    pub duration_ms: i64,
    /// The winner's cascade: entities to find or create and link, in the same transaction.
    pub cascade: Option<CascadeWrite>,
    /// The field's `extracted` webhooks, queued with the winner in the same transaction.
    pub deliveries: Vec<super::PlannedDelivery>,
    /// The runs the field's `extracted` actions start (`run_field`), created in the same
    /// transaction.
    pub runs: Vec<NewWorkflow>,
}

impl TaskCompletion {
    /// The task ends without a value, for `reason`.
    pub fn failed(reason: impl Into<String>, tokens_used: i64, duration_ms: i64) -> TaskCompletion {
        TaskCompletion {
            end: TaskEnd::Failed {
                reason: reason.into(),
            },
            results: Vec::new(),
            tokens_used,
            duration_ms,
            cascade: None,
            deliveries: Vec::new(),
            runs: Vec::new(),
        }
    }
}

/// A connection field's cascade, written by [`TaskCompletion`] behind the lease fence: each item
/// is linked to the parent by a relation labelled with the field's name, and created first when
/// no entity of the target type has its title (case-insensitive). Created entities are unique per
/// (project, type, lower-cased title), so two processes cascading the same item create it once.
#[derive(Debug, Clone, PartialEq)]
pub struct CascadeWrite {
    pub parent_id: String,
    /// The target entity type.
    pub entity_type: String,
    /// The relation label (the field's name).
    pub label: String,
    pub items: Vec<CascadeEntity>,
    /// With `auto_extract`: the run to queue for each entity the cascade creates (its
    /// `entity_id` is set to the created entity's).
    pub follow_up: Option<NewWorkflow>,
}

/// One entity a cascade names.
#[derive(Debug, Clone, PartialEq)]
pub struct CascadeEntity {
    pub title: String,
    /// Stored on the entity when the cascade creates it.
    pub metadata: serde_json::Map<String, serde_json::Value>,
}

/// The view of a task [`settle`] needs.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskView<'a> {
    pub field_name: &'a str,
    pub state: NodeState,
    pub depends_on: &'a [String],
    pub last_error: Option<&'a str>,
}

/// A change [`settle`] asks for: task at `index` to `state`, with `error` when it becomes
/// blocked.
#[derive(Debug, Clone, PartialEq)]
pub struct Transition {
    pub index: usize,
    pub state: NodeState,
    pub error: Option<String>,
}

/// What a run's tasks say about the run.
#[derive(Debug, Clone, PartialEq)]
pub struct Settled {
    pub transitions: Vec<Transition>,
    pub run_status: RunStatus,
    /// `field: reason` of every failed or blocked task, joined by `; ` (`None` when none).
    pub run_error: Option<String>,
}

/// Moves pending tasks whose dependencies are all done (or skipped) to `queued`, blocks those
/// with a failed or blocked dependency (transitively), and derives the run's status:
/// `running` while anything can still move without a person, `waiting_human` when only people can
/// move it, else `completed`, `partial` (some done, some failed or blocked) or `failed`.
pub fn settle(tasks: &[TaskView<'_>]) -> Settled {
    let mut states: Vec<NodeState> = tasks.iter().map(|t| t.state).collect();
    let mut errors: Vec<Option<String>> = tasks
        .iter()
        .map(|t| t.last_error.map(str::to_owned))
        .collect();
    let index_of = |name: &str| tasks.iter().position(|t| t.field_name == name);
    let mut transitions: Vec<Transition> = Vec::new();
    loop {
        let mut changed = false;
        for (i, task) in tasks.iter().enumerate() {
            if states[i] != NodeState::Pending {
                continue;
            }
            let deps: Vec<(&str, NodeState)> = task
                .depends_on
                .iter()
                .filter_map(|d| index_of(d).map(|j| (d.as_str(), states[j])))
                .collect();
            let broken: Vec<&str> = deps
                .iter()
                .filter(|(_, s)| matches!(s, NodeState::Failed | NodeState::Blocked))
                .map(|(name, _)| *name)
                .collect();
            let next = if !broken.is_empty() {
                Some((
                    NodeState::Blocked,
                    Some(format!("blocked by {}", broken.join(", "))),
                ))
            } else if deps
                .iter()
                .all(|(_, s)| matches!(s, NodeState::Done | NodeState::Skipped))
            {
                Some((NodeState::Queued, None))
            } else {
                None
            };
            if let Some((state, error)) = next {
                states[i] = state;
                errors[i] = error.clone();
                transitions.retain(|t| t.index != i);
                transitions.push(Transition {
                    index: i,
                    state,
                    error,
                });
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let moving = states
        .iter()
        .any(|s| matches!(s, NodeState::Queued | NodeState::Running))
        || (0..tasks.len()).any(|i| {
            states[i] == NodeState::Pending && !waits_for_person(i, tasks, &states, &index_of)
        });
    let waiting = states.contains(&NodeState::WaitingHuman);
    let failures: Vec<String> = tasks
        .iter()
        .enumerate()
        .filter(|(i, _)| matches!(states[*i], NodeState::Failed | NodeState::Blocked))
        .map(|(i, task)| match &errors[i] {
            Some(reason) => format!("{}: {reason}", task.field_name),
            None => task.field_name.to_owned(),
        })
        .collect();
    let done = states.contains(&NodeState::Done);
    let run_status = if moving {
        RunStatus::Running
    } else if waiting {
        RunStatus::WaitingHuman
    } else if failures.is_empty() {
        RunStatus::Completed
    } else if done {
        RunStatus::Partial
    } else {
        RunStatus::Failed
    };
    Settled {
        transitions,
        run_status,
        run_error: (!failures.is_empty()).then(|| failures.join("; ")),
    }
}

/// Whether pending task `i` can only move once a person acts: some dependency, directly or
/// through other pending tasks, waits for a person.
fn waits_for_person(
    i: usize,
    tasks: &[TaskView<'_>],
    states: &[NodeState],
    index_of: &dyn Fn(&str) -> Option<usize>,
) -> bool {
    let mut seen = vec![false; tasks.len()];
    let mut stack = vec![i];
    while let Some(k) = stack.pop() {
        if std::mem::replace(&mut seen[k], true) {
            continue;
        }
        for dep in tasks[k].depends_on {
            if let Some(j) = index_of(dep) {
                match states[j] {
                    NodeState::WaitingHuman => return true,
                    NodeState::Pending => stack.push(j),
                    _ => {}
                }
            }
        }
    }
    false
}

/// The state to show for task `i`: a pending task that only a person can unblock (a dependency,
/// directly or through other pending tasks, waits for a person) shows as `waiting_human`, as the
/// reference parks such dependents.
pub fn shown_state(tasks: &[TaskView<'_>], i: usize) -> NodeState {
    let states: Vec<NodeState> = tasks.iter().map(|t| t.state).collect();
    let index_of = |name: &str| tasks.iter().position(|t| t.field_name == name);
    if states[i] == NodeState::Pending && waits_for_person(i, tasks, &states, &index_of) {
        NodeState::WaitingHuman
    } else {
        states[i]
    }
}

/// The fields a parked (pending) task waits for, for display: its dependencies not yet done.
pub fn waiting_on(task: &TaskView<'_>, tasks: &[TaskView<'_>]) -> Vec<String> {
    task.depends_on
        .iter()
        .filter(|d| {
            tasks
                .iter()
                .find(|t| t.field_name == d.as_str())
                .is_some_and(|t| !matches!(t.state, NodeState::Done | NodeState::Skipped))
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view<'a>(name: &'a str, state: NodeState, deps: &'a [String]) -> TaskView<'a> {
        TaskView {
            field_name: name,
            state,
            depends_on: deps,
            last_error: None,
        }
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn dependents_are_queued_when_their_dependencies_are_done() {
        let on_a = names(&["a"]);
        let tasks = [
            view("a", NodeState::Done, &[]),
            view("b", NodeState::Pending, &on_a),
        ];
        let settled = settle(&tasks);
        assert_eq!(settled.transitions.len(), 1);
        assert_eq!(settled.transitions[0].state, NodeState::Queued);
        assert_eq!(settled.run_status, RunStatus::Running);
    }

    #[test]
    fn a_failure_blocks_dependents_transitively_and_the_run_is_partial() {
        let on_a = names(&["a"]);
        let on_b = names(&["b"]);
        let tasks = [
            view("a", NodeState::Failed, &[]),
            view("b", NodeState::Pending, &on_a),
            view("c", NodeState::Pending, &on_b),
            view("d", NodeState::Done, &[]),
        ];
        let settled = settle(&tasks);
        let blocked: Vec<usize> = settled
            .transitions
            .iter()
            .filter(|t| t.state == NodeState::Blocked)
            .map(|t| t.index)
            .collect();
        assert_eq!(blocked, vec![1, 2]);
        assert_eq!(settled.run_status, RunStatus::Partial);
        let error = settled.run_error.unwrap();
        assert!(error.contains("c: blocked by b"), "{error}");
    }

    #[test]
    fn a_gate_parks_dependents_and_the_run_waits_for_a_person() {
        let on_a = names(&["a"]);
        let on_b = names(&["b"]);
        let tasks = [
            view("a", NodeState::WaitingHuman, &[]),
            view("b", NodeState::Pending, &on_a),
            view("c", NodeState::Pending, &on_b),
        ];
        let settled = settle(&tasks);
        assert!(settled.transitions.is_empty());
        assert_eq!(settled.run_status, RunStatus::WaitingHuman);
        assert_eq!(waiting_on(&tasks[1], &tasks), vec!["a".to_owned()]);
    }

    #[test]
    fn a_running_task_keeps_the_run_running() {
        let on_a = names(&["a"]);
        let tasks = [
            view("a", NodeState::Running, &[]),
            view("b", NodeState::Pending, &on_a),
            view("c", NodeState::WaitingHuman, &[]),
        ];
        assert_eq!(settle(&tasks).run_status, RunStatus::Running);
    }

    #[test]
    fn all_failed_is_failed_and_all_done_is_completed() {
        let failed = [view("a", NodeState::Failed, &[])];
        assert_eq!(settle(&failed).run_status, RunStatus::Failed);
        let done = [
            view("a", NodeState::Done, &[]),
            view("b", NodeState::Skipped, &[]),
        ];
        let settled = settle(&done);
        assert_eq!(settled.run_status, RunStatus::Completed);
        assert_eq!(settled.run_error, None);
    }

    #[test]
    fn node_states_round_trip_through_their_names() {
        for state in NodeState::ALL {
            assert_eq!(NodeState::parse(state.as_str()), Some(state));
            let json = serde_json::to_value(state).unwrap();
            assert_eq!(json, serde_json::Value::String(state.as_str().to_owned()));
        }
    }
}
