//! One claimed field task, end to end: the field's context read fresh from the store (so a task
//! redone after a crash starts from the last committed state), its agent or consensus agents,
//! the cascade, and the completion the worker writes under its lease.

use std::collections::HashMap;
use std::time::Instant;

use futures_util::future::join_all;
use quarry_core::model::{
    Confidence, Correction, Entity, EntityType, ExtractionMode, FieldSpec, FieldTask, NewResult,
    NewWorkflow, ResultStatus, Source, TaskCompletion, TaskEnd,
};
use quarry_core::retrieval::Retriever;
use quarry_llm::Usage;
use serde_json::{Map, Value, json};

use crate::cascade::cascade_write;
use crate::consensus::decide;
use crate::entity_types::field_spec;
use crate::error::PipelineError;
use crate::field_agent::{AgentSettings, FieldFailure, FieldValue, tool_loop};
use crate::plan::{ActionPlan, RunRequest, plan_workflow, planned_deliveries};
use crate::retrieve_extract::retrieve_then_extract;
use crate::run::{BoxFuture, Pipeline};
use crate::tools::{FieldContext, FieldSources};
use crate::web_source::UnreadPage;

/// What became of one attempt at a task.
pub(crate) enum Attempt {
    /// Write this under the lease.
    Complete(Box<TaskCompletion>),
    /// Every agent failed transiently: try again later.
    Transient {
        error: String,
        tokens_used: i64,
        duration_ms: i64,
    },
}

