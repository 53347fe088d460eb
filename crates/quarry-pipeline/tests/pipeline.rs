//! The entity pipeline end to end: the real SQLite store in a temp dir and the real
//! OpenAI-compatible client against a scripted model server (one script per agent model).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use quarry_core::model::{
    GraphEntityWrite, GraphWrite, NewEntity, ResultStatus, ReviewDecision, RunStatus,
};
use quarry_core::retrieval::Retriever;
use quarry_core::store::Store;
use quarry_index::Library;
use quarry_llm::{Endpoint, OpenAiClient, TransportConfig};
use quarry_pipeline::documents::Documents;
use quarry_pipeline::{
    AgentRegistry, FieldOutcome, Pipeline, PipelineConfig, ResolvedAgent, WorkerConfig,
    feedback_sentence, load_entity_types,
};
use quarry_testkit::{Reply, ScriptedServer, TempDb};
use serde_json::{Map, Value, json};

const DOC: &str = "Acme Corp reported revenue of $1.2 million in 2023. Its CEO is Jane Doe; \
                   John Roe chairs the board.\n\nTasks: write docs, write tests and ship it.";

const TYPES: &str = r#"
entity_types:
  - slug: company
    fields:
      - {name: name, agent: m-name, sources: [linked-documents]}
      - {name: revenue, type: number, agent: m-rev, sources: [linked-documents]}
      - {name: summary, agent: m-sum, depends_on: [name, revenue]}
      - {name: ceo, sources: [linked-documents],
         consensus: {agents: [a1, a2, a3], strategy: majority}}
      - {name: chair, sources: [linked-documents],
         consensus: {agents: [u1, u2], strategy: unanimous}}
      - {name: lead, sources: [linked-documents],
         consensus: {agents: [b1, b2, b3], strategy: best-confidence}}
      - {name: owner, human_input: true}
      - {name: plan, agent: m-plan, depends_on: [owner]}
      - {name: tasks, type: list, agent: m-tasks, sources: [linked-documents],
         connection: {entity_type: task, cascade: {enabled: true, title_field: name}}}
  - slug: task
    fields: []
  - slug: person
    fields:
      - {name: employer, agent: m-emp, sources: [linked-documents, all-entities]}
  - slug: account
    fields:
      - {name: revenue, type: number, agent: m-rev, sources: [linked-documents]}
      - {name: tier, agent: m-tier, derived: true, derived_from: [revenue],
         instructions: "small, mid or large by revenue"}
      - {name: motto, agent: m-motto, sources: [linked-documents]}
  - slug: vendor
    fields:
      - {name: code, agent: m-code, sources: [linked-documents],
         instructions: "The vendor's four-letter code.", validation: "Exactly four capital letters."}
      - {name: stubborn, agent: m-stub, sources: [linked-documents], max_steps: 2}
      - {name: partner_ceo, agent: m-partner, sources: [connected-entities]}
      - {name: anywhere, agent: m-any, sources: [all-documents]}
  - slug: supplier
    default_agent: m-def
    fields:
      - {name: region, sources: [linked-documents]}
  - slug: memo
    fields:
      - {name: headline, agent: m-head, sources: [linked-documents],
         actions: [{on: extracted, run_field: gist}]}
      - {name: gist, agent: m-gist, derived: true, derived_from: [headline]}
  - slug: deal
    fields:
      - {name: buyer, agent: m-buyer, sources: [linked-documents], requires_approval: true}
      - {name: memo, agent: m-memo, depends_on: [buyer]}
"#;

struct Agents {
    server_url: String,
}

impl AgentRegistry for Agents {
    fn resolve(&self, agent: &str) -> Option<ResolvedAgent> {
        let endpoint = Endpoint {
            provider: "openai".to_owned(),
            base_url: self.server_url.clone(),
            model: agent.to_owned(),
            api_key: Some("sk-test".to_owned()),
        };
        let transport = TransportConfig {
            max_attempts: 1,
            ..TransportConfig::default()
        };
        let client = OpenAiClient::new(endpoint, transport, 8).ok()?;
        Some(ResolvedAgent {
            client: Arc::new(client),
            model: agent.to_owned(),
        })
    }
}

struct World {
    server: ScriptedServer,
    store: Arc<dyn Store>,
    pipeline: Pipeline,
    project: String,
    entity: String,
    /// Removes the database's folder when the test ends.
    _db: TempDb,
}

