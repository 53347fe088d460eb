//! Workflow tasks on the leased queue: claims, heartbeats, fencing, backoff, settling, retry.
//! Part of the conformance suite (both backends).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use quarry_core::model::{
    CascadeEntity, CascadeWrite, Confidence, JobKind, NewFieldTask, NewWorkflow, NodeState,
    Release, ReviewDecision, RunScope, RunStatus, TaskCompletion, TaskEnd,
};
use quarry_core::store::{Store, StoreError};
use serde_json::json;

use super::{candidate, new_entity};

const SHORT: Duration = Duration::from_millis(150);
const LONG: Duration = Duration::from_secs(60);

pub(super) fn task(name: &str, state: NodeState, depends_on: &[&str], gated: bool) -> NewFieldTask {
    NewFieldTask {
        field_name: name.to_owned(),
        state,
        depends_on: depends_on.iter().map(|d| (*d).to_owned()).collect(),
        gated,
        feedback: None,
        error: None,
        instructions: None,
    }
}

pub(super) fn workflow(entity_id: &str, tasks: Vec<NewFieldTask>) -> NewWorkflow {
    NewWorkflow {
        entity_id: entity_id.to_owned(),
        scope: RunScope::Full,
        triggered_by: "test".to_owned(),
        fields_requested: None,
        root_run_id: None,
        depth: 0,
        max_attempts: 3,
        instructions: None,
        tasks,
    }
}

fn extracted(entity_id: &str, field: &str, value: serde_json::Value) -> TaskCompletion {
    TaskCompletion {
        end: TaskEnd::Extracted { winner: 0 },
        results: vec![candidate(entity_id, field, value, Confidence::High)],
        tokens_used: 10,
        duration_ms: 5,
        cascade: None,
        deliveries: Vec::new(),
        runs: Vec::new(),
    }
}

fn failed(reason: &str) -> TaskCompletion {
    TaskCompletion {
        end: TaskEnd::Failed {
            reason: reason.to_owned(),
        },
        results: Vec::new(),
        tokens_used: 0,
        duration_ms: 1,
        cascade: None,
        deliveries: Vec::new(),
        runs: Vec::new(),
    }
}

fn names(tasks: &[quarry_core::model::FieldTask]) -> Vec<&str> {
    let mut names: Vec<&str> = tasks.iter().map(|t| t.field_name.as_str()).collect();
    names.sort_unstable();
    names
}

