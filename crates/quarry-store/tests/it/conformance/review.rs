//! The web app's review views: entity pages, the latest results and tasks of a page's entities,
//! the review queue, field locks, document and episode pages. Part of the conformance suite (both
//! backends).

use std::sync::Arc;

use quarry_core::model::{
    Confidence, DocumentKind, EpisodeStatus, NewEpisode, NewFieldTask, NewWorkflow, NodeState,
    ResultStatus, ReviewDecision, RunScope,
};
use quarry_core::store::{Store, StoreError};
use serde_json::{Map, Value, json};

use super::{candidate, new_entity, one};

fn titles(entities: &[quarry_core::model::Entity]) -> Vec<&str> {
    entities.iter().map(|e| e.title.as_str()).collect()
}

pub async fn entity_pages_order_search_and_count(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let other = store.ensure_project("other").await.unwrap();
    for title in ["Delta", "Alpha", "Charlie", "Bravo", "Pure_Co 100%"] {
        store
            .create_entity(&p, &new_entity("company", title))
            .await
            .unwrap();
    }
    store
        .create_entity(&p, &new_entity("person", "Alpha Person"))
        .await
        .unwrap();
    store
        .create_entity(&other, &new_entity("company", "Alpha Other"))
        .await
        .unwrap();

    let page = store.entity_page(&p, "company", None, 2, 0).await.unwrap();
    assert_eq!(page.total, 5);
    // By title (the database's own text order), then id.
    assert_eq!(titles(&page.items), ["Alpha", "Bravo"]);
    let page = store.entity_page(&p, "company", None, 2, 4).await.unwrap();
    assert_eq!((page.total, titles(&page.items)), (5, vec!["Pure_Co 100%"]));
    let page = store.entity_page(&p, "company", None, 2, 9).await.unwrap();
    assert_eq!((page.total, page.items.len()), (5, 0));

    let found = store
        .entity_page(&p, "company", Some("ALPH"), 10, 0)
        .await
        .unwrap();
    assert_eq!((found.total, titles(&found.items)), (1, vec!["Alpha"]));
    // LIKE's wildcards are matched literally.
    let found = store
        .entity_page(&p, "company", Some("_co 1"), 10, 0)
        .await
        .unwrap();
    assert_eq!(
        (found.total, titles(&found.items)),
        (1, vec!["Pure_Co 100%"])
    );
    let found = store
        .entity_page(&p, "company", Some("0%"), 10, 0)
        .await
        .unwrap();
    assert_eq!(found.total, 1);
    let found = store
        .entity_page(&p, "company", Some("_"), 10, 0)
        .await
        .unwrap();
    assert_eq!(found.total, 1);
    let blank = store
        .entity_page(&p, "company", Some("  "), 10, 0)
        .await
        .unwrap();
    assert_eq!(blank.total, 5, "a blank query matches everything");
    let none = store
        .entity_page(&other, "person", None, 10, 0)
        .await
        .unwrap();
    assert_eq!((none.total, none.items.len()), (0, 0));
}

fn task(name: &str, state: NodeState, depends_on: &[&str]) -> NewFieldTask {
    NewFieldTask {
        field_name: name.to_owned(),
        state,
        depends_on: depends_on.iter().map(|d| (*d).to_owned()).collect(),
        gated: state == NodeState::WaitingHuman,
        feedback: None,
        error: None,
        instructions: None,
    }
}

fn workflow(entity_id: &str, fields: Option<Vec<String>>, tasks: Vec<NewFieldTask>) -> NewWorkflow {
    NewWorkflow {
        entity_id: entity_id.to_owned(),
        scope: if fields.is_some() {
            RunScope::Field
        } else {
            RunScope::Full
        },
        triggered_by: "test".to_owned(),
        fields_requested: fields,
        root_run_id: None,
        depth: 0,
        max_attempts: 3,
        instructions: None,
        tasks,
    }
}

