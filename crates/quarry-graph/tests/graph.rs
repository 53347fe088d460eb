//! The conversation graph end to end: the real SQLite store in a temp dir and the real
//! OpenAI-compatible client against a scripted model server.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use quarry_core::model::{
    Document, Entity, Episode, EpisodeStatus, ExtractedEntity, ExtractedRelationship,
    GraphExtraction, NewEpisode, StoredChunk,
};
use quarry_core::retrieval::{EntityHit, PassageHit, RetrievalError, Retriever};
use quarry_core::store::{Store, StoreError};
use quarry_graph::{
    AttemptEnd, GraphConfig, GraphExtractor, GraphWorker, neighbors, prompt::SYSTEM_PROMPT,
};
use quarry_llm::{Endpoint, LlmClient, OpenAiClient, TransportConfig};
use quarry_testkit::{Reply, ScriptedServer, TempDb};
use serde_json::{Value, json};

fn temp_db() -> TempDb {
    TempDb::new("graph")
}

async fn open(path: &Path) -> Arc<dyn Store> {
    quarry_store::open(path.to_str().unwrap()).await.unwrap()
}

fn client(server: &ScriptedServer) -> Arc<dyn LlmClient> {
    let endpoint = Endpoint {
        provider: "openai".to_owned(),
        base_url: server.base_url(),
        model: "graph-model".to_owned(),
        api_key: Some("sk-test".to_owned()),
    };
    let transport = TransportConfig {
        max_attempts: 1,
        ..TransportConfig::default()
    };
    Arc::new(OpenAiClient::new(endpoint, transport, 8).unwrap())
}

fn config() -> GraphConfig {
    GraphConfig {
        idle_poll: Duration::from_millis(50),
        ..GraphConfig::default()
    }
}

struct World {
    server: ScriptedServer,
    store: Arc<dyn Store>,
    project: String,
    extractor: Arc<GraphExtractor>,
    /// Removes the database's folder when the test ends.
    _db: TempDb,
}

async fn world() -> World {
    let db = temp_db();
    let store = open(&db).await;
    let project = store.ensure_project("graph").await.unwrap();
    let server = ScriptedServer::start();
    let extractor = Arc::new(GraphExtractor::new(
        store.clone(),
        Some(client(&server)),
        config(),
    ));
    World {
        server,
        store,
        project,
        extractor,
        _db: db,
    }
}

/// A reply in the reference's shape. Entities: (name, type, notes); relationships:
/// (from, fromType, to, toType, label).
fn graph_json(
    entities: &[(&str, &str, Option<&str>)],
    relationships: &[(&str, &str, &str, &str, &str)],
) -> String {
    json!({
        "entities": entities.iter().map(|(name, t, notes)| json!({
            "name": name, "type": t, "notes": notes
        })).collect::<Vec<_>>(),
        "relationships": relationships.iter().map(|(from, ft, to, tt, label)| json!({
            "from": from, "fromType": ft, "to": to, "toType": tt, "label": label, "notes": null
        })).collect::<Vec<_>>(),
    })
    .to_string()
}

fn episode(user: &str, assistant: &str) -> NewEpisode {
    NewEpisode {
        user_message: user.to_owned(),
        assistant_response: assistant.to_owned(),
        ingest: None,
    }
}

fn user_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

async fn entity_named(store: &dyn Store, project: &str, name: &str, t: &str) -> Entity {
    let found = store
        .find_entities_by_name(project, name, Some(t), 10)
        .await
        .unwrap();
    found
        .into_iter()
        .find(|e| e.title == name)
        .unwrap_or_else(|| panic!("no {t} '{name}'"))
}