pub async fn tasks_move_through_dependencies_gates_and_retries(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let entity = store
        .create_entity(&p, &new_entity("company", "A"))
        .await
        .unwrap();
    let (run, tasks) = store
        .create_workflow(
            &p,
            &workflow(
                &entity.id,
                vec![
                    task("a", NodeState::Queued, &[], false),
                    task("b", NodeState::Pending, &["a"], false),
                    task("c", NodeState::Queued, &[], true),
                    task("d", NodeState::Pending, &["c"], false),
                ],
            ),
        )
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Running);
    assert_eq!(tasks.len(), 4);

    let claimed = store.claim_tasks("w1", LONG, 10, None).await.unwrap();
    assert_eq!(names(&claimed), ["a", "c"], "dependents wait");
    assert!(claimed.iter().all(|t| t.attempts == 1));
    let a = claimed.iter().find(|t| t.field_name == "a").unwrap();
    let c = claimed.iter().find(|t| t.field_name == "c").unwrap();
    store
        .complete_task(
            &p,
            &a.lease().unwrap(),
            &extracted(&entity.id, "a", json!(1)),
        )
        .await
        .unwrap();
    let done_c = store
        .complete_task(
            &p,
            &c.lease().unwrap(),
            &extracted(&entity.id, "c", json!(2)),
        )
        .await
        .unwrap();
    assert_eq!(done_c.state, NodeState::WaitingHuman, "a gated value waits");

    let b = store.claim_tasks("w1", LONG, 10, None).await.unwrap();
    assert_eq!(names(&b), ["b"], "a's dependent is queued when a is done");
    store
        .complete_task(&p, &b[0].lease().unwrap(), &failed("model said no"))
        .await
        .unwrap();
    let run_now = store.get_run(&p, &run.id).await.unwrap().unwrap();
    assert_eq!(run_now.status, RunStatus::WaitingHuman);

    // Approving c lets d move on, in the review's transaction.
    let reviewed = store
        .review_result(
            &p,
            done_c.result_id.as_ref().unwrap(),
            &ReviewDecision::Approve,
            "rev",
            None,
        )
        .await
        .unwrap();
    assert_eq!(reviewed.resumed, vec![run.id.clone()]);
    let d = store.claim_tasks("w1", LONG, 10, None).await.unwrap();
    assert_eq!(names(&d), ["d"]);
    store
        .complete_task(
            &p,
            &d[0].lease().unwrap(),
            &extracted(&entity.id, "d", json!(4)),
        )
        .await
        .unwrap();
    let run_now = store.get_run(&p, &run.id).await.unwrap().unwrap();
    assert_eq!(run_now.status, RunStatus::Partial);
    assert!(
        run_now
            .error
            .as_deref()
            .unwrap()
            .contains("b: model said no")
    );
    assert!(run_now.finished_at.is_some());

    // Retry: only the failed field starts over; the run is running again, then completes.
    let retried = store.retry_tasks(&p, &entity.id, None).await.unwrap();
    assert_eq!(names(&retried), ["b"]);
    assert_eq!(retried[0].state, NodeState::Queued);
    assert_eq!(retried[0].attempts, 0);
    let run_now = store.get_run(&p, &run.id).await.unwrap().unwrap();
    assert_eq!(run_now.status, RunStatus::Running);
    assert_eq!(run_now.finished_at, None);
    let b = store.claim_tasks("w2", LONG, 10, None).await.unwrap();
    let outcomes: Vec<&str> = b[0]
        .attempt_log
        .iter()
        .map(|r| r.outcome.as_str())
        .collect();
    assert_eq!(
        outcomes,
        ["failed", "retried"],
        "the retry is on the record"
    );
    store
        .complete_task(
            &p,
            &b[0].lease().unwrap(),
            &extracted(&entity.id, "b", json!(3)),
        )
        .await
        .unwrap();
    let run_now = store.get_run(&p, &run.id).await.unwrap().unwrap();
    assert_eq!(run_now.status, RunStatus::Completed);
    assert_eq!(run_now.error, None);
    assert!(
        store
            .retry_tasks(&p, &entity.id, None)
            .await
            .unwrap()
            .is_empty(),
        "nothing failed any more"
    );
    let results = store.latest_results(&p, &entity.id).await.unwrap();
    assert_eq!(results.len(), 4, "one current result per field");
}

pub async fn expired_task_leases_are_taken_over_and_the_late_finisher_is_refused(
    store: Arc<dyn Store>,
) {
    let p = store.ensure_project("p").await.unwrap();
    let entity = store
        .create_entity(&p, &new_entity("company", "A"))
        .await
        .unwrap();
    store
        .create_workflow(
            &p,
            &workflow(&entity.id, vec![task("a", NodeState::Queued, &[], false)]),
        )
        .await
        .unwrap();
    let first = store.claim_tasks("dead", SHORT, 10, None).await.unwrap();
    assert_eq!(first.len(), 1);
    assert!(
        store
            .claim_tasks("alive", LONG, 10, None)
            .await
            .unwrap()
            .is_empty(),
        "a live lease is never taken"
    );
    tokio::time::sleep(SHORT * 2).await;
    let second = store.claim_tasks("alive", LONG, 10, None).await.unwrap();
    assert_eq!(second.len(), 1, "an expired lease is taken over");
    assert_eq!(second[0].attempts, 2);
    assert_eq!(second[0].lease_owner.as_deref(), Some("alive"));

    let late = store
        .complete_task(
            &p,
            &first[0].lease().unwrap(),
            &extracted(&entity.id, "a", json!("late")),
        )
        .await;
    assert!(matches!(late, Err(StoreError::LeaseLost(_))), "{late:?}");
    assert!(
        store
            .latest_results(&p, &entity.id)
            .await
            .unwrap()
            .is_empty(),
        "the refused completion wrote nothing"
    );
    assert!(
        !store
            .renew_lease(&first[0].lease().unwrap(), LONG)
            .await
            .unwrap(),
        "the old owner's heartbeat fails"
    );
    assert!(
        store
            .renew_lease(&second[0].lease().unwrap(), LONG)
            .await
            .unwrap()
    );
    store
        .complete_task(
            &p,
            &second[0].lease().unwrap(),
            &extracted(&entity.id, "a", json!("ok")),
        )
        .await
        .unwrap();
    let again = store
        .complete_task(
            &p,
            &second[0].lease().unwrap(),
            &extracted(&entity.id, "a", json!("twice")),
        )
        .await;
    assert!(
        matches!(again, Err(StoreError::LeaseLost(_))),
        "completion is written once"
    );
    let history = store.field_history(&p, &entity.id, "a").await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].value, json!("ok"));
    // Each attempt is recorded: the first abandoned by its dead worker, the second done.
    let task = store.get_task(&p, &second[0].id).await.unwrap().unwrap();
    let log: Vec<(i64, &str, Option<&str>)> = task
        .attempt_log
        .iter()
        .map(|r| (r.attempt, r.outcome.as_str(), r.owner.as_deref()))
        .collect();
    assert_eq!(log, [(1, "abandoned", None), (2, "done", Some("alive"))]);
}