pub async fn latest_results_and_tasks_of_a_page(store: Arc<dyn Store>) {
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
    let c = store
        .create_entity(&p, &new_entity("company", "C"))
        .await
        .unwrap();
    one(
        &store,
        &p,
        candidate(&a.id, "ceo", json!("Old"), Confidence::Low),
    )
    .await;
    let a_ceo = one(
        &store,
        &p,
        candidate(&a.id, "ceo", json!("New"), Confidence::High),
    )
    .await;
    let a_rev = one(
        &store,
        &p,
        candidate(&a.id, "revenue", json!(5), Confidence::Medium),
    )
    .await;
    let b_ceo = one(
        &store,
        &p,
        candidate(&b.id, "ceo", json!("Bea"), Confidence::High),
    )
    .await;
    // A rejected result is still the latest of its field; a superseded one never is.
    store
        .review_result(
            &p,
            &b_ceo.id,
            &ReviewDecision::Reject { reason: None },
            "rita",
            None,
        )
        .await
        .unwrap();

    let ids = vec![a.id.clone(), b.id.clone(), c.id.clone()];
    let mut latest: Vec<(String, String, Value, ResultStatus)> = store
        .latest_results_of(&p, &ids)
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.entity_id, r.field_name, r.value, r.status))
        .collect();
    latest.sort_by(|x, y| (&x.0, &x.1).cmp(&(&y.0, &y.1)));
    let mut expected = vec![
        (
            a.id.clone(),
            "ceo".to_owned(),
            json!("New"),
            ResultStatus::Pending,
        ),
        (
            a.id.clone(),
            "revenue".to_owned(),
            json!(5),
            ResultStatus::Pending,
        ),
        (
            b.id.clone(),
            "ceo".to_owned(),
            json!("Bea"),
            ResultStatus::Rejected,
        ),
    ];
    expected.sort_by(|x, y| (&x.0, &x.1).cmp(&(&y.0, &y.1)));
    assert_eq!(latest, expected);
    let whole = store
        .latest_results_of(&p, std::slice::from_ref(&a.id))
        .await
        .unwrap();
    assert!(
        whole
            .iter()
            .any(|r| r.id == a_ceo.id && r.sources.len() == 1)
    );
    assert!(whole.iter().any(|r| r.id == a_rev.id));
    assert!(store.latest_results_of(&p, &[]).await.unwrap().is_empty());
    assert!(
        store
            .latest_results_of(&other, &ids)
            .await
            .unwrap()
            .is_empty(),
        "another project sees none"
    );

    // Tasks: a full run, then a rerun of one field; the latest task of each field wins.
    let (first, _) = store
        .create_workflow(
            &p,
            &workflow(
                &a.id,
                None,
                vec![
                    task("ceo", NodeState::Queued, &[]),
                    task("approver", NodeState::WaitingHuman, &[]),
                    task("summary", NodeState::Pending, &["approver"]),
                ],
            ),
        )
        .await
        .unwrap();
    let (second, _) = store
        .create_workflow(
            &p,
            &workflow(
                &a.id,
                Some(vec!["ceo".to_owned()]),
                vec![task("ceo", NodeState::Queued, &[])],
            ),
        )
        .await
        .unwrap();
    let mut tasks: Vec<(String, String, NodeState)> = store
        .latest_tasks_of(&p, &ids)
        .await
        .unwrap()
        .into_iter()
        .map(|t| (t.field_name, t.run_id, t.state))
        .collect();
    tasks.sort_by(|x, y| x.0.cmp(&y.0));
    assert_eq!(
        tasks,
        [
            (
                "approver".to_owned(),
                first.id.clone(),
                NodeState::WaitingHuman
            ),
            ("ceo".to_owned(), second.id.clone(), NodeState::Queued),
            ("summary".to_owned(), first.id.clone(), NodeState::Pending),
        ]
    );
    assert!(
        store
            .latest_tasks_of(&other, &ids)
            .await
            .unwrap()
            .is_empty()
    );

    // Many entities at once (more than one IN list).
    let many: Vec<String> = (0..600)
        .map(|i| format!("missing-{i}"))
        .chain(ids)
        .collect();
    assert_eq!(store.latest_results_of(&p, &many).await.unwrap().len(), 3);
    assert_eq!(store.latest_tasks_of(&p, &many).await.unwrap().len(), 3);
}

