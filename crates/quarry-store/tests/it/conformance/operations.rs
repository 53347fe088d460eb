//! What operators watch: queue depths per state and the schema version. Part of the
//! conformance suite (both backends).

use std::sync::Arc;
use std::time::Duration;

use quarry_core::model::{EpisodeOutcome, EpisodeStatus, NewFieldTask, NewWorkflow, NodeState};
use quarry_core::store::{QueueDepths, Store};

use super::{claim, lease_of, new_entity, new_episode};

fn queued_workflow(entity_id: &str, tasks: &[(&str, NodeState, &[&str])]) -> NewWorkflow {
    let tasks = tasks
        .iter()
        .map(|(name, state, depends_on)| NewFieldTask {
            field_name: (*name).to_owned(),
            state: *state,
            depends_on: depends_on.iter().map(|d| (*d).to_owned()).collect(),
            gated: false,
            feedback: None,
            error: None,
            instructions: None,
        })
        .collect();
    super::tasks::workflow(entity_id, tasks)
}

fn task_count(depths: &QueueDepths, state: NodeState) -> u64 {
    depths
        .tasks
        .iter()
        .find(|(s, _)| *s == state)
        .map(|(_, n)| *n)
        .expect("every counted state is listed")
}

fn episode_count(depths: &QueueDepths, state: EpisodeStatus) -> u64 {
    depths
        .episodes
        .iter()
        .find(|(s, _)| *s == state)
        .map(|(_, n)| *n)
        .expect("every counted state is listed")
}

pub async fn queue_depths_count_each_state_across_projects(store: Arc<dyn Store>) {
    let empty = store.queue_depths().await.unwrap();
    assert_eq!(empty.tasks.len(), QueueDepths::TASK_STATES.len());
    assert_eq!(empty.episodes.len(), QueueDepths::EPISODE_STATES.len());
    assert!(empty.tasks.iter().all(|(_, n)| *n == 0));
    assert!(empty.episodes.iter().all(|(_, n)| *n == 0));

    let p = store.ensure_project("p").await.unwrap();
    let q = store.ensure_project("q").await.unwrap();
    let in_p = store
        .create_entity(&p, &new_entity("company", "A"))
        .await
        .unwrap();
    let in_q = store
        .create_entity(&q, &new_entity("company", "B"))
        .await
        .unwrap();
    store
        .create_workflow(
            &p,
            &queued_workflow(
                &in_p.id,
                &[
                    ("a", NodeState::Queued, &[]),
                    ("b", NodeState::Pending, &["a"]),
                ],
            ),
        )
        .await
        .unwrap();
    store
        .create_workflow(
            &q,
            &queued_workflow(&in_q.id, &[("c", NodeState::Queued, &[])]),
        )
        .await
        .unwrap();
    let claimed = store
        .claim_tasks("worker", Duration::from_secs(60), 1, None)
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);

    for (project, name) in [(&p, "one"), (&p, "two"), (&q, "three")] {
        store
            .add_episode(project, &new_episode(name, "r"))
            .await
            .unwrap();
    }
    let taken = claim(&store, 2, false).await;
    assert_eq!(taken.len(), 2);
    let failure = EpisodeOutcome {
        error: Some("model call failed: 400".into()),
        ..EpisodeOutcome::default()
    };
    store
        .finish_episode(
            &taken[0].project_id,
            &taken[0].id,
            Some(&lease_of(&taken[0])),
            &failure,
        )
        .await
        .unwrap();

    let depths = store.queue_depths().await.unwrap();
    assert_eq!(task_count(&depths, NodeState::Queued), 1, "{depths:?}");
    assert_eq!(task_count(&depths, NodeState::Running), 1, "{depths:?}");
    assert_eq!(task_count(&depths, NodeState::Pending), 1, "{depths:?}");
    assert_eq!(task_count(&depths, NodeState::Failed), 0, "{depths:?}");
    assert_eq!(
        episode_count(&depths, EpisodeStatus::Pending),
        1,
        "{depths:?}"
    );
    assert_eq!(
        episode_count(&depths, EpisodeStatus::Running),
        1,
        "{depths:?}"
    );
    assert_eq!(
        episode_count(&depths, EpisodeStatus::Failed),
        1,
        "{depths:?}"
    );
}

pub async fn schema_version_is_current_once_opened(store: Arc<dyn Store>) {
    let version = store.schema_version().await.unwrap();
    assert!(version.latest >= 8, "{version:?}");
    assert_eq!(version.applied, Some(version.latest));
    assert!(version.is_current());
}