fn cascade(parent: &str, titles: &[&str], follow_up: Option<NewWorkflow>) -> CascadeWrite {
    CascadeWrite {
        parent_id: parent.to_owned(),
        entity_type: "subsidiary".to_owned(),
        label: "subsidiaries".to_owned(),
        items: titles
            .iter()
            .map(|title| CascadeEntity {
                title: (*title).to_owned(),
                metadata: serde_json::Map::new(),
            })
            .collect(),
        follow_up,
    }
}

/// A cascade is written with its task's completion or not at all: a late finisher whose lease
/// was taken over creates no entity, links nothing and queues no run, and the finisher that
/// holds the lease creates each entity once (two parents naming the same subsidiary share it),
/// with one mention per relation and one follow-up run per created entity.
pub async fn cascades_commit_behind_the_lease_fence(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let parents = [
        store
            .create_entity(&p, &new_entity("company", "A"))
            .await
            .unwrap(),
        store
            .create_entity(&p, &new_entity("company", "B"))
            .await
            .unwrap(),
    ];
    for parent in &parents {
        store
            .create_workflow(
                &p,
                &workflow(
                    &parent.id,
                    vec![task("subsidiaries", NodeState::Queued, &[], false)],
                ),
            )
            .await
            .unwrap();
    }
    let follow_up = workflow("", vec![task("ceo", NodeState::Queued, &[], false)]);
    let with_cascade = |parent: &str, titles: &[&str]| TaskCompletion {
        cascade: Some(cascade(parent, titles, Some(follow_up.clone()))),
        deliveries: Vec::new(),
        runs: Vec::new(),
        ..extracted(parent, "subsidiaries", json!(titles))
    };

    let dead = store.claim_tasks("dead", SHORT, 10, None).await.unwrap();
    assert_eq!(dead.len(), 2);
    tokio::time::sleep(SHORT * 2).await;
    let alive = store.claim_tasks("alive", LONG, 10, None).await.unwrap();
    assert_eq!(alive.len(), 2, "expired leases are taken over");
    for claimed in &dead {
        let late = store
            .complete_task(
                &p,
                &claimed.lease().unwrap(),
                &with_cascade(&claimed.entity_id, &["Globex", "Initech"]),
            )
            .await;
        assert!(matches!(late, Err(StoreError::LeaseLost(_))), "{late:?}");
    }
    assert!(
        store
            .list_entities(&p, Some("subsidiary"), 10)
            .await
            .unwrap()
            .is_empty(),
        "the refused cascades created nothing"
    );
    for parent in &parents {
        assert!(
            store
                .connected_entities(&p, &parent.id, 10)
                .await
                .unwrap()
                .is_empty()
        );
    }

    let mut created = Vec::new();
    for claimed in &alive {
        let done = store
            .complete_task(
                &p,
                &claimed.lease().unwrap(),
                &with_cascade(&claimed.entity_id, &["Globex", "initech"]),
            )
            .await
            .unwrap();
        let result = store
            .get_result(&p, done.result_id.as_ref().unwrap())
            .await
            .unwrap()
            .unwrap();
        created.extend(result.created_entity_ids);
    }
    let subsidiaries = store
        .list_entities(&p, Some("subsidiary"), 10)
        .await
        .unwrap();
    let mut titles: Vec<String> = subsidiaries
        .iter()
        .map(|e| e.title.to_lowercase())
        .collect();
    titles.sort();
    assert_eq!(titles, ["globex", "initech"], "each subsidiary exists once");
    assert_eq!(
        created.len(),
        2,
        "the second parent linked what the first created"
    );
    for parent in &parents {
        let linked = store.connected_entities(&p, &parent.id, 10).await.unwrap();
        assert_eq!(linked.len(), 2);
        let relations = store
            .relations_touching(&p, std::slice::from_ref(&parent.id))
            .await
            .unwrap();
        assert_eq!(relations.len(), 2);
        assert!(
            relations.iter().all(|r| r.mention_count == 1),
            "{relations:?}"
        );
    }
    for id in &created {
        let runs = store.list_runs(&p, id, 10).await.unwrap();
        assert_eq!(runs.len(), 1, "one follow-up run per created entity");
    }
}

