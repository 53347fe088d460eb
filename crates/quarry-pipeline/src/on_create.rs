//! Creating an entity, and the reference's `entity/created`: when the entity's type says
//! `extract_on_create`, its full run is queued as soon as it exists (a cascade plans the same
//! run in `task.rs`). The REST API and the CLI create entities through here.

use std::collections::HashMap;

use quarry_core::model::{Entity, ExtractionRun, NewEntity, RunInstructions};
use quarry_core::store::{EntityStore, WorkflowStore};

use crate::error::PipelineError;
use crate::plan::{RunRequest, plan_workflow};

/// Who a run queued on creation is triggered by.
pub const ON_CREATE_TRIGGER: &str = "entity/created";

/// Creates `new` in `project` (its type must exist: `EntityTypeNotFound`); when the type says
/// `extract_on_create`, queues the new entity's full run (`max_attempts` claims per field) and
/// returns it. The entity and its run are two writes: a process that dies between them leaves
/// the entity without its run, which `quarry run` or `POST /v1/workflows` starts.
pub async fn create_entity<S: EntityStore + WorkflowStore + ?Sized>(
    store: &S,
    project: &str,
    new: &NewEntity,
    max_attempts: i64,
) -> Result<(Entity, Option<ExtractionRun>), PipelineError> {
    let entity_type = store
        .get_entity_type(project, &new.entity_type)
        .await?
        .ok_or_else(|| PipelineError::EntityTypeNotFound(new.entity_type.clone()))?;
    let created = store.create_entity(project, new).await?;
    if !entity_type.extract_on_create {
        return Ok((created, None));
    }
    let request = RunRequest {
        fields: None,
        triggered_by: ON_CREATE_TRIGGER,
        feedback: HashMap::new(),
        root_run_id: None,
        depth: 0,
        max_attempts,
        instructions: RunInstructions::default(),
    };
    let workflow = plan_workflow(&created, &entity_type, &[], &request)?;
    let (run, _) = store.create_workflow(project, &workflow).await?;
    Ok((created, Some(run)))
}