/// Adds episodes, runs a worker until the queue is empty, stops it.
async fn run_worker(world: &World) {
    let worker = GraphWorker::start(world.extractor.clone());
    worker.wait_idle().await;
    worker.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn prompt_lists_the_20_most_recent_entities_and_delimits_the_conversation() {
    let w = world().await;
    for i in 1..=25 {
        let extraction = GraphExtraction {
            entities: vec![ExtractedEntity {
                name: format!("Seed Project {i:02}"),
                entity_type: "project".into(),
                notes: None,
            }],
            relationships: vec![],
        };
        w.extractor
            .ingest(&w.project, None, &extraction, "ingest")
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
    w.server.push(Reply::content(graph_json(&[], &[])));
    let stored = w
        .store
        .add_episode(
            &w.project,
            &episode("Who maintains Atlas?", "Alice maintains Atlas."),
        )
        .await
        .unwrap();
    let outcome = w.extractor.process(&stored).await;
    assert_eq!(outcome.error, None);

    let requests = w.server.requests();
    assert_eq!(requests.len(), 1);
    let body = &requests[0];
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(body["messages"][0]["content"], SYSTEM_PROMPT);
    assert_eq!(body["temperature"], json!(0.1));
    assert_eq!(body["max_tokens"], json!(1500));
    assert_eq!(body["response_format"]["type"], "json_schema");
    let user = user_text(body);
    assert!(
        user.contains("Entity types: person, place, project, technology, concept, organization\n"),
        "{user}"
    );
    assert!(user.contains("works_on, manages, uses, knows, located_in, part_of, created_by"));
    assert!(user.contains(
        "Already known entities (use these exact name and type values if the same entity \
         appears):\n"
    ));
    for i in 6..=25 {
        let line = format!("- \"Seed Project {i:02}\" (project)\n");
        assert!(user.contains(&line), "missing {line} in {user}");
    }
    for i in 1..=5 {
        let name = format!("Seed Project {i:02}");
        assert!(!user.contains(&name), "{name} is not among the 20 newest");
    }
    assert!(user.ends_with(
        "--- CONVERSATION ---\nUser: Who maintains Atlas?\nAssistant: Alice maintains \
         Atlas.\n--- END CONVERSATION ---"
    ));
    // The known-entities block comes before the conversation.
    assert!(user.find("Already known").unwrap() < user.find("--- CONVERSATION ---").unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_known_entities_means_no_block() {
    let w = world().await;
    w.server.push(Reply::content(graph_json(&[], &[])));
    let stored = w
        .store
        .add_episode(&w.project, &episode("Hi", "Hello!"))
        .await
        .unwrap();
    assert_eq!(w.extractor.process(&stored).await.error, None);
    let user = user_text(&w.server.requests()[0]);
    assert!(!user.contains("Already known"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn prose_wrapped_fenced_reply_is_parsed_by_the_worker() {
    let w = world().await;
    let json = graph_json(
        &[
            ("Alice", "person", Some("Software engineer.")),
            ("NexusAI", "project", Some("An assistant with memory.")),
        ],
        &[("Alice", "person", "NexusAI", "project", "works on")],
    );
    // Prose around a fence, and a trailing comma the repair removes.
    let json = json.replacen("]}", "],}", 1);
    w.server.push(Reply::content(format!(
        "Sure! Here is what I found:\n```json\n{json}\n```\nLet me know if you need more."
    )));
    let stored = w
        .store
        .add_episode(
            &w.project,
            &episode("Alice works on NexusAI.", "Nice, NexusAI is an assistant."),
        )
        .await
        .unwrap();
    run_worker(&w).await;
    let done = w
        .store
        .get_episode(&w.project, &stored.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(done.status, EpisodeStatus::Done, "{:?}", done.error);
    assert_eq!(done.entities_stored, 2);
    assert_eq!(done.relationships_stored, 1);
    let alice = entity_named(w.store.as_ref(), &w.project, "Alice", "person").await;
    assert_eq!(alice.notes.as_deref(), Some("Software engineer."));
    assert_eq!(alice.mention_count, 1);
    let relations = w
        .store
        .relations_touching(&w.project, std::slice::from_ref(&alice.id))
        .await
        .unwrap();
    assert_eq!(relations.len(), 1);
    assert_eq!(relations[0].label, "works_on");
    let linked = w
        .store
        .entity_episodes(&w.project, &alice.id, 10)
        .await
        .unwrap();
    assert_eq!(linked.len(), 1);
    assert_eq!(linked[0].id, stored.id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn upsert_counts_mentions_and_keeps_notes_when_null() {
    let w = world().await;
    w.server.push(Reply::content(graph_json(
        &[
            ("Alice", "person", Some("Engineer.")),
            ("Bob", "person", Some("Manager.")),
        ],
        &[("Bob", "person", "Alice", "person", "manages")],
    )));
    w.server.push(Reply::content(graph_json(
        &[("Alice", "person", None), ("Bob", "person", None)],
        &[("Bob", "person", "Alice", "person", "manages")],
    )));
    for text in ["Bob manages Alice.", "Bob still manages Alice."] {
        let stored = w
            .store
            .add_episode(&w.project, &episode(text, "Noted."))
            .await
            .unwrap();
        let outcome = w.extractor.process(&stored).await;
        assert_eq!(outcome.error, None);
    }
    let alice = entity_named(w.store.as_ref(), &w.project, "Alice", "person").await;
    assert_eq!(alice.mention_count, 2);
    assert_eq!(alice.notes.as_deref(), Some("Engineer."));
    assert!(alice.last_seen_at.is_some());
    let relations = w
        .store
        .relations_touching(&w.project, std::slice::from_ref(&alice.id))
        .await
        .unwrap();
    assert_eq!(relations.len(), 1);
    assert_eq!(relations[0].mention_count, 2);
    // New notes replace the old ones.
    w.server.push(Reply::content(graph_json(
        &[("Alice", "person", Some("Lead engineer."))],
        &[],
    )));
    let stored = w
        .store
        .add_episode(&w.project, &episode("Alice leads now.", "Great."))
        .await
        .unwrap();
    assert_eq!(w.extractor.process(&stored).await.error, None);
    let alice = entity_named(w.store.as_ref(), &w.project, "Alice", "person").await;
    assert_eq!(alice.mention_count, 3);
    assert_eq!(alice.notes.as_deref(), Some("Lead engineer."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn name_variants_across_episodes_resolve_to_one_node() {
    let w = world().await;
    w.server.push(Reply::content(graph_json(
        &[("Acme Corp", "organization", Some("A maker of anvils."))],
        &[],
    )));
    // The entity is written "ACME Corp." and the relationship says "Acme Corp": resolution maps
    // both onto the same node.
    w.server.push(Reply::content(graph_json(
        &[
            ("ACME Corp.", "organization", None),
            ("Bob", "person", None),
        ],
        &[("Bob", "person", "Acme Corp", "organization", "works_for")],
    )));
    w.server.push(Reply::content(graph_json(
        &[("Acme Corporation", "organization", None)],
        &[],
    )));
    for text in [
        "Acme Corp makes anvils.",
        "Bob works for ACME Corp.",
        "Acme Corporation is hiring.",
    ] {
        let stored = w
            .store
            .add_episode(&w.project, &episode(text, "OK."))
            .await
            .unwrap();
        let outcome = w.extractor.process(&stored).await;
        assert_eq!(outcome.error, None);
        assert_eq!(outcome.relationships_skipped, 0);
    }
    let orgs = w
        .store
        .list_entities(&w.project, Some("organization"), 100)
        .await
        .unwrap();
    assert_eq!(orgs.len(), 1, "{orgs:?}");
    let acme = &orgs[0];
    assert_eq!(acme.title, "Acme Corp");
    assert_eq!(acme.mention_count, 3);
    assert_eq!(acme.notes.as_deref(), Some("A maker of anvils."));
    let relations = w
        .store
        .relations_touching(&w.project, std::slice::from_ref(&acme.id))
        .await
        .unwrap();
    assert_eq!(relations.len(), 1);
    assert_eq!(relations[0].to_id, acme.id);
    let episodes = w
        .store
        .entity_episodes(&w.project, &acme.id, 10)
        .await
        .unwrap();
    assert_eq!(episodes.len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn duplicates_within_one_reply_merge() {
    let w = world().await;
    w.server.push(Reply::content(graph_json(
        &[
            ("Globex Inc", "organization", None),
            ("Globex", "organization", Some("A conglomerate.")),
            ("Hank", "person", None),
        ],
        &[
            ("Hank", "person", "Globex", "organization", "works_for"),
            ("Hank", "person", "Globex Inc", "organization", "works-for"),
        ],
    )));
    let stored = w
        .store
        .add_episode(&w.project, &episode("Hank works for Globex.", "OK."))
        .await
        .unwrap();
    let outcome = w.extractor.process(&stored).await;
    assert_eq!(outcome.error, None);
    assert_eq!(outcome.entities_stored, 2);
    assert_eq!(outcome.relationships_stored, 1);
    let orgs = w
        .store
        .list_entities(&w.project, Some("organization"), 100)
        .await
        .unwrap();
    assert_eq!(orgs.len(), 1);
    assert_eq!(orgs[0].mention_count, 1);
    assert_eq!(orgs[0].notes.as_deref(), Some("A conglomerate."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hallucinated_relationship_endpoint_is_skipped_and_counted() {
    let w = world().await;
    w.server.push(Reply::content(graph_json(
        &[("Alice", "person", None), ("Atlas", "project", None)],
        &[
            ("Alice", "person", "Atlas", "project", "works_on"),
            ("Carol", "person", "Atlas", "project", "manages"),
            ("Alice", "person", "Atlas", "project", "!!"),
        ],
    )));
    let stored = w
        .store
        .add_episode(&w.project, &episode("Alice works on Atlas.", "OK."))
        .await
        .unwrap();
    run_worker(&w).await;
    let done = w
        .store
        .get_episode(&w.project, &stored.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(done.status, EpisodeStatus::Done);
    assert_eq!(done.relationships_stored, 1);
    assert_eq!(done.relationships_skipped, 2);
    let people = w
        .store
        .list_entities(&w.project, Some("person"), 100)
        .await
        .unwrap();
    assert_eq!(people.len(), 1, "Carol is never created");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn stoplist_and_invalid_types_are_skipped() {
    let w = world().await;
    let reply = json!({
        "entities": [
            {"name": "Thanks!", "type": "concept", "notes": null},
            {"name": "  good MORNING ", "type": "concept"},
            {"name": "Widget", "type": "gadget"},
            {"name": "   ", "type": "person"},
            {"name": "x".repeat(300), "type": "concept"},
            "not an object",
            {"name": "Alice", "type": "Person"}
        ],
        "relationships": [
            {"from": "Alice", "fromType": "person", "to": "Widget", "toType": "gadget",
             "label": "uses"}
        ]
    });
    w.server.push(Reply::content(reply.to_string()));
    let stored = w
        .store
        .add_episode(
            &w.project,
            &episode("Thanks! Alice has a widget.", "Hello."),
        )
        .await
        .unwrap();
    let outcome = w.extractor.process(&stored).await;
    assert_eq!(outcome.error, None);
    assert_eq!(outcome.entities_stored, 1);
    assert_eq!(outcome.entities_skipped, 6);
    assert_eq!(outcome.relationships_stored, 0);
    assert_eq!(outcome.relationships_skipped, 1);
    let all = w.store.list_entities(&w.project, None, 100).await.unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].entity_type, "person");

    // Configured types and stoplist.
    let custom = GraphExtractor::new(
        w.store.clone(),
        Some(client(&w.server)),
        GraphConfig {
            types: vec!["person".into(), "gadget".into()],
            stoplist: vec!["Bob".into()],
            ..config()
        },
    );
    w.server.push(Reply::content(graph_json(
        &[
            ("Widget", "gadget", None),
            ("bob", "person", None),
            ("Dana", "person", None),
        ],
        &[("Dana", "person", "Widget", "gadget", "uses")],
    )));
    let stored = w
        .store
        .add_episode(&w.project, &episode("Dana uses a widget.", "OK."))
        .await
        .unwrap();
    let outcome = custom.process(&stored).await;
    assert_eq!(outcome.error, None);
    assert_eq!(outcome.entities_stored, 2);
    assert_eq!(outcome.entities_skipped, 1);
    assert_eq!(outcome.relationships_stored, 1);
    let user = user_text(&w.server.requests()[1]);
    assert!(user.contains("Entity types: person, gadget\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_runaway_reply_stores_at_most_the_per_episode_caps() {
    let w = world().await;
    let capped = GraphExtractor::new(
        w.store.clone(),
        Some(client(&w.server)),
        GraphConfig {
            max_entities_per_episode: 5,
            max_relationships_per_episode: 3,
            ..config()
        },
    );
    let names: Vec<String> = (0..40).map(|i| format!("Person{i:02}")).collect();
    let entities: Vec<(&str, &str, Option<&str>)> =
        names.iter().map(|n| (n.as_str(), "person", None)).collect();
    // Relationships among the first five (all stored) so only the cap can skip them.
    let mut relationships = Vec::new();
    for from in 0..5 {
        for to in 0..5 {
            if from != to {
                relationships.push((
                    names[from].as_str(),
                    "person",
                    names[to].as_str(),
                    "person",
                    "knows",
                ));
            }
        }
    }
    w.server
        .push(Reply::content(graph_json(&entities, &relationships)));
    let stored = w
        .store
        .add_episode(&w.project, &episode("A crowd of forty people.", "Noted."))
        .await
        .unwrap();
    let outcome = capped.process(&stored).await;
    assert_eq!(outcome.error, None);
    assert_eq!((outcome.entities_stored, outcome.entities_skipped), (5, 35));
    assert_eq!(
        (outcome.relationships_stored, outcome.relationships_skipped),
        (3, 17)
    );
    let all = w.store.list_entities(&w.project, None, 100).await.unwrap();
    assert_eq!(all.len(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn model_errors_fail_the_episode_and_keep_it() {
    let w = world().await;
    w.server
        .push(Reply::status(400, "model rejected the request"));
    w.server.push(Reply::content(
        "I am sorry, I cannot find any entities here.",
    ));
    let first = w
        .store
        .add_episode(&w.project, &episode("Alice met Bob.", "Nice."))
        .await
        .unwrap();
    let second = w
        .store
        .add_episode(&w.project, &episode("Carol met Dan.", "Nice."))
        .await
        .unwrap();
    let worker = GraphWorker::start(w.extractor.clone());
    worker.wait_idle().await;
    assert_eq!(worker.stats().failed, 2);
    worker.shutdown().await;
    let failed = w
        .store
        .get_episode(&w.project, &first.id)
        .await
        .unwrap()
        .unwrap();
    let unreadable = w
        .store
        .get_episode(&w.project, &second.id)
        .await
        .unwrap()
        .unwrap();
    // Claimed oldest first with 8 in flight: which reply went to which episode may vary.
    let mut errors = vec![
        failed.error.clone().unwrap_or_default(),
        unreadable.error.clone().unwrap_or_default(),
    ];
    errors.sort();
    assert_eq!(failed.status, EpisodeStatus::Failed);
    assert_eq!(unreadable.status, EpisodeStatus::Failed);
    assert!(
        errors.iter().any(|e| e.contains("400")),
        "the status is recorded: {errors:?}"
    );
    assert!(
        errors.iter().any(|e| e.contains("no JSON object")),
        "{errors:?}"
    );
    assert_eq!(failed.user_message, "Alice met Bob.");
    let documents = w.store.documents(&w.project, None).await.unwrap();
    assert!(documents.iter().any(|d| d.id == first.id));
    assert!(
        w.store
            .list_entities(&w.project, None, 10)
            .await
            .unwrap()
            .is_empty()
    );
}

fn ingest_extraction() -> GraphExtraction {
    GraphExtraction {
        entities: vec![
            ExtractedEntity {
                name: "Alice".into(),
                entity_type: "person".into(),
                notes: Some("Engineer.".into()),
            },
            ExtractedEntity {
                name: "Atlas".into(),
                entity_type: "project".into(),
                notes: None,
            },
        ],
        relationships: vec![ExtractedRelationship {
            from: "Alice".into(),
            from_type: "person".into(),
            to: "Atlas".into(),
            to_type: "project".into(),
            label: "works_on".into(),
            notes: None,
        }],
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ingest_path_needs_no_model() {
    let db = temp_db();
    let store = open(&db).await;
    let project = store.ensure_project("graph").await.unwrap();
    let extractor = Arc::new(GraphExtractor::new(store.clone(), None, config()));
    let with_ingest = store
        .add_episode(
            &project,
            &NewEpisode {
                ingest: Some(ingest_extraction()),
                ..episode("Alice works on Atlas.", "OK.")
            },
        )
        .await
        .unwrap();
    let without = store
        .add_episode(&project, &episode("Bob works on Atlas.", "OK."))
        .await
        .unwrap();
    let worker = GraphWorker::start(extractor.clone());
    worker.wake();
    worker.wait_idle().await;
    worker.shutdown().await;
    let done = store
        .get_episode(&project, &with_ingest.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(done.status, EpisodeStatus::Done, "{:?}", done.error);
    assert_eq!(done.entities_stored, 2);
    assert_eq!(done.relationships_stored, 1);
    let waiting = store
        .get_episode(&project, &without.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        waiting.status,
        EpisodeStatus::Pending,
        "a worker without a model leaves model episodes queued"
    );
    let alice = entity_named(store.as_ref(), &project, "Alice", "person").await;
    assert_eq!(alice.metadata.get("source"), Some(&json!("ingest")));

    // Direct use, no episode.
    let outcome = extractor
        .ingest(&project, None, &ingest_extraction(), "ingest")
        .await
        .unwrap();
    assert_eq!(outcome.entities_stored, 2);
    let alice = entity_named(store.as_ref(), &project, "Alice", "person").await;
    assert_eq!(alice.mention_count, 2);
}

/// A claim as the tests' own worker, with a lease no test outlives.
async fn claim(store: &Arc<dyn Store>, limit: usize, ingest_only: bool) -> Vec<Episode> {
    store
        .claim_episodes("1@test:1", Duration::from_secs(600), limit, ingest_only)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn process_and_finish_writes_the_graph_and_the_end_together() {
    let db = temp_db();
    let store = open(&db).await;
    let project = store.ensure_project("graph").await.unwrap();
    let other = store.ensure_project("other").await.unwrap();
    let extractor = GraphExtractor::new(store.clone(), None, config());
    let queued = store
        .add_episode(
            &project,
            &NewEpisode {
                ingest: Some(ingest_extraction()),
                ..episode("Alice works on Atlas.", "OK.")
            },
        )
        .await
        .unwrap();
    let claimed = claim(&store, 1, true).await;
    assert_eq!(claimed[0].id, queued.id);

    // Another project's episode id: the combined write fails as a whole, nothing is stored, and
    // the failure cannot be recorded either.
    let mut elsewhere = claimed[0].clone();
    elsewhere.project_id = other.clone();
    match extractor.process_and_finish(&elsewhere).await {
        AttemptEnd::NotRecorded { error, cause } => {
            assert!(error.contains("storing the graph failed"), "{error}");
            assert!(matches!(cause, StoreError::NotFound { .. }), "{cause:?}");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        store
            .list_entities(&other, None, 10)
            .await
            .unwrap()
            .is_empty()
    );
    // Not claimed: nothing to record under.
    assert!(matches!(
        extractor.process_and_finish(&queued).await,
        AttemptEnd::NotRecorded {
            cause: StoreError::InvalidState(_),
            ..
        }
    ));

    let AttemptEnd::Done(outcome) = extractor.process_and_finish(&claimed[0]).await else {
        panic!("the ingest episode is done");
    };
    assert_eq!(outcome.error, None);
    let done = store
        .get_episode(&project, &queued.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(done.status, EpisodeStatus::Done);
    assert_eq!(
        (done.entities_stored, done.relationships_stored),
        (outcome.entities_stored, outcome.relationships_stored)
    );
    assert_eq!((done.entities_stored, done.relationships_stored), (2, 1));
    let alice = entity_named(store.as_ref(), &project, "Alice", "person").await;
    let linked = store
        .entity_episodes(&project, &alice.id, 10)
        .await
        .unwrap();
    assert_eq!(linked, [done]);

    // A failed extraction (no model: permanent) writes nothing and ends the episode `failed`.
    let plain = store
        .add_episode(&project, &episode("Bob works on Atlas.", "OK."))
        .await
        .unwrap();
    let claimed = claim(&store, 1, false).await;
    assert_eq!(claimed[0].id, plain.id);
    let AttemptEnd::Failed(outcome) = extractor.process_and_finish(&claimed[0]).await else {
        panic!("a permanent failure ends the episode");
    };
    let failed = store
        .get_episode(&project, &plain.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(failed.status, EpisodeStatus::Failed);
    assert_eq!(failed.error, outcome.error);
    let error = failed.error.unwrap();
    assert!(error.contains("no model is configured"), "{error}");
    assert!(error.contains("attempt 1"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_late_finisher_whose_lease_was_taken_over_writes_nothing() {
    let db = temp_db();
    let store = open(&db).await;
    let project = store.ensure_project("graph").await.unwrap();
    let extractor = GraphExtractor::new(store.clone(), None, config());
    let queued = store
        .add_episode(
            &project,
            &NewEpisode {
                ingest: Some(ingest_extraction()),
                ..episode("Alice works on Atlas.", "OK.")
            },
        )
        .await
        .unwrap();
    let stalled = store
        .claim_episodes("a", Duration::from_millis(50), 1, true)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let taken = store
        .claim_episodes("b", Duration::from_secs(600), 1, true)
        .await
        .unwrap();
    assert_eq!(
        (taken[0].id.as_str(), taken[0].attempts),
        (queued.id.as_str(), 2)
    );

    assert!(matches!(
        extractor.process_and_finish(&stalled[0]).await,
        AttemptEnd::LeaseLost(_)
    ));
    assert!(
        store
            .list_entities(&project, None, 10)
            .await
            .unwrap()
            .is_empty(),
        "A wrote nothing"
    );
    assert!(matches!(
        extractor.process_and_finish(&taken[0]).await,
        AttemptEnd::Done(_)
    ));
    let alice = entity_named(store.as_ref(), &project, "Alice", "person").await;
    assert_eq!(alice.mention_count, 1, "one graph write");
}

/// A worker whose model calls fail by status: the transport makes one attempt per call (see
/// `client`), so what is measured is the episode-level policy.
fn retrying_world(
    server: &ScriptedServer,
    store: Arc<dyn Store>,
    max_attempts: u32,
) -> Arc<GraphExtractor> {
    Arc::new(GraphExtractor::new(
        store,
        Some(client(server)),
        GraphConfig {
            max_attempts,
            retry_base: Duration::from_millis(20),
            ..config()
        },
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_transient_failure_is_retried_after_a_backoff() {
    let db = temp_db();
    let store = open(&db).await;
    let project = store.ensure_project("graph").await.unwrap();
    let server = ScriptedServer::start();
    server.push(Reply::status(500, "model crashed"));
    server.push(Reply::content(graph_json(
        &[("Alice", "person", None)],
        &[],
    )));
    let stored = store
        .add_episode(&project, &episode("Alice is here.", "Hi Alice."))
        .await
        .unwrap();
    let worker = GraphWorker::start(retrying_world(&server, store.clone(), 5));
    worker.wait_idle().await;
    let stats = worker.stats();
    worker.shutdown().await;
    let done = store
        .get_episode(&project, &stored.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(done.status, EpisodeStatus::Done, "{:?}", done.error);
    assert_eq!(done.attempts, 2);
    assert_eq!(done.error, None);
    assert_eq!(done.lease_owner, None);
    assert_eq!((stats.retried, stats.finished(), stats.failed), (1, 1, 0));
    assert_eq!(server.request_count(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rate_limits_beyond_max_attempts_fail_the_episode() {
    let db = temp_db();
    let store = open(&db).await;
    let project = store.ensure_project("graph").await.unwrap();
    let server = ScriptedServer::start();
    for _ in 0..5 {
        server.push(Reply::status(429, "slow down"));
    }
    let stored = store
        .add_episode(&project, &episode("Alice is here.", "Hi Alice."))
        .await
        .unwrap();
    let worker = GraphWorker::start(retrying_world(&server, store.clone(), 3));
    worker.wait_idle().await;
    let stats = worker.stats();
    worker.shutdown().await;
    let failed = store
        .get_episode(&project, &stored.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(failed.status, EpisodeStatus::Failed);
    assert_eq!(failed.attempts, 3);
    let error = failed.error.unwrap();
    assert!(error.contains("429"), "{error}");
    assert!(error.contains("gave up after 3 attempts"), "{error}");
    assert_eq!((stats.retried, stats.finished(), stats.failed), (2, 1, 1));
    assert_eq!(server.request_count(), 3, "bounded by max_attempts");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_permanent_error_fails_at_once() {
    let db = temp_db();
    let store = open(&db).await;
    let project = store.ensure_project("graph").await.unwrap();
    let server = ScriptedServer::start();
    server.push(Reply::status(400, "bad request"));
    server.push(Reply::content(graph_json(
        &[("Alice", "person", None)],
        &[],
    )));
    let stored = store
        .add_episode(&project, &episode("Alice is here.", "Hi Alice."))
        .await
        .unwrap();
    let worker = GraphWorker::start(retrying_world(&server, store.clone(), 5));
    worker.wait_idle().await;
    let stats = worker.stats();
    worker.shutdown().await;
    let failed = store
        .get_episode(&project, &stored.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(failed.status, EpisodeStatus::Failed);
    assert_eq!(failed.attempts, 1);
    let error = failed.error.unwrap();
    assert!(error.contains("400"), "{error}");
    assert!(error.contains("attempt 1"), "{error}");
    assert_eq!((stats.retried, stats.finished(), stats.failed), (0, 1, 1));
    assert_eq!(
        server.request_count(),
        1,
        "a permanent error is not retried"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_heartbeat_keeps_a_slow_extraction_leased() {
    let db = temp_db();
    let store = open(&db).await;
    let project = store.ensure_project("graph").await.unwrap();
    let server = ScriptedServer::start();
    server.push(
        Reply::content(graph_json(&[("Alice", "person", None)], &[]))
            .after(Duration::from_millis(600)),
    );
    let stored = store
        .add_episode(&project, &episode("Alice is here.", "Hi Alice."))
        .await
        .unwrap();
    let extractor = Arc::new(GraphExtractor::new(
        store.clone(),
        Some(client(&server)),
        GraphConfig {
            lease: Duration::from_millis(150),
            owner: "slow".to_owned(),
            ..config()
        },
    ));
    let worker = GraphWorker::start(extractor);
    tokio::time::sleep(Duration::from_millis(400)).await;
    // Well past the first expiry, the slow worker still holds it.
    let held = store
        .get_episode(&project, &stored.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (held.status, held.lease_owner.as_deref()),
        (EpisodeStatus::Running, Some("slow"))
    );
    assert!(
        store
            .claim_episodes("other", Duration::from_secs(600), 10, false)
            .await
            .unwrap()
            .is_empty(),
        "a renewed lease is not taken over"
    );
    worker.wait_idle().await;
    assert_eq!(worker.stats().lease_lost, 0);
    worker.shutdown().await;
    let done = store
        .get_episode(&project, &stored.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((done.status, done.attempts), (EpisodeStatus::Done, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_claim_past_max_attempts_gives_up() {
    // A poison episode that kills its worker: every claim counts, so it cannot loop forever.
    let db = temp_db();
    let store = open(&db).await;
    let project = store.ensure_project("graph").await.unwrap();
    let stored = store
        .add_episode(&project, &episode("Alice is here.", "Hi Alice."))
        .await
        .unwrap();
    for _ in 0..2 {
        store
            .claim_episodes("dies", Duration::from_millis(20), 1, false)
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
    let server = ScriptedServer::start();
    let worker = GraphWorker::start(retrying_world(&server, store.clone(), 2));
    worker.wait_idle().await;
    worker.shutdown().await;
    let failed = store
        .get_episode(&project, &stored.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((failed.status, failed.attempts), (EpisodeStatus::Failed, 3));
    let error = failed.error.unwrap();
    assert!(error.contains("gave up after 2 attempts"), "{error}");
    assert_eq!(server.request_count(), 0, "the model is not asked again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn queued_episodes_survive_a_restart() {
    let path = temp_db();
    let server = ScriptedServer::start();
    let (project, ids) = {
        let store = open(&path).await;
        let project = store.ensure_project("graph").await.unwrap();
        let mut ids = Vec::new();
        for i in 0..6 {
            let stored = store
                .add_episode(&project, &episode(&format!("Turn {i}: Alice"), "OK."))
                .await
                .unwrap();
            ids.push(stored.id);
        }
        (project, ids)
    };
    // The store (and its pool) is gone; nothing was processed.
    for _ in 0..6 {
        server.push(Reply::content(graph_json(
            &[("Alice", "person", None)],
            &[],
        )));
    }
    let store = open(&path).await;
    let extractor = Arc::new(GraphExtractor::new(
        store.clone(),
        Some(client(&server)),
        config(),
    ));
    let worker = GraphWorker::start(extractor);
    worker.wait_idle().await;
    assert_eq!(worker.stats().finished(), 6);
    worker.shutdown().await;
    for id in &ids {
        let done = store.get_episode(&project, id).await.unwrap().unwrap();
        assert_eq!(done.status, EpisodeStatus::Done, "{:?}", done.error);
    }
    let alice = entity_named(store.as_ref(), &project, "Alice", "person").await;
    assert_eq!(alice.mention_count, 6);
    assert_eq!(server.request_count(), 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_episode_left_running_by_a_crash_is_taken_over_once_its_lease_expires() {
    let path = temp_db();
    let (project, crashed, alive) = {
        let store = open(&path).await;
        let project = store.ensure_project("graph").await.unwrap();
        let crashed = store
            .add_episode(&project, &episode("Alice builds Atlas.", "OK."))
            .await
            .unwrap();
        // A worker took it and the process died.
        let claimed = store
            .claim_episodes("dead", Duration::from_millis(100), 10, false)
            .await
            .unwrap();
        assert_eq!(claimed.len(), 1);
        // Another process is working on this one right now.
        let alive = store
            .add_episode(&project, &episode("Bob builds Zeus.", "OK."))
            .await
            .unwrap();
        let claimed = store
            .claim_episodes("alive", Duration::from_secs(600), 10, false)
            .await
            .unwrap();
        assert_eq!(claimed.len(), 1);
        (project, crashed.id, alive.id)
    };
    let store = open(&path).await;
    let running = store
        .get_episode(&project, &crashed)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(running.status, EpisodeStatus::Running);
    tokio::time::sleep(Duration::from_millis(150)).await;
    let server = ScriptedServer::start();
    server.push(Reply::content(graph_json(
        &[("Alice", "person", None), ("Atlas", "project", None)],
        &[("Alice", "person", "Atlas", "project", "created_by")],
    )));
    let extractor = Arc::new(GraphExtractor::new(
        store.clone(),
        Some(client(&server)),
        config(),
    ));
    let worker = GraphWorker::start(extractor);
    worker.wait_idle().await;
    assert_eq!(worker.stats().finished(), 1);
    worker.shutdown().await;
    let done = store
        .get_episode(&project, &crashed)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(done.status, EpisodeStatus::Done, "{:?}", done.error);
    assert_eq!(done.attempts, 2);
    assert_eq!(done.relationships_stored, 1);
    let untouched = store.get_episode(&project, &alive).await.unwrap().unwrap();
    assert_eq!(
        (
            untouched.status,
            untouched.attempts,
            untouched.lease_owner.as_deref()
        ),
        (EpisodeStatus::Running, 1, Some("alive")),
        "a live process's episode is not run twice"
    );
    assert_eq!(server.request_count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_extractions_never_duplicate_an_entity() {
    let w = world().await;
    let variants = ["Acme Corp", "ACME Corp.", "Acme Corporation", "Acme Inc"];
    for i in 0..16 {
        w.server.push(
            Reply::content(graph_json(
                &[
                    (variants[i % 4], "organization", None),
                    ("Alice", "person", None),
                ],
                &[(
                    "Alice",
                    "person",
                    variants[(i + 1) % 4],
                    "organization",
                    "works_for",
                )],
            ))
            .after(Duration::from_millis(20)),
        );
    }
    let worker = GraphWorker::start(w.extractor.clone());
    for i in 0..16 {
        w.store
            .add_episode(&w.project, &episode(&format!("Turn {i}"), "OK."))
            .await
            .unwrap();
        worker.wake();
    }
    worker.wait_idle().await;
    assert_eq!(worker.stats().finished(), 16);
    assert_eq!(worker.stats().failed, 0);
    worker.shutdown().await;
    assert!(w.server.max_concurrent() > 1, "model calls overlap");
    let orgs = w
        .store
        .list_entities(&w.project, Some("organization"), 100)
        .await
        .unwrap();
    assert_eq!(orgs.len(), 1, "{orgs:?}");
    assert_eq!(orgs[0].mention_count, 16);
    let people = w
        .store
        .list_entities(&w.project, Some("person"), 100)
        .await
        .unwrap();
    assert_eq!(people.len(), 1);
    let relations = w
        .store
        .relations_touching(&w.project, std::slice::from_ref(&people[0].id))
        .await
        .unwrap();
    assert_eq!(relations.len(), 1);
    assert_eq!(relations[0].mention_count, 16);
}

#[derive(Default)]
struct RecordingRetriever {
    indexed: Mutex<Vec<String>>,
}

impl Retriever for RecordingRetriever {
    fn search_documents(
        &self,
        _: &str,
        _: &str,
        _: Option<&[String]>,
        _: usize,
    ) -> Result<Vec<PassageHit>, RetrievalError> {
        Ok(Vec::new())
    }
    fn search_entities(
        &self,
        _: &str,
        _: &str,
        _: Option<&str>,
        _: usize,
    ) -> Result<Vec<EntityHit>, RetrievalError> {
        Ok(Vec::new())
    }
    fn index_document(
        &self,
        _: &Document,
        _: &[String],
    ) -> Result<Vec<StoredChunk>, RetrievalError> {
        Ok(Vec::new())
    }
    fn link(&self, _: &str, _: &str) -> Result<(), RetrievalError> {
        Ok(())
    }
    fn index_entity(&self, entity: &Entity) -> Result<(), RetrievalError> {
        self.indexed.lock().unwrap().push(entity.title.clone());
        if entity.title == "Atlas" {
            return Err(RetrievalError("embedder down".into()));
        }
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn written_entities_are_indexed_and_index_errors_are_not_fatal() {
    let db = temp_db();
    let store = open(&db).await;
    let project = store.ensure_project("graph").await.unwrap();
    let retriever = Arc::new(RecordingRetriever::default());
    let extractor =
        GraphExtractor::new(store.clone(), None, config()).with_retriever(retriever.clone());
    let outcome = extractor
        .ingest(&project, None, &ingest_extraction(), "ingest")
        .await
        .unwrap();
    assert_eq!(outcome.entities_stored, 2);
    let mut indexed = retriever.indexed.lock().unwrap().clone();
    indexed.sort();
    assert_eq!(indexed, ["Alice", "Atlas"]);
}

async fn link(
    extractor: &GraphExtractor,
    project: &str,
    from: (&str, &str),
    label: &str,
    to: (&str, &str),
) {
    let extraction = GraphExtraction {
        entities: vec![
            ExtractedEntity {
                name: from.0.into(),
                entity_type: from.1.into(),
                notes: None,
            },
            ExtractedEntity {
                name: to.0.into(),
                entity_type: to.1.into(),
                notes: None,
            },
        ],
        relationships: vec![ExtractedRelationship {
            from: from.0.into(),
            from_type: from.1.into(),
            to: to.0.into(),
            to_type: to.1.into(),
            label: label.into(),
            notes: None,
        }],
    };
    let outcome = extractor
        .ingest(project, None, &extraction, "ingest")
        .await
        .unwrap();
    assert_eq!(outcome.relationships_stored, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn neighbors_walk_both_directions_to_depth() {
    let db = temp_db();
    let store = open(&db).await;
    let project = store.ensure_project("graph").await.unwrap();
    let x = GraphExtractor::new(store.clone(), None, config());
    // Alice → Atlas (incoming to the root), Atlas → Rust (outgoing), Bob → Alice and
    // Rust → Mozilla (two hops), Dave → Bob (three hops).
    link(
        &x,
        &project,
        ("Alice", "person"),
        "works_on",
        ("Atlas", "project"),
    )
    .await;
    link(
        &x,
        &project,
        ("Atlas", "project"),
        "uses",
        ("Rust", "technology"),
    )
    .await;
    link(
        &x,
        &project,
        ("Bob", "person"),
        "manages",
        ("Alice", "person"),
    )
    .await;
    link(
        &x,
        &project,
        ("Rust", "technology"),
        "created_by",
        ("Mozilla", "organization"),
    )
    .await;
    link(&x, &project, ("Dave", "person"), "knows", ("Bob", "person")).await;
    let atlas = entity_named(store.as_ref(), &project, "Atlas", "project").await;

    let hood = neighbors(store.as_ref(), &project, &atlas.id, 2, 50)
        .await
        .unwrap();
    assert_eq!(hood.root.id, atlas.id);
    let mut reached: Vec<(String, usize)> = hood
        .entities
        .iter()
        .map(|n| (n.entity.title.clone(), n.depth))
        .collect();
    reached.sort();
    assert_eq!(
        reached,
        [
            ("Alice".to_owned(), 1),
            ("Bob".to_owned(), 2),
            ("Mozilla".to_owned(), 2),
            ("Rust".to_owned(), 1),
        ]
    );
    let mut labels: Vec<&str> = hood.relations.iter().map(|r| r.label.as_str()).collect();
    labels.sort();
    assert_eq!(labels, ["created_by", "manages", "uses", "works_on"]);

    let one = neighbors(store.as_ref(), &project, &atlas.id, 1, 50)
        .await
        .unwrap();
    assert_eq!(one.entities.len(), 2);
    assert!(one.entities.iter().all(|n| n.depth == 1));
    assert_eq!(one.relations.len(), 2);

    let capped = neighbors(store.as_ref(), &project, &atlas.id, 10, 50)
        .await
        .unwrap();
    assert_eq!(capped.entities.len(), 5);
    assert_eq!(capped.entities.last().unwrap().entity.title, "Dave");
    assert_eq!(capped.entities.last().unwrap().depth, 3);

    let limited = neighbors(store.as_ref(), &project, &atlas.id, 2, 3)
        .await
        .unwrap();
    assert_eq!(limited.entities.len(), 3);

    let missing = neighbors(store.as_ref(), &project, "no-such-id", 2, 50).await;
    assert!(matches!(missing, Err(StoreError::NotFound { .. })));
}
