//! [`Pipeline`]: runs an entity's fields layer by layer (fields of a layer concurrently, bounded),
//! records results through the [`Store`], parks the run while a person must answer or approve,
//! and reacts to reviews (reject with a reason → rerun with feedback; approve a gated field →
//! resume its dependents).

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use futures_util::StreamExt;
use futures_util::future::join_all;
use quarry_core::model::{
    Confidence, Entity, EntityType, EntityTypeError, ExtractionResult, ExtractionRun, FieldSpec,
    NewResult, ResultStatus, ReviewDecision, RunScope, RunStatus, SourceRef,
};
use quarry_core::retrieval::Retriever;
use quarry_core::store::{Store, StoreError};
use quarry_llm::LlmClient;
use serde::Serialize;
use serde_json::{Map, Value, json};
use thiserror::Error;

use crate::cascade::create_cascade;
use crate::consensus::decide;
use crate::documents::Documents;
use crate::field_agent::{
    AgentSettings, FieldContext, FieldFailure, FieldValue, extract_field, feedback_sentence,
    value_problems,
};
use crate::layers::DependencyLayers;

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
        }
    }
}

#[derive(Debug, Error)]
pub enum PipelineError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    EntityType(#[from] EntityTypeError),
    #[error("no entity '{0}' in this project")]
    EntityNotFound(String),
    #[error("entity type '{0}' is not defined in this project")]
    EntityTypeNotFound(String),
    #[error("entity type '{entity_type}' has no field '{field}'")]
    UnknownField { entity_type: String, field: String },
    #[error("no extraction result '{0}' in this project")]
    ResultNotFound(String),
    #[error("field '{field}': {message}")]
    InvalidValue { field: String, message: String },
}

/// What a run did, field by field, in layer order.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
pub struct FieldReport {
    pub field: String,
    pub outcome: FieldOutcome,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
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
}

/// A review and what it triggered.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReviewOutcome {
    pub result: ExtractionResult,
    /// For an approval: the entity with the value promoted.
    pub entity: Option<Entity>,
    /// The feedback rerun (reject with a reason) or the resumed dependents (approval of a gated
    /// field).
    pub rerun: Option<RunReport>,
}

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

pub struct Pipeline {
    store: Arc<dyn Store>,
    retriever: Arc<dyn Retriever>,
    agents: Arc<dyn AgentRegistry>,
    config: PipelineConfig,
}