pub async fn released_tasks_wait_for_their_backoff(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let entity = store
        .create_entity(&p, &new_entity("company", "A"))
        .await
        .unwrap();
    store
        .create_workflow(
            &p,
            &workflow(&entity.id, vec![task("a", NodeState::Queued, &[], false)]),
        )
        .await
        .unwrap();
    let claimed = store.claim_tasks("w", LONG, 1, None).await.unwrap();
    let release = Release {
        error: "HTTP 503".to_owned(),
        retry_after: SHORT,
        tokens_used: 7,
        duration_ms: 3,
    };
    store
        .release_job(&p, &claimed[0].lease().unwrap(), &release)
        .await
        .unwrap();
    let released = store.get_task(&p, &claimed[0].id).await.unwrap().unwrap();
    assert_eq!(released.state, NodeState::Queued);
    assert_eq!(released.last_error.as_deref(), Some("HTTP 503"));
    assert_eq!(released.tokens_used, 7);
    assert!(
        store
            .claim_tasks("w", LONG, 1, None)
            .await
            .unwrap()
            .is_empty()
    );
    tokio::time::sleep(SHORT * 2).await;
    let again = store.claim_tasks("w", LONG, 1, None).await.unwrap();
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].attempts, 2);
    assert_eq!(again[0].attempt_log.len(), 1);
    assert_eq!(again[0].attempt_log[0].outcome, "retry");
    assert_eq!(again[0].attempt_log[0].error.as_deref(), Some("HTTP 503"));
    assert_eq!(again[0].attempt_log[0].tokens_used, 7);
}

pub async fn concurrent_task_claims_never_overlap(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let entity = store
        .create_entity(&p, &new_entity("company", "A"))
        .await
        .unwrap();
    let tasks = (0..60)
        .map(|i| task(&format!("f{i}"), NodeState::Queued, &[], false))
        .collect();
    let (run, _) = store
        .create_workflow(&p, &workflow(&entity.id, tasks))
        .await
        .unwrap();
    let mut takers = Vec::new();
    for worker in 0..4 {
        let store = store.clone();
        let root = run.id.clone();
        takers.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            loop {
                let claimed = store
                    .claim_tasks(&format!("w{worker}"), LONG, 5, Some(&root))
                    .await
                    .unwrap();
                if claimed.is_empty() {
                    return mine;
                }
                mine.extend(claimed.into_iter().map(|t| t.id));
            }
        }));
    }
    let mut all = Vec::new();
    for taker in takers {
        all.extend(taker.await.unwrap());
    }
    let distinct: HashSet<&String> = all.iter().collect();
    assert_eq!(all.len(), 60, "every task claimed");
    assert_eq!(distinct.len(), 60, "no task claimed twice");
    assert!(
        store
            .claim_tasks("w", LONG, 5, Some("another-root"))
            .await
            .unwrap()
            .is_empty()
    );
}

