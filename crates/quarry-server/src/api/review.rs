//! The review workspace's reads and writes (docs/web-app.md, "Review API used by the pages"): the
//! entities of a type with each field's state at a glance, the review queue of a type, an
//! entity's page in one round trip, field locks, and a value set by a person.
//!
//! Every page is a bounded number of statements whatever its length: the page and its count, then
//! the latest results and the latest tasks of the page's entities, one statement each.
//!
//! A field's `state` is decided in this order (the first that applies wins):
//! 1. `locked`: the field is in the entity's `metadata.locked_fields`;
//! 2. the latest task of the field (the latest run that covered it) while it is still moving or
//!    waits for a person: `queued` (also a task waiting for fields of its own run), `running`,
//!    `waiting_human` (a `human_input` field without an answer, a `requires_approval` value not
//!    yet approved, or a task whose dependency waits for one of those);
//! 3. that task `failed` or `blocked`, unless a result of the field was recorded after the task
//!    last changed (e.g. a person set the value since): `failed`, `blocked`;
//! 4. the latest non-superseded result's status: `pending`, `approved`, `rejected`;
//! 5. `none`.

use std::collections::HashMap;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use quarry_core::ErrorCode;
use quarry_core::model::{
    Entity, EntityType, ExtractionResult, FieldSpec, FieldTask, NodeState, ResultStatus, TaskView,
    shown_state,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::AppState;
use crate::api::entities::not_found;
use crate::api::workflows::pipeline;
use crate::auth::{Caller, store};
use crate::error::ApiError;
use crate::error::pipeline_error;
use crate::json::JsonBody;

pub const DEFAULT_PAGE: usize = 50;
pub const MAX_PAGE: usize = 200;

/// `limit` (1..=`MAX_PAGE`, default `DEFAULT_PAGE`) and `offset` (default 0) of a page, from the
/// query's text (a bad number answers 400 in the error shape, not axum's plain text).
pub fn paging(limit: Option<&str>, offset: Option<&str>) -> Result<(usize, usize), ApiError> {
    let limit = match limit.map(str::trim).filter(|l| !l.is_empty()) {
        None => DEFAULT_PAGE,
        Some(text) => match text.parse::<usize>() {
            Ok(limit) if (1..=MAX_PAGE).contains(&limit) => limit,
            _ => {
                return Err(ApiError::new(
                    ErrorCode::InvalidLimit,
                    format!("limit must be a number between 1 and {MAX_PAGE}"),
                ));
            }
        },
    };
    let offset = match offset.map(str::trim).filter(|o| !o.is_empty()) {
        None => 0,
        // At most u32::MAX, as documented: a page past four billion rows is a mistake.
        Some(text) => text
            .parse::<u32>()
            .map(|offset| offset as usize)
            .map_err(|_| {
                ApiError::new(
                    ErrorCode::InvalidLimit,
                    format!(
                        "offset must be a number of rows to skip (0 to {})",
                        u32::MAX
                    ),
                )
            })?,
    };
    Ok((limit, offset))
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct EntityListQuery {
    #[serde(default)]
    q: Option<String>,
    /// Rows per page (1 to 200, default 50).
    #[serde(default)]
    #[schemars(with = "Option<u32>", range(min = 1, max = 200))]
    limit: Option<String>,
    #[serde(default)]
    #[schemars(with = "Option<u32>", range(max = u32::MAX))]
    offset: Option<String>,
}

/// One field of one entity at a glance.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct FieldGlance {
    state: &'static str,
    value: Value,
    result_id: Option<String>,
    confidence: Option<quarry_core::model::Confidence>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct EntityRow {
    id: String,
    title: String,
    updated_at: String,
    /// Each field of the entity's type at a glance, in the type's order.
    #[schemars(with = "std::collections::BTreeMap<String, FieldGlance>")]
    fields: Map<String, Value>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct EntityList {
    total: i64,
    limit: usize,
    offset: usize,
    fields: Vec<String>,
    entities: Vec<EntityRow>,
}

/// The latest result and task (with the state to show) of each (entity, field) of a page.
struct Latest {
    results: HashMap<(String, String), ExtractionResult>,
    tasks: HashMap<(String, String), (FieldTask, NodeState)>,
}

impl Latest {
    async fn load(
        store: &dyn quarry_core::store::Store,
        project: &str,
        ids: &[String],
    ) -> Result<Latest, ApiError> {
        let results = store
            .latest_results_of(project, ids)
            .await?
            .into_iter()
            .map(|r| ((r.entity_id.clone(), r.field_name.clone()), r))
            .collect();
        let tasks = store.latest_tasks_of(project, ids).await?;
        // A pending task that only a person can move shows as waiting for one: decided among
        // the latest tasks of the same run.
        let mut by_run: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, task) in tasks.iter().enumerate() {
            by_run.entry(task.run_id.as_str()).or_default().push(i);
        }
        let mut shown = vec![NodeState::Pending; tasks.len()];
        for members in by_run.values() {
            let views: Vec<TaskView<'_>> = members.iter().map(|&i| tasks[i].view()).collect();
            for (k, &i) in members.iter().enumerate() {
                shown[i] = shown_state(&views, k);
            }
        }
        let tasks = tasks
            .into_iter()
            .zip(shown)
            .map(|(t, s)| ((t.entity_id.clone(), t.field_name.clone()), (t, s)))
            .collect();
        Ok(Latest { results, tasks })
    }

    fn result(&self, entity: &str, field: &str) -> Option<&ExtractionResult> {
        self.results.get(&(entity.to_owned(), field.to_owned()))
    }

    fn task(&self, entity: &str, field: &str) -> Option<&(FieldTask, NodeState)> {
        self.tasks.get(&(entity.to_owned(), field.to_owned()))
    }

    /// The field's state at a glance (the order in the module comment).
    fn state(&self, entity: &Entity, locked: &[String], field: &str) -> &'static str {
        if locked.iter().any(|name| name == field) {
            return "locked";
        }
        let result = self.result(&entity.id, field);
        if let Some((task, shown)) = self.task(&entity.id, field) {
            match shown {
                NodeState::Queued | NodeState::Pending => return "queued",
                NodeState::Running => return "running",
                NodeState::WaitingHuman => return "waiting_human",
                NodeState::Failed | NodeState::Blocked
                    if result.is_none_or(|r| r.created_at <= task.updated_at) =>
                {
                    return if *shown == NodeState::Failed {
                        "failed"
                    } else {
                        "blocked"
                    };
                }
                _ => {}
            }
        }
        match result.map(|r| r.status) {
            Some(ResultStatus::Pending) => "pending",
            Some(ResultStatus::Approved) => "approved",
            Some(ResultStatus::Rejected) => "rejected",
            Some(ResultStatus::Superseded) | None => "none",
        }
    }
}

async fn entity_type(
    store: &dyn quarry_core::store::Store,
    project: &str,
    slug: &str,
) -> Result<EntityType, ApiError> {
    store
        .get_entity_type(project, slug)
        .await?
        .ok_or_else(|| not_found("entity type", slug))
}

/// `GET /v1/entity-types/{slug}/entities?q=&limit=&offset=`: the type's entities by title, each
/// field's state, value (the latest result's, else the entity's own), result id and confidence.
pub async fn entities(
    State(state): State<AppState>,
    caller: Caller,
    Path(slug): Path<String>,
    Query(query): Query<EntityListQuery>,
) -> Result<Json<EntityList>, ApiError> {
    caller.require_scopes(QUEUE_SCOPES)?;
    let (limit, offset) = paging(query.limit.as_deref(), query.offset.as_deref())?;
    let store = store(&state)?;
    let project = caller.project_id.as_str();
    let entity_type = entity_type(store.as_ref(), project, &slug).await?;
    let page = store
        .entity_page(project, &slug, query.q.as_deref(), limit, offset)
        .await?;
    let ids: Vec<String> = page.items.iter().map(|e| e.id.clone()).collect();
    let latest = Latest::load(store.as_ref(), project, &ids).await?;
    let entities = page
        .items
        .into_iter()
        .map(|entity| {
            let locked = entity.locked_fields();
            let fields = entity_type
                .fields
                .iter()
                .map(|spec| {
                    let result = latest.result(&entity.id, &spec.name);
                    let glance = FieldGlance {
                        state: latest.state(&entity, &locked, &spec.name),
                        value: result
                            .map(|r| r.value.clone())
                            .or_else(|| entity.fields.get(&spec.name).cloned())
                            .unwrap_or(Value::Null),
                        result_id: result.map(|r| r.id.clone()),
                        confidence: result.map(|r| r.confidence),
                    };
                    (spec.name.clone(), json!(glance))
                })
                .collect();
            EntityRow {
                id: entity.id,
                title: entity.title,
                updated_at: entity.updated_at,
                fields,
            }
        })
        .collect();
    Ok(Json(EntityList {
        total: page.total,
        limit,
        offset,
        fields: entity_type.fields.iter().map(|f| f.name.clone()).collect(),
        entities,
    }))
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct QueueQuery {
    /// The entity type whose results to review (required).
    #[serde(rename = "type")]
    #[schemars(with = "String", pattern(r"\S"))]
    pub entity_type: Option<String>,
    #[serde(default)]
    #[schemars(with = "Option<u32>", range(min = 1, max = 200))]
    pub limit: Option<String>,
    #[serde(default)]
    #[schemars(with = "Option<u32>", range(max = u32::MAX))]
    pub offset: Option<String>,
}

/// Reading the review workspace (entity list, queue, overview) needs this scope.
pub(crate) const QUEUE_SCOPES: &[&str] = &["entities:read"];

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct QueueItem {
    result: ExtractionResult,
    entity_title: String,
    entity_type: String,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Queue {
    total: i64,
    limit: usize,
    offset: usize,
    items: Vec<QueueItem>,
}

/// `GET /v1/review-queue?type=SLUG&limit=&offset=`: the type's pending results, oldest first.
pub async fn queue(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<QueueQuery>,
) -> Result<Json<Queue>, ApiError> {
    Ok(Json(review_queue(&state, &caller, query).await?))
}

/// What `GET /v1/review-queue` and the MCP `list_pending_results` tool share.
pub(crate) async fn review_queue(
    state: &AppState,
    caller: &Caller,
    query: QueueQuery,
) -> Result<Queue, ApiError> {
    caller.require_scopes(QUEUE_SCOPES)?;
    let (limit, offset) = paging(query.limit.as_deref(), query.offset.as_deref())?;
    let Some(slug) = query.entity_type.filter(|t| !t.trim().is_empty()) else {
        return Err(ApiError::new(
            ErrorCode::InvalidArguments,
            "name the entity type: GET /v1/review-queue?type=SLUG",
        ));
    };
    let store = store(state)?;
    let project = caller.project_id.as_str();
    entity_type(store.as_ref(), project, &slug).await?;
    let page = store.review_queue(project, &slug, limit, offset).await?;
    Ok(Queue {
        total: page.total,
        limit,
        offset,
        items: page
            .items
            .into_iter()
            .map(|item| QueueItem {
                result: item.result,
                entity_title: item.entity_title,
                entity_type: slug.clone(),
            })
            .collect(),
    })
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct TaskGlance {
    state: NodeState,
    attempts: i64,
    last_error: Option<String>,
    run_id: String,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct FieldOverview {
    name: String,
    spec: FieldSpec,
    state: &'static str,
    result: Option<ExtractionResult>,
    task: Option<TaskGlance>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Overview {
    entity: Entity,
    entity_type: EntityType,
    fields: Vec<FieldOverview>,
    /// The type's `required` fields without a value (none on the entity, no pending or
    /// approved result): a run of this entity cannot complete until they have one.
    missing_required: Vec<String>,
}

/// `GET /v1/entities/{id}/overview`: the entity, its type, and per field its state, latest
/// result and latest task.
pub async fn overview(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Overview>, ApiError> {
    caller.require_scopes(QUEUE_SCOPES)?;
    let store = store(&state)?;
    let project = caller.project_id.as_str();
    let entity = store
        .get_entity(project, &id)
        .await?
        .ok_or_else(|| not_found("entity", &id))?;
    let entity_type = entity_type(store.as_ref(), project, &entity.entity_type).await?;
    let latest = Latest::load(store.as_ref(), project, std::slice::from_ref(&entity.id)).await?;
    let locked = entity.locked_fields();
    let fields = entity_type
        .fields
        .iter()
        .map(|spec| FieldOverview {
            name: spec.name.clone(),
            spec: spec.clone(),
            state: latest.state(&entity, &locked, &spec.name),
            result: latest.result(&entity.id, &spec.name).cloned(),
            task: latest
                .task(&entity.id, &spec.name)
                .map(|(task, shown)| TaskGlance {
                    state: *shown,
                    attempts: task.attempts,
                    last_error: task.last_error.clone(),
                    run_id: task.run_id.clone(),
                }),
        })
        .collect();
    let current: Vec<ExtractionResult> = latest
        .results
        .iter()
        .filter(|((owner, _), _)| owner == &entity.id)
        .map(|(_, result)| result.clone())
        .collect();
    let missing_required = entity_type.missing_required(&entity.fields, &current);
    Ok(Json(Overview {
        entity,
        entity_type,
        fields,
        missing_required,
    }))
}

/// `PUT /v1/entities/{id}/locks/{field}`: locks the field (runs skip it; values for it are
/// refused). 200 with the entity.
pub async fn lock(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, field)): Path<(String, String)>,
) -> Result<Json<Entity>, ApiError> {
    set_lock(state, caller, id, field, true).await
}

/// `DELETE /v1/entities/{id}/locks/{field}`: unlocks the field. 200 with the entity.
pub async fn unlock(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, field)): Path<(String, String)>,
) -> Result<Json<Entity>, ApiError> {
    set_lock(state, caller, id, field, false).await
}

async fn set_lock(
    state: AppState,
    caller: Caller,
    id: String,
    field: String,
    locked: bool,
) -> Result<Json<Entity>, ApiError> {
    caller.require_scopes(crate::api::extraction::REVIEW_SCOPES)?;
    let store = store(&state)?;
    let project = caller.project_id.as_str();
    let entity = store
        .get_entity(project, &id)
        .await?
        .ok_or_else(|| not_found("entity", &id))?;
    let entity_type = entity_type(store.as_ref(), project, &entity.entity_type).await?;
    // Unlocking a name the type no longer has is allowed (it cleans up); locking one is not.
    if locked && !entity_type.fields.iter().any(|f| f.name == field) {
        return Err(ApiError::new(
            ErrorCode::UnknownField,
            format!(
                "entity type '{}' has no field '{field}'; lock one of: {}",
                entity_type.slug,
                entity_type
                    .fields
                    .iter()
                    .map(|f| f.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    Ok(Json(
        store.set_field_lock(project, &id, &field, locked).await?,
    ))
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PersonValue {
    value: Value,
}

/// `PUT /v1/extraction/{entity_id}/fields/{field}` `{"value"}`: a person's value, checked
/// against the field's type, recorded with agent `human:<key name>`, approved and promoted; a
/// `human_input` field's answer resumes its waiting run. 201 with the person's result; a locked
/// field answers 409 `FieldLocked`.
pub async fn set_value(
    State(state): State<AppState>,
    caller: Caller,
    Path((entity_id, field)): Path<(String, String)>,
    JsonBody(body): JsonBody<PersonValue>,
) -> Result<(StatusCode, Json<ExtractionResult>), ApiError> {
    caller.require_scopes(crate::api::extraction::REVIEW_SCOPES)?;
    let outcome = pipeline(&state)?
        .set_by_person(
            &caller.project_id,
            &entity_id,
            &field,
            body.value,
            &caller.actor(),
        )
        .await
        .map_err(pipeline_error)?;
    if outcome.rerun.is_some() {
        state.wake_task_worker();
    }
    Ok((StatusCode::CREATED, Json(outcome.result)))
}