/// What every field of one run shares.
struct RunShared<'a> {
    project: &'a str,
    run_id: &'a str,
    triggered_by: &'a str,
    entity: &'a Entity,
    entity_type: &'a EntityType,
    parent: Option<&'a Entity>,
    neighbours: &'a [Entity],
    feedback: &'a HashMap<String, String>,
    depth: u32,
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
        }
    }

    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    pub fn retriever(&self) -> &Arc<dyn Retriever> {
        &self.retriever
    }

    /// Adding and linking documents over this pipeline's store and retriever.
    pub fn documents(&self) -> Documents {
        Documents::new(self.store.clone(), self.retriever.clone())
    }

    /// Extracts `fields` (all when `None`) of an entity.
    pub async fn run(
        &self,
        project: &str,
        entity_id: &str,
        fields: Option<Vec<String>>,
        triggered_by: &str,
    ) -> Result<RunReport, PipelineError> {
        self.run_inner(project, entity_id, fields, triggered_by, HashMap::new(), 0)
            .await
    }

    fn run_inner<'a>(
        &'a self,
        project: &'a str,
        entity_id: &'a str,
        fields: Option<Vec<String>>,
        triggered_by: &'a str,
        feedback: HashMap<String, String>,
        depth: u32,
    ) -> BoxFuture<'a, Result<RunReport, PipelineError>> {
        Box::pin(async move {
            let store = self.store.as_ref();
            let (entity, entity_type) = self.load(project, entity_id).await?;
            let layers = DependencyLayers::of(&entity_type)?;
            if let Some(names) = &fields {
                for name in names {
                    field_spec(&entity_type, name)?;
                }
            }
            let scope = match &fields {
                None => RunScope::Full,
                Some(names)
                    if names.iter().all(|n| {
                        field_spec(&entity_type, n).is_ok_and(|f| f.consensus.is_some())
                    }) =>
                {
                    RunScope::Consensus
                }
                Some(_) => RunScope::Field,
            };
            let run = store
                .start_run(project, entity_id, scope, triggered_by, fields.as_deref())
                .await?;
            let requested: HashSet<String> = match &fields {
                Some(names) => names.iter().cloned().collect(),
                None => entity_type.fields.iter().map(|f| f.name.clone()).collect(),
            };
            let executed = self
                .execute(
                    project,
                    &run.id,
                    triggered_by,
                    &entity,
                    &entity_type,
                    &layers,
                    &requested,
                    &feedback,
                    depth,
                )
                .await;
            match executed {
                Ok((reports, cascaded)) => {
                    let (status, error) = run_status(&reports);
                    let run = store
                        .finish_run(project, &run.id, status, error.as_deref())
                        .await?;
                    Ok(RunReport {
                        run,
                        fields: reports,
                        cascaded,
                    })
                }
                Err(error) => {
                    let message = error.to_string();
                    let _ = store
                        .finish_run(project, &run.id, RunStatus::Failed, Some(&message))
                        .await;
                    Err(error)
                }
            }
        })
    }

    async fn load(
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

    #[allow(clippy::too_many_arguments)]
    async fn execute(
        &self,
        project: &str,
        run_id: &str,
        triggered_by: &str,
        entity: &Entity,
        entity_type: &EntityType,
        layers: &DependencyLayers,
        requested: &HashSet<String>,
        feedback: &HashMap<String, String>,
        depth: u32,
    ) -> Result<(Vec<FieldReport>, Vec<RunReport>), PipelineError> {
        let store = self.store.as_ref();
        let latest = store.latest_results(project, &entity.id).await?;
        let latest: HashMap<&str, &ExtractionResult> =
            latest.iter().map(|r| (r.field_name.as_str(), r)).collect();
        let mut known = entity.fields.clone();
        for (name, result) in &latest {
            if result.status == ResultStatus::Pending {
                known.insert((*name).to_owned(), result.value.clone());
            }
        }
        let parent = match &entity.parent_id {
            Some(id) => store.get_entity(project, id).await?,
            None => None,
        };
        let mut neighbours: Vec<Entity> = parent.iter().cloned().collect();
        for other in store
            .connected_entities(project, &entity.id, self.config.connected_limit)
            .await?
        {
            if other.id != entity.id && !neighbours.iter().any(|n| n.id == other.id) {
                neighbours.push(other);
            }
        }
        let shared = RunShared {
            project,
            run_id,
            triggered_by,
            entity,
            entity_type,
            parent: parent.as_ref(),
            neighbours: &neighbours,
            feedback,
            depth,
        };
        let locked = entity.locked_fields();
        let mut outcomes: HashMap<String, FieldOutcome> = HashMap::new();
        let mut reports = Vec::new();
        let mut cascaded = Vec::new();

        for layer in layers.layers() {
            let mut to_run: Vec<&FieldSpec> = Vec::new();
            for name in layer.iter().filter(|n| requested.contains(*n)) {
                let field = field_spec(entity_type, name)?;
                let ready = |dependency: &str| -> bool {
                    let gated = field_spec(entity_type, dependency)
                        .is_ok_and(|d| d.human_input || d.requires_approval);
                    match outcomes.get(dependency) {
                        Some(FieldOutcome::Extracted { .. }) => !gated,
                        Some(FieldOutcome::Answered) => true,
                        Some(FieldOutcome::Locked) => known.contains_key(dependency),
                        Some(_) => false,
                        None if gated => match latest.get(dependency) {
                            Some(result) => result.status == ResultStatus::Approved,
                            None => entity.fields.contains_key(dependency),
                        },
                        None => known.contains_key(dependency),
                    }
                };
                let waiting_on: Vec<String> = field
                    .depends_on
                    .iter()
                    .filter(|d| !ready(d))
                    .cloned()
                    .collect();
                let outcome = if locked.contains(name) {
                    FieldOutcome::Locked
                } else if !waiting_on.is_empty() {
                    FieldOutcome::Blocked { waiting_on }
                } else if field.human_input {
                    let answered = latest
                        .get(name.as_str())
                        .is_some_and(|r| r.status == ResultStatus::Approved)
                        || (!latest.contains_key(name.as_str())
                            && entity.fields.contains_key(name));
                    if answered {
                        FieldOutcome::Answered
                    } else {
                        FieldOutcome::WaitingHuman
                    }
                } else {
                    to_run.push(field);
                    continue;
                };
                outcomes.insert(name.clone(), outcome);
            }
            let layer_known = known.clone();
            // Boxed one by one (not through a closure) so the run's future stays `Send`.
            let mut pending: Vec<BoxFuture<'_, Result<FieldRun, PipelineError>>> = Vec::new();
            for field in &to_run {
                pending.push(Box::pin(self.extract_one(&shared, field, &layer_known)));
            }
            let finished: Vec<Result<FieldRun, PipelineError>> =
                futures_util::stream::iter(pending)
                    .buffer_unordered(self.config.max_concurrency.max(1))
                    .collect()
                    .await;
            for field_run in finished {
                let field_run = field_run?;
                if let Some(value) = &field_run.value {
                    known.insert(field_run.field.clone(), value.clone());
                }
                cascaded.extend(field_run.cascaded);
                outcomes.insert(field_run.field, field_run.outcome);
            }
            for name in layer {
                if let Some(outcome) = outcomes.get(name) {
                    reports.push(FieldReport {
                        field: name.clone(),
                        outcome: outcome.clone(),
                    });
                }
            }
        }
        Ok((reports, cascaded))
    }

    /// One field: its agent (or consensus agents), the recorded results, the cascade.
    async fn extract_one(
        &self,
        shared: &RunShared<'_>,
        field: &FieldSpec,
        known: &Map<String, Value>,
    ) -> Result<FieldRun, PipelineError> {
        let store = self.store.as_ref();
        let project = shared.project;
        let summary = store
            .feedback_summary(project, &shared.entity_type.slug, &field.name)
            .await?;
        let rerun_feedback = shared.feedback.get(&field.name);
        let context = FieldContext {
            entity: shared.entity,
            entity_type: shared.entity_type,
            field,
            known_values: known,
            parent: shared.parent,
            neighbours: shared.neighbours,
            feedback_summary: (summary.total >= self.config.feedback_threshold).then_some(&summary),
            rerun_feedback: rerun_feedback.map(String::as_str),
        };
        let agents: Vec<String> = match &field.consensus {
            Some(consensus) => consensus.agents.clone(),
            None => field
                .agent
                .clone()
                .or_else(|| shared.entity_type.default_agent.clone())
                .or_else(|| self.config.default_agent.clone())
                .into_iter()
                .collect(),
        };
        let failed = |reason: String| FieldRun {
            field: field.name.clone(),
            value: None,
            outcome: FieldOutcome::Failed {
                reason,
                result_ids: Vec::new(),
            },
            cascaded: Vec::new(),
        };
        if agents.is_empty() {
            return Ok(failed(format!(
                "field '{}' names no agent and there is no default agent",
                field.name
            )));
        }
        let mut asked: Vec<BoxFuture<'_, Result<FieldValue, FieldFailure>>> = Vec::new();
        for agent in &agents {
            asked.push(Box::pin(self.one_agent(&context, project, agent)));
        }
        let attempts = join_all(asked).await;
        let successes: Vec<&FieldValue> = attempts.iter().filter_map(|a| a.as_ref().ok()).collect();
        let failures: Vec<String> = attempts
            .iter()
            .filter_map(|a| a.as_ref().err())
            .map(|f| format!("{}: {}", f.agent_id, f.reason))
            .collect();

        let mut metadata = Map::new();
        if let Some(sentence) = rerun_feedback {
            metadata.insert("feedback".to_owned(), Value::String(sentence.clone()));
        }
        let (winner, agreement, failure) = match &field.consensus {
            Some(consensus) => {
                let candidates: Vec<(Value, Confidence)> = successes
                    .iter()
                    .map(|s| (s.value.clone(), s.confidence))
                    .collect();
                let decision = decide(consensus.strategy, &candidates, agents.len());
                metadata.insert("agreement".to_owned(), json!(decision.agreement));
                metadata.insert("strategy".to_owned(), json!(consensus.strategy));
                metadata.insert("agents".to_owned(), json!(agents));
                let failure = decision.failure.map(|reason| {
                    if failures.is_empty() {
                        reason
                    } else {
                        format!("{reason}; {}", failures.join("; "))
                    }
                });
                (decision.winner, Some(decision.agreement), failure)
            }
            None if successes.is_empty() => (None, None, Some(failures.join("; "))),
            None => (Some(0), None, None),
        };

        let mut created_entity_ids = Vec::new();
        if let Some(winner) = winner {
            let value = &successes[winner].value;
            let cascade = create_cascade(store, project, shared.entity, field, value).await?;
            created_entity_ids = cascade.created;
            if !created_entity_ids.is_empty() {
                // New entities become searchable by meaning at once. An indexing failure does
                // not fail the field: the next index rebuild picks them up from the store.
                for entity in store.get_entities(project, &created_entity_ids).await? {
                    let _ = self.retriever.index_entity(&entity);
                }
            }
        }
        let new_results: Vec<NewResult> = successes
            .iter()
            .enumerate()
            .map(|(i, success)| NewResult {
                run_id: Some(shared.run_id.to_owned()),
                entity_id: shared.entity.id.clone(),
                field_name: field.name.clone(),
                value: success.value.clone(),
                sources: success.sources.clone(),
                confidence: success.confidence,
                agent_id: success.agent_id.clone(),
                status: if Some(i) == winner {
                    ResultStatus::Pending
                } else {
                    ResultStatus::Superseded
                },
                created_entity_ids: if Some(i) == winner {
                    created_entity_ids.clone()
                } else {
                    Vec::new()
                },
                duration_ms: success.duration_ms,
                tokens_used: success.tokens_used,
                metadata: metadata.clone(),
            })
            .collect();
        let stored = if new_results.is_empty() {
            Vec::new()
        } else {
            store.record_results(project, &new_results).await?
        };
        let Some(winner) = winner else {
            return Ok(FieldRun {
                outcome: FieldOutcome::Failed {
                    reason: failure.unwrap_or_else(|| "no value".to_owned()),
                    result_ids: stored.iter().map(|r| r.id.clone()).collect(),
                },
                ..failed(String::new())
            });
        };
        let result = &stored[winner];
        let mut cascaded = Vec::new();
        let auto_extract = field
            .connection
            .as_ref()
            .and_then(|c| c.cascade.as_ref())
            .is_some_and(|c| c.enabled && c.auto_extract);
        if auto_extract && shared.depth < self.config.max_cascade_depth {
            let trigger = format!("cascade:{}", shared.triggered_by);
            for id in &created_entity_ids {
                if let Ok(report) = self
                    .run_inner(
                        project,
                        id,
                        None,
                        &trigger,
                        HashMap::new(),
                        shared.depth + 1,
                    )
                    .await
                {
                    cascaded.push(report);
                }
            }
        }
        let outcome = if field.requires_approval {
            FieldOutcome::AwaitingApproval {
                result_id: result.id.clone(),
                value: result.value.clone(),
            }
        } else {
            FieldOutcome::Extracted {
                result_id: result.id.clone(),
                value: result.value.clone(),
                agreement,
                created_entity_ids,
            }
        };
        Ok(FieldRun {
            field: field.name.clone(),
            value: Some(result.value.clone()),
            outcome,
            cascaded,
        })
    }

    async fn one_agent(
        &self,
        context: &FieldContext<'_>,
        project: &str,
        agent: &str,
    ) -> Result<FieldValue, FieldFailure> {
        let Some(resolved) = self.agents.resolve(agent) else {
            return Err(FieldFailure {
                agent_id: agent.to_owned(),
                reason: format!("unknown agent '{agent}'"),
            });
        };
        let settings = AgentSettings {
            agent_id: agent,
            client: resolved.client.as_ref(),
            model: &resolved.model,
            temperature: self.config.temperature,
            max_tokens: self.config.max_completion_tokens,
        };
        extract_field(
            context,
            self.store.as_ref(),
            self.retriever.as_ref(),
            project,
            &settings,
        )
        .await
    }

    /// Approves or rejects a pending result. A rejection with a reason reruns the field with the
    /// feedback sentence; approving a `requires_approval`/`human_input` field resumes the fields
    /// that depend on it.
    pub async fn review(
        &self,
        project: &str,
        result_id: &str,
        decision: ReviewDecision,
        reviewer: &str,
    ) -> Result<ReviewOutcome, PipelineError> {
        let reviewed = self
            .store
            .review_result(project, result_id, &decision, reviewer)
            .await?;
        let result = reviewed.result;
        let trigger = format!("review:{reviewer}");
        let rerun = match &decision {
            ReviewDecision::Reject {
                reason: Some(reason),
            } if !reason.trim().is_empty() => {
                let mut feedback = HashMap::new();
                feedback.insert(
                    result.field_name.clone(),
                    feedback_sentence(&result.value, reason),
                );
                Some(
                    self.run_inner(
                        project,
                        &result.entity_id,
                        Some(vec![result.field_name.clone()]),
                        &trigger,
                        feedback,
                        0,
                    )
                    .await?,
                )
            }
            ReviewDecision::Approve => {
                self.resume_dependents(project, &result.entity_id, &result.field_name, &trigger)
                    .await?
            }
            ReviewDecision::Reject { .. } => None,
        };
        Ok(ReviewOutcome {
            result,
            entity: reviewed.entity,
            rerun,
        })
    }

    async fn resume_dependents(
        &self,
        project: &str,
        entity_id: &str,
        field: &str,
        triggered_by: &str,
    ) -> Result<Option<RunReport>, PipelineError> {
        let (entity, entity_type) = self.load(project, entity_id).await?;
        let spec = field_spec(&entity_type, field)?;
        if !(spec.human_input || spec.requires_approval) {
            return Ok(None);
        }
        let locked = entity.locked_fields();
        let dependents: Vec<String> = dependents_of(&entity_type, field)
            .into_iter()
            .filter(|name| !locked.contains(name))
            .collect();
        if dependents.is_empty() {
            return Ok(None);
        }
        let report = self
            .run_inner(
                project,
                entity_id,
                Some(dependents),
                triggered_by,
                HashMap::new(),
                0,
            )
            .await?;
        Ok(Some(report))
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
        };
        let mut stored = self.store.record_results(project, &[result]).await?;
        stored
            .pop()
            .ok_or_else(|| PipelineError::Store(StoreError::Backend("no result stored".into())))
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
        let result = NewResult {
            run_id: None,
            entity_id: entity.id.clone(),
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
        };
        let stored = self.store.record_results(project, &[result]).await?;
        let id = stored
            .first()
            .map(|r| r.id.clone())
            .ok_or_else(|| PipelineError::ResultNotFound(String::new()))?;
        self.review(project, &id, ReviewDecision::Approve, person)
            .await
    }
}