/// PostgreSQL: a worker waiting on one store wakes when another store — another process —
/// queues work of its kind (`LISTEN/NOTIFY`, delivered at commit), without polling: a new
/// workflow's tasks, a new episode, and a job released back to the queue for a retry.
pub async fn queued_work_wakes_other_processes(listener: Arc<dyn Store>, writer: Arc<dyn Store>) {
    async fn woken(store: &Arc<dyn Store>, kind: JobKind, seen: u64) {
        tokio::time::timeout(Duration::from_secs(30), store.work_queued(kind, seen))
            .await
            .unwrap_or_else(|_| panic!("no {} notification in 30 s", kind.as_str()))
            .unwrap();
    }
    let p = writer.ensure_project("p").await.unwrap();
    let entity = writer
        .create_entity(&p, &new_entity("company", "A"))
        .await
        .unwrap();

    let seen = listener.work_signal(JobKind::FieldTask).await.unwrap();
    writer
        .create_workflow(
            &p,
            &workflow(&entity.id, vec![task("a", NodeState::Queued, &[], false)]),
        )
        .await
        .unwrap();
    woken(&listener, JobKind::FieldTask, seen).await;

    let seen = listener.work_signal(JobKind::Episode).await.unwrap();
    let episode = writer
        .add_episode(&p, &super::new_episode("hello", "hi"))
        .await
        .unwrap();
    woken(&listener, JobKind::Episode, seen).await;

    let claimed = writer.claim_episodes("w", LONG, 1, false).await.unwrap();
    assert_eq!(claimed[0].id, episode.id);
    let seen = listener.work_signal(JobKind::Episode).await.unwrap();
    let release = Release {
        error: "HTTP 503".to_owned(),
        retry_after: Duration::ZERO,
        tokens_used: 0,
        duration_ms: 0,
    };
    writer
        .release_job(&p, &claimed[0].lease().unwrap(), &release)
        .await
        .unwrap();
    woken(&listener, JobKind::Episode, seen).await;
}

/// A run whose entity's required field ends without a value is `partial` (something else was
/// extracted) or `failed` (nothing was), never `completed`, and says which fields are missing;
/// a value on the entity, or a current result holding one, satisfies it.
pub async fn runs_missing_a_required_value_do_not_complete(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let company: quarry_core::model::EntityType = serde_json::from_value(json!({
        "slug": "company",
        "fields": [{"name": "a"}, {"name": "b", "required": true}, {"name": "c", "required": true}]
    }))
    .unwrap();
    store.put_entity_type(&p, &company).await.unwrap();

    // Only `a` is asked for, and `b`, `c` have no value anywhere: partial, naming both.
    let bare = store
        .create_entity(&p, &new_entity("company", "Bare"))
        .await
        .unwrap();
    let (run, _) = store
        .create_workflow(
            &p,
            &workflow(&bare.id, vec![task("a", NodeState::Queued, &[], false)]),
        )
        .await
        .unwrap();
    let claimed = store.claim_tasks("w", LONG, 1, None).await.unwrap();
    store
        .complete_task(
            &p,
            &claimed[0].lease().unwrap(),
            &extracted(&bare.id, "a", json!("x")),
        )
        .await
        .unwrap();
    let ended = store.get_run(&p, &run.id).await.unwrap().unwrap();
    assert_eq!(ended.status, RunStatus::Partial, "{ended:?}");
    assert_eq!(
        ended.error.as_deref(),
        Some("required fields without a value: b, c")
    );

    // `b` on the entity, `c` extracted (an empty list does not count): completed.
    let mut full = new_entity("company", "Full");
    full.fields.insert("b".into(), json!("known"));
    let full = store.create_entity(&p, &full).await.unwrap();
    let (run, _) = store
        .create_workflow(
            &p,
            &workflow(&full.id, vec![task("c", NodeState::Queued, &[], false)]),
        )
        .await
        .unwrap();
    let claimed = store.claim_tasks("w", LONG, 1, None).await.unwrap();
    store
        .complete_task(
            &p,
            &claimed[0].lease().unwrap(),
            &extracted(&full.id, "c", json!(["one"])),
        )
        .await
        .unwrap();
    let ended = store.get_run(&p, &run.id).await.unwrap().unwrap();
    assert_eq!(
        (ended.status, ended.error.as_deref()),
        (RunStatus::Completed, None)
    );

    // Nothing to extract (the only field is locked: skipped) and `b`, `c` missing: failed.
    let (run, _) = store
        .create_workflow(
            &p,
            &workflow(&bare.id, vec![task("a", NodeState::Skipped, &[], false)]),
        )
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Failed, "{run:?}");
    assert_eq!(
        run.error.as_deref(),
        Some("required fields without a value: b, c")
    );
}

