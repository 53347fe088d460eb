//! Planning a workflow run: which fields become tasks in which state, before anything runs.
//!
//! Fields are planned in dependency-layer order (so the run's tasks read in that order). A
//! dependency inside the run becomes an edge the store's `settle` follows; a dependency outside
//! the run must already have a usable value, else the field starts blocked.
//!
//! A field's actions are planned here too: the runs its `run_field` actions start
//! ([`ActionPlan`]) and the webhook deliveries it queues ([`planned_deliveries`]).

use std::collections::{HashMap, HashSet};

use quarry_core::model::{
    Entity, EntityType, ExtractionResult, FieldSpec, NewFieldTask, NewWorkflow, NodeState,
    ResultStatus, RunInstructions, RunScope,
};
use serde_json::Value;

use crate::entity_types::field_spec;
use crate::error::PipelineError;
use crate::layers::DependencyLayers;

/// What starts a run.
#[derive(Debug, Clone)]
pub(crate) struct RunRequest<'a> {
    pub fields: Option<&'a [String]>,
    pub triggered_by: &'a str,
    /// The reviewer's feedback sentence per field (a feedback rerun).
    pub feedback: HashMap<String, String>,
    pub root_run_id: Option<String>,
    pub depth: i64,
    pub max_attempts: i64,
    /// The trigger's additional instructions.
    pub instructions: RunInstructions,
}

/// The run to create for `request` over the entity's current state.
pub(crate) fn plan_workflow(
    entity: &Entity,
    entity_type: &EntityType,
    latest: &[ExtractionResult],
    request: &RunRequest<'_>,
) -> Result<NewWorkflow, PipelineError> {
    let layers = DependencyLayers::of(entity_type)?;
    if let Some(names) = request.fields {
        for name in names {
            field_spec(entity_type, name)?;
        }
    }
    for name in request.instructions.fields.keys() {
        field_spec(entity_type, name)?;
    }
    let scope = match request.fields {
        None => RunScope::Full,
        Some(names)
            if !names.is_empty()
                && names
                    .iter()
                    .all(|n| field_spec(entity_type, n).is_ok_and(|f| f.consensus.is_some())) =>
        {
            RunScope::Consensus
        }
        Some(_) => RunScope::Field,
    };
    let requested: HashSet<&str> = match request.fields {
        Some(names) => names.iter().map(String::as_str).collect(),
        None => entity_type.fields.iter().map(|f| f.name.as_str()).collect(),
    };
    let latest: HashMap<&str, &ExtractionResult> =
        latest.iter().map(|r| (r.field_name.as_str(), r)).collect();
    let locked = entity.locked_fields();
    let has_value = |name: &str| -> bool {
        entity.fields.contains_key(name)
            || latest
                .get(name)
                .is_some_and(|r| r.status == ResultStatus::Pending)
    };
    let approved = |name: &str| -> bool {
        match latest.get(name) {
            Some(result) => result.status == ResultStatus::Approved,
            None => entity.fields.contains_key(name),
        }
    };

    let mut tasks = Vec::new();
    for name in layers.layers().iter().flatten() {
        if !requested.contains(name.as_str()) {
            continue;
        }
        let field = field_spec(entity_type, name)?;
        let gated = field.human_input || field.requires_approval;
        let mut depends_on = Vec::new();
        let mut missing = Vec::new();
        // A person may answer a `human_input` field at any time: it waits for nobody.
        let dependencies: &[String] = if field.human_input {
            &[]
        } else {
            &field.depends_on
        };
        for dependency in dependencies {
            let spec = field_spec(entity_type, dependency)?;
            let in_run = requested.contains(dependency.as_str());
            if in_run && !locked.contains(dependency) {
                depends_on.push(dependency.clone());
            } else if !usable_outside_run(spec, &has_value, &approved) {
                depends_on.push(dependency.clone());
                missing.push(dependency.clone());
            }
        }
        let (state, error) = if locked.contains(name) {
            (NodeState::Skipped, None)
        } else if !missing.is_empty() {
            let error = format!("waiting on {} (no usable value)", missing.join(", "));
            (NodeState::Blocked, Some(error))
        } else if field.human_input && approved(name) {
            (NodeState::Done, None)
        } else if field.human_input {
            (NodeState::WaitingHuman, None)
        } else if depends_on.is_empty() {
            (NodeState::Queued, None)
        } else {
            (NodeState::Pending, None)
        };
        tasks.push(NewFieldTask {
            field_name: name.clone(),
            state,
            depends_on,
            gated,
            feedback: request.feedback.get(name).cloned(),
            error,
            instructions: request.instructions.for_field(name),
        });
    }
    Ok(NewWorkflow {
        entity_id: entity.id.clone(),
        scope,
        triggered_by: request.triggered_by.to_owned(),
        fields_requested: request.fields.map(<[String]>::to_vec),
        root_run_id: request.root_run_id.clone(),
        depth: request.depth,
        max_attempts: request.max_attempts.max(1),
        tasks,
        instructions: (!request.instructions.is_empty()).then(|| request.instructions.clone()),
    })
}

