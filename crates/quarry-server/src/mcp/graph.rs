//! Graph tools: `add_episode` (a conversation turn, as `POST /v1/episodes`), `search_graph`
//! (as `GET /v1/graph/entities`) and `get_entity` (as `GET /v1/graph/entities/{id}`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::registry::{Access, Effect, ToolDef, tool};
use crate::api::episodes::{ADD_SCOPES, EpisodeBody, add_episode};
use crate::api::graph::{READ_SCOPES, SearchQuery, entity_with_episodes, search_entities};
use quarry_graph::FoundEntity;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EntityArguments {
    /// The entity to show.
    entity_id: String,
}

#[derive(Serialize)]
struct Found {
    entities: Vec<FoundEntity>,
}

pub(super) fn tools() -> Vec<ToolDef> {
    vec![
        tool(
            "add_episode",
            "Store a conversation turn (user message and assistant response) as an episode: \
             answers at once with status pending while its entities and relationships are \
             extracted into the graph in the background (or applied as given, without a model, \
             when `entities`/`relationships` are sent).",
            Access::Scoped(ADD_SCOPES),
            Effect::Writes,
            json!({
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "status": {"enum": ["pending", "running", "done", "failed"]},
                    "user_message": {"type": "string"},
                    "assistant_response": {"type": "string"}
                },
                "required": ["id", "status"]
            }),
            |ctx, body: EpisodeBody| async move { add_episode(&ctx.state, ctx.caller()?, body).await },
        ),
        tool(
            "search_graph",
            "Find entities of the conversation graph: name matches first, then entities close in \
             meaning, each marked match: name or meaning.",
            Access::Scoped(READ_SCOPES),
            Effect::ReadOnly,
            json!({
                "type": "object",
                "properties": {
                    "entities": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "id": {"type": "string"},
                                "entity_type": {"type": "string"},
                                "title": {"type": "string"},
                                "match": {"enum": ["name", "meaning"]}
                            },
                            "required": ["id", "title", "match"]
                        }
                    }
                },
                "required": ["entities"]
            }),
            |ctx, query: SearchQuery| async move {
                Ok(Found {
                    entities: search_entities(&ctx.state, ctx.caller()?, query).await?,
                })
            },
        ),
        tool(
            "get_entity",
            "One entity with its fields, the episodes that mention it (newest first) and its \
             direct relations.",
            Access::Scoped(READ_SCOPES),
            Effect::ReadOnly,
            json!({
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "entity_type": {"type": "string"},
                    "title": {"type": "string"},
                    "fields": {"type": "object"},
                    "episodes": {"type": "array", "items": {"type": "object"}},
                    "relations": {"type": "array", "items": {"type": "object"}}
                },
                "required": ["id", "title", "episodes", "relations"]
            }),
            |ctx, arguments: EntityArguments| async move {
                entity_with_episodes(&ctx.state, ctx.caller()?, &arguments.entity_id).await
            },
        ),
    ]
}