/// What one field's extraction produced within a run.
struct FieldRun {
    field: String,
    value: Option<Value>,
    outcome: FieldOutcome,
    cascaded: Vec<RunReport>,
}

fn field_spec<'t>(entity_type: &'t EntityType, name: &str) -> Result<&'t FieldSpec, PipelineError> {
    entity_type
        .fields
        .iter()
        .find(|f| f.name == name)
        .ok_or_else(|| PipelineError::UnknownField {
            entity_type: entity_type.slug.clone(),
            field: name.to_owned(),
        })
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

fn run_status(reports: &[FieldReport]) -> (RunStatus, Option<String>) {
    let waiting = reports.iter().any(|r| {
        matches!(
            r.outcome,
            FieldOutcome::WaitingHuman | FieldOutcome::AwaitingApproval { .. }
        )
    });
    let failures: Vec<String> = reports
        .iter()
        .filter_map(|r| match &r.outcome {
            FieldOutcome::Failed { reason, .. } => Some(format!("{}: {reason}", r.field)),
            FieldOutcome::Blocked { waiting_on } if !waiting => {
                Some(format!("{}: blocked by {}", r.field, waiting_on.join(", ")))
            }
            _ => None,
        })
        .collect();
    let extracted = reports
        .iter()
        .any(|r| matches!(r.outcome, FieldOutcome::Extracted { .. }));
    let error = (!failures.is_empty()).then(|| failures.join("; "));
    let status = if waiting {
        RunStatus::WaitingHuman
    } else if failures.is_empty() {
        RunStatus::Completed
    } else if extracted {
        RunStatus::Partial
    } else {
        RunStatus::Failed
    };
    (status, error)
}