pub async fn review_queue_oldest_first_with_titles_and_total(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let other = store.ensure_project("other").await.unwrap();
    let a = store
        .create_entity(&p, &new_entity("company", "Acme"))
        .await
        .unwrap();
    let b = store
        .create_entity(&p, &new_entity("company", "Beta"))
        .await
        .unwrap();
    let person = store
        .create_entity(&p, &new_entity("person", "Ann"))
        .await
        .unwrap();
    let r1 = one(
        &store,
        &p,
        candidate(&a.id, "ceo", json!("X"), Confidence::High),
    )
    .await;
    let r2 = one(
        &store,
        &p,
        candidate(&b.id, "ceo", json!("Y"), Confidence::Low),
    )
    .await;
    one(
        &store,
        &p,
        candidate(&person.id, "age", json!(3), Confidence::Low),
    )
    .await;
    let r3 = one(
        &store,
        &p,
        candidate(&a.id, "revenue", json!(1), Confidence::Low),
    )
    .await;
    let r4 = one(
        &store,
        &p,
        candidate(&b.id, "revenue", json!(2), Confidence::Low),
    )
    .await;

    let queue = store.review_queue(&p, "company", 10, 0).await.unwrap();
    assert_eq!(queue.total, 4);
    let order: Vec<(&str, &str)> = queue
        .items
        .iter()
        .map(|q| (q.result.id.as_str(), q.entity_title.as_str()))
        .collect();
    assert_eq!(
        order,
        [
            (r1.id.as_str(), "Acme"),
            (r2.id.as_str(), "Beta"),
            (r3.id.as_str(), "Acme"),
            (r4.id.as_str(), "Beta")
        ]
    );
    let page = store.review_queue(&p, "company", 2, 2).await.unwrap();
    assert_eq!(page.total, 4);
    assert_eq!(
        page.items.iter().map(|q| &q.result.id).collect::<Vec<_>>(),
        [&r3.id, &r4.id]
    );

    // Reviewed and superseded results leave it; the count follows.
    store
        .review_result(&p, &r1.id, &ReviewDecision::Approve, "rita", None)
        .await
        .unwrap();
    let newer = one(
        &store,
        &p,
        candidate(&b.id, "ceo", json!("Z"), Confidence::High),
    )
    .await;
    let queue = store.review_queue(&p, "company", 10, 0).await.unwrap();
    assert_eq!(queue.total, 3);
    assert_eq!(
        queue.items.iter().map(|q| &q.result.id).collect::<Vec<_>>(),
        [&r3.id, &r4.id, &newer.id]
    );
    assert_eq!(queue.items[2].result.status, ResultStatus::Pending);
    let people = store.review_queue(&p, "person", 10, 0).await.unwrap();
    assert_eq!((people.total, people.items.len()), (1, 1));
    let theirs = store.review_queue(&other, "company", 10, 0).await.unwrap();
    assert_eq!((theirs.total, theirs.items.len()), (0, 0));
}

