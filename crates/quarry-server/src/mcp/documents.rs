//! Document tools: `add_document` (as `POST /v1/documents`) and `search_documents` (as
//! `GET /v1/documents/search`).

use axum::http::StatusCode;
use serde::Serialize;
use serde_json::json;

use super::registry::{Access, Effect, ToolDef, tool};
use crate::api::documents::{
    ADD_SCOPES, AddedDocument, NewDocument, Passage, SEARCH_SCOPES, SearchQuery, add_document,
    search_passages,
};

/// The stored document, and whether this call stored it (`false`: the same title and text were
/// stored before, and that document is returned).
#[derive(Serialize)]
struct Added {
    created: bool,
    #[serde(flatten)]
    added: AddedDocument,
}

#[derive(Serialize)]
struct Passages {
    passages: Vec<Passage>,
}

pub(super) fn tools() -> Vec<ToolDef> {
    vec![
        tool(
            "add_document",
            "Store a document (title and text) in the project, optionally linked to entities, so \
             the field agents and search_documents find it at once. Idempotent by content: the \
             same title and text return the document stored before (created: false).",
            Access::Scoped(ADD_SCOPES),
            Effect::Idempotent,
            json!({
                "type": "object",
                "properties": {
                    "created": {"type": "boolean"},
                    "id": {"type": "string"},
                    "title": {"type": "string"},
                    "warnings": {"type": "array", "items": {"type": "string"}}
                },
                "required": ["created", "id", "title"]
            }),
            |ctx, document: NewDocument| async move {
                let (status, added) = add_document(&ctx.state, ctx.caller()?, &document).await?;
                Ok(Added {
                    created: status == StatusCode::CREATED,
                    added,
                })
            },
        ),
        tool(
            "search_documents",
            "Search the project's documents by words and meaning (the index the field agents \
             search). Answers passages best first, each a document id with code-point offsets \
             (end exclusive) into its text.",
            Access::Scoped(SEARCH_SCOPES),
            Effect::ReadOnly,
            json!({
                "type": "object",
                "properties": {
                    "passages": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "document_id": {"type": "string"},
                                "start": {"type": "integer"},
                                "end": {"type": "integer"},
                                "score": {"type": "number"}
                            },
                            "required": ["document_id", "start", "end", "score"]
                        }
                    }
                },
                "required": ["passages"]
            }),
            |ctx, query: SearchQuery| async move {
                Ok(Passages {
                    passages: search_passages(&ctx.state, ctx.caller()?, query).await?,
                })
            },
        ),
    ]
}