async fn world() -> World {
    let db = TempDb::new("pipeline");
    let store = quarry_store::open(db.url()).await.unwrap();
    let project = store.ensure_project("test").await.unwrap();
    for entity_type in load_entity_types(TYPES).unwrap() {
        store.put_entity_type(&project, &entity_type).await.unwrap();
    }
    let entity = store
        .create_entity(
            &project,
            &NewEntity {
                entity_type: "company".into(),
                title: "Acme".into(),
                ..NewEntity::default()
            },
        )
        .await
        .unwrap();
    let retriever: Arc<dyn Retriever> = Arc::new(Library::hashing().unwrap());
    Documents::new(store.clone(), retriever.clone())
        .add(&project, "report", DOC, std::slice::from_ref(&entity.id))
        .await
        .unwrap();
    let server = ScriptedServer::start();
    let agents = Arc::new(Agents {
        server_url: server.base_url(),
    });
    let pipeline = Pipeline::new(store.clone(), retriever, agents, PipelineConfig::default());
    World {
        server,
        store,
        pipeline,
        project,
        entity: entity.id,
        _db: db,
    }
}

fn search(query: &str) -> Reply {
    Reply::tool_call("search_documents", json!({"query": query}).to_string())
}

fn submit(value: Value, confidence: &str) -> Reply {
    Reply::tool_call(
        "submit_value",
        json!({"value": value, "sources": [], "confidence": confidence}).to_string(),
    )
}

/// Requests per model, in arrival order.
fn by_model(server: &ScriptedServer) -> HashMap<String, Vec<Value>> {
    let mut out: HashMap<String, Vec<Value>> = HashMap::new();
    for body in server.requests() {
        let model = body["model"].as_str().unwrap_or("").to_owned();
        out.entry(model).or_default().push(body);
    }
    out
}

fn all_text(body: &Value) -> String {
    body["messages"].to_string()
}