/// A project with one extracted field whose completion queued `hooks` deliveries (one per URL).
async fn project_with_deliveries(store: &Arc<dyn Store>, name: &str, hooks: usize) -> String {
    let p = store.ensure_project(name).await.unwrap();
    let entity = store
        .create_entity(&p, &new_entity("company", "A"))
        .await
        .unwrap();
    store
        .create_workflow(
            &p,
            &workflow(&entity.id, vec![task("a", NodeState::Queued, &[], false)]),
        )
        .await
        .unwrap();
    let claimed = store.claim_tasks("w", LONG, 1, None).await.unwrap();
    let planned = (0..hooks)
        .map(|n| quarry_core::model::PlannedDelivery {
            event: quarry_core::model::ActionEvent::Extracted,
            url: format!("https://hooks.example/{name}/{n}"),
        })
        .collect();
    store
        .complete_task(
            &p,
            &claimed[0].lease().unwrap(),
            &TaskCompletion {
                deliveries: planned,
                ..extracted(&entity.id, "a", json!(1))
            },
        )
        .await
        .unwrap();
    p
}

/// Deliveries: a take passes over busy projects (a hanging receiver of one project cannot hold
/// every slot); an ended delivery is dead-lettered and redelivered on request, with its attempt
/// count still growing; a queued or running one is not redelivered; another project's is not
/// found.
pub async fn deliveries_are_fair_dead_lettered_and_redelivered(store: Arc<dyn Store>) {
    use quarry_core::model::DeliveryState;
    let busy = project_with_deliveries(&store, "busy", 3).await;
    let quiet = project_with_deliveries(&store, "quiet", 1).await;
    let taken = store
        .claim_deliveries("w", LONG, 10, std::slice::from_ref(&busy))
        .await
        .unwrap();
    assert_eq!(taken.len(), 1, "only the quiet project's: {taken:?}");
    assert_eq!(taken[0].project_id, quiet);
    let rest = store.claim_deliveries("w", LONG, 10, &[]).await.unwrap();
    assert_eq!(rest.len(), 3);
    assert!(rest.iter().all(|d| d.project_id == busy));

    let held = taken[0].lease().unwrap();
    let dead = store
        .finish_delivery(&quiet, &held, false, Some(500), Some("gave up"))
        .await
        .unwrap();
    assert_eq!(dead.state, DeliveryState::Dead);
    let running = store.redeliver(&busy, &rest[0].id, 5).await.unwrap_err();
    assert!(matches!(running, StoreError::Conflict(_)), "{running:?}");
    let foreign = store.redeliver(&busy, &dead.id, 5).await.unwrap_err();
    assert!(
        matches!(foreign, StoreError::NotFound { .. }),
        "{foreign:?}"
    );

    let again = store.redeliver(&quiet, &dead.id, 5).await.unwrap();
    assert_eq!(again.state, DeliveryState::Queued);
    assert_eq!((again.attempts, again.max_attempts), (1, 6));
    let queued = store.redeliver(&quiet, &dead.id, 5).await.unwrap_err();
    assert!(matches!(queued, StoreError::Conflict(_)), "{queued:?}");
    let retaken = store.claim_deliveries("w2", LONG, 10, &[]).await.unwrap();
    assert_eq!(retaken.len(), 1);
    assert_eq!(
        (retaken[0].id.as_str(), retaken[0].attempts),
        (dead.id.as_str(), 2)
    );
    // The lease of the first run cannot end the second.
    let late = store
        .finish_delivery(&quiet, &held, true, Some(200), None)
        .await;
    assert!(matches!(late, Err(StoreError::LeaseLost(_))), "{late:?}");
}
