//! [`Pipeline`]: an entity's fields as a workflow run on the durable task queue (planned in
//! `plan.rs`, worked by `worker.rs`, one task at a time by `task.rs`), the run's report, and the
//! reactions to reviews (reject with a reason → a feedback rerun queued in the review's
//! transaction; approving a gated field → its waiting dependents move on).

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use quarry_core::model::{
    Confidence, Entity, EntityType, ExtractionResult, ExtractionRun, FieldSpec, FieldTask,
    NewResult, NodeState, ResultStatus, ReviewDecision, RunInstructions, SourceRef,
};
use quarry_core::retrieval::Retriever;
use quarry_core::store::{Store, StoreError};
use quarry_llm::LlmClient;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::documents::Documents;
use crate::entity_types::field_spec;
pub use crate::error::PipelineError;
use crate::field_agent::{feedback_sentence, value_problems};
use crate::plan::{ActionPlan, RunRequest, plan_workflow, planned_deliveries};
use crate::web_source::WebAccess;

/// A model an agent name (a model string such as `openai:gpt-4o-mini`) stands for.
#[derive(Clone)]
pub struct ResolvedAgent {
    pub client: Arc<dyn LlmClient>,
    /// The model name sent in requests.
    pub model: String,
}

/// Maps agent names used in entity types to clients; the CLI builds real ones, tests scripted.
pub trait AgentRegistry: Send + Sync {
    fn resolve(&self, agent: &str) -> Option<ResolvedAgent>;
}

#[derive(Debug, Clone)]
pub struct PipelineConfig {
    /// Fields of one layer extracted at the same time (consensus agents count once per field).
    pub max_concurrency: usize,
    /// Used by fields whose entity type and field name no agent.
    pub default_agent: Option<String>,
    /// How deep `auto_extract` cascades go (0: created entities are not extracted).
    pub max_cascade_depth: u32,
    /// Results of a (type, field) needed before their feedback summary enters prompts.
    pub feedback_threshold: i64,
    /// Connected entities given as context (the reference's 10).
    pub connected_limit: usize,
    pub temperature: Option<f32>,
    pub max_completion_tokens: u32,
    /// Claims of a field task before it fails (transient model failures are retried with
    /// backoff; a worker that died mid-task also used up an attempt).
    pub max_attempts: i64,
}

impl Default for PipelineConfig {
    fn default() -> Self {
        PipelineConfig {
            max_concurrency: 8,
            default_agent: None,
            max_cascade_depth: 2,
            feedback_threshold: 5,
            connected_limit: 10,
            temperature: None,
            max_completion_tokens: 1024,
            max_attempts: 5,
        }
    }
}

/// How a worker claims and retries.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// Who holds the leases: process id, host and start time (the CLI builds it).
    pub owner: String,
    /// Tasks in flight at once.
    pub concurrency: usize,
    /// How long a claim lasts without a heartbeat; renewed every third of it.
    pub lease: Duration,
    /// How often an idle worker looks at the queue when nobody wakes it (other processes).
    pub poll: Duration,
    /// First retry delay after a transient failure; doubled per attempt, capped at a minute,
    /// with ±20 % jitter.
    pub retry_base: Duration,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        WorkerConfig {
            owner: "quarry".to_owned(),
            concurrency: 8,
            lease: Duration::from_secs(30),
            poll: Duration::from_millis(250),
            retry_base: Duration::from_secs(1),
        }
    }
}

/// What a run did, field by field, in layer order.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct RunReport {
    pub run: ExtractionRun,
    pub fields: Vec<FieldReport>,
    /// Runs of entities created by cascades with `auto_extract`.
    pub cascaded: Vec<RunReport>,
}

