//! One behaviour suite, run against SQLite (a temp file per test) and PostgreSQL (a fresh
//! database per test on the server named by `QUARRY_TEST_POSTGRES_URL`; `scripts/postgres.sh`
//! starts one). Without that variable the PostgreSQL half fails when `CI` is set and is skipped
//! with a notice otherwise.

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Once};
use std::time::Duration;

use quarry_core::model::{
    ApiKey, Confidence, DocumentKind, Episode, EpisodeOutcome, EpisodeStatus, ExtractedEntity,
    GraphEntityWrite, GraphExtraction, GraphRelationWrite, GraphWrite, Lease, NewEntity,
    NewEpisode, NewResult, Release, ResultStatus, ReviewDecision, RunScope, RunStatus, SourceRef,
    StoredChunk,
};
use quarry_core::store::{Store, StoreError};
use quarry_testkit::postgres::TestDatabase;
use serde_json::{Map, Value, json};

#[path = "conformance/tasks.rs"]
mod tasks;
use tasks::*;
#[path = "conformance/follow.rs"]
mod follow;
use follow::*;
#[path = "conformance/review.rs"]
mod review;
use review::*;
#[path = "conformance/sessions.rs"]
mod sessions;
use sessions::*;
#[path = "conformance/operations.rs"]
mod operations;
use operations::*;

// --- harness ---------------------------------------------------------------------------------

/// Removes the SQLite file and its WAL companions when a test ends.
struct TempDb(PathBuf);

impl Drop for TempDb {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm"] {
            let mut path = self.0.clone().into_os_string();
            path.push(suffix);
            let _ = std::fs::remove_file(path);
        }
    }
}

async fn sqlite_store() -> (Arc<dyn Store>, TempDb) {
    let path = std::env::temp_dir().join(format!("quarry-store-{}.db", uuid::Uuid::new_v4()));
    let store = quarry_store::open(path.to_str().expect("utf-8 temp path"))
        .await
        .expect("open sqlite store");
    (store, TempDb(path))
}

/// A store on a fresh database, and the guard that drops the database when the test ends.
async fn postgres_store() -> Option<(Arc<dyn Store>, TestDatabase)> {
    let database = postgres_database()?;
    let store = quarry_store::open(database.url())
        .await
        .expect("open postgres store");
    Some((store, database))
}

/// A fresh database on the test server, dropped with the guard (`None`: skipped, see the module
/// comment).
fn postgres_database() -> Option<TestDatabase> {
    let Ok(base) = std::env::var("QUARRY_TEST_POSTGRES_URL") else {
        if std::env::var_os("CI").is_some_and(|ci| !ci.is_empty()) {
            panic!(
                "QUARRY_TEST_POSTGRES_URL is unset while CI is set: the PostgreSQL conformance \
                 suite must run in CI (export QUARRY_TEST_POSTGRES_URL=$(scripts/postgres.sh))"
            );
        }
        static NOTICE: Once = Once::new();
        NOTICE.call_once(|| {
            // Written past the test harness's capture so the skip is visible.
            let _ = writeln!(
                std::io::stderr(),
                "NOTICE: PostgreSQL conformance tests SKIPPED: QUARRY_TEST_POSTGRES_URL is unset \
                 (export QUARRY_TEST_POSTGRES_URL=$(scripts/postgres.sh))"
            );
        });
        return None;
    };
    // A database per test: queue takes serve every project, so tests must not share one.
    Some(TestDatabase::create(&base, "store"))
}

macro_rules! conformance {
    ($($behaviour:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $behaviour() {
                    let (store, _file) = super::sqlite_store().await;
                    super::$behaviour(store).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $behaviour() {
                    if let Some((store, _database)) = super::postgres_store().await {
                        super::$behaviour(store).await;
                    }
                }
            )*
        }
    };
}

conformance!(
    deliveries_are_fair_dead_lettered_and_redelivered,
    run_history_pages_by_cursor,
    runs_missing_a_required_value_do_not_complete,
    graph_writes_find_entities_by_name_key,
    tasks_move_through_dependencies_gates_and_retries,
    expired_task_leases_are_taken_over_and_the_late_finisher_is_refused,
    cascades_commit_behind_the_lease_fence,
    released_tasks_wait_for_their_backoff,
    concurrent_task_claims_never_overlap,
    projects_are_isolated,
    entity_crud_and_case_insensitive_title,
    entity_types_round_trip,
    relation_upsert_counts_mentions,
    documents_and_links,
    runs_start_finish_list,
    record_results_supersedes_same_field_only,
    latest_results_one_per_field_and_history_keeps_all,
    approve_promotes_value_into_entity,
    reject_stores_reason,
    reviewing_non_pending_is_invalid_state,
    feedback_summary_counts,
    feedback_summary_follows_supersede_and_reviews,
    api_keys_create_and_find,
    concurrent_record_results_do_not_corrupt,
    episodes_add_and_get,
    claims_are_exclusive,
    claim_oldest_first_and_ingest_only,
    expired_leases_are_taken_over_and_fence_the_late_finisher,
    renew_keeps_a_lease_alive,
    released_episodes_wait_for_their_backoff,
    retry_episodes_requeues_failed_ones,
    finish_episode_done_and_failed,
    apply_graph_inserts_then_updates,
    apply_graph_failures_write_nothing,
    complete_episode_writes_graph_and_ends_episode,
    complete_episode_failure_rolls_back_graph_and_status,
    graph_queries,
    chunks_round_trip,
    all_document_links_lists_every_document,
    list_project_ids_lists_every_project,
    concurrent_apply_graph_makes_one_entity,
    adding_a_document_twice_returns_the_first,
    changes_since_list_what_was_written,
    entity_pages_order_search_and_count,
    latest_results_and_tasks_of_a_page,
    review_queue_oldest_first_with_titles_and_total,
    field_locks_keep_the_rest_and_lose_none_under_concurrency,
    document_and_episode_pages,
    web_sessions_live_until_they_expire_or_end,
    chat_conversations_are_versioned_and_scoped,
    revoking_a_key_ends_its_sessions,
    queue_depths_count_each_state_across_projects,
    schema_version_is_current_once_opened,
);

/// Wake-ups across processes exist on PostgreSQL only (SQLite has one writing process, which
/// wakes its own workers): two stores on one database stand for two processes.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_queued_work_wakes_other_processes() {
    let Some(database) = postgres_database() else {
        return;
    };
    let listener = quarry_store::open(database.url()).await.unwrap();
    let writer = quarry_store::open(database.url()).await.unwrap();
    queued_work_wakes_other_processes(listener, writer).await;
}