pub async fn field_locks_keep_the_rest_and_lose_none_under_concurrency(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let other = store.ensure_project("other").await.unwrap();
    let mut metadata = Map::new();
    metadata.insert("owner".to_owned(), json!("ops"));
    let entity = store
        .create_entity(
            &p,
            &quarry_core::model::NewEntity {
                metadata,
                ..new_entity("company", "Acme")
            },
        )
        .await
        .unwrap();
    let locked = store
        .set_field_lock(&p, &entity.id, "ceo", true)
        .await
        .unwrap();
    assert_eq!(locked.locked_fields(), ["ceo"]);
    assert_eq!(locked.metadata["owner"], "ops");
    assert!(locked.updated_at >= entity.updated_at);
    let again = store
        .set_field_lock(&p, &entity.id, "ceo", true)
        .await
        .unwrap();
    assert_eq!(again.locked_fields(), ["ceo"], "locking twice adds nothing");

    // Many writers at once: every lock lands.
    let fields: Vec<String> = (0..12).map(|i| format!("f{i}")).collect();
    let mut writers = Vec::new();
    for field in fields.clone() {
        let (store, p, id) = (store.clone(), p.clone(), entity.id.clone());
        writers.push(tokio::spawn(async move {
            store.set_field_lock(&p, &id, &field, true).await.unwrap();
        }));
    }
    for writer in writers {
        writer.await.unwrap();
    }
    let now = store.get_entity(&p, &entity.id).await.unwrap().unwrap();
    let mut names = now.locked_fields();
    names.sort();
    let mut expected: Vec<String> = fields.clone();
    expected.push("ceo".to_owned());
    expected.sort();
    assert_eq!(names, expected);

    let unlocked = store
        .set_field_lock(&p, &entity.id, "ceo", false)
        .await
        .unwrap();
    assert!(!unlocked.locked_fields().contains(&"ceo".to_owned()));
    assert_eq!(unlocked.locked_fields().len(), 12);
    assert_eq!(unlocked.metadata["owner"], "ops");

    assert!(matches!(
        store.set_field_lock(&other, &entity.id, "ceo", true).await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        store
            .set_field_lock(&p, "no-such-entity", "ceo", true)
            .await,
        Err(StoreError::NotFound { .. })
    ));
}

pub async fn document_and_episode_pages(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let other = store.ensure_project("other").await.unwrap();
    let notes = store.add_document(&p, "Notes", "plain text").await.unwrap();
    let minutes = store
        .add_document(&p, "会议 Minutes", "会议记录 😀")
        .await
        .unwrap();
    store
        .add_episode(
            &p,
            &NewEpisode {
                user_message: "hello there".to_owned(),
                assistant_response: "hi".to_owned(),
                ingest: None,
            },
        )
        .await
        .unwrap();
    store.add_document(&other, "Theirs", "x").await.unwrap();

    let page = store.document_page(&p, None, None, 10, 0).await.unwrap();
    assert_eq!(page.total, 3);
    assert_eq!(page.items[0].kind, DocumentKind::Episode, "newest first");
    assert_eq!(page.items[1].id, minutes.id);
    assert_eq!(page.items[1].chars, 6, "code points, not bytes");
    assert_eq!(page.items[2].id, notes.id);
    let files = store
        .document_page(&p, None, Some(DocumentKind::File), 1, 1)
        .await
        .unwrap();
    assert_eq!(files.total, 2);
    assert_eq!(files.items[0].id, notes.id);
    let found = store
        .document_page(&p, Some("minutes"), None, 10, 0)
        .await
        .unwrap();
    assert_eq!(
        (found.total, found.items[0].title.as_str()),
        (1, "会议 Minutes")
    );

    let got = store.get_document(&p, &minutes.id).await.unwrap().unwrap();
    assert_eq!(got.text, "会议记录 😀");
    assert!(
        store
            .get_document(&other, &minutes.id)
            .await
            .unwrap()
            .is_none()
    );

    let episodes = store.episode_page(&p, None, 10, 0).await.unwrap();
    assert_eq!(episodes.total, 1);
    assert_eq!(episodes.items[0].user_message, "hello there");
    let pending = store
        .episode_page(&p, Some(EpisodeStatus::Pending), 10, 0)
        .await
        .unwrap();
    assert_eq!(pending.total, 1);
    let failed = store
        .episode_page(&p, Some(EpisodeStatus::Failed), 10, 0)
        .await
        .unwrap();
    assert_eq!((failed.total, failed.items.len()), (0, 0));
    let theirs = store.episode_page(&other, None, 10, 0).await.unwrap();
    assert_eq!(theirs.total, 0);
}