/// Whether a dependency that will not run in this run (not requested, or locked) has a value
/// its dependents may use: an approved (or answered) value for a gated field, any current
/// value otherwise.
fn usable_outside_run(
    spec: &FieldSpec,
    has_value: &dyn Fn(&str) -> bool,
    approved: &dyn Fn(&str) -> bool,
) -> bool {
    if spec.human_input || spec.requires_approval {
        approved(&spec.name)
    } else {
        has_value(&spec.name)
    }
}

/// The field's webhooks for `event`.
pub(crate) fn planned_deliveries(
    field: &FieldSpec,
    event: quarry_core::model::ActionEvent,
) -> Vec<quarry_core::model::PlannedDelivery> {
    field
        .actions
        .iter()
        .filter(|action| action.on == event)
        .filter_map(|action| {
            Some(quarry_core::model::PlannedDelivery {
                event,
                url: action.webhook.clone()?,
            })
        })
        .collect()
}

/// What a field's `run_field` actions are planned from: the entity as it is with the event's
/// value (so a field that depends on this one can run), and where the runs hang.
pub(crate) struct ActionPlan<'a> {
    pub entity: &'a Entity,
    pub entity_type: &'a EntityType,
    pub latest: &'a [quarry_core::model::ExtractionResult],
    pub field: &'a FieldSpec,
    pub value: &'a Value,
    /// The run the action's runs join (a completion's root), or `None`: runs of their own.
    pub root_run_id: Option<String>,
    pub depth: i64,
    pub max_attempts: i64,
}

impl ActionPlan<'_> {
    /// The runs the field's `run_field` actions for `event` start, one field each.
    pub(crate) fn runs(
        &self,
        event: quarry_core::model::ActionEvent,
    ) -> Result<Vec<NewWorkflow>, PipelineError> {
        let mut with_value = self.entity.clone();
        with_value
            .fields
            .insert(self.field.name.clone(), self.value.clone());
        let trigger = format!("action:{}:{}", event.as_str(), self.field.name);
        let mut runs = Vec::new();
        for action in self
            .field
            .actions
            .iter()
            .filter(|action| action.on == event)
        {
            let Some(target) = &action.run_field else {
                continue;
            };
            let fields = [target.clone()];
            let request = RunRequest {
                fields: Some(&fields),
                triggered_by: &trigger,
                feedback: HashMap::new(),
                root_run_id: self.root_run_id.clone(),
                depth: self.depth,
                max_attempts: self.max_attempts,
                instructions: quarry_core::model::RunInstructions::default(),
            };
            runs.push(plan_workflow(
                &with_value,
                self.entity_type,
                self.latest,
                &request,
            )?);
        }
        Ok(runs)
    }
}
