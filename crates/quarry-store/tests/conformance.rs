//! One behaviour suite, run against SQLite (a temp file per test) and PostgreSQL (a fresh
//! database per test on the server named by `QUARRY_TEST_POSTGRES_URL`; `scripts/postgres.sh`
//! starts one). Without that variable the PostgreSQL half fails when `CI` is set and is skipped
//! with a notice otherwise.

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Once};

use quarry_core::model::{
    ApiKey, Confidence, NewEntity, NewResult, ResultStatus, ReviewDecision, RunScope, RunStatus,
    SourceRef,
};
use quarry_core::store::{Store, StoreError};
use serde_json::{Map, Value, json};

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

async fn postgres_store() -> Option<Arc<dyn Store>> {
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
    // A database per test: `fail_interrupted_runs` sweeps every project, so tests must not
    // share one.
    let admin = sqlx::PgPool::connect(&base)
        .await
        .expect("connect to QUARRY_TEST_POSTGRES_URL");
    let name = format!("quarry_t_{}", uuid::Uuid::new_v4().simple());
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&admin)
        .await
        .expect("create a test database");
    admin.close().await;
    let (server, query) = match base.split_once('?') {
        Some((server, query)) => (server, format!("?{query}")),
        None => (base.as_str(), String::new()),
    };
    let server = server.rsplit_once('/').map_or(server, |(server, _)| server);
    Some(
        quarry_store::open(&format!("{server}/{name}{query}"))
            .await
            .expect("open postgres store"),
    )
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
                    if let Some(store) = super::postgres_store().await {
                        super::$behaviour(store).await;
                    }
                }
            )*
        }
    };
}

conformance!(
    projects_are_isolated,
    entity_crud_and_case_insensitive_title,
    entity_types_round_trip,
    relation_upsert_counts_mentions,
    documents_and_links,
    runs_start_finish_list,
    fail_interrupted_runs_marks_running_failed,
    record_results_supersedes_same_field_only,
    latest_results_one_per_field_and_history_keeps_all,
    approve_promotes_value_into_entity,
    reject_stores_reason,
    reviewing_non_pending_is_invalid_state,
    feedback_summary_counts,
    feedback_summary_follows_supersede_and_reviews,
    api_keys_create_and_find,
    concurrent_record_results_do_not_corrupt,
);

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
            .review_result(&b, &result.id, &ReviewDecision::Approve, "eve")
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

async fn fail_interrupted_runs_marks_running_failed(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let q = store.ensure_project("q").await.unwrap();
    let a = store
        .create_entity(&p, &new_entity("company", "A"))
        .await
        .unwrap();
    let b = store
        .create_entity(&q, &new_entity("company", "B"))
        .await
        .unwrap();
    let running_a = store
        .start_run(&p, &a.id, RunScope::Full, "cli", None)
        .await
        .unwrap();
    let running_b = store
        .start_run(&q, &b.id, RunScope::Full, "cli", None)
        .await
        .unwrap();
    let finished = store
        .start_run(&p, &a.id, RunScope::Full, "cli", None)
        .await
        .unwrap();
    store
        .finish_run(&p, &finished.id, RunStatus::Completed, None)
        .await
        .unwrap();

    assert_eq!(
        store.fail_interrupted_runs().await.unwrap(),
        2,
        "every project's running runs"
    );
    for (project, id) in [(&p, &running_a.id), (&q, &running_b.id)] {
        let run = store.get_run(project, id).await.unwrap().unwrap();
        assert_eq!(run.status, RunStatus::Failed);
        assert_eq!(
            run.error.as_deref(),
            Some("interrupted: the process stopped before the run finished")
        );
        assert!(run.finished_at.is_some());
    }
    let untouched = store.get_run(&p, &finished.id).await.unwrap().unwrap();
    assert_eq!(untouched.status, RunStatus::Completed);
    assert_eq!(store.fail_interrupted_runs().await.unwrap(), 0);
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
        .review_result(&p, &approved.id, &ReviewDecision::Approve, "rev")
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
        .review_result(&p, &result.id, &ReviewDecision::Approve, "rev")
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
        .review_result(&p, &result.id, &decision, "rev")
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
        .review_result(&p, &result.id, &ReviewDecision::Approve, "rev")
        .await
        .unwrap();
    for decision in [
        ReviewDecision::Approve,
        ReviewDecision::Reject { reason: None },
    ] {
        assert!(matches!(
            store.review_result(&p, &result.id, &decision, "rev").await,
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
                .review_result(&p, &result.id, &ReviewDecision::Approve, "rev")
                .await,
            Err(StoreError::InvalidState(_))
        ),
        "superseded"
    );
    assert!(matches!(
        store
            .review_result(&p, "missing", &ReviewDecision::Approve, "rev")
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
                .review_result(&p, &result.id, &decision, "rev")
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
        .review_result(&p, &first[0].id, &ReviewDecision::Approve, "rev")
        .await
        .unwrap();
    store
        .review_result(&p, &first[1].id, &reject("outdated"), "rev")
        .await
        .unwrap();
    store
        .review_result(
            &p,
            &first[2].id,
            &ReviewDecision::Reject { reason: None },
            "rev",
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
        .review_result(&p, &first[0].id, &reject("late"), "rev")
        .await;
    assert!(matches!(err, Err(StoreError::InvalidState(_))));
    store
        .review_result(&p, &second[0].id, &reject("outdated"), "rev")
        .await
        .unwrap();
    store
        .review_result(&p, &second[1].id, &reject("wrong city"), "rev")
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