/// A crash: episodes taken by a worker, the process gone, the store opened again on the same
/// database; nothing is requeued because a process started, but once the dead worker's lease
/// expires the episode is claimable again.
mod crash {
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn sqlite_taken_over_after_reopen() {
        let path = std::env::temp_dir().join(format!("quarry-store-{}.db", uuid::Uuid::new_v4()));
        let _file = super::TempDb(path.clone());
        super::taken_over_after_reopen(path.to_str().expect("utf-8 temp path")).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn postgres_taken_over_after_reopen() {
        if let Some(database) = super::postgres_database() {
            super::taken_over_after_reopen(database.url()).await;
        }
    }
}

// --- fixtures --------------------------------------------------------------------------------

fn new_entity(entity_type: &str, title: &str) -> NewEntity {
    NewEntity {
        entity_type: entity_type.into(),
        title: title.into(),
        ..NewEntity::default()
    }
}

fn candidate(entity_id: &str, field: &str, value: Value, confidence: Confidence) -> NewResult {
    NewResult {
        run_id: None,
        entity_id: entity_id.into(),
        field_name: field.into(),
        value,
        sources: vec![SourceRef::Url {
            url: "https://example.com/a".into(),
        }],
        confidence,
        agent_id: "test-model".into(),
        status: ResultStatus::Pending,
        created_entity_ids: vec![],
        duration_ms: 12,
        tokens_used: 34,
        metadata: Map::new(),
        workflow_node_run_id: None,
    }
}

async fn one(
    store: &Arc<dyn Store>,
    project: &str,
    result: NewResult,
) -> quarry_core::model::ExtractionResult {
    store
        .record_results(project, &[result])
        .await
        .unwrap()
        .remove(0)
}

// --- behaviours ------------------------------------------------------------------------------

async fn projects_are_isolated(store: Arc<dyn Store>) {
    let a = store.ensure_project("a").await.unwrap();
    let b = store.ensure_project("b").await.unwrap();
    assert_ne!(a, b);
    assert_eq!(
        store.ensure_project("a").await.unwrap(),
        a,
        "ensure_project is idempotent"
    );
    let entity = store
        .create_entity(&a, &new_entity("company", "Acme"))
        .await
        .unwrap();
    let document = store.add_document(&a, "doc", "text").await.unwrap();
    let run = store
        .start_run(&a, &entity.id, RunScope::Full, "cli", None)
        .await
        .unwrap();
    let result = one(
        &store,
        &a,
        candidate(&entity.id, "ceo", json!("Ann"), Confidence::High),
    )
    .await;

    assert!(store.get_entity(&b, &entity.id).await.unwrap().is_none());
    assert!(store.list_entities(&b, None, 10).await.unwrap().is_empty());
    assert!(
        store
            .find_entity_by_title(&b, "company", "acme")
            .await
            .unwrap()
            .is_none()
    );
    assert!(store.documents(&b, None).await.unwrap().is_empty());
    assert!(store.get_run(&b, &run.id).await.unwrap().is_none());
    assert!(
        store
            .list_runs(&b, &entity.id, 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(store.get_result(&b, &result.id).await.unwrap().is_none());
    assert!(
        store
            .latest_results(&b, &entity.id)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(matches!(
        store
            .review_result(&b, &result.id, &ReviewDecision::Approve, "eve", None)
            .await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        store.link_document(&b, &document.id, &entity.id).await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        store
            .record_results(
                &b,
                &[candidate(&entity.id, "ceo", json!("x"), Confidence::Low)]
            )
            .await,
        Err(StoreError::NotFound { .. })
    ));
    // B's failed write left A's result untouched.
    let kept = store.get_result(&a, &result.id).await.unwrap().unwrap();
    assert_eq!(kept.status, ResultStatus::Pending);
}

async fn entity_crud_and_case_insensitive_title(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let parent = store
        .create_entity(&p, &new_entity("company", "Acme Corp"))
        .await
        .unwrap();
    let mut child = new_entity("person", "Ann Lee");
    child.parent_id = Some(parent.id.clone());
    child.fields.insert("age".into(), json!(41));
    let child = store.create_entity(&p, &child).await.unwrap();
    assert_eq!(
        store.get_entity(&p, &child.id).await.unwrap().unwrap(),
        child
    );
    assert_eq!(child.parent_id.as_deref(), Some(parent.id.as_str()));

    let found = store
        .find_entity_by_title(&p, "company", "ACME corp")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.id, parent.id);
    assert!(
        store
            .find_entity_by_title(&p, "person", "acme corp")
            .await
            .unwrap()
            .is_none()
    );

    let all = store.list_entities(&p, None, 10).await.unwrap();
    assert_eq!(
        all.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(),
        [&child.id, &parent.id],
        "newest first"
    );
    assert_eq!(
        store
            .list_entities(&p, Some("company"), 10)
            .await
            .unwrap()
            .len(),
        1
    );
    assert_eq!(store.list_entities(&p, None, 1).await.unwrap().len(), 1);

    let mut metadata = Map::new();
    metadata.insert("locked_fields".into(), json!(["age"]));
    let updated = store
        .set_entity_metadata(&p, &child.id, &metadata)
        .await
        .unwrap();
    assert_eq!(updated.locked_fields(), ["age"]);
    assert_eq!(
        store
            .get_entity(&p, &child.id)
            .await
            .unwrap()
            .unwrap()
            .metadata,
        metadata
    );
    assert!(matches!(
        store.set_entity_metadata(&p, "missing", &metadata).await,
        Err(StoreError::NotFound { .. })
    ));
    let mut orphan = new_entity("person", "Bo");
    orphan.parent_id = Some("missing".into());
    assert!(matches!(
        store.create_entity(&p, &orphan).await,
        Err(StoreError::NotFound { .. })
    ));
}

async fn entity_types_round_trip(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let company: quarry_core::model::EntityType = serde_json::from_value(json!({
        "slug": "company",
        "fields": [{"name": "ceo", "instructions": "Who runs it", "depends_on": []}]
    }))
    .unwrap();
    store.put_entity_type(&p, &company).await.unwrap();
    assert_eq!(
        store.get_entity_type(&p, "company").await.unwrap().unwrap(),
        company
    );
    let mut renamed = company.clone();
    renamed.name = Some("Company".into());
    store.put_entity_type(&p, &renamed).await.unwrap();
    assert_eq!(store.list_entity_types(&p).await.unwrap(), [renamed]);
    let other = store.ensure_project("other").await.unwrap();
    assert!(
        store
            .get_entity_type(&other, "company")
            .await
            .unwrap()
            .is_none()
    );
}

async fn relation_upsert_counts_mentions(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let a = store
        .create_entity(&p, &new_entity("company", "A"))
        .await
        .unwrap();
    let b = store
        .create_entity(&p, &new_entity("person", "B"))
        .await
        .unwrap();
    let c = store
        .create_entity(&p, &new_entity("person", "C"))
        .await
        .unwrap();
    let first = store
        .upsert_relation(&p, &a.id, &b.id, "employs")
        .await
        .unwrap();
    assert_eq!(first.mention_count, 1);
    let again = store
        .upsert_relation(&p, &a.id, &b.id, "employs")
        .await
        .unwrap();
    assert_eq!(again.id, first.id);
    assert_eq!(again.mention_count, 2);
    assert!(again.last_seen_at > first.last_seen_at);
    let other_label = store
        .upsert_relation(&p, &a.id, &b.id, "founded_by")
        .await
        .unwrap();
    assert_eq!(other_label.mention_count, 1);
    store
        .upsert_relation(&p, &c.id, &a.id, "works_at")
        .await
        .unwrap();

    let connected = store.connected_entities(&p, &a.id, 10).await.unwrap();
    let mut ids: Vec<_> = connected.iter().map(|e| e.id.clone()).collect();
    ids.sort();
    let mut expected = vec![b.id.clone(), c.id.clone()];
    expected.sort();
    assert_eq!(ids, expected, "both directions, each entity once");
    assert_eq!(
        store.connected_entities(&p, &a.id, 1).await.unwrap().len(),
        1
    );
    assert!(matches!(
        store.upsert_relation(&p, &a.id, "missing", "x").await,
        Err(StoreError::NotFound { .. })
    ));
}

async fn documents_and_links(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let entity = store
        .create_entity(&p, &new_entity("company", "A"))
        .await
        .unwrap();
    let linked = store
        .add_document(&p, "annual report", "Acme's CEO is Ann.")
        .await
        .unwrap();
    let unlinked = store.add_document(&p, "news", "Unrelated").await.unwrap();
    store
        .link_document(&p, &linked.id, &entity.id)
        .await
        .unwrap();
    store
        .link_document(&p, &linked.id, &entity.id)
        .await
        .unwrap(); // idempotent
    assert_eq!(
        store.documents(&p, Some(&entity.id)).await.unwrap(),
        std::slice::from_ref(&linked)
    );
    assert_eq!(store.documents(&p, None).await.unwrap(), [linked, unlinked]);
    assert!(matches!(
        store.link_document(&p, "missing", &entity.id).await,
        Err(StoreError::NotFound {
            what: "document",
            ..
        })
    ));
}

async fn runs_start_finish_list(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let entity = store
        .create_entity(&p, &new_entity("company", "A"))
        .await
        .unwrap();
    let fields = vec!["ceo".to_string(), "revenue".to_string()];
    let first = store
        .start_run(&p, &entity.id, RunScope::Field, "api", Some(&fields))
        .await
        .unwrap();
    assert_eq!(first.status, RunStatus::Running);
    assert_eq!(first.fields_requested.as_deref(), Some(fields.as_slice()));
    assert_eq!(store.get_run(&p, &first.id).await.unwrap().unwrap(), first);

    let done = store
        .finish_run(&p, &first.id, RunStatus::Partial, Some("revenue failed"))
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Partial);
    assert_eq!(done.error.as_deref(), Some("revenue failed"));
    assert!(done.finished_at.is_some() && done.duration_ms.is_some_and(|ms| ms >= 0));
    assert_eq!(store.get_run(&p, &first.id).await.unwrap().unwrap(), done);

    let second = store
        .start_run(&p, &entity.id, RunScope::Full, "cli", None)
        .await
        .unwrap();
    assert_eq!(second.fields_requested, None);
    let runs = store.list_runs(&p, &entity.id, 10).await.unwrap();
    assert_eq!(
        runs.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
        [&second.id, &first.id]
    );
    assert_eq!(store.list_runs(&p, &entity.id, 1).await.unwrap().len(), 1);
    assert!(matches!(
        store
            .finish_run(&p, "missing", RunStatus::Completed, None)
            .await,
        Err(StoreError::NotFound { .. })
    ));
}

async fn record_results_supersedes_same_field_only(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let entity = store
        .create_entity(&p, &new_entity("company", "A"))
        .await
        .unwrap();
    let run = store
        .start_run(&p, &entity.id, RunScope::Full, "cli", None)
        .await
        .unwrap();
    let mut with_run = candidate(&entity.id, "ceo", json!("Ann"), Confidence::High);
    with_run.run_id = Some(run.id.clone());
    with_run.created_entity_ids = vec!["e1".into()];
    with_run.metadata.insert("agreement".into(), json!(0.5));
    let approved = one(&store, &p, with_run.clone()).await;
    assert_eq!(approved.run_id.as_deref(), Some(run.id.as_str()));
    assert_eq!(
        store.get_result(&p, &approved.id).await.unwrap().unwrap(),
        approved,
        "every column round-trips"
    );
    store
        .review_result(&p, &approved.id, &ReviewDecision::Approve, "rev", None)
        .await
        .unwrap();
    let pending = one(
        &store,
        &p,
        candidate(&entity.id, "ceo", json!("Bob"), Confidence::Low),
    )
    .await;
    let latest = one(
        &store,
        &p,
        candidate(&entity.id, "ceo", json!("Cy"), Confidence::Low),
    )
    .await;
    let other_field = one(
        &store,
        &p,
        candidate(&entity.id, "revenue", json!(10), Confidence::Medium),
    )
    .await;

    let get = |id: String| {
        let store = store.clone();
        let p = p.clone();
        async move { store.get_result(&p, &id).await.unwrap().unwrap().status }
    };
    assert_eq!(get(approved.id.clone()).await, ResultStatus::Superseded);
    assert_eq!(get(pending.id.clone()).await, ResultStatus::Superseded);
    assert_eq!(get(latest.id.clone()).await, ResultStatus::Pending);
    assert_eq!(get(other_field.id.clone()).await, ResultStatus::Pending);

    // A rejected result is history, not a candidate: a new one leaves it rejected.
    store
        .review_result(
            &p,
            &latest.id,
            &ReviewDecision::Reject {
                reason: Some("wrong".into()),
            },
            "rev",
            None,
        )
        .await
        .unwrap();
    one(
        &store,
        &p,
        candidate(&entity.id, "ceo", json!("Dee"), Confidence::High),
    )
    .await;
    assert_eq!(get(latest.id.clone()).await, ResultStatus::Rejected);

    // A consensus batch: winner pending and loser superseded, stored together.
    let mut loser = candidate(&entity.id, "revenue", json!(11), Confidence::Low);
    loser.status = ResultStatus::Superseded;
    let batch = store
        .record_results(
            &p,
            &[
                candidate(&entity.id, "revenue", json!(12), Confidence::High),
                loser,
            ],
        )
        .await
        .unwrap();
    assert_eq!(get(batch[0].id.clone()).await, ResultStatus::Pending);
    assert_eq!(get(batch[1].id.clone()).await, ResultStatus::Superseded);
    assert_eq!(get(other_field.id.clone()).await, ResultStatus::Superseded);
}

async fn latest_results_one_per_field_and_history_keeps_all(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let entity = store
        .create_entity(&p, &new_entity("company", "A"))
        .await
        .unwrap();
    let first = one(
        &store,
        &p,
        candidate(&entity.id, "ceo", json!("Ann"), Confidence::High),
    )
    .await;
    let second = one(
        &store,
        &p,
        candidate(&entity.id, "ceo", json!("Bob"), Confidence::High),
    )
    .await;
    let revenue = one(
        &store,
        &p,
        candidate(&entity.id, "revenue", json!(10), Confidence::High),
    )
    .await;
    let rejected = one(
        &store,
        &p,
        candidate(&entity.id, "hq", json!("Oslo"), Confidence::Low),
    )
    .await;
    store
        .review_result(
            &p,
            &rejected.id,
            &ReviewDecision::Reject { reason: None },
            "rev",
            None,
        )
        .await
        .unwrap();

    let latest = store.latest_results(&p, &entity.id).await.unwrap();
    let ids: Vec<_> = latest
        .iter()
        .map(|r| (r.field_name.as_str(), r.id.as_str()))
        .collect();
    assert_eq!(
        ids,
        [
            ("ceo", second.id.as_str()),
            ("hq", rejected.id.as_str()),
            ("revenue", revenue.id.as_str())
        ]
    );

    let history = store.field_history(&p, &entity.id, "ceo").await.unwrap();
    assert_eq!(
        history.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
        [&first.id, &second.id],
        "oldest first"
    );
    assert_eq!(history[0].status, ResultStatus::Superseded);
}

async fn approve_promotes_value_into_entity(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let mut new = new_entity("company", "A");
    new.fields.insert("hq".into(), json!("Oslo"));
    let entity = store.create_entity(&p, &new).await.unwrap();
    let result = one(
        &store,
        &p,
        candidate(&entity.id, "ceo", json!({"name": "Ann"}), Confidence::High),
    )
    .await;
    let reviewed = store
        .review_result(&p, &result.id, &ReviewDecision::Approve, "rev", None)
        .await
        .unwrap();
    assert_eq!(reviewed.result.status, ResultStatus::Approved);
    assert_eq!(reviewed.result.reviewed_by.as_deref(), Some("rev"));
    assert!(reviewed.result.reviewed_at.is_some());
    let promoted = reviewed.entity.expect("approval returns the entity");
    assert_eq!(promoted.fields.get("ceo"), Some(&json!({"name": "Ann"})));
    assert_eq!(promoted.fields.get("hq"), Some(&json!("Oslo")));
    assert_eq!(
        store.get_entity(&p, &entity.id).await.unwrap().unwrap(),
        promoted
    );
    assert_eq!(
        store.get_result(&p, &result.id).await.unwrap().unwrap(),
        reviewed.result
    );
}

async fn reject_stores_reason(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let entity = store
        .create_entity(&p, &new_entity("company", "A"))
        .await
        .unwrap();
    let result = one(
        &store,
        &p,
        candidate(&entity.id, "ceo", json!("Ann"), Confidence::High),
    )
    .await;
    let decision = ReviewDecision::Reject {
        reason: Some("that is the CFO".into()),
    };
    let reviewed = store
        .review_result(&p, &result.id, &decision, "rev", None)
        .await
        .unwrap();
    assert_eq!(reviewed.entity, None);
    let stored = store.get_result(&p, &result.id).await.unwrap().unwrap();
    assert_eq!(stored.status, ResultStatus::Rejected);
    assert_eq!(stored.rejection_reason.as_deref(), Some("that is the CFO"));
    assert!(
        store
            .get_entity(&p, &entity.id)
            .await
            .unwrap()
            .unwrap()
            .fields
            .is_empty(),
        "nothing promoted"
    );
}

async fn reviewing_non_pending_is_invalid_state(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let entity = store
        .create_entity(&p, &new_entity("company", "A"))
        .await
        .unwrap();
    let result = one(
        &store,
        &p,
        candidate(&entity.id, "ceo", json!("Ann"), Confidence::High),
    )
    .await;
    store
        .review_result(&p, &result.id, &ReviewDecision::Approve, "rev", None)
        .await
        .unwrap();
    for decision in [
        ReviewDecision::Approve,
        ReviewDecision::Reject { reason: None },
    ] {
        assert!(matches!(
            store
                .review_result(&p, &result.id, &decision, "rev", None)
                .await,
            Err(StoreError::InvalidState(_))
        ));
    }
    one(
        &store,
        &p,
        candidate(&entity.id, "ceo", json!("Bob"), Confidence::High),
    )
    .await;
    assert!(
        matches!(
            store
                .review_result(&p, &result.id, &ReviewDecision::Approve, "rev", None)
                .await,
            Err(StoreError::InvalidState(_))
        ),
        "superseded"
    );
    assert!(matches!(
        store
            .review_result(&p, "missing", &ReviewDecision::Approve, "rev", None)
            .await,
        Err(StoreError::NotFound { .. })
    ));
}

async fn feedback_summary_counts(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let mut ids = Vec::new();
    for i in 0..6 {
        let entity = store
            .create_entity(&p, &new_entity("company", &format!("C{i}")))
            .await
            .unwrap();
        ids.push(entity.id);
    }
    let person = store
        .create_entity(&p, &new_entity("person", "P"))
        .await
        .unwrap();
    let decide = [
        (Confidence::High, Some(ReviewDecision::Approve)),
        (Confidence::High, Some(ReviewDecision::Approve)),
        (
            Confidence::High,
            Some(ReviewDecision::Reject {
                reason: Some("outdated".into()),
            }),
        ),
        (
            Confidence::Low,
            Some(ReviewDecision::Reject {
                reason: Some("outdated".into()),
            }),
        ),
        (
            Confidence::Low,
            Some(ReviewDecision::Reject {
                reason: Some("wrong person".into()),
            }),
        ),
        (Confidence::Medium, None),
    ];
    for (entity_id, (confidence, decision)) in ids.iter().zip(decide) {
        let result = one(
            &store,
            &p,
            candidate(entity_id, "ceo", json!("x"), confidence),
        )
        .await;
        if let Some(decision) = decision {
            store
                .review_result(&p, &result.id, &decision, "rev", None)
                .await
                .unwrap();
        }
    }
    // Not counted: another field, another type, a superseded result.
    one(
        &store,
        &p,
        candidate(&ids[0], "revenue", json!(1), Confidence::High),
    )
    .await;
    one(
        &store,
        &p,
        candidate(&person.id, "ceo", json!("y"), Confidence::High),
    )
    .await;
    one(
        &store,
        &p,
        candidate(&ids[5], "ceo", json!("z"), Confidence::Medium),
    )
    .await;

    let summary = store.feedback_summary(&p, "company", "ceo").await.unwrap();
    assert_eq!(
        (summary.total, summary.approved, summary.rejected),
        (6, 2, 3)
    );
    assert_eq!(summary.approval_rate, Some(0.4));
    assert_eq!(
        summary.common_rejection_reasons,
        [("outdated".to_string(), 2), ("wrong person".to_string(), 1)]
    );
    assert_eq!(
        summary.approval_rate_by_confidence.get("high"),
        Some(&json!(2.0 / 3.0))
    );
    assert_eq!(
        summary.approval_rate_by_confidence.get("low"),
        Some(&json!(0.0))
    );
    assert_eq!(
        summary.approval_rate_by_confidence.get("medium"),
        None,
        "no reviews at medium"
    );

    let empty = store
        .feedback_summary(&p, "company", "nothing")
        .await
        .unwrap();
    assert_eq!((empty.total, empty.approval_rate), (0, None));
}

/// The summary recomputed from every result's history: (total, approved, rejected, reasons).
async fn summary_from_history(
    store: &Arc<dyn Store>,
    project: &str,
    entity_type: &str,
    field: &str,
) -> (i64, i64, i64, Vec<(String, i64)>) {
    let (mut total, mut approved, mut rejected) = (0, 0, 0);
    let mut reasons = std::collections::BTreeMap::<String, i64>::new();
    for entity in store
        .list_entities(project, Some(entity_type), 1000)
        .await
        .unwrap()
    {
        for result in store
            .field_history(project, &entity.id, field)
            .await
            .unwrap()
        {
            match result.status {
                ResultStatus::Superseded => continue,
                ResultStatus::Approved => approved += 1,
                ResultStatus::Rejected => {
                    rejected += 1;
                    if let Some(reason) = result.rejection_reason {
                        *reasons.entry(reason).or_default() += 1;
                    }
                }
                ResultStatus::Pending => {}
            }
            total += 1;
        }
    }
    let mut reasons: Vec<_> = reasons.into_iter().collect();
    reasons.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    (total, approved, rejected, reasons)
}

async fn assert_summary_matches_history(store: &Arc<dyn Store>, project: &str, step: &str) {
    for (entity_type, field) in [("company", "ceo"), ("company", "hq"), ("person", "ceo")] {
        let summary = store
            .feedback_summary(project, entity_type, field)
            .await
            .unwrap();
        let got = (
            summary.total,
            summary.approved,
            summary.rejected,
            summary.common_rejection_reasons,
        );
        let expected = summary_from_history(store, project, entity_type, field).await;
        assert_eq!(got, expected, "{step}: {entity_type}.{field}");
    }
}

async fn feedback_summary_follows_supersede_and_reviews(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let other = store.ensure_project("other").await.unwrap();
    let a = store
        .create_entity(&p, &new_entity("company", "A"))
        .await
        .unwrap();
    let b = store
        .create_entity(&p, &new_entity("company", "B"))
        .await
        .unwrap();
    let person = store
        .create_entity(&p, &new_entity("person", "P"))
        .await
        .unwrap();
    let elsewhere = store
        .create_entity(&other, &new_entity("company", "A"))
        .await
        .unwrap();
    let reject = |reason: &str| ReviewDecision::Reject {
        reason: Some(reason.into()),
    };

    // A batch: two candidates for one field of A (neither supersedes the other), one for B,
    // one for the person, one already approved.
    let mut approved_on_insert = candidate(&b.id, "hq", json!("Oslo"), Confidence::Low);
    approved_on_insert.status = ResultStatus::Approved;
    let first = store
        .record_results(
            &p,
            &[
                candidate(&a.id, "ceo", json!("x"), Confidence::High),
                candidate(&a.id, "ceo", json!("y"), Confidence::Low),
                candidate(&b.id, "ceo", json!("z"), Confidence::Medium),
                candidate(&person.id, "ceo", json!("w"), Confidence::High),
                approved_on_insert,
            ],
        )
        .await
        .unwrap();
    one(
        &store,
        &other,
        candidate(&elsewhere.id, "ceo", json!("q"), Confidence::High),
    )
    .await;
    assert_summary_matches_history(&store, &p, "batch").await;
    let summary = store.feedback_summary(&p, "company", "ceo").await.unwrap();
    assert_eq!((summary.total, summary.approved), (3, 0));

    store
        .review_result(&p, &first[0].id, &ReviewDecision::Approve, "rev", None)
        .await
        .unwrap();
    store
        .review_result(&p, &first[1].id, &reject("outdated"), "rev", None)
        .await
        .unwrap();
    store
        .review_result(
            &p,
            &first[2].id,
            &ReviewDecision::Reject { reason: None },
            "rev",
            None,
        )
        .await
        .unwrap();
    assert_summary_matches_history(&store, &p, "reviews").await;
    let summary = store.feedback_summary(&p, "company", "ceo").await.unwrap();
    assert_eq!(
        (summary.total, summary.approved, summary.rejected),
        (3, 1, 2)
    );
    assert_eq!(
        summary.approval_rate_by_confidence.get("high"),
        Some(&json!(1.0))
    );

    // Supersede: A's approved result goes, its rejected one stays; B's approved hq goes.
    let second = store
        .record_results(
            &p,
            &[
                candidate(&a.id, "ceo", json!("v"), Confidence::Medium),
                candidate(&b.id, "hq", json!("Bergen"), Confidence::High),
            ],
        )
        .await
        .unwrap();
    assert_summary_matches_history(&store, &p, "supersede").await;
    let summary = store.feedback_summary(&p, "company", "ceo").await.unwrap();
    assert_eq!(
        (summary.total, summary.approved, summary.rejected),
        (3, 0, 2)
    );
    assert_eq!(summary.approval_rate_by_confidence.get("high"), None);

    // A superseded result cannot be reviewed, and a failed review changes nothing.
    let err = store
        .review_result(&p, &first[0].id, &reject("late"), "rev", None)
        .await;
    assert!(matches!(err, Err(StoreError::InvalidState(_))));
    store
        .review_result(&p, &second[0].id, &reject("outdated"), "rev", None)
        .await
        .unwrap();
    store
        .review_result(&p, &second[1].id, &reject("wrong city"), "rev", None)
        .await
        .unwrap();
    // A new candidate supersedes nothing rejected.
    one(
        &store,
        &p,
        candidate(&a.id, "ceo", json!("u"), Confidence::High),
    )
    .await;
    assert_summary_matches_history(&store, &p, "after rejections").await;
    let summary = store.feedback_summary(&p, "company", "ceo").await.unwrap();
    assert_eq!(
        (summary.total, summary.approved, summary.rejected),
        (4, 0, 3)
    );
    assert_eq!(
        summary.common_rejection_reasons,
        [("outdated".to_string(), 2)]
    );
    let elsewhere_summary = store
        .feedback_summary(&other, "company", "ceo")
        .await
        .unwrap();
    assert_eq!(
        (elsewhere_summary.total, elsewhere_summary.approved),
        (1, 0)
    );
}

async fn api_keys_create_and_find(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let key = ApiKey {
        id: uuid::Uuid::new_v4().to_string(),
        project_id: p.clone(),
        name: "ci".into(),
        prefix: "qk_abcd1234".into(),
        secret_hash: "ab".repeat(32),
        scopes: vec!["extraction:submit".into(), "entities:read".into()],
        created_at: "2025-01-01T00:00:00.000000Z".into(),
        revoked: false,
    };
    store.create_api_key(&key).await.unwrap();
    assert_eq!(
        store.find_api_key("qk_abcd1234").await.unwrap(),
        Some(key.clone())
    );
    assert_eq!(store.find_api_key("qk_other").await.unwrap(), None);
    let duplicate = ApiKey {
        id: uuid::Uuid::new_v4().to_string(),
        ..key
    };
    assert!(matches!(
        store.create_api_key(&duplicate).await,
        Err(StoreError::Conflict(_))
    ));
}

async fn concurrent_record_results_do_not_corrupt(store: Arc<dyn Store>) {
    const TASKS: usize = 8;
    const ROUNDS: usize = 15;
    let p = store.ensure_project("p").await.unwrap();
    let entity = store
        .create_entity(&p, &new_entity("company", "A"))
        .await
        .unwrap();
    let mut tasks = Vec::new();
    for task in 0..TASKS {
        let (store, p, entity_id) = (store.clone(), p.clone(), entity.id.clone());
        tasks.push(tokio::spawn(async move {
            for round in 0..ROUNDS {
                let batch = [
                    candidate(
                        &entity_id,
                        "shared",
                        json!(format!("{task}-{round}")),
                        Confidence::High,
                    ),
                    candidate(
                        &entity_id,
                        &format!("own_{task}"),
                        json!(round),
                        Confidence::High,
                    ),
                ];
                store.record_results(&p, &batch).await.unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let history = store.field_history(&p, &entity.id, "shared").await.unwrap();
    assert_eq!(history.len(), TASKS * ROUNDS, "no write lost");
    let pending = history
        .iter()
        .filter(|r| r.status == ResultStatus::Pending)
        .count();
    assert_eq!(pending, 1, "exactly one candidate survives per field");
    let latest = store.latest_results(&p, &entity.id).await.unwrap();
    assert_eq!(latest.len(), TASKS + 1);
    assert!(latest.iter().all(|r| r.status == ResultStatus::Pending));
}

// --- conversation graph ----------------------------------------------------------------------

fn new_episode(user: &str, assistant: &str) -> NewEpisode {
    NewEpisode {
        user_message: user.into(),
        assistant_response: assistant.into(),
        ingest: None,
    }
}

fn ingest_episode(user: &str) -> NewEpisode {
    NewEpisode {
        ingest: Some(GraphExtraction {
            entities: vec![ExtractedEntity {
                name: "Alice".into(),
                entity_type: "person".into(),
                notes: Some("engineer".into()),
            }],
            relationships: vec![],
        }),
        ..new_episode(user, "ok")
    }
}

fn node(
    existing_id: Option<&str>,
    name: &str,
    entity_type: &str,
    notes: Option<&str>,
) -> GraphEntityWrite {
    GraphEntityWrite {
        existing_id: existing_id.map(str::to_owned),
        name: name.into(),
        entity_type: entity_type.into(),
        notes: notes.map(str::to_owned),
        source: "extraction".into(),
    }
}

fn edge(from: usize, to: usize, label: &str, notes: Option<&str>) -> GraphRelationWrite {
    GraphRelationWrite {
        from,
        to,
        label: label.into(),
        notes: notes.map(str::to_owned),
    }
}

fn ids<'a>(items: impl IntoIterator<Item = &'a String>) -> Vec<String> {
    items.into_iter().cloned().collect()
}

/// The owner of the claims most episode tests make, with a lease no test outlives.
const OWNER: &str = "1@test-host:1";
const LONG_LEASE: Duration = Duration::from_secs(600);

async fn claim(store: &Arc<dyn Store>, limit: usize, ingest_only: bool) -> Vec<Episode> {
    store
        .claim_episodes(OWNER, LONG_LEASE, limit, ingest_only)
        .await
        .unwrap()
}

/// A release after a transient failure that cost nothing.
fn release(error: &str, retry_after: Duration) -> Release {
    Release {
        error: error.to_owned(),
        retry_after,
        tokens_used: 0,
        duration_ms: 0,
    }
}

fn lease_of(episode: &Episode) -> Lease {
    episode
        .lease()
        .expect("a claimed episode carries its lease")
}

async fn episodes_add_and_get(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let other = store.ensure_project("other").await.unwrap();
    let long = format!("  Tell me\nabout   {}", "x".repeat(200));
    let plain = store
        .add_episode(&p, &new_episode(&long, "Sure."))
        .await
        .unwrap();
    assert_eq!(plain.status, EpisodeStatus::Pending);
    assert_eq!((plain.attempts, plain.error.clone()), (0, None));
    assert_eq!(plain.project_id, p);
    assert_eq!(
        store.get_episode(&p, &plain.id).await.unwrap().unwrap(),
        plain
    );

    let with_ingest = store.add_episode(&p, &ingest_episode("Hi")).await.unwrap();
    let stored = store
        .get_episode(&p, &with_ingest.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored, with_ingest);
    assert_eq!(
        stored.ingest,
        ingest_episode("Hi").ingest,
        "ingest round-trips"
    );

    assert!(
        store
            .get_episode(&other, &plain.id)
            .await
            .unwrap()
            .is_none()
    );
    assert!(store.get_episode(&p, "missing").await.unwrap().is_none());

    // The episode is a document of kind `episode`; added documents stay files.
    let file = store.add_document(&p, "notes", "text").await.unwrap();
    assert_eq!(file.kind, DocumentKind::File);
    let documents = store.documents(&p, None).await.unwrap();
    assert_eq!(documents.len(), 3);
    let document = documents.iter().find(|d| d.id == plain.id).unwrap();
    assert_eq!(document.kind, DocumentKind::Episode);
    assert_eq!(document.text, format!("User: {long}\nAssistant: Sure."));
    assert!(
        document.title.starts_with("Tell me about xxx"),
        "{}",
        document.title
    );
    assert!(!document.title.contains('\n'));
    assert!(document.title.chars().count() <= 81, "{}", document.title);
    assert_eq!(documents.iter().find(|d| d.id == file.id).unwrap(), &file);
    assert!(store.documents(&other, None).await.unwrap().is_empty());
}

async fn claims_are_exclusive(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let q = store.ensure_project("q").await.unwrap();
    let mut all = Vec::new();
    for i in 0..20 {
        let project = if i % 2 == 0 { &p } else { &q };
        let episode = store
            .add_episode(project, &new_episode(&format!("message {i}"), "reply"))
            .await
            .unwrap();
        all.push(episode.id);
    }
    let mut workers = Vec::new();
    for _ in 0..2 {
        let store = store.clone();
        workers.push(tokio::spawn(async move {
            let mut taken = Vec::new();
            loop {
                let batch = claim(&store, 3, false).await;
                if batch.is_empty() {
                    return taken;
                }
                for episode in batch {
                    assert_eq!(episode.status, EpisodeStatus::Running);
                    assert_eq!(episode.attempts, 1);
                    assert_eq!(episode.lease_owner.as_deref(), Some(OWNER));
                    assert!(episode.lease_expires_at.is_some());
                    taken.push(episode.id);
                }
            }
        }));
    }
    let first = workers.remove(0).await.unwrap();
    let second = workers.remove(0).await.unwrap();
    let a: std::collections::BTreeSet<_> = first.iter().cloned().collect();
    let b: std::collections::BTreeSet<_> = second.iter().cloned().collect();
    assert_eq!(a.len() + b.len(), 20, "no episode taken twice");
    assert!(a.is_disjoint(&b));
    let union: std::collections::BTreeSet<_> = a.union(&b).cloned().collect();
    assert_eq!(union, all.iter().cloned().collect(), "every episode taken");
    assert!(claim(&store, 10, false).await.is_empty());
}

async fn claim_oldest_first_and_ingest_only(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let q = store.ensure_project("q").await.unwrap();
    let plain_a = store.add_episode(&p, &new_episode("a", "r")).await.unwrap();
    let ingest_b = store.add_episode(&q, &ingest_episode("b")).await.unwrap();
    let plain_c = store.add_episode(&p, &new_episode("c", "r")).await.unwrap();
    let ingest_d = store.add_episode(&p, &ingest_episode("d")).await.unwrap();
    assert!(claim(&store, 0, false).await.is_empty());

    let ingest = claim(&store, 10, true).await;
    assert_eq!(
        ingest.iter().map(|e| &e.id).collect::<Vec<_>>(),
        [&ingest_b.id, &ingest_d.id],
        "only pre-structured episodes, oldest first, any project"
    );
    assert_eq!(ingest[0].project_id, q);
    assert!(claim(&store, 10, true).await.is_empty());

    let oldest = claim(&store, 1, false).await;
    assert_eq!(oldest.len(), 1);
    assert_eq!(oldest[0].id, plain_a.id);
    let rest = claim(&store, 10, false).await;
    assert_eq!(
        rest.iter().map(|e| &e.id).collect::<Vec<_>>(),
        [&plain_c.id]
    );
    let running = store.get_episode(&p, &plain_c.id).await.unwrap().unwrap();
    assert_eq!(
        (running.status, running.attempts),
        (EpisodeStatus::Running, 1)
    );
}

/// Test (1) of the leases: a live lease is never taken; an expired one is, with one more
/// attempt; the first owner's late completion is refused and writes nothing.
async fn expired_leases_are_taken_over_and_fence_the_late_finisher(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let episode = store.add_episode(&p, &new_episode("a", "r")).await.unwrap();
    let short = Duration::from_millis(50);
    let by_a = store.claim_episodes("a", short, 5, false).await.unwrap();
    assert_eq!(by_a.len(), 1);
    let lease_a = lease_of(&by_a[0]);
    assert_eq!(
        (lease_a.owner.as_str(), lease_a.attempt),
        ("a", 1),
        "the claim's fencing token"
    );
    assert!(
        store
            .claim_episodes("b", LONG_LEASE, 5, false)
            .await
            .unwrap()
            .is_empty(),
        "a live lease is not taken over"
    );

    tokio::time::sleep(Duration::from_millis(100)).await;
    let by_b = store
        .claim_episodes("b", LONG_LEASE, 5, false)
        .await
        .unwrap();
    assert_eq!(by_b.len(), 1, "an expired lease is taken over");
    assert_eq!(
        (by_b[0].id.as_str(), by_b[0].status, by_b[0].attempts),
        (episode.id.as_str(), EpisodeStatus::Running, 2)
    );
    let lease_b = lease_of(&by_b[0]);
    assert_eq!(lease_b.owner, "b");

    let write = GraphWrite {
        entities: vec![
            node(None, "Alice", "person", None),
            node(None, "Acme", "organization", None),
        ],
        relationships: vec![edge(0, 1, "works_at", None)],
    };
    let outcome = EpisodeOutcome {
        entities_stored: 2,
        relationships_stored: 1,
        ..EpisodeOutcome::default()
    };
    // A, back from a long stall: every fenced write of its old lease is refused.
    assert!(matches!(
        store.complete_episode(&p, &lease_a, &write, &outcome).await,
        Err(StoreError::LeaseLost(_))
    ));
    assert!(
        store.list_entities(&p, None, 10).await.unwrap().is_empty(),
        "the late finisher wrote no graph"
    );
    assert!(!store.renew_lease(&lease_a, LONG_LEASE).await.unwrap());
    assert!(matches!(
        store
            .finish_episode(&p, &episode.id, Some(&lease_a), &outcome)
            .await,
        Err(StoreError::LeaseLost(_))
    ));
    assert!(matches!(
        store
            .release_job(&p, &lease_a, &release("stalled", Duration::ZERO))
            .await,
        Err(StoreError::LeaseLost(_))
    ));
    let still = store.get_episode(&p, &episode.id).await.unwrap().unwrap();
    assert_eq!(still, by_b[0], "B's claim untouched");

    let applied = store
        .complete_episode(&p, &lease_b, &write, &outcome)
        .await
        .unwrap();
    assert_eq!(applied.inserted, [true, true]);
    // Once ended, the old lease and B's are both spent.
    for lease in [&lease_a, &lease_b] {
        assert!(matches!(
            store.complete_episode(&p, lease, &write, &outcome).await,
            Err(StoreError::LeaseLost(_))
        ));
    }
    let entities = store.list_entities(&p, None, 10).await.unwrap();
    assert_eq!(entities.len(), 2, "exactly one set of graph nodes");
    assert!(entities.iter().all(|e| e.mention_count == 1));
    assert_eq!(
        store
            .relations_touching(&p, &ids(entities.iter().map(|e| &e.id)))
            .await
            .unwrap()
            .len(),
        1
    );
    let done = store.get_episode(&p, &episode.id).await.unwrap().unwrap();
    assert_eq!(
        (
            done.status,
            done.attempts,
            done.lease_owner,
            done.lease_expires_at
        ),
        (EpisodeStatus::Done, 2, None, None),
        "ended: the lease is cleared"
    );
    // A lease of an episode of another project, or of none: not found.
    let q = store.ensure_project("q").await.unwrap();
    assert!(matches!(
        store.complete_episode(&q, &lease_b, &write, &outcome).await,
        Err(StoreError::NotFound {
            what: "episode",
            ..
        })
    ));
}

/// Test (2): the heartbeat keeps a lease past its first expiry; only the owner renews.
async fn renew_keeps_a_lease_alive(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let episode = store.add_episode(&p, &new_episode("a", "r")).await.unwrap();
    let lease = Duration::from_millis(300);
    let claimed = store.claim_episodes("a", lease, 1, false).await.unwrap();
    let held = lease_of(&claimed[0]);
    let first_expiry = claimed[0].lease_expires_at.clone().unwrap();
    for _ in 0..4 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(store.renew_lease(&held, lease).await.unwrap());
    }
    // 400 ms after the claim: past the first expiry, still held.
    let renewed = store.get_episode(&p, &episode.id).await.unwrap().unwrap();
    assert!(renewed.lease_expires_at.clone().unwrap() > first_expiry);
    assert!(
        store
            .claim_episodes("b", lease, 1, false)
            .await
            .unwrap()
            .is_empty(),
        "a renewed lease is not taken over"
    );
    for stranger in [
        Lease {
            owner: "b".into(),
            ..held.clone()
        },
        Lease {
            attempt: 2,
            ..held.clone()
        },
        Lease {
            job_id: "missing".into(),
            ..held.clone()
        },
    ] {
        assert!(
            !store.renew_lease(&stranger, LONG_LEASE).await.unwrap(),
            "{stranger:?} does not hold the episode"
        );
    }
    assert_eq!(
        store
            .get_episode(&p, &episode.id)
            .await
            .unwrap()
            .unwrap()
            .lease_expires_at,
        renewed.lease_expires_at,
        "a refused renewal changes nothing"
    );
}

/// Test (3): a release after a transient failure puts the episode back, claimable only after
/// its backoff, with the error and the attempts kept.
async fn released_episodes_wait_for_their_backoff(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let episode = store.add_episode(&p, &new_episode("a", "r")).await.unwrap();
    let claimed = claim(&store, 1, false).await;
    store
        .release_job(
            &p,
            &lease_of(&claimed[0]),
            &release("model call failed: 503", Duration::from_millis(300)),
        )
        .await
        .unwrap();
    let released = store.get_episode(&p, &episode.id).await.unwrap().unwrap();
    assert_eq!(
        (
            released.status,
            released.attempts,
            released.error.as_deref(),
            released.lease_owner.as_deref()
        ),
        (
            EpisodeStatus::Pending,
            1,
            Some("model call failed: 503"),
            None
        )
    );
    assert!(released.available_at.is_some());
    assert_eq!(
        store.get_episode(&p, &episode.id).await.unwrap().unwrap(),
        released
    );
    assert!(
        claim(&store, 5, false).await.is_empty(),
        "not claimable before its backoff"
    );
    // Released, the old lease is spent.
    assert!(matches!(
        store
            .release_job(
                &p,
                &lease_of(&claimed[0]),
                &release("again", Duration::ZERO)
            )
            .await,
        Err(StoreError::LeaseLost(_))
    ));
    tokio::time::sleep(Duration::from_millis(400)).await;
    let again = claim(&store, 5, false).await;
    assert_eq!(again.len(), 1, "claimable after its backoff");
    assert_eq!(
        (again[0].id.as_str(), again[0].attempts),
        (episode.id.as_str(), 2)
    );
}

/// Test (4): failed episodes start over; asking to retry any other is refused.
async fn retry_episodes_requeues_failed_ones(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let q = store.ensure_project("q").await.unwrap();
    let mut added = Vec::new();
    for name in ["a", "b", "c", "d"] {
        added.push(
            store
                .add_episode(&p, &new_episode(name, "r"))
                .await
                .unwrap(),
        );
    }
    let elsewhere = store.add_episode(&q, &new_episode("e", "r")).await.unwrap();
    let claimed = claim(&store, 10, false).await;
    assert_eq!(claimed.len(), 5);
    let failure = EpisodeOutcome {
        error: Some("model call failed: 400".into()),
        ..EpisodeOutcome::default()
    };
    // a, b and e failed; c is done; d is still running.
    for episode in claimed
        .iter()
        .filter(|e| ["a", "b", "e"].contains(&e.user_message.as_str()))
    {
        store
            .finish_episode(
                &episode.project_id,
                &episode.id,
                Some(&lease_of(episode)),
                &failure,
            )
            .await
            .unwrap();
    }
    let c = claimed.iter().find(|e| e.user_message == "c").unwrap();
    store
        .finish_episode(&p, &c.id, Some(&lease_of(c)), &EpisodeOutcome::default())
        .await
        .unwrap();
    let [a, b, c, d] = [0, 1, 2, 3].map(|i| added[i].id.clone());

    for (id, status) in [(&c, "done"), (&d, "running")] {
        match store
            .retry_episodes(&p, Some(&[a.clone(), id.clone()]))
            .await
        {
            Err(StoreError::InvalidState(message)) => {
                assert!(message.contains(id.as_str()), "{message}");
                assert!(message.contains(status), "{message}");
                assert!(message.contains("not failed"), "{message}");
            }
            other => panic!("retrying a {status} episode: {other:?}"),
        }
    }
    assert!(matches!(
        store
            .retry_episodes(&p, Some(std::slice::from_ref(&elsewhere.id)))
            .await,
        Err(StoreError::NotFound {
            what: "episode",
            ..
        })
    ));
    let failed = store.get_episode(&p, &a).await.unwrap().unwrap();
    assert_eq!(
        failed.status,
        EpisodeStatus::Failed,
        "a refused retry changes nothing"
    );

    let retried = store
        .retry_episodes(&p, Some(&[a.clone(), a.clone()]))
        .await
        .unwrap();
    assert_eq!(retried.len(), 1);
    assert_eq!(
        (
            retried[0].id.as_str(),
            retried[0].status,
            retried[0].attempts,
            retried[0].error.as_deref(),
            retried[0].available_at.as_deref()
        ),
        (a.as_str(), EpisodeStatus::Pending, 0, None, None)
    );
    // Every failed one of the project: b (a is pending already, e is another project's).
    let rest = store.retry_episodes(&p, None).await.unwrap();
    assert_eq!(rest.iter().map(|e| &e.id).collect::<Vec<_>>(), [&b]);
    assert!(store.retry_episodes(&p, None).await.unwrap().is_empty());
    let again = claim(&store, 10, false).await;
    assert_eq!(
        again
            .iter()
            .map(|e| (&e.id, e.attempts))
            .collect::<Vec<_>>(),
        [(&a, 1), (&b, 1)],
        "attempts count from zero again"
    );
    let untouched = store.get_episode(&q, &elsewhere.id).await.unwrap().unwrap();
    assert_eq!(untouched.status, EpisodeStatus::Failed);
}

async fn taken_over_after_reopen(url: &str) {
    let store = quarry_store::open(url).await.unwrap();
    let p = store.ensure_project("p").await.unwrap();
    let episode = store.add_episode(&p, &new_episode("a", "r")).await.unwrap();
    let lease = Duration::from_millis(500);
    let claimed = store.claim_episodes("dead", lease, 5, false).await.unwrap();
    assert_eq!(claimed.len(), 1);
    drop(store); // the worker's process dies mid-extraction

    let store = quarry_store::open(url).await.unwrap();
    let stuck = store.get_episode(&p, &episode.id).await.unwrap().unwrap();
    assert_eq!(stuck.status, EpisodeStatus::Running);
    assert_eq!(stuck.lease_owner.as_deref(), Some("dead"));
    tokio::time::sleep(lease + Duration::from_millis(100)).await;
    let claimed = store
        .claim_episodes("alive", LONG_LEASE, 5, false)
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(
        (
            claimed[0].id.as_str(),
            claimed[0].attempts,
            claimed[0].lease_owner.as_deref()
        ),
        (episode.id.as_str(), 2, Some("alive"))
    );
}

async fn finish_episode_done_and_failed(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let other = store.ensure_project("other").await.unwrap();
    let ok = store.add_episode(&p, &new_episode("a", "r")).await.unwrap();
    let bad = store.add_episode(&p, &new_episode("b", "r")).await.unwrap();
    let claimed = claim(&store, 2, false).await;
    let [ok_lease, bad_lease] =
        [&ok, &bad].map(|added| lease_of(claimed.iter().find(|e| e.id == added.id).unwrap()));
    let outcome = EpisodeOutcome {
        error: None,
        entities_stored: 3,
        entities_skipped: 1,
        relationships_stored: 2,
        relationships_skipped: 4,
    };
    let done = store
        .finish_episode(&p, &ok.id, Some(&ok_lease), &outcome)
        .await
        .unwrap();
    assert_eq!(done.status, EpisodeStatus::Done);
    assert_eq!(
        (
            done.lease_owner.as_deref(),
            done.lease_expires_at.as_deref()
        ),
        (None, None)
    );
    assert_eq!(
        (
            done.entities_stored,
            done.entities_skipped,
            done.relationships_stored,
            done.relationships_skipped,
            done.error.clone()
        ),
        (3, 1, 2, 4, None)
    );
    assert!(done.updated_at > ok.updated_at);
    assert_eq!(store.get_episode(&p, &ok.id).await.unwrap().unwrap(), done);

    let failure = EpisodeOutcome {
        error: Some("model unreachable".into()),
        ..EpisodeOutcome::default()
    };
    let failed = store
        .finish_episode(&p, &bad.id, Some(&bad_lease), &failure)
        .await
        .unwrap();
    assert_eq!(failed.status, EpisodeStatus::Failed);
    assert_eq!(failed.error.as_deref(), Some("model unreachable"));
    assert_eq!(failed.attempts, 1);
    // Ended: the lease is spent; an unfenced end still works (and changes the status).
    assert!(matches!(
        store
            .finish_episode(&p, &bad.id, Some(&bad_lease), &outcome)
            .await,
        Err(StoreError::LeaseLost(_))
    ));
    assert_eq!(
        store.get_episode(&p, &bad.id).await.unwrap().unwrap(),
        failed
    );

    for held in [None, Some(&ok_lease)] {
        assert!(matches!(
            store.finish_episode(&p, "missing", held, &outcome).await,
            Err(StoreError::NotFound {
                what: "episode",
                ..
            })
        ));
        assert!(matches!(
            store.finish_episode(&other, &ok.id, held, &outcome).await,
            Err(StoreError::NotFound {
                what: "episode",
                ..
            })
        ));
    }
    // Finished episodes are not queued.
    assert!(claim(&store, 5, false).await.is_empty());
    let unfenced = store
        .finish_episode(&p, &bad.id, None, &outcome)
        .await
        .unwrap();
    assert_eq!(unfenced.status, EpisodeStatus::Done);
}

async fn apply_graph_inserts_then_updates(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let first_episode = store
        .add_episode(&p, &new_episode("one", "r"))
        .await
        .unwrap();
    let first = store
        .apply_graph(
            &p,
            Some(&first_episode.id),
            &GraphWrite {
                entities: vec![
                    node(None, "Alice", "person", Some("Engineer.")),
                    node(None, "NexusAI", "project", Some("An assistant.")),
                ],
                relationships: vec![edge(0, 1, "works_on", Some("Primary developer."))],
            },
        )
        .await
        .unwrap();
    assert_eq!(first.inserted, [true, true]);
    let (alice, nexus) = (first.entities[0].clone(), first.entities[1].clone());
    assert_eq!(
        (alice.title.as_str(), alice.entity_type.as_str()),
        ("Alice", "person")
    );
    assert_eq!(alice.mention_count, 1);
    assert_eq!(alice.notes.as_deref(), Some("Engineer."));
    assert!(alice.last_seen_at.is_some());
    assert_eq!(alice.metadata.get("source"), Some(&json!("extraction")));
    assert!(alice.fields.is_empty() && alice.parent_id.is_none());
    assert_eq!(
        store.get_entity(&p, &alice.id).await.unwrap().unwrap(),
        alice
    );
    let works_on = first.relations[0].clone();
    assert_eq!(
        (works_on.from_id.as_str(), works_on.to_id.as_str()),
        (alice.id.as_str(), nexus.id.as_str())
    );
    assert_eq!(works_on.mention_count, 1);
    assert_eq!(works_on.notes.as_deref(), Some("Primary developer."));

    // Again: Alice by id without notes, NexusAI by exact (type, title) with new notes, the
    // relation without notes; "Alicia" is another entity (a differently cased "alice" would not
    // be: it has Alice's name key, see graph_writes_find_entities_by_name_key).
    let second_episode = store
        .add_episode(&p, &new_episode("two", "r"))
        .await
        .unwrap();
    let second = store
        .apply_graph(
            &p,
            Some(&second_episode.id),
            &GraphWrite {
                entities: vec![
                    node(Some(&alice.id), "Alice", "person", None),
                    node(None, "NexusAI", "project", Some("A modular assistant.")),
                    node(None, "Alicia", "person", None),
                ],
                relationships: vec![edge(0, 1, "works_on", None), edge(1, 2, "knows", None)],
            },
        )
        .await
        .unwrap();
    assert_eq!(second.inserted, [false, false, true]);
    let alice2 = &second.entities[0];
    assert_eq!(alice2.id, alice.id);
    assert_eq!(alice2.mention_count, 2);
    assert_eq!(
        alice2.notes.as_deref(),
        Some("Engineer."),
        "notes kept when none given"
    );
    assert_eq!(alice2.created_at, alice.created_at);
    assert!(alice2.last_seen_at > alice.last_seen_at);
    assert!(alice2.updated_at > alice.updated_at);
    let nexus2 = &second.entities[1];
    assert_eq!(
        nexus2.id, nexus.id,
        "exact (type, title) found without an id"
    );
    assert_eq!(nexus2.mention_count, 2);
    assert_eq!(
        nexus2.notes.as_deref(),
        Some("A modular assistant."),
        "notes replaced"
    );
    assert_ne!(second.entities[2].id, alice.id);
    assert_eq!(second.entities[2].mention_count, 1);
    assert_eq!(
        store.get_entity(&p, &nexus.id).await.unwrap().unwrap(),
        *nexus2
    );

    let works_on2 = &second.relations[0];
    assert_eq!(works_on2.id, works_on.id);
    assert_eq!(works_on2.mention_count, 2);
    assert_eq!(works_on2.notes.as_deref(), Some("Primary developer."));
    assert_eq!(works_on2.first_seen_at, works_on.first_seen_at);
    assert!(works_on2.last_seen_at > works_on.last_seen_at);
    assert_eq!(second.relations[1].mention_count, 1);

    // Notes given for the relation replace the stored ones.
    let third = store
        .apply_graph(
            &p,
            None,
            &GraphWrite {
                entities: vec![
                    node(Some(&alice.id), "Alice", "person", None),
                    node(Some(&nexus.id), "NexusAI", "project", None),
                ],
                relationships: vec![edge(0, 1, "works_on", Some("Lead."))],
            },
        )
        .await
        .unwrap();
    assert_eq!(third.relations[0].mention_count, 3);
    assert_eq!(third.relations[0].notes.as_deref(), Some("Lead."));
    assert_eq!(third.entities[0].mention_count, 3);

    // Links: both episodes reach Alice (newest first), only the second reaches "Alicia".
    let episodes = store.entity_episodes(&p, &alice.id, 10).await.unwrap();
    assert_eq!(
        episodes.iter().map(|e| &e.id).collect::<Vec<_>>(),
        [&second_episode.id, &first_episode.id]
    );
    assert_eq!(
        episodes[1],
        store
            .get_episode(&p, &first_episode.id)
            .await
            .unwrap()
            .unwrap()
    );
    assert_eq!(
        store.entity_episodes(&p, &alice.id, 1).await.unwrap().len(),
        1
    );
    let lower_alice = store
        .entity_episodes(&p, &second.entities[2].id, 10)
        .await
        .unwrap();
    assert_eq!(
        lower_alice.iter().map(|e| &e.id).collect::<Vec<_>>(),
        [&second_episode.id]
    );
    let linked = store.documents(&p, Some(&alice.id)).await.unwrap();
    assert_eq!(linked.len(), 2);
    assert!(linked.iter().all(|d| d.kind == DocumentKind::Episode));
    let other = store.ensure_project("other").await.unwrap();
    assert!(
        store
            .entity_episodes(&other, &alice.id, 10)
            .await
            .unwrap()
            .is_empty()
    );

    // Entities made otherwise carry no graph state.
    let plain = store
        .create_entity(&p, &new_entity("company", "Acme"))
        .await
        .unwrap();
    assert_eq!(
        (
            plain.mention_count,
            plain.notes.clone(),
            plain.last_seen_at.clone()
        ),
        (0, None, None)
    );
    assert_eq!(
        store.get_entity(&p, &plain.id).await.unwrap().unwrap(),
        plain
    );
}

async fn apply_graph_failures_write_nothing(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let other = store.ensure_project("other").await.unwrap();
    let foreign = store
        .create_entity(&other, &new_entity("person", "Eve"))
        .await
        .unwrap();
    let foreign_episode = store
        .add_episode(&other, &new_episode("x", "y"))
        .await
        .unwrap();
    let fresh = |existing: Option<&str>| GraphWrite {
        entities: vec![
            node(None, "Bob", "person", None),
            node(existing, "Eve", "person", None),
        ],
        relationships: vec![edge(0, 1, "knows", None)],
    };
    for existing in ["missing", foreign.id.as_str()] {
        assert!(matches!(
            store.apply_graph(&p, None, &fresh(Some(existing))).await,
            Err(StoreError::NotFound { what: "entity", .. })
        ));
    }
    assert!(matches!(
        store
            .apply_graph(&p, Some(&foreign_episode.id), &fresh(None))
            .await,
        Err(StoreError::NotFound {
            what: "episode",
            ..
        })
    ));
    let mut out_of_range = fresh(None);
    out_of_range.relationships.push(edge(0, 2, "knows", None));
    assert!(matches!(
        store.apply_graph(&p, None, &out_of_range).await,
        Err(StoreError::Conflict(_))
    ));
    assert!(
        store.list_entities(&p, None, 10).await.unwrap().is_empty(),
        "a failed write rolls back the entities before the failure"
    );
    let untouched = store
        .get_entity(&other, &foreign.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(untouched.mention_count, 0);
}

async fn complete_episode_writes_graph_and_ends_episode(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let known = store
        .apply_graph(
            &p,
            None,
            &GraphWrite {
                entities: vec![
                    node(None, "Alice", "person", Some("Engineer.")),
                    node(None, "Rust", "technology", None),
                    node(None, "Acme", "organization", None),
                ],
                relationships: vec![edge(0, 1, "uses", None)],
            },
        )
        .await
        .unwrap();
    let [alice, rust, acme] = [0, 1, 2].map(|i| known.entities[i].clone());
    let episode = store
        .add_episode(&p, &new_episode("one", "r"))
        .await
        .unwrap();
    let claimed = claim(&store, 1, false).await;
    assert_eq!(claimed.len(), 1);
    let outcome = EpisodeOutcome {
        error: None,
        entities_stored: 4,
        entities_skipped: 1,
        relationships_stored: 3,
        relationships_skipped: 2,
    };
    let applied = store
        .complete_episode(
            &p,
            &lease_of(&claimed[0]),
            &GraphWrite {
                entities: vec![
                    node(Some(&rust.id), "Rust", "technology", Some("A language.")),
                    node(Some(&alice.id), "Alice", "person", None),
                    node(None, "Atlas", "project", None),
                    node(None, "Acme", "organization", None),
                ],
                relationships: vec![
                    edge(1, 0, "uses", Some("Daily.")),
                    edge(1, 2, "works_on", None),
                    edge(2, 0, "uses", None),
                ],
            },
            &outcome,
        )
        .await
        .unwrap();
    assert_eq!(applied.inserted, [false, false, true, false]);
    assert_eq!(
        applied
            .entities
            .iter()
            .map(|e| (e.title.as_str(), e.mention_count))
            .collect::<Vec<_>>(),
        [("Rust", 2), ("Alice", 2), ("Atlas", 1), ("Acme", 2)],
        "in write order, by id, by (type, title), or inserted"
    );
    assert_eq!(applied.entities[0].id, rust.id);
    assert_eq!(applied.entities[0].notes.as_deref(), Some("A language."));
    assert_eq!(applied.entities[1].notes.as_deref(), Some("Engineer."));
    assert_eq!(applied.entities[3].id, acme.id);
    for entity in &applied.entities {
        assert_eq!(
            store.get_entity(&p, &entity.id).await.unwrap().as_ref(),
            Some(entity)
        );
    }
    let atlas = &applied.entities[2];
    assert_eq!(
        applied
            .relations
            .iter()
            .map(|r| (
                r.from_id.as_str(),
                r.to_id.as_str(),
                r.label.as_str(),
                r.mention_count,
                r.notes.as_deref()
            ))
            .collect::<Vec<_>>(),
        [
            (
                alice.id.as_str(),
                rust.id.as_str(),
                "uses",
                2,
                Some("Daily.")
            ),
            (alice.id.as_str(), atlas.id.as_str(), "works_on", 1, None),
            (atlas.id.as_str(), rust.id.as_str(), "uses", 1, None),
        ],
        "in write order"
    );
    assert_eq!(applied.relations[0].id, known.relations[0].id);

    let done = store.get_episode(&p, &episode.id).await.unwrap().unwrap();
    assert_eq!(done.status, EpisodeStatus::Done);
    assert_eq!(
        (
            done.entities_stored,
            done.entities_skipped,
            done.relationships_stored,
            done.relationships_skipped,
            done.error.clone(),
            done.attempts
        ),
        (4, 1, 3, 2, None, 1),
        "the outcome as given"
    );
    for entity in &applied.entities {
        let linked = store.entity_episodes(&p, &entity.id, 10).await.unwrap();
        assert_eq!(linked.len(), 1, "{} linked once", entity.title);
        assert_eq!(linked[0].id, episode.id);
    }

    // A write repeating an entity and a relation counts every repetition; an empty write just
    // ends the episode.
    let again = store
        .add_episode(&p, &new_episode("two", "r"))
        .await
        .unwrap();
    let empty = store
        .add_episode(&p, &new_episode("three", "r"))
        .await
        .unwrap();
    let claimed = claim(&store, 2, false).await;
    assert_eq!(claimed.len(), 2);
    let repeated = store
        .complete_episode(
            &p,
            &lease_of(&claimed[0]),
            &GraphWrite {
                entities: vec![
                    node(Some(&alice.id), "Alice", "person", None),
                    node(Some(&alice.id), "Alice", "person", Some("Lead.")),
                    node(Some(&atlas.id), "Atlas", "project", None),
                ],
                relationships: vec![edge(0, 2, "works_on", None), edge(1, 2, "works_on", None)],
            },
            &EpisodeOutcome::default(),
        )
        .await
        .unwrap();
    assert_eq!(repeated.entities[1].mention_count, 4);
    assert_eq!(repeated.entities[1].notes.as_deref(), Some("Lead."));
    assert_eq!(repeated.relations[1].mention_count, 3);
    assert_eq!(
        store
            .entity_episodes(&p, &alice.id, 10)
            .await
            .unwrap()
            .len(),
        2
    );
    let nothing = store
        .complete_episode(&p, &lease_of(&claimed[1]), &GraphWrite::default(), &outcome)
        .await
        .unwrap();
    assert!(nothing.entities.is_empty() && nothing.relations.is_empty());
    for id in [&again.id, &empty.id] {
        let ended = store.get_episode(&p, id).await.unwrap().unwrap();
        assert_eq!(ended.status, EpisodeStatus::Done);
    }
    assert!(claim(&store, 5, false).await.is_empty());
}

async fn complete_episode_failure_rolls_back_graph_and_status(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let other = store.ensure_project("other").await.unwrap();
    let alice = store
        .apply_graph(
            &p,
            None,
            &GraphWrite {
                entities: vec![node(None, "Alice", "person", None)],
                relationships: vec![],
            },
        )
        .await
        .unwrap()
        .entities
        .remove(0);
    let foreign = store
        .create_entity(&other, &new_entity("person", "Eve"))
        .await
        .unwrap();
    let episode = store
        .add_episode(&p, &new_episode("one", "r"))
        .await
        .unwrap();
    let foreign_episode = store
        .add_episode(&other, &new_episode("x", "y"))
        .await
        .unwrap();
    let claimed = claim(&store, 2, false).await;
    assert_eq!(claimed.len(), 2);
    let held = lease_of(claimed.iter().find(|e| e.id == episode.id).unwrap());
    let foreign_held = lease_of(claimed.iter().find(|e| e.id == foreign_episode.id).unwrap());
    let outcome = EpisodeOutcome {
        entities_stored: 3,
        relationships_stored: 2,
        ..EpisodeOutcome::default()
    };
    // Fails after the episode's end and Alice's mention were written: an unknown id.
    let write = |missing: &str| GraphWrite {
        entities: vec![
            node(None, "Bob", "person", Some("New.")),
            node(Some(&alice.id), "Alice", "person", Some("Changed.")),
            node(Some(missing), "Eve", "person", None),
        ],
        relationships: vec![edge(0, 1, "knows", None), edge(1, 2, "knows", None)],
    };
    for missing in ["missing", foreign.id.as_str()] {
        assert!(matches!(
            store
                .complete_episode(&p, &held, &write(missing), &outcome)
                .await,
            Err(StoreError::NotFound { what: "entity", .. })
        ));
    }
    let mut out_of_range = write(&alice.id);
    out_of_range.relationships.push(edge(0, 3, "knows", None));
    assert!(matches!(
        store
            .complete_episode(&p, &held, &out_of_range, &outcome)
            .await,
        Err(StoreError::Conflict(_))
    ));
    // Another project's episode, or none: not found, nothing written.
    let missing = Lease {
        job_id: "missing".into(),
        ..held.clone()
    };
    for lease in [&foreign_held, &missing] {
        assert!(matches!(
            store
                .complete_episode(&p, lease, &write(&alice.id), &outcome)
                .await,
            Err(StoreError::NotFound {
                what: "episode",
                ..
            })
        ));
    }

    let running = store.get_episode(&p, &episode.id).await.unwrap().unwrap();
    assert_eq!(running.status, EpisodeStatus::Running);
    assert_eq!(
        Some(&running),
        claimed.iter().find(|e| e.id == episode.id),
        "the episode's end rolled back with the graph"
    );
    let untouched = store
        .get_episode(&other, &foreign_episode.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(untouched.status, EpisodeStatus::Running);
    assert_eq!(
        store
            .list_entities(&p, None, 10)
            .await
            .unwrap()
            .iter()
            .map(|e| e.title.as_str())
            .collect::<Vec<_>>(),
        ["Alice"],
        "Bob's insert rolled back"
    );
    assert_eq!(
        store.get_entity(&p, &alice.id).await.unwrap().unwrap(),
        alice
    );
    assert!(
        store
            .entity_episodes(&p, &alice.id, 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .relations_touching(&p, &ids([&alice.id]))
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .get_entity(&other, &foreign.id)
            .await
            .unwrap()
            .unwrap()
            .mention_count,
        0
    );

    // The caller then records the failure.
    let failure = EpisodeOutcome {
        error: Some("storing the graph failed".into()),
        ..EpisodeOutcome::default()
    };
    let failed = store
        .finish_episode(&p, &episode.id, Some(&held), &failure)
        .await
        .unwrap();
    assert_eq!(failed.status, EpisodeStatus::Failed);
    assert_eq!(failed.error.as_deref(), Some("storing the graph failed"));
}

async fn graph_queries(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let other = store.ensure_project("other").await.unwrap();
    let applied = store
        .apply_graph(
            &p,
            None,
            &GraphWrite {
                entities: vec![
                    node(None, "Rust", "technology", None),
                    node(None, "Trusty Tools", "organization", None),
                    node(None, "100% Rust", "concept", None),
                    node(None, "100x Rust", "concept", None),
                    node(None, "a_b", "concept", None),
                    node(None, "axb", "concept", None),
                    node(None, "Alice", "person", None),
                ],
                relationships: vec![
                    edge(6, 0, "uses", None),
                    edge(1, 0, "builds_with", None),
                    edge(2, 3, "related_to", None),
                ],
            },
        )
        .await
        .unwrap();
    let id = |i: usize| applied.entities[i].id.clone();
    // "Trusty Tools" seen twice more: it outranks the other partial matches.
    for _ in 0..2 {
        store
            .apply_graph(
                &p,
                None,
                &GraphWrite {
                    entities: vec![node(Some(&id(1)), "Trusty Tools", "organization", None)],
                    relationships: vec![],
                },
            )
            .await
            .unwrap();
    }
    store
        .apply_graph(
            &other,
            None,
            &GraphWrite {
                entities: vec![node(None, "Rust", "technology", None)],
                relationships: vec![],
            },
        )
        .await
        .unwrap();

    // recent_entities: newest first, type filter, limit.
    let recent = store.recent_entities(&p, &[], 3).await.unwrap();
    assert_eq!(
        recent.iter().map(|e| e.id.clone()).collect::<Vec<_>>(),
        [id(6), id(5), id(4)]
    );
    let concepts = store
        .recent_entities(
            &p,
            &["concept".into(), "person".into(), "concept".into()],
            10,
        )
        .await
        .unwrap();
    assert_eq!(
        concepts.iter().map(|e| e.id.clone()).collect::<Vec<_>>(),
        [id(6), id(5), id(4), id(3), id(2)]
    );
    assert!(
        store
            .recent_entities(&p, &["place".into()], 10)
            .await
            .unwrap()
            .is_empty()
    );

    // find_entities_by_name: case-insensitive substring, exact first, then mentions, then title.
    let titles = |found: Vec<quarry_core::model::Entity>| {
        found.into_iter().map(|e| e.title).collect::<Vec<_>>()
    };
    assert_eq!(
        titles(
            store
                .find_entities_by_name(&p, "rust", None, 10)
                .await
                .unwrap()
        ),
        ["Rust", "Trusty Tools", "100% Rust", "100x Rust"]
    );
    assert_eq!(
        titles(
            store
                .find_entities_by_name(&p, "RUST", Some("concept"), 10)
                .await
                .unwrap()
        ),
        ["100% Rust", "100x Rust"]
    );
    assert_eq!(
        titles(
            store
                .find_entities_by_name(&p, "0%", None, 10)
                .await
                .unwrap()
        ),
        ["100% Rust"],
        "% is literal"
    );
    assert_eq!(
        titles(
            store
                .find_entities_by_name(&p, "a_b", None, 10)
                .await
                .unwrap()
        ),
        ["a_b"],
        "_ is literal"
    );
    assert_eq!(
        store
            .find_entities_by_name(&p, "", None, 100)
            .await
            .unwrap()
            .len(),
        7
    );
    assert_eq!(
        store
            .find_entities_by_name(&p, "", None, 2)
            .await
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        titles(
            store
                .find_entities_by_name(&other, "rust", None, 10)
                .await
                .unwrap()
        ),
        ["Rust"]
    );

    // get_entities: missing and foreign ids left out, duplicates once, long lists in pieces.
    let mut wanted = vec![id(0), "missing".into(), id(6), id(0)];
    let foreign = store
        .find_entities_by_name(&other, "rust", None, 1)
        .await
        .unwrap()[0]
        .id
        .clone();
    wanted.push(foreign.clone());
    let mut got: Vec<String> = store
        .get_entities(&p, &wanted)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.id)
        .collect();
    got.sort();
    let mut expected = vec![id(0), id(6)];
    expected.sort();
    assert_eq!(got, expected);
    assert!(store.get_entities(&p, &[]).await.unwrap().is_empty());
    let mut many: Vec<String> = (0..1100).map(|i| format!("missing-{i}")).collect();
    many.extend((0..7).map(id));
    many.push(foreign);
    assert_eq!(store.get_entities(&p, &many).await.unwrap().len(), 7);

    // relations_touching: either endpoint, each relation once.
    let touching = |ids: Vec<String>| {
        let store = store.clone();
        let p = p.clone();
        async move {
            let mut labels: Vec<String> = store
                .relations_touching(&p, &ids)
                .await
                .unwrap()
                .into_iter()
                .map(|r| r.label)
                .collect();
            labels.sort();
            labels
        }
    };
    assert_eq!(touching(vec![id(0)]).await, ["builds_with", "uses"]);
    assert_eq!(touching(vec![id(3)]).await, ["related_to"]);
    assert_eq!(touching(vec![id(6), id(0)]).await, ["builds_with", "uses"]);
    assert!(touching(vec![]).await.is_empty());
    assert!(touching(vec![id(5)]).await.is_empty());
    let mut spread: Vec<String> = (0..1100).map(|i| format!("missing-{i}")).collect();
    spread.insert(0, id(6));
    spread.push(id(0));
    assert_eq!(
        touching(spread).await,
        ["builds_with", "uses"],
        "ids in different pieces"
    );
    assert!(
        store
            .relations_touching(&other, &ids(&[id(0)]))
            .await
            .unwrap()
            .is_empty()
    );
}

// --- retrieval -------------------------------------------------------------------------------

fn chunk(document_id: &str, ordinal: i64, embedding: Vec<f32>) -> StoredChunk {
    let n = usize::try_from(ordinal).unwrap();
    StoredChunk {
        document_id: document_id.into(),
        ordinal,
        start: n * 10,
        end: n * 10 + 9,
        byte_start: n * 12,
        byte_end: n * 12 + 11,
        embedder: "hashing-384".into(),
        embedding,
    }
}

fn same_chunks(got: &[(String, StoredChunk)], expected: &[(String, StoredChunk)]) {
    assert_eq!(got.len(), expected.len());
    for ((got_project, got), (project, chunk)) in got.iter().zip(expected) {
        assert_eq!(got_project, project);
        let bits = |c: &StoredChunk| c.embedding.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(got), bits(chunk), "embeddings are bit-exact");
        let without = |c: &StoredChunk| StoredChunk {
            embedding: vec![],
            ..c.clone()
        };
        assert_eq!(without(got), without(chunk));
    }
}

async fn chunks_round_trip(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let q = store.ensure_project("q").await.unwrap();
    let a = store.add_document(&p, "a", "text a").await.unwrap();
    let b = store.add_document(&q, "b", "text b").await.unwrap();
    let episode = store.add_episode(&p, &new_episode("c", "r")).await.unwrap();
    let special = vec![
        0.0,
        -0.0,
        1.0e-45,
        -3.402_823_5e38,
        f32::INFINITY,
        f32::NAN,
        0.1,
        -0.333_333_34,
    ];
    let a_chunks = vec![
        chunk(&a.id, 0, special.clone()),
        chunk(&a.id, 1, vec![0.5; 384]),
        chunk(&a.id, 2, vec![]),
    ];
    store.put_chunks(&p, &a.id, &a_chunks).await.unwrap();
    let b_chunks = vec![chunk(&b.id, 0, vec![1.5, -2.25])];
    store.put_chunks(&q, &b.id, &b_chunks).await.unwrap();
    store
        .put_chunks(&p, &episode.id, &[chunk(&episode.id, 0, vec![0.25])])
        .await
        .unwrap();
    let mut expected: Vec<(String, StoredChunk)> = a_chunks
        .iter()
        .map(|c| (p.clone(), c.clone()))
        .chain(b_chunks.iter().map(|c| (q.clone(), c.clone())))
        .chain([(p.clone(), chunk(&episode.id, 0, vec![0.25]))])
        .collect();
    expected.sort_by(|x, y| (&x.1.document_id, x.1.ordinal).cmp(&(&y.1.document_id, y.1.ordinal)));
    same_chunks(&store.all_chunks().await.unwrap(), &expected);

    // Replacing: fewer chunks, new embedder; the other documents keep theirs.
    let mut replacement = chunk(&a.id, 0, vec![9.0, 8.0]);
    replacement.embedder = "minilm-l6-v2".into();
    store
        .put_chunks(&p, &a.id, std::slice::from_ref(&replacement))
        .await
        .unwrap();
    expected.retain(|(_, c)| c.document_id != a.id);
    expected.push((p.clone(), replacement));
    expected.sort_by(|x, y| (&x.1.document_id, x.1.ordinal).cmp(&(&y.1.document_id, y.1.ordinal)));
    same_chunks(&store.all_chunks().await.unwrap(), &expected);
    store.put_chunks(&p, &a.id, &[]).await.unwrap();
    expected.retain(|(_, c)| c.document_id != a.id);
    same_chunks(&store.all_chunks().await.unwrap(), &expected);

    assert!(matches!(
        store
            .put_chunks(&p, &b.id, &[chunk(&b.id, 0, vec![])])
            .await,
        Err(StoreError::NotFound {
            what: "document",
            ..
        })
    ));
    assert!(matches!(
        store
            .put_chunks(&p, &a.id, &[chunk(&b.id, 0, vec![])])
            .await,
        Err(StoreError::Conflict(_))
    ));
    assert!(matches!(
        store
            .put_chunks(
                &p,
                &a.id,
                &[chunk(&a.id, 0, vec![]), chunk(&a.id, 0, vec![])]
            )
            .await,
        Err(StoreError::Conflict(_))
    ));
    // The failed writes changed nothing; b's chunks are still there.
    same_chunks(&store.all_chunks().await.unwrap(), &expected);
}

async fn all_document_links_lists_every_document(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let q = store.ensure_project("q").await.unwrap();
    let x = store
        .create_entity(&p, &new_entity("company", "X"))
        .await
        .unwrap();
    let y = store
        .create_entity(&p, &new_entity("company", "Y"))
        .await
        .unwrap();
    let z = store
        .create_entity(&q, &new_entity("company", "Z"))
        .await
        .unwrap();
    let both = store.add_document(&p, "both", "t").await.unwrap();
    let none = store.add_document(&p, "none", "t").await.unwrap();
    let elsewhere = store.add_document(&q, "elsewhere", "t").await.unwrap();
    store.link_document(&p, &both.id, &y.id).await.unwrap();
    store.link_document(&p, &both.id, &x.id).await.unwrap();
    store.link_document(&q, &elsewhere.id, &z.id).await.unwrap();
    let episode = store.add_episode(&p, &new_episode("u", "a")).await.unwrap();
    let applied = store
        .apply_graph(
            &p,
            Some(&episode.id),
            &GraphWrite {
                entities: vec![node(Some(&x.id), "X", "company", None)],
                relationships: vec![],
            },
        )
        .await
        .unwrap();
    assert_eq!(applied.entities[0].id, x.id);

    let mut links = store.all_document_links().await.unwrap();
    for (_, _, entities) in &mut links {
        entities.sort();
    }
    links.sort();
    let mut both_entities = vec![x.id.clone(), y.id.clone()];
    both_entities.sort();
    let mut expected = vec![
        (both.id.clone(), p.clone(), both_entities),
        (none.id.clone(), p.clone(), vec![]),
        (elsewhere.id.clone(), q.clone(), vec![z.id.clone()]),
        (episode.id.clone(), p.clone(), vec![x.id.clone()]),
    ];
    expected.sort();
    assert_eq!(
        links, expected,
        "(document id, project id, linked entity ids)"
    );
}

async fn list_project_ids_lists_every_project(store: Arc<dyn Store>) {
    assert!(store.list_project_ids().await.unwrap().is_empty());
    let a = store.ensure_project("a").await.unwrap();
    let b = store.ensure_project("b").await.unwrap();
    store.ensure_project("a").await.unwrap();
    let mut got = store.list_project_ids().await.unwrap();
    got.sort();
    let mut expected = vec![a, b];
    expected.sort();
    assert_eq!(got, expected);
}

async fn concurrent_apply_graph_makes_one_entity(store: Arc<dyn Store>) {
    const TASKS: usize = 8;
    let p = store.ensure_project("p").await.unwrap();
    let mut tasks = Vec::new();
    for _ in 0..TASKS {
        let (store, p) = (store.clone(), p.clone());
        tasks.push(tokio::spawn(async move {
            let write = GraphWrite {
                entities: vec![
                    node(None, "Alice", "person", None),
                    node(None, "NexusAI", "project", None),
                ],
                relationships: vec![edge(0, 1, "works_on", None)],
            };
            store.apply_graph(&p, None, &write).await.unwrap()
        }));
    }
    let mut inserted = 0;
    for task in tasks {
        inserted += task.await.unwrap().inserted.iter().filter(|i| **i).count();
    }
    assert_eq!(inserted, 2, "each new (type, title) inserted once");
    let entities = store.list_entities(&p, None, 10).await.unwrap();
    assert_eq!(entities.len(), 2);
    assert!(entities.iter().all(|e| e.mention_count == TASKS as i64));
    let relations = store
        .relations_touching(&p, &ids(entities.iter().map(|e| &e.id)))
        .await
        .unwrap();
    assert_eq!(relations.len(), 1);
    assert_eq!(relations[0].mention_count, TASKS as i64);
}

/// A graph write that resolved nothing finds the entity of another spelling with the same name
/// key (`ACME Corp.` for `Acme Corp`) under its lock, whichever process wrote it: no normalised
/// duplicates. PostgreSQL also answers resolution candidates itself (exact, key, nearest).
async fn graph_writes_find_entities_by_name_key(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let write = |name: &str| GraphWrite {
        entities: vec![node(None, name, "organization", None)],
        relationships: vec![],
    };
    let first = store
        .apply_graph(&p, None, &write("Acme Corp"))
        .await
        .unwrap();
    assert_eq!(first.inserted, [true]);
    let again = store
        .apply_graph(&p, None, &write("ACME Corp."))
        .await
        .unwrap();
    assert_eq!(again.inserted, [false], "the same key is the same entity");
    assert_eq!(again.entities[0].id, first.entities[0].id);
    assert_eq!(again.entities[0].title, "Acme Corp");
    assert_eq!(again.entities[0].mention_count, 2);
    let other = store
        .apply_graph(&p, None, &write("Acme Tools"))
        .await
        .unwrap();
    assert_eq!(other.inserted, [true], "another key is another entity");
    let person = store
        .apply_graph(
            &p,
            None,
            &GraphWrite {
                entities: vec![node(None, "Acme Corp", "person", None)],
                relationships: vec![],
            },
        )
        .await
        .unwrap();
    assert_eq!(person.inserted, [true], "keys match within a type only");

    let names = ["acme corporation".to_owned(), "Acme Tols".to_owned()];
    match store
        .resolution_candidates(&p, "organization", &names)
        .await
        .unwrap()
    {
        // SQLite: the graph keeps its own cache.
        None => {}
        Some(candidates) => {
            let titles: Vec<&str> = candidates.iter().map(|e| e.title.as_str()).collect();
            assert!(titles.contains(&"Acme Corp"), "by name key: {titles:?}");
            assert!(titles.contains(&"Acme Tools"), "nearest title: {titles:?}");
            assert!(
                candidates.iter().all(|e| e.entity_type == "organization"),
                "{titles:?}"
            );
            assert!(
                candidates
                    .windows(2)
                    .all(|w| w[0].created_at <= w[1].created_at),
                "oldest first: {titles:?}"
            );
        }
    }
}

/// Run history pages by cursor: newest first, each page after the last run of the one before.
async fn run_history_pages_by_cursor(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let entity = store
        .create_entity(&p, &new_entity("company", "Acme"))
        .await
        .unwrap();
    let mut started = Vec::new();
    for _ in 0..5 {
        let run = store
            .start_run(&p, &entity.id, RunScope::Full, "test", None)
            .await
            .unwrap();
        started.push(run.id);
    }
    let all = store.list_runs(&p, &entity.id, 10).await.unwrap();
    let newest_first: Vec<&str> = all.iter().map(|r| r.id.as_str()).collect();
    let mut paged: Vec<String> = Vec::new();
    let mut before: Option<String> = None;
    loop {
        let page = store
            .runs_page(&p, &entity.id, before.as_deref(), 2)
            .await
            .unwrap();
        paged.extend(page.iter().map(|r| r.id.clone()));
        if page.len() < 2 {
            break;
        }
        before = page.last().map(|r| r.id.clone());
    }
    assert_eq!(paged, newest_first, "every run once, in order");
    assert_eq!(paged.len(), 5);
    assert!(matches!(
        store.runs_page(&p, &entity.id, Some("missing"), 2).await,
        Err(StoreError::NotFound { .. })
    ));
}