impl RunReport {
    pub fn outcome(&self, field: &str) -> Option<&FieldOutcome> {
        self.fields
            .iter()
            .find(|f| f.field == field)
            .map(|f| &f.outcome)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct FieldReport {
    pub field: String,
    pub outcome: FieldOutcome,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum FieldOutcome {
    /// A pending result was recorded.
    Extracted {
        result_id: String,
        value: Value,
        agreement: Option<f64>,
        created_entity_ids: Vec<String>,
    },
    /// Recorded, but `requires_approval`: dependents wait for a reviewer.
    AwaitingApproval { result_id: String, value: Value },
    /// A `human_input` field without an answer: dependents wait for a person.
    WaitingHuman,
    /// A `human_input` field already answered.
    Answered,
    /// Listed in `metadata.locked_fields`.
    Locked,
    /// A dependency has no usable value (it failed, waits for a person or is blocked itself).
    Blocked { waiting_on: Vec<String> },
    /// No value: every agent failed, or consensus failed (its values are kept superseded).
    Failed {
        reason: String,
        result_ids: Vec<String>,
    },
    /// Still queued or running (a report read while the run moves).
    InProgress { state: NodeState },
}

/// A review and what it triggered.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct ReviewOutcome {
    pub result: ExtractionResult,
    /// For an approval: the entity with the value promoted.
    pub entity: Option<Entity>,
    /// The feedback rerun queued with a rejection that gave a reason, or the run whose
    /// dependents an approval (or a person's answer) let move on. Work it (or let a worker) and
    /// read its report with [`Pipeline::report`].
    pub rerun: Option<ExtractionRun>,
}

pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

pub struct Pipeline {
    store: Arc<dyn Store>,
    retriever: Arc<dyn Retriever>,
    agents: Arc<dyn AgentRegistry>,
    config: PipelineConfig,
    /// The `web` source, when a search provider is configured.
    web: Option<WebAccess>,
}

impl Pipeline {
    /// The pipeline over `store`, whose field agents search documents and entities through
    /// `retriever` (documents added through [`crate::documents::Documents`] are indexed there).
    pub fn new(
        store: Arc<dyn Store>,
        retriever: Arc<dyn Retriever>,
        agents: Arc<dyn AgentRegistry>,
        config: PipelineConfig,
    ) -> Pipeline {
        Pipeline {
            store,
            retriever,
            agents,
            config,
            web: None,
        }
    }

    /// With `web` as the source of fields that say `sources: [web]` (without it such fields
    /// fail, saying that no search provider is configured).
    pub fn with_web(mut self, web: quarry_web::Web) -> Pipeline {
        self.web = Some(WebAccess::new(web, self.documents()));
        self
    }

    pub(crate) fn web(&self) -> Option<&WebAccess> {
        self.web.as_ref()
    }

    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    pub fn retriever(&self) -> &Arc<dyn Retriever> {
        &self.retriever
    }

    /// The settings this pipeline was built with.
    pub fn config(&self) -> &PipelineConfig {
        &self.config
    }

    pub(crate) fn agent_registry(&self) -> &dyn AgentRegistry {
        self.agents.as_ref()
    }

    /// Adding and linking documents over this pipeline's store and retriever.
    pub fn documents(&self) -> Documents {
        Documents::new(self.store.clone(), self.retriever.clone())
    }

    /// Queues a run of `fields` (all when `None`) of an entity and returns at once: the run
    /// (`running`, or already settled when nothing can run) and its tasks. Workers do the rest.
    pub async fn start(
        &self,
        project: &str,
        entity_id: &str,
        fields: Option<Vec<String>>,
        triggered_by: &str,
    ) -> Result<(ExtractionRun, Vec<FieldTask>), PipelineError> {
        self.start_instructed(
            project,
            entity_id,
            fields,
            triggered_by,
            &RunInstructions::default(),
        )
        .await
    }

    /// [`start`](Self::start) with the trigger's additional instructions, recorded on the run
    /// and given to each field's prompt (naming a field the type lacks is `UnknownField`).
    pub async fn start_instructed(
        &self,
        project: &str,
        entity_id: &str,
        fields: Option<Vec<String>>,
        triggered_by: &str,
        instructions: &RunInstructions,
    ) -> Result<(ExtractionRun, Vec<FieldTask>), PipelineError> {
        let (entity, entity_type) = self.load(project, entity_id).await?;
        let latest = self.store.latest_results(project, entity_id).await?;
        let request = RunRequest {
            fields: fields.as_deref(),
            triggered_by,
            feedback: HashMap::new(),
            root_run_id: None,
            depth: 0,
            max_attempts: self.config.max_attempts,
            instructions: instructions.clone(),
        };
        let workflow = plan_workflow(&entity, &entity_type, &latest, &request)?;
        Ok(self.store.create_workflow(project, &workflow).await?)
    }

    /// Queues a run and works it in this process until it (and every cascade under it) has
    /// settled, then reports it. Other workers may take some of its tasks; this waits for them.
    pub async fn run(
        &self,
        project: &str,
        entity_id: &str,
        fields: Option<Vec<String>>,
        triggered_by: &str,
    ) -> Result<RunReport, PipelineError> {
        let (run, _) = self.start(project, entity_id, fields, triggered_by).await?;
        self.wait(project, &run.id, &WorkerConfig::default()).await
    }

    /// Works the tasks under `run_id` in this process (as `worker.owner`) until it has settled,
    /// then reports it.
    pub async fn wait(
        &self,
        project: &str,
        run_id: &str,
        worker: &WorkerConfig,
    ) -> Result<RunReport, PipelineError> {
        let worker = WorkerConfig {
            concurrency: self.config.max_concurrency.max(1),
            ..worker.clone()
        };
        self.work_root(&worker, project, run_id).await?;
        self.report(project, run_id).await
    }

    /// A run's report as the store has it now: each field's outcome in layer order, and, for a
    /// root run, the runs its cascades started.
    pub async fn report(&self, project: &str, run_id: &str) -> Result<RunReport, PipelineError> {
        let run = self
            .store
            .get_run(project, run_id)
            .await?
            .ok_or_else(|| PipelineError::RunNotFound(run_id.to_owned()))?;
        let fields = self.field_reports(&run).await?;
        let mut cascaded = Vec::new();
        for other in self.store.runs_under_root(project, run_id).await? {
            if other.id != run.id {
                let fields = self.field_reports(&other).await?;
                cascaded.push(RunReport {
                    run: other,
                    fields,
                    cascaded: Vec::new(),
                });
            }
        }
        Ok(RunReport {
            run,
            fields,
            cascaded,
        })
    }

    async fn field_reports(&self, run: &ExtractionRun) -> Result<Vec<FieldReport>, PipelineError> {
        let project = run.project_id.as_str();
        let tasks = self.store.run_tasks(project, &run.id).await?;
        let mut reports = Vec::with_capacity(tasks.len());
        for task in &tasks {
            let outcome = match task.state {
                NodeState::Done | NodeState::WaitingHuman => {
                    let result = match &task.result_id {
                        Some(id) => self.store.get_result(project, id).await?,
                        None => None,
                    };
                    match (task.state, result) {
                        (NodeState::Done, Some(result)) => FieldOutcome::Extracted {
                            agreement: result.metadata.get("agreement").and_then(Value::as_f64),
                            created_entity_ids: result.created_entity_ids.clone(),
                            result_id: result.id,
                            value: result.value,
                        },
                        (NodeState::Done, None) => FieldOutcome::Answered,
                        (_, Some(result)) => FieldOutcome::AwaitingApproval {
                            result_id: result.id,
                            value: result.value,
                        },
                        (_, None) => FieldOutcome::WaitingHuman,
                    }
                }
                NodeState::Skipped => FieldOutcome::Locked,
                NodeState::Blocked | NodeState::Pending => FieldOutcome::Blocked {
                    waiting_on: task
                        .depends_on
                        .iter()
                        .filter(|d| {
                            !tasks.iter().any(|t| {
                                &t.field_name == *d
                                    && matches!(t.state, NodeState::Done | NodeState::Skipped)
                            })
                        })
                        .cloned()
                        .collect(),
                },
                NodeState::Failed => {
                    let result_ids = self
                        .store
                        .field_history(project, &task.entity_id, &task.field_name)
                        .await?
                        .into_iter()
                        .filter(|r| r.run_id.as_deref() == Some(run.id.as_str()))
                        .map(|r| r.id)
                        .collect();
                    FieldOutcome::Failed {
                        reason: task.last_error.clone().unwrap_or_default(),
                        result_ids,
                    }
                }
                NodeState::Queued | NodeState::Running => {
                    FieldOutcome::InProgress { state: task.state }
                }
            };
            reports.push(FieldReport {
                field: task.field_name.clone(),
                outcome,
            });
        }
        Ok(reports)
    }

    /// Starts over the failed or blocked fields of an entity's latest runs (`fields` when
    /// given): the reference's `retryNode`. Returns the tasks queued again.
    pub async fn retry(
        &self,
        project: &str,
        entity_id: &str,
        fields: Option<&[String]>,
    ) -> Result<Vec<FieldTask>, PipelineError> {
        let (_, entity_type) = self.load(project, entity_id).await?;
        if let Some(names) = fields {
            for name in names {
                field_spec(&entity_type, name)?;
            }
        }
        Ok(self.store.retry_tasks(project, entity_id, fields).await?)
    }

    pub(crate) async fn load(
        &self,
        project: &str,
        entity_id: &str,
    ) -> Result<(Entity, EntityType), PipelineError> {
        let entity = self
            .store
            .get_entity(project, entity_id)
            .await?
            .ok_or_else(|| PipelineError::EntityNotFound(entity_id.to_owned()))?;
        let entity_type = self
            .store
            .get_entity_type(project, &entity.entity_type)
            .await?
            .ok_or_else(|| PipelineError::EntityTypeNotFound(entity.entity_type.clone()))?;
        Ok((entity, entity_type))
    }

    /// Approves or rejects a pending result, in one transaction with what it triggers: a
    /// rejection with a reason queues the feedback rerun of the field (with the fields that
    /// depend on it when it is gated); an approval lets the tasks that waited for it move on.
    pub async fn review(
        &self,
        project: &str,
        result_id: &str,
        decision: ReviewDecision,
        reviewer: &str,
    ) -> Result<ReviewOutcome, PipelineError> {
        let result = self
            .store
            .get_result(project, result_id)
            .await?
            .ok_or_else(|| PipelineError::ResultNotFound(result_id.to_owned()))?;
        let rerun = match &decision {
            ReviewDecision::Reject {
                reason: Some(reason),
            } if !reason.trim().is_empty() => Some(
                self.feedback_rerun(project, &result, reason, reviewer)
                    .await?,
            ),
            _ => None,
        };
        // The field's webhooks for this review (an entity or type gone since: none).
        let event = match &decision {
            ReviewDecision::Approve => quarry_core::model::ActionEvent::Approved,
            ReviewDecision::Reject { .. } => quarry_core::model::ActionEvent::Rejected,
        };
        // And the runs its actions start (each a run of its own).
        let (deliveries, runs) = match self.load(project, &result.entity_id).await {
            Ok((entity, entity_type)) => match field_spec(&entity_type, &result.field_name) {
                Ok(spec) => {
                    let latest = self.store.latest_results(project, &entity.id).await?;
                    let plan = ActionPlan {
                        entity: &entity,
                        entity_type: &entity_type,
                        latest: &latest,
                        field: spec,
                        value: &result.value,
                        root_run_id: None,
                        depth: 0,
                        max_attempts: self.config.max_attempts,
                    };
                    (planned_deliveries(spec, event), plan.runs(event)?)
                }
                Err(_) => (Vec::new(), Vec::new()),
            },
            Err(_) => (Vec::new(), Vec::new()),
        };
        let reviewed = self
            .store
            .review_result_notifying(
                project,
                result_id,
                &decision,
                reviewer,
                rerun.as_ref(),
                &deliveries,
                &runs,
            )
            .await?;

        let rerun = match reviewed.rerun {
            Some(run) => Some(run),
            None => match reviewed.resumed.first() {
                Some(run_id) => self.store.get_run(project, run_id).await?,
                None => None,
            },
        };
        Ok(ReviewOutcome {
            result: reviewed.result,
            entity: reviewed.entity,
            rerun,
        })
    }

    async fn feedback_rerun(
        &self,
        project: &str,
        result: &ExtractionResult,
        reason: &str,
        reviewer: &str,
    ) -> Result<quarry_core::model::NewWorkflow, PipelineError> {
        let (entity, entity_type) = self.load(project, &result.entity_id).await?;
        let spec = field_spec(&entity_type, &result.field_name)?;
        let mut fields = vec![result.field_name.clone()];
        if spec.human_input || spec.requires_approval {
            let locked = entity.locked_fields();
            fields.extend(
                dependents_of(&entity_type, &result.field_name)
                    .into_iter()
                    .filter(|name| !locked.contains(name)),
            );
        }
        let mut feedback = HashMap::new();
        feedback.insert(
            result.field_name.clone(),
            feedback_sentence(&result.value, reason),
        );
        // The rejected result is still pending while the rerun is planned: plan without it.
        let latest: Vec<ExtractionResult> = self
            .store
            .latest_results(project, &entity.id)
            .await?
            .into_iter()
            .filter(|r| r.id != result.id)
            .collect();
        let trigger = format!("review:{reviewer}");
        let request = RunRequest {
            fields: Some(&fields),
            triggered_by: &trigger,
            feedback,
            root_run_id: None,
            depth: 0,
            max_attempts: self.config.max_attempts,
            instructions: RunInstructions::default(),
        };
        plan_workflow(&entity, &entity_type, &latest, &request)
    }

    /// Records a value from an external agent as a pending result, after checking the field
    /// exists, is not locked and the value fits the field type. External agents cite their own
    /// sources (often URLs), so the value is not grounded in stored documents; review decides.
    #[allow(clippy::too_many_arguments)]
    pub async fn submit_external(
        &self,
        project: &str,
        entity_id: &str,
        field: &str,
        value: Value,
        sources: Vec<SourceRef>,
        confidence: Confidence,
        agent_id: &str,
    ) -> Result<ExtractionResult, PipelineError> {
        let (entity, entity_type) = self.load(project, entity_id).await?;
        let spec = field_spec(&entity_type, field)?;
        check_value(spec, &value)?;
        if entity.locked_fields().iter().any(|name| name == field) {
            return Err(PipelineError::InvalidValue {
                field: field.to_owned(),
                message: "the field is locked".to_owned(),
            });
        }
        let mut metadata = Map::new();
        metadata.insert("external".to_owned(), Value::Bool(true));
        let result = NewResult {
            run_id: None,
            entity_id: entity.id.clone(),
            field_name: field.to_owned(),
            value,
            sources,
            confidence,
            agent_id: agent_id.to_owned(),
            status: ResultStatus::Pending,
            created_entity_ids: Vec::new(),
            duration_ms: 0,
            tokens_used: 0,
            metadata,
            workflow_node_run_id: None,
        };
        let mut stored = self.store.record_results(project, &[result]).await?;
        stored
            .pop()
            .ok_or_else(|| PipelineError::Store(StoreError::Backend("no result stored".into())))
    }

    /// A person's value for a field, set by hand (the web app's "set value"): checked against
    /// the field's type like any submission, recorded as the person's result (`agent_id`
    /// `human:<person>`, the person as its source, high confidence), approved and promoted into
    /// the entity; tasks of the field that waited for a person end (their dependents move on).
    /// A `human_input` field's value is its answer ([`answer_human_input`](Self::answer_human_input)).
    /// A locked field is refused ([`PipelineError::FieldLocked`]).
    pub async fn set_by_person(
        &self,
        project: &str,
        entity_id: &str,
        field: &str,
        value: Value,
        person: &str,
    ) -> Result<ReviewOutcome, PipelineError> {
        let (entity, entity_type) = self.load(project, entity_id).await?;
        let spec = field_spec(&entity_type, field)?;
        if entity.locked_fields().iter().any(|name| name == field) {
            return Err(PipelineError::FieldLocked {
                field: field.to_owned(),
            });
        }
        if spec.human_input {
            return self
                .answer_human_input(project, entity_id, field, value, person)
                .await;
        }
        check_value(spec, &value)?;
        let mut metadata = Map::new();
        metadata.insert("set_by_hand".to_owned(), Value::Bool(true));
        let id = self
            .record_person_value(project, &entity.id, field, value, person, metadata)
            .await?;
        self.review(project, &id, ReviewDecision::Approve, person)
            .await
    }

    /// Records a person's value as a pending result; returns its id.
    async fn record_person_value(
        &self,
        project: &str,
        entity_id: &str,
        field: &str,
        value: Value,
        person: &str,
        metadata: Map<String, Value>,
    ) -> Result<String, PipelineError> {
        let result = NewResult {
            run_id: None,
            entity_id: entity_id.to_owned(),
            field_name: field.to_owned(),
            value,
            sources: vec![SourceRef::Person {
                reviewer: person.to_owned(),
            }],
            confidence: Confidence::High,
            agent_id: format!("human:{person}"),
            status: ResultStatus::Pending,
            created_entity_ids: Vec::new(),
            duration_ms: 0,
            tokens_used: 0,
            metadata,
            workflow_node_run_id: None,
        };
        let stored = self.store.record_results(project, &[result]).await?;
        stored
            .first()
            .map(|r| r.id.clone())
            .ok_or_else(|| PipelineError::ResultNotFound(String::new()))
    }

    /// A person's answer to a `human_input` field: recorded, approved (promoted into the entity)
    /// and the fields waiting for it resumed.
    pub async fn answer_human_input(
        &self,
        project: &str,
        entity_id: &str,
        field: &str,
        value: Value,
        person: &str,
    ) -> Result<ReviewOutcome, PipelineError> {
        let (entity, entity_type) = self.load(project, entity_id).await?;
        let spec = field_spec(&entity_type, field)?;
        if !spec.human_input {
            return Err(PipelineError::InvalidValue {
                field: field.to_owned(),
                message: "not a human_input field; use review or submit instead".to_owned(),
            });
        }
        check_value(spec, &value)?;
        let mut metadata = Map::new();
        metadata.insert("human_input".to_owned(), Value::Bool(true));
        let id = self
            .record_person_value(project, &entity.id, field, value, person, metadata)
            .await?;
        self.review(project, &id, ReviewDecision::Approve, person)
            .await
    }
}

fn check_value(spec: &FieldSpec, value: &Value) -> Result<(), PipelineError> {
    let problems = value_problems(spec, value);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(PipelineError::InvalidValue {
            field: spec.name.clone(),
            message: problems.join("; "),
        })
    }
}

/// Fields depending on `field`, directly or through others, in declaration order.
fn dependents_of(entity_type: &EntityType, field: &str) -> Vec<String> {
    let mut found: HashSet<&str> = HashSet::new();
    let mut frontier = vec![field];
    while let Some(current) = frontier.pop() {
        for other in &entity_type.fields {
            if other.depends_on.iter().any(|d| d == current) && found.insert(&other.name) {
                frontier.push(&other.name);
            }
        }
    }
    entity_type
        .fields
        .iter()
        .filter(|f| found.contains(f.name.as_str()))
        .map(|f| f.name.clone())
        .collect()
}