impl Pipeline {
    /// Runs the task's field once. Store failures are errors; model failures are outcomes.
    pub(crate) async fn attempt_task(&self, task: &FieldTask) -> Result<Attempt, PipelineError> {
        let started = Instant::now();
        let store = self.store().as_ref();
        let project = task.project_id.as_str();
        let (entity, entity_type) = self.load(project, &task.entity_id).await?;
        let field = field_spec(&entity_type, &task.field_name)?;
        let latest = store.latest_results(project, &entity.id).await?;
        let mut known = entity.fields.clone();
        for result in &latest {
            if result.status == ResultStatus::Pending {
                known.insert(result.field_name.clone(), result.value.clone());
            }
        }
        let parent = match &entity.parent_id {
            Some(id) => store.get_entity(project, id).await?,
            None => None,
        };
        let mut neighbours: Vec<Entity> = parent.iter().cloned().collect();
        for other in store
            .connected_entities(project, &entity.id, self.config().connected_limit)
            .await?
        {
            if other.id != entity.id && !neighbours.iter().any(|n| n.id == other.id) {
                neighbours.push(other);
            }
        }
        let summary = store
            .feedback_summary(project, &entity_type.slug, &field.name)
            .await?;
        let corrections: Vec<Correction> = store
            .list_corrections(project)
            .await?
            .into_iter()
            .filter(|correction| correction.applies_to(&entity_type.slug, &field.name))
            .collect();
        let context = FieldContext {
            entity: &entity,
            entity_type: &entity_type,
            field,
            known_values: &known,
            parent: parent.as_ref(),
            neighbours: &neighbours,
            feedback_summary: (summary.total >= self.config().feedback_threshold)
                .then_some(&summary),
            rerun_feedback: task.feedback.as_deref(),
            run_instructions: task.instructions.as_deref(),
            corrections: &corrections,
            web: self.web(),
        };
        let agents = self.agents_of(&entity_type, field);
        if agents.is_empty() {
            return Ok(Attempt::Complete(Box::new(failed(
                format!(
                    "field '{}' names no agent and there is no default agent",
                    field.name
                ),
                started,
            ))));
        }
        let mut asked: Vec<BoxFuture<'_, Result<FieldValue, FieldFailure>>> = Vec::new();
        for agent in &agents {
            asked.push(Box::pin(self.one_agent(&context, project, agent)));
        }
        let attempts = join_all(asked).await;
        let successes: Vec<&FieldValue> = attempts.iter().filter_map(|a| a.as_ref().ok()).collect();
        let failures: Vec<&FieldFailure> =
            attempts.iter().filter_map(|a| a.as_ref().err()).collect();
        let tokens_used: i64 = successes.iter().map(|s| s.tokens_used).sum::<i64>()
            + failures.iter().map(|f| f.tokens_used).sum::<i64>();
        let failure_text = failures
            .iter()
            .map(|f| format!("{}: {}", f.agent_id, f.reason))
            .collect::<Vec<_>>()
            .join("; ");
        // Nothing came back and every failure may pass: try the whole field again later. (When
        // some agents of a consensus answered, the consensus decides with what it has.)
        if successes.is_empty() && failures.iter().all(|f| f.transient) {
            return Ok(Attempt::Transient {
                error: failure_text,
                tokens_used,
                duration_ms: elapsed_ms(started),
            });
        }

        let mut metadata = Map::new();
        if let Some(sentence) = &task.feedback {
            metadata.insert("feedback".to_owned(), Value::String(sentence.clone()));
        }
        if let Some(instructions) = &task.instructions {
            metadata.insert(
                "instructions".to_owned(),
                Value::String(instructions.clone()),
            );
        }
        if !corrections.is_empty() {
            // Provenance: the corrections the prompt carried.
            let applied: Vec<Value> = corrections
                .iter()
                .map(|c| json!({"id": c.id, "text": c.text}))
                .collect();
            metadata.insert("corrections".to_owned(), Value::Array(applied));
        }
        let (winner, failure) = match &field.consensus {
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
                        format!("{reason}; {failure_text}")
                    }
                });
                (decision.winner, failure)
            }
            None if successes.is_empty() => (None, Some(failure_text.clone())),
            None => (Some(0), None),
        };

        let cascade = match winner {
            Some(winner) => cascade_write(
                &entity,
                field,
                &successes[winner].value,
                self.cascade_follow_up(task, field).await?,
            ),
            None => None,
        };
        let results: Vec<NewResult> = successes
            .iter()
            .enumerate()
            .map(|(i, success)| NewResult {
                run_id: Some(task.run_id.clone()),
                entity_id: entity.id.clone(),
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
                // The store fills in the winner's when it writes the cascade.
                created_entity_ids: Vec::new(),
                duration_ms: success.duration_ms,
                tokens_used: success.tokens_used,
                metadata: with_usage(
                    with_unread_pages(&metadata, &success.unread_pages),
                    success.usage,
                ),
                workflow_node_run_id: Some(task.id.clone()),
            })
            .collect();
        let end = match winner {
            Some(winner) => TaskEnd::Extracted { winner },
            None => TaskEnd::Failed {
                reason: failure.unwrap_or_else(|| "no value".to_owned()),
            },
        };
        let (deliveries, runs) = match winner {
            Some(winner) if task.depth < i64::from(self.config().max_cascade_depth) => {
                let event = quarry_core::model::ActionEvent::Extracted;
                let planned = ActionPlan {
                    entity: &entity,
                    entity_type: &entity_type,
                    latest: &latest,
                    field,
                    value: &successes[winner].value,
                    root_run_id: Some(task.root_run_id.clone()),
                    depth: task.depth + 1,
                    max_attempts: task.max_attempts,
                };
                (planned_deliveries(field, event), planned.runs(event)?)
            }
            Some(_) => (
                planned_deliveries(field, quarry_core::model::ActionEvent::Extracted),
                Vec::new(),
            ),
            None => (Vec::new(), Vec::new()),
        };
        Ok(Attempt::Complete(Box::new(TaskCompletion {
            end,
            results,
            tokens_used,
            duration_ms: elapsed_ms(started),
            cascade,
            deliveries,
            runs,
        })))
    }

    /// The agents that extract `field`: its consensus agents, or its own, the type's or the
    /// pipeline's default agent.
    pub fn agents_of(&self, entity_type: &EntityType, field: &FieldSpec) -> Vec<String> {
        match &field.consensus {
            Some(consensus) => consensus.agents.clone(),
            None => field
                .agent
                .clone()
                .or_else(|| entity_type.default_agent.clone())
                .or_else(|| self.config().default_agent.clone())
                .into_iter()
                .collect(),
        }
    }

    async fn one_agent(
        &self,
        context: &FieldContext<'_>,
        project: &str,
        agent: &str,
    ) -> Result<FieldValue, FieldFailure> {
        let Some(resolved) = self.agent_registry().resolve(agent) else {
            return Err(FieldFailure {
                agent_id: agent.to_owned(),
                reason: format!("unknown agent '{agent}'"),
                transient: false,
                tokens_used: 0,
            });
        };
        let settings = AgentSettings {
            agent_id: agent,
            client: resolved.client.as_ref(),
            model: &resolved.model,
            temperature: self.config().temperature,
            max_tokens: self.config().max_completion_tokens,
        };
        extract_field(
            context,
            self.store().as_ref(),
            self.retriever().as_ref(),
            project,
            &settings,
        )
        .await
    }

    /// With `auto_extract` (or a target type that says `extract_on_create`), while the depth
    /// allows: the run each entity the cascade creates gets,
    /// under the same root, one level deeper (planned here for a new, empty entity of the target
    /// type; the store sets the entity when it creates it).
    async fn cascade_follow_up(
        &self,
        task: &FieldTask,
        field: &FieldSpec,
    ) -> Result<Option<NewWorkflow>, PipelineError> {
        let Some(connection) = field.connection.as_ref() else {
            return Ok(None);
        };
        let cascading = connection.cascade.as_ref().filter(|c| c.enabled);
        if cascading.is_none() || task.depth >= i64::from(self.config().max_cascade_depth) {
            return Ok(None);
        }
        let target_type = self
            .store()
            .get_entity_type(&task.project_id, &connection.entity_type)
            .await?
            .ok_or_else(|| PipelineError::EntityTypeNotFound(connection.entity_type.clone()))?;
        // The cascade's `auto_extract`, or the target type's `extract_on_create`.
        if !cascading.is_some_and(|c| c.auto_extract) && !target_type.extract_on_create {
            return Ok(None);
        }
        let placeholder = Entity {
            project_id: task.project_id.clone(),
            entity_type: connection.entity_type.clone(),
            ..Entity::default()
        };
        let trigger = format!("cascade:{}", task.triggered_by);
        let request = RunRequest {
            fields: None,
            triggered_by: &trigger,
            feedback: HashMap::new(),
            root_run_id: Some(task.root_run_id.clone()),
            depth: task.depth + 1,
            max_attempts: task.max_attempts,
            instructions: quarry_core::model::RunInstructions::default(),
        };
        Ok(Some(plan_workflow(
            &placeholder,
            &target_type,
            &[],
            &request,
        )?))
    }
}