fn system(body: &Value) -> String {
    body["messages"][0]["content"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

fn fields(names: &[&str]) -> Option<Vec<String>> {
    Some(names.iter().map(|n| (*n).to_owned()).collect())
}

#[tokio::test(flavor = "multi_thread")]
async fn layers_run_in_order_with_parallel_fields_and_dependents_see_values() {
    let w = world().await;
    let slow = Duration::from_millis(80);
    w.server
        .push_for_model("m-name", search("Acme company").after(slow))
        .push_for_model("m-name", submit(json!("Acme Corp"), "high"))
        .push_for_model("m-rev", search("revenue").after(slow))
        .push_for_model("m-rev", submit(json!(1200000), "high"))
        .push_for_model("m-sum", submit(json!("Acme Corp"), "medium"));
    let report = w
        .pipeline
        .run(
            &w.project,
            &w.entity,
            fields(&["summary", "name", "revenue"]),
            "test",
        )
        .await
        .unwrap();
    assert_eq!(report.run.status, RunStatus::Completed, "{report:#?}");
    let order: Vec<&str> = report.fields.iter().map(|f| f.field.as_str()).collect();
    assert_eq!(order, ["name", "revenue", "summary"]);
    // name and revenue ran concurrently.
    assert!(w.server.max_concurrent() >= 2);
    let requests = by_model(&w.server);
    let summary_system = system(&requests["m-sum"][0]);
    assert!(
        summary_system.contains("\"revenue\":1200000"),
        "{summary_system}"
    );
    assert!(summary_system.contains("\"name\":\"Acme Corp\""));
    // Document text stays out of system prompts; it arrives in tool results.
    assert!(!system(&requests["m-name"][1]).contains("chairs the board"));
    assert!(all_text(&requests["m-name"][1]).contains("chairs the board"));

    let results = w.store.latest_results(&w.project, &w.entity).await.unwrap();
    let name = results.iter().find(|r| r.field_name == "name").unwrap();
    assert_eq!(name.status, ResultStatus::Pending);
    assert!(
        name.sources.iter().any(|s| matches!(
            s,
            quarry_core::model::SourceRef::Document {
                start: 0,
                end: 9,
                ..
            }
        )),
        "{:?}",
        name.sources
    );

    // Re-extraction supersedes the previous result.
    w.server
        .push_for_model("m-name", search("Acme company"))
        .push_for_model("m-name", submit(json!("Acme Corp"), "high"));
    w.pipeline
        .run(&w.project, &w.entity, fields(&["name"]), "test")
        .await
        .unwrap();
    let history = w
        .store
        .field_history(&w.project, &w.entity, "name")
        .await
        .unwrap();
    let statuses: Vec<ResultStatus> = history.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [ResultStatus::Superseded, ResultStatus::Pending]);
}

#[tokio::test(flavor = "multi_thread")]
async fn locked_field_is_skipped() {
    let w = world().await;
    let mut metadata = Map::new();
    metadata.insert("locked_fields".into(), json!(["revenue"]));
    w.store
        .set_entity_metadata(&w.project, &w.entity, &metadata)
        .await
        .unwrap();
    w.server
        .push_for_model("m-name", search("Acme name"))
        .push_for_model("m-name", submit(json!("Acme Corp"), "high"));
    let report = w
        .pipeline
        .run(&w.project, &w.entity, fields(&["name", "revenue"]), "test")
        .await
        .unwrap();
    assert_eq!(report.outcome("revenue"), Some(&FieldOutcome::Locked));
    assert!(!by_model(&w.server).contains_key("m-rev"));
    assert_eq!(report.run.status, RunStatus::Completed);
}

#[tokio::test(flavor = "multi_thread")]
async fn consensus_strategies() {
    let w = world().await;
    for (agent, value, confidence) in [
        ("a1", "Jane Doe", "high"),
        ("a2", "jane  doe", "low"),
        ("a3", "John Roe", "high"),
        ("u1", "John Roe", "high"),
        ("u2", "Jane Doe", "high"),
        ("b1", "Jane Doe", "low"),
        ("b2", "John Roe", "high"),
        ("b3", "Jane Doe", "high"),
    ] {
        w.server
            .push_for_model(agent, search("ceo chair"))
            .push_for_model(agent, submit(json!(value), confidence));
    }
    let report = w
        .pipeline
        .run(
            &w.project,
            &w.entity,
            fields(&["ceo", "chair", "lead"]),
            "test",
        )
        .await
        .unwrap();
    assert_eq!(report.run.status, RunStatus::Partial, "{report:#?}");
    let Some(FieldOutcome::Extracted {
        value, agreement, ..
    }) = report.outcome("ceo")
    else {
        panic!("{report:#?}")
    };
    assert_eq!(value, "Jane Doe");
    assert!((agreement.unwrap() - 2.0 / 3.0).abs() < 1e-9);
    let ceo = w
        .store
        .field_history(&w.project, &w.entity, "ceo")
        .await
        .unwrap();
    assert_eq!(ceo.len(), 3);
    let winner = ceo
        .iter()
        .find(|r| r.status == ResultStatus::Pending)
        .unwrap();
    assert_eq!(winner.agent_id, "a1");
    assert_eq!(winner.metadata["agreement"], json!(2.0 / 3.0));

    let Some(FieldOutcome::Failed { result_ids, .. }) = report.outcome("chair") else {
        panic!("{report:#?}")
    };
    assert_eq!(result_ids.len(), 2);
    let chair = w
        .store
        .field_history(&w.project, &w.entity, "chair")
        .await
        .unwrap();
    assert!(chair.iter().all(|r| r.status == ResultStatus::Superseded));

    let lead = w
        .store
        .field_history(&w.project, &w.entity, "lead")
        .await
        .unwrap();
    let winner = lead
        .iter()
        .find(|r| r.status == ResultStatus::Pending)
        .unwrap();
    assert_eq!(winner.agent_id, "b2");
}

#[tokio::test(flavor = "multi_thread")]
async fn rejection_with_reason_reruns_with_the_feedback_sentence() {
    let w = world().await;
    w.server
        .push_for_model("m-name", search("Acme name"))
        .push_for_model("m-name", submit(json!("Acme"), "high"))
        .push_for_model("m-name", search("Acme legal name"))
        .push_for_model("m-name", submit(json!("Acme Corp"), "high"));
    let report = w
        .pipeline
        .run(&w.project, &w.entity, fields(&["name"]), "test")
        .await
        .unwrap();
    let Some(FieldOutcome::Extracted { result_id, .. }) = report.outcome("name") else {
        panic!("{report:#?}")
    };
    let outcome = w
        .pipeline
        .review(
            &w.project,
            result_id,
            ReviewDecision::Reject {
                reason: Some("use the legal name".into()),
            },
            "ann",
        )
        .await
        .unwrap();
    assert_eq!(outcome.result.status, ResultStatus::Rejected);
    let rerun = outcome.rerun.expect("a feedback rerun");
    let rerun = w
        .pipeline
        .wait(&w.project, &rerun.id, &WorkerConfig::default())
        .await
        .unwrap();
    assert!(matches!(
        rerun.outcome("name"),
        Some(FieldOutcome::Extracted { value, .. }) if value == "Acme Corp"
    ));
    let sentence = feedback_sentence(&json!("Acme"), "use the legal name");
    assert_eq!(
        sentence,
        "The previous value Acme was rejected because: use the legal name. Please try again \
         with this feedback."
    );
    let requests = by_model(&w.server);
    let rerun_request = &requests["m-name"][2];
    assert!(all_text(rerun_request).contains(&sentence));
    assert!(!system(rerun_request).contains(&sentence));
}

#[tokio::test(flavor = "multi_thread")]
async fn requires_approval_parks_dependents_until_the_value_is_approved() {
    let w = world().await;
    let deal = w
        .store
        .create_entity(
            &w.project,
            &NewEntity {
                entity_type: "deal".into(),
                title: "Acme acquisition".into(),
                ..NewEntity::default()
            },
        )
        .await
        .unwrap();
    w.pipeline
        .documents()
        .add(&w.project, "memo", DOC, std::slice::from_ref(&deal.id))
        .await
        .unwrap();
    w.server.push_for_model("m-buyer", search("CEO"));
    w.server
        .push_for_model("m-buyer", submit(json!("Jane Doe"), "high"));
    let report = w
        .pipeline
        .run(&w.project, &deal.id, None, "test")
        .await
        .unwrap();
    assert_eq!(report.run.status, RunStatus::WaitingHuman);
    assert!(
        matches!(
            report.outcome("buyer"),
            Some(FieldOutcome::AwaitingApproval { .. })
        ),
        "{report:?}"
    );
    assert_eq!(
        report.outcome("memo"),
        Some(&FieldOutcome::Blocked {
            waiting_on: vec!["buyer".into()]
        })
    );
    assert!(
        !by_model(&w.server).contains_key("m-memo"),
        "the dependent did not run"
    );

    let pending = w.store.latest_results(&w.project, &deal.id).await.unwrap();
    let buyer = pending.iter().find(|r| r.field_name == "buyer").unwrap();
    assert_eq!(buyer.status, ResultStatus::Pending);
    w.server
        .push_for_model("m-memo", submit(json!("Jane Doe"), "medium"));
    let approved = w
        .pipeline
        .review(&w.project, &buyer.id, ReviewDecision::Approve, "reviewer")
        .await
        .unwrap();
    assert_eq!(approved.entity.unwrap().fields["buyer"], "Jane Doe");
    let resumed = approved
        .rerun
        .expect("the dependent resumes after approval");
    let resumed = w
        .pipeline
        .wait(&w.project, &resumed.id, &WorkerConfig::default())
        .await
        .unwrap();
    assert!(
        matches!(
            resumed.outcome("memo"),
            Some(FieldOutcome::Extracted { .. })
        ),
        "{resumed:?}"
    );
    let memo_prompt = system(&by_model(&w.server)["m-memo"][0]);
    assert!(
        memo_prompt.contains("Jane Doe"),
        "the dependent sees the approved value"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn human_input_parks_the_run_and_blocks_dependents_until_answered() {
    let w = world().await;
    let report = w
        .pipeline
        .run(&w.project, &w.entity, fields(&["owner", "plan"]), "test")
        .await
        .unwrap();
    assert_eq!(report.run.status, RunStatus::WaitingHuman);
    assert_eq!(report.outcome("owner"), Some(&FieldOutcome::WaitingHuman));
    assert_eq!(
        report.outcome("plan"),
        Some(&FieldOutcome::Blocked {
            waiting_on: vec!["owner".into()]
        })
    );
    assert_eq!(w.server.request_count(), 0);

    w.server
        .push_for_model("m-plan", submit(json!("Ann Lee"), "high"));
    let answered = w
        .pipeline
        .answer_human_input(&w.project, &w.entity, "owner", json!("Ann Lee"), "ann")
        .await
        .unwrap();
    assert_eq!(answered.result.status, ResultStatus::Approved);
    assert_eq!(answered.entity.unwrap().fields["owner"], "Ann Lee");
    let resumed = answered.rerun.expect("dependents resumed");
    let resumed = w
        .pipeline
        .wait(&w.project, &resumed.id, &WorkerConfig::default())
        .await
        .unwrap();
    assert!(matches!(
        resumed.outcome("plan"),
        Some(FieldOutcome::Extracted { .. })
    ));
    assert_eq!(resumed.run.status, RunStatus::Completed);
}

#[tokio::test(flavor = "multi_thread")]
async fn cascade_creates_deduplicates_and_links() {
    let w = world().await;
    let existing = w
        .store
        .create_entity(
            &w.project,
            &NewEntity {
                entity_type: "task".into(),
                title: "Write Docs".into(),
                ..NewEntity::default()
            },
        )
        .await
        .unwrap();
    w.server
        .push_for_model("m-tasks", search("tasks"))
        .push_for_model(
            "m-tasks",
            submit(
                json!(["write docs", "write tests", "ship it", "Write tests"]),
                "high",
            ),
        );
    let report = w
        .pipeline
        .run(&w.project, &w.entity, fields(&["tasks"]), "test")
        .await
        .unwrap();
    let Some(FieldOutcome::Extracted {
        created_entity_ids, ..
    }) = report.outcome("tasks")
    else {
        panic!("{report:#?}")
    };
    assert_eq!(created_entity_ids.len(), 2);
    let created = w
        .store
        .get_entity(&w.project, &created_entity_ids[0])
        .await
        .unwrap()
        .unwrap();
    assert_eq!(created.title, "write tests");
    assert_eq!(created.entity_type, "task");
    assert_eq!(created.parent_id.as_deref(), Some(w.entity.as_str()));
    let connected = w
        .store
        .connected_entities(&w.project, &w.entity, 10)
        .await
        .unwrap();
    assert_eq!(connected.len(), 3);
    assert!(connected.iter().any(|e| e.id == existing.id));
    let result = w
        .store
        .get_result(&w.project, &report_result_id(&report, "tasks"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(&result.created_entity_ids, created_entity_ids);
}

fn report_result_id(report: &quarry_pipeline::RunReport, field: &str) -> String {
    match report.outcome(field) {
        Some(FieldOutcome::Extracted { result_id, .. }) => result_id.clone(),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn hallucinated_value_is_rejected_by_grounding() {
    let w = world().await;
    w.server
        .push_for_model("m-rev", search("revenue"))
        .push_for_model("m-rev", submit(json!(1500000), "high"))
        .push_for_model("m-rev", submit(json!(1200000), "high"));
    let report = w
        .pipeline
        .run(&w.project, &w.entity, fields(&["revenue"]), "test")
        .await
        .unwrap();
    assert!(matches!(
        report.outcome("revenue"),
        Some(FieldOutcome::Extracted { value, .. }) if value == &json!(1200000)
    ));
    let requests = by_model(&w.server);
    let feedback = &requests["m-rev"][2]["messages"];
    let last = feedback.as_array().unwrap().last().unwrap();
    assert_eq!(last["role"], "tool");
    let text = last["content"].as_str().unwrap();
    assert!(text.starts_with("REJECTED"), "{text}");
    assert!(text.contains("1500000 does not appear"), "{text}");
}

/// The tool results (JSON text) of one request, in order.
fn tool_results(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_search_through_the_retriever_with_code_point_offsets() {
    let w = world().await;
    let person = w
        .store
        .create_entity(
            &w.project,
            &NewEntity {
                entity_type: "person".into(),
                title: "Jörg Müller".into(),
                ..NewEntity::default()
            },
        )
        .await
        .unwrap();
    // A first paragraph long enough to be its own chunk, full of multi-byte characters.
    let text = format!(
        "Jörg Müller (Zürich) 🦁 — Lebenslauf. {}\n\nJörg arbeitet seit 2019 bei Brewco als \
         Ingenieur.",
        "Grüße aus München. ".repeat(50)
    );
    let text = text.as_str();
    let document = w
        .pipeline
        .documents()
        .add(&w.project, "cv", text, std::slice::from_ref(&person.id))
        .await
        .unwrap()
        .document;
    // A graph entity whose notes (not its title) say what it does: only meaning finds it.
    let brewco = w
        .store
        .apply_graph(
            &w.project,
            None,
            &GraphWrite {
                entities: vec![GraphEntityWrite {
                    existing_id: None,
                    name: "Brewco".into(),
                    entity_type: "organization".into(),
                    notes: Some("maker of espresso machines".into()),
                    source: "ingest".into(),
                }],
                relationships: Vec::new(),
            },
        )
        .await
        .unwrap()
        .entities
        .remove(0);
    w.pipeline.retriever().index_entity(&brewco).unwrap();

    w.server
        .push_for_model("m-emp", search("arbeitet Ingenieur"))
        .push_for_model(
            "m-emp",
            Reply::tool_call(
                "search_entities",
                json!({"query": "espresso machines"}).to_string(),
            ),
        )
        .push_for_model("m-emp", submit(json!("Brewco"), "high"));
    let report = w
        .pipeline
        .run(&w.project, &person.id, None, "test")
        .await
        .unwrap();
    assert_eq!(report.run.status, RunStatus::Completed, "{report:#?}");

    let requests = by_model(&w.server);
    let results = tool_results(&requests["m-emp"][2]);
    let hits: Vec<Value> = serde_json::from_str(&results[0]).unwrap();
    assert!(!hits.is_empty());
    for hit in &hits {
        // Only the document linked to this person; offsets are code points into its text.
        assert_eq!(hit["document_id"], json!(document.id));
        let (start, end) = (
            hit["start"].as_u64().unwrap() as usize,
            hit["end"].as_u64().unwrap() as usize,
        );
        let cited: String = text.chars().skip(start).take(end - start).collect();
        assert_eq!(hit["snippet"].as_str().unwrap(), cited);
    }
    let best = hits[0]["snippet"].as_str().unwrap();
    assert!(best.starts_with("Jörg arbeitet"), "{best}");
    let expected_start = text[..text.find("Jörg arbeitet").unwrap()].chars().count();
    assert_eq!(hits[0]["start"], json!(expected_start));
    let entities: Vec<Value> = serde_json::from_str(&results[1]).unwrap();
    assert_eq!(entities[0]["entity_id"], json!(brewco.id), "{entities:?}");

    // The captured source refs are exactly what the tool showed.
    let results = w
        .store
        .latest_results(&w.project, &person.id)
        .await
        .unwrap();
    let employer = results.iter().find(|r| r.field_name == "employer").unwrap();
    assert!(
        employer.sources.iter().any(|s| matches!(
            s,
            quarry_core::model::SourceRef::Document { document_id, start, .. }
                if *document_id == document.id && *start == expected_start
        )),
        "{:?}",
        employer.sources
    );
    assert!(employer.sources.iter().any(|s| matches!(
        s,
        quarry_core::model::SourceRef::Entity { entity_id, .. } if *entity_id == brewco.id
    )));
}

fn status(code: u16) -> Reply {
    Reply::Status {
        code,
        body: format!("{{\"error\": \"scripted {code}\"}}"),
        retry_after: None,
    }
}

/// Runs the `name` field against a scripted reply sequence and returns (outcome, attempts).
async fn name_field_after(replies: Vec<Reply>) -> (FieldOutcome, i64) {
    let w = world().await;
    for reply in replies {
        w.server.push_for_model("m-name", reply);
    }
    let (run, _) = w
        .pipeline
        .start(&w.project, &w.entity, fields(&["name"]), "test")
        .await
        .unwrap();
    let worker = WorkerConfig {
        retry_base: Duration::from_millis(5),
        ..WorkerConfig::default()
    };
    let report = w.pipeline.wait(&w.project, &run.id, &worker).await.unwrap();
    let tasks = w.store.run_tasks(&w.project, &run.id).await.unwrap();
    (report.outcome("name").unwrap().clone(), tasks[0].attempts)
}

#[tokio::test(flavor = "multi_thread")]
async fn transient_failures_are_retried_with_backoff_and_permanent_ones_fail_at_once() {
    // A 500 is transient: the second attempt succeeds.
    let (outcome, attempts) = name_field_after(vec![
        status(500),
        search("Acme company"),
        submit(json!("Acme Corp"), "high"),
    ])
    .await;
    assert!(
        matches!(outcome, FieldOutcome::Extracted { .. }),
        "{outcome:?}"
    );
    assert_eq!(attempts, 2);

    // 429 on every attempt: the field fails after max_attempts (5), naming the cause.
    let (outcome, attempts) = name_field_after((0..5).map(|_| status(429)).collect()).await;
    let FieldOutcome::Failed { reason, .. } = &outcome else {
        panic!("{outcome:?}")
    };
    assert!(
        reason.contains("429") && reason.contains("gave up after 5 attempts"),
        "{reason}"
    );
    assert_eq!(attempts, 5);

    // 400 and 501 are permanent: one attempt, no retry.
    for code in [400, 501] {
        let (outcome, attempts) =
            name_field_after(vec![status(code), submit(json!("never asked"), "high")]).await;
        let FieldOutcome::Failed { reason, .. } = &outcome else {
            panic!("{code}: {outcome:?}")
        };
        assert!(reason.contains(&code.to_string()), "{reason}");
        assert_eq!(attempts, 1, "{code}");
    }
}

/// A task whose worker dies every time (a poison task) must not be claimed forever: once its
/// claims exceed max_attempts it fails without running again.
#[tokio::test(flavor = "multi_thread")]
async fn a_task_whose_workers_keep_dying_gives_up() {
    let w = world().await;
    let (run, _) = w
        .pipeline
        .start(&w.project, &w.entity, fields(&["name"]), "test")
        .await
        .unwrap();
    for _ in 0..5 {
        // A worker claims it and dies: its lease expires unrenewed.
        let claimed = w
            .store
            .claim_tasks("dead-worker", Duration::from_millis(1), 10, Some(&run.id))
            .await
            .unwrap();
        assert_eq!(claimed.len(), 1);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let report = w
        .pipeline
        .wait(&w.project, &run.id, &WorkerConfig::default())
        .await
        .unwrap();
    let Some(FieldOutcome::Failed { reason, .. }) = report.outcome("name") else {
        panic!("{report:#?}")
    };
    assert!(reason.contains("gave up after 5 attempts"), "{reason}");
    assert_eq!(
        w.server.request_count(),
        0,
        "the poison task did not run again"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_derived_value_needs_no_span_but_is_capped_and_cites_its_inputs() {
    let w = world().await;
    let account = w
        .store
        .create_entity(
            &w.project,
            &NewEntity {
                entity_type: "account".into(),
                title: "Acme account".into(),
                ..NewEntity::default()
            },
        )
        .await
        .unwrap();
    Documents::new(w.store.clone(), w.pipeline.retriever().clone())
        .add(
            &w.project,
            "account report",
            DOC,
            std::slice::from_ref(&account.id),
        )
        .await
        .unwrap();
    w.server
        .push_for_model("m-rev", search("revenue"))
        .push_for_model("m-rev", submit(json!(1200000), "high"))
        // "mid" is written nowhere: accepted because the field is derived.
        .push_for_model("m-tier", submit(json!("mid"), "high"))
        // The same kind of answer for an ordinary field is refused, then corrected.
        .push_for_model("m-motto", search("motto"))
        .push_for_model("m-motto", submit(json!("Always mid"), "high"))
        .push_for_model("m-motto", submit(json!(null), "low"));
    let report = w
        .pipeline
        .run(&w.project, &account.id, None, "test")
        .await
        .unwrap();
    let Some(FieldOutcome::Extracted {
        result_id, value, ..
    }) = report.outcome("tier")
    else {
        panic!("tier was not extracted: {report:?}");
    };
    assert_eq!(value, &json!("mid"));
    let tier = w
        .store
        .get_result(&w.project, result_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        tier.confidence,
        quarry_core::model::Confidence::Medium,
        "capped"
    );
    assert!(
        tier.sources
            .contains(&quarry_core::model::SourceRef::Entity {
                entity_id: account.id.clone(),
                field: Some("revenue".into()),
            }),
        "{:?}",
        tier.sources
    );
    let requests = by_model(&w.server);
    let prompt = system(&requests["m-tier"][0]);
    assert!(prompt.contains("This field is derived"), "{prompt}");
    assert!(prompt.contains("the fields revenue"), "{prompt}");
    // Its input ran first: the tier prompt already knows the revenue.
    assert!(
        all_text(&requests["m-tier"][0]).contains("1200000"),
        "{}",
        all_text(&requests["m-tier"][0])
    );
    let motto = all_text(&requests["m-motto"][2]);
    assert!(
        motto.contains("REJECTED"),
        "an ordinary field is still grounded: {motto}"
    );
}

/// A new entity of `entity_type` under `parent`, returned by id.
async fn child(w: &World, entity_type: &str, title: &str, parent: Option<&str>) -> String {
    w.store
        .create_entity(
            &w.project,
            &NewEntity {
                entity_type: entity_type.into(),
                title: title.into(),
                parent_id: parent.map(str::to_owned),
                ..NewEntity::default()
            },
        )
        .await
        .unwrap()
        .id
}

#[tokio::test(flavor = "multi_thread")]
async fn the_prompt_carries_instructions_validation_parent_neighbours_and_review_history() {
    let w = world().await;
    let vendor = child(&w, "vendor", "Vendor One", Some(&w.entity)).await;
    let globex = child(&w, "company", "Globex", None).await;
    w.store
        .upsert_relation(&w.project, &vendor, &globex, "supplies")
        .await
        .unwrap();
    // Five earlier extractions of the field on other vendors, two rejected with a reason: the
    // review history enters the prompt from five on.
    for n in 0..5 {
        let other = child(&w, "vendor", &format!("Vendor {n}"), None).await;
        let stored = w
            .store
            .record_results(
                &w.project,
                &[quarry_core::model::NewResult {
                    run_id: None,
                    entity_id: other,
                    field_name: "code".into(),
                    value: json!(format!("CODE{n}")),
                    sources: vec![],
                    confidence: quarry_core::model::Confidence::High,
                    agent_id: "m-code".into(),
                    status: ResultStatus::Pending,
                    created_entity_ids: vec![],
                    duration_ms: 1,
                    tokens_used: 1,
                    metadata: Map::new(),
                    workflow_node_run_id: None,
                }],
            )
            .await
            .unwrap();
        let decision = if n < 2 {
            ReviewDecision::Reject {
                reason: Some("five characters, not four".into()),
            }
        } else {
            ReviewDecision::Approve
        };
        w.store
            .review_result(&w.project, &stored[0].id, &decision, "ann", None)
            .await
            .unwrap();
    }
    w.server
        .push_for_model("m-code", submit(json!(null), "low"));
    w.pipeline
        .run(&w.project, &vendor, fields(&["code"]), "test")
        .await
        .unwrap();
    let prompt = system(&by_model(&w.server)["m-code"][0]);
    for expected in [
        "Instructions: The vendor's four-letter code.",
        "Validation: Exactly four capital letters.",
        "Parent entity: \"Acme\"",
        "Connected entities:\n- \"Globex\"",
        "Review history of this field across 5 extraction(s): 3 approved, 2 rejected",
        "- five characters, not four (2×)",
    ] {
        assert!(
            prompt.contains(expected),
            "{expected:?} missing from:\n{prompt}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn max_steps_caps_an_agent_that_never_submits() {
    let w = world().await;
    let vendor = child(&w, "vendor", "Vendor Two", None).await;
    for _ in 0..3 {
        w.server.push_for_model("m-stub", search("anything"));
    }
    let report = w
        .pipeline
        .run(&w.project, &vendor, fields(&["stubborn"]), "test")
        .await
        .unwrap();
    let Some(FieldOutcome::Failed { reason, .. }) = report.outcome("stubborn") else {
        panic!("the field should fail: {report:?}");
    };
    assert!(
        reason.contains("no accepted value after 2 model turn(s)"),
        "{reason}"
    );
    assert_eq!(
        by_model(&w.server)["m-stub"].len(),
        2,
        "two turns, then it stops"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_field_without_an_agent_asks_its_types_default_agent() {
    let w = world().await;
    let supplier = child(&w, "supplier", "Supplier", None).await;
    w.server.push_for_model("m-def", submit(json!(null), "low"));
    w.pipeline
        .run(&w.project, &supplier, fields(&["region"]), "test")
        .await
        .unwrap();
    let asked: Vec<String> = w
        .server
        .requests()
        .iter()
        .filter_map(|r| r["model"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(asked, ["m-def"], "the type's default agent answered");
}

#[tokio::test(flavor = "multi_thread")]
async fn connected_entities_are_read_through_get_entity_field_and_cited() {
    let w = world().await;
    let vendor = child(&w, "vendor", "Vendor Three", None).await;
    let globex = w
        .store
        .create_entity(
            &w.project,
            &NewEntity {
                entity_type: "company".into(),
                title: "Globex".into(),
                fields: Map::from_iter([("ceo".to_owned(), json!("Mary Major"))]),
                ..NewEntity::default()
            },
        )
        .await
        .unwrap();
    w.store
        .upsert_relation(&w.project, &vendor, &globex.id, "supplies")
        .await
        .unwrap();
    w.server
        .push_for_model(
            "m-partner",
            Reply::tool_call(
                "get_entity_field",
                json!({"entity_id": globex.id, "field": "ceo"}).to_string(),
            ),
        )
        .push_for_model("m-partner", submit(json!("Mary Major"), "high"));
    let report = w
        .pipeline
        .run(&w.project, &vendor, fields(&["partner_ceo"]), "test")
        .await
        .unwrap();
    let Some(FieldOutcome::Extracted {
        result_id, value, ..
    }) = report.outcome("partner_ceo")
    else {
        panic!("the connected entity's value was not taken: {report:?}");
    };
    assert_eq!(value, &json!("Mary Major"));
    let requests = by_model(&w.server);
    let tools = tool_results(&requests["m-partner"][1]);
    assert!(tools[0].contains("Mary Major"), "{tools:?}");
    let result = w
        .store
        .get_result(&w.project, result_id)
        .await
        .unwrap()
        .unwrap();
    assert!(
        result
            .sources
            .contains(&quarry_core::model::SourceRef::Entity {
                entity_id: globex.id.clone(),
                field: Some("ceo".into()),
            }),
        "{:?}",
        result.sources
    );
    // With only connected-entities as its source, the agent has no document search.
    let offered: Vec<&str> = requests["m-partner"][0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(!offered.contains(&"search_documents"), "{offered:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn all_documents_reach_documents_linked_to_other_entities() {
    let w = world().await;
    // The vendor has no document of its own; the world's report is linked to Acme only.
    let vendor = child(&w, "vendor", "Vendor Four", None).await;
    w.server
        .push_for_model("m-any", search("revenue"))
        .push_for_model("m-any", submit(json!("Jane Doe"), "high"));
    let report = w
        .pipeline
        .run(&w.project, &vendor, fields(&["anywhere"]), "test")
        .await
        .unwrap();
    assert!(
        matches!(
            report.outcome("anywhere"),
            Some(FieldOutcome::Extracted { value, .. }) if value == &json!("Jane Doe")
        ),
        "{report:?}"
    );
    let requests = by_model(&w.server);
    let found = tool_results(&requests["m-any"][1]);
    assert!(found[0].contains("Jane Doe"), "{found:?}");
    // The same search with linked-documents only finds nothing for it.
    w.server
        .push_for_model("m-code", search("revenue"))
        .push_for_model("m-code", submit(json!(null), "low"));
    w.pipeline
        .run(&w.project, &vendor, fields(&["code"]), "test")
        .await
        .unwrap();
    let linked_only = tool_results(&by_model(&w.server)["m-code"][1]);
    assert!(!linked_only[0].contains("Jane Doe"), "{linked_only:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_extracted_action_starts_another_fields_run_under_the_same_root() {
    let w = world().await;
    let memo = child(&w, "memo", "Memo", None).await;
    Documents::new(w.store.clone(), w.pipeline.retriever().clone())
        .add(&w.project, "memo report", DOC, std::slice::from_ref(&memo))
        .await
        .unwrap();
    w.server
        .push_for_model("m-head", search("CEO"))
        .push_for_model("m-head", submit(json!("Jane Doe"), "high"))
        .push_for_model("m-gist", submit(json!("A CEO is named."), "medium"));
    // Only the headline is asked for; its action queues the gist, which this call waits for.
    let report = w
        .pipeline
        .run(&w.project, &memo, fields(&["headline"]), "test")
        .await
        .unwrap();
    assert_eq!(report.run.status, RunStatus::Completed, "{report:?}");
    let runs = w.store.list_runs(&w.project, &memo, 10).await.unwrap();
    assert_eq!(runs.len(), 2, "{runs:?}");
    let action_run = runs
        .iter()
        .find(|run| run.triggered_by == "action:extracted:headline")
        .expect("the action's run");
    assert_eq!(action_run.status, RunStatus::Completed, "{action_run:?}");
    assert_eq!(action_run.fields_requested, Some(vec!["gist".to_owned()]));
    let gist = w
        .store
        .field_history(&w.project, &memo, "gist")
        .await
        .unwrap();
    assert_eq!(gist.len(), 1);
    assert_eq!(gist[0].value, json!("A CEO is named."));
    // The gist's prompt knew the headline it depends on.
    let prompt = all_text(&by_model(&w.server)["m-gist"][0]);
    assert!(prompt.contains("Jane Doe"), "{prompt}");
}