fn failed(reason: String, started: Instant) -> TaskCompletion {
    TaskCompletion::failed(reason, 0, elapsed_ms(started))
}

/// A result's metadata: the task's, and the web pages its agent could not read.
fn with_unread_pages(metadata: &Map<String, Value>, unread: &[UnreadPage]) -> Map<String, Value> {
    let mut metadata = metadata.clone();
    if !unread.is_empty() {
        metadata.insert("pages_not_read".to_owned(), UnreadPage::metadata(unread));
    }
    metadata
}

/// `metadata` with the model calls' tokens under `usage` (`prompt_tokens`, `completion_tokens`,
/// `cached_tokens`: prompt tokens a model with a prefix cache did not read again).
fn with_usage(mut metadata: Map<String, Value>, usage: quarry_llm::Usage) -> Map<String, Value> {
    metadata.insert(
        "usage".to_owned(),
        json!({
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "cached_tokens": usage.cached_tokens(),
        }),
    );
    metadata
}

/// The field's value from one agent: retrieve-then-extract when the field says so (`mode:
/// retrieve`) or, with no mode set, when the agent's client prefers it; else the tool loop.
pub(crate) async fn extract_field<S: FieldSources + ?Sized>(
    context: &FieldContext<'_>,
    store: &S,
    retriever: &dyn Retriever,
    project: &str,
    settings: &AgentSettings<'_>,
) -> Result<FieldValue, FieldFailure> {
    if context.field.sources.contains(&Source::Web) && context.web.is_none() {
        return Err(settings.failure(
            format!(
                "field '{}' reads the web, but no web search provider is configured: set \
                 QUARRY_WEB_SEARCH (exa or searxng) for the processes that run fields",
                context.field.name
            ),
            Usage::default(),
        ));
    }
    let mode = context
        .field
        .mode
        .unwrap_or(if settings.client.prefers_retrieval() {
            ExtractionMode::Retrieve
        } else {
            ExtractionMode::Tools
        });
    match mode {
        ExtractionMode::Retrieve => {
            retrieve_then_extract(context, store, retriever, project, settings).await
        }
        ExtractionMode::Tools => tool_loop(context, store, retriever, project, settings).await,
    }
}

fn elapsed_ms(started: Instant) -> i64 {
    i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX)
}
