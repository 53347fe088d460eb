//! Documents: stored text the field agents search; uploads of text, Markdown and PDF; the
//! document list and reader of the web app.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, StatusCode};
use quarry_core::ErrorCode;
use quarry_core::model::{Document, DocumentKind, DocumentSummary};
use quarry_pipeline::document_text::{DocumentFormat, DocumentTextError, document_text};
use quarry_pipeline::documents::DocumentsError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::AppState;
use crate::api::entities::not_found;
use crate::api::review::paging;
use crate::api::workflows::pipeline;
use crate::auth::{Caller, store};
use crate::error::ApiError;
use crate::json::JsonBody;

/// `POST /v1/documents` body and the MCP `add_document` tool's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct NewDocument {
    /// The document's title.
    #[schemars(pattern(r"\S"))]
    title: String,
    /// The document's text (plain text or Markdown).
    #[schemars(pattern(r"\S"))]
    text: String,
    /// Entities to link the document to.
    #[serde(default)]
    entity_ids: Vec<String>,
}

/// Adding a document needs this scope.
pub(crate) const ADD_SCOPES: &[&str] = &["documents:write"];
/// Listing and reading documents needs this scope.
pub(crate) const READ_SCOPES: &[&str] = &["entities:read"];
/// Searching passages needs this scope.
pub(crate) const SEARCH_SCOPES: &[&str] = &["entities:read"];

/// What `POST /v1/documents` answers: the stored document, and what failed after it was
/// stored (links, indexing, storing its chunks) when something did.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct AddedDocument {
    #[serde(flatten)]
    document: Document,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<String>,
}

/// `POST /v1/documents`: `{"title", "text", "entity_ids"?}`. Idempotent by content: 201 with the
/// new document, or 200 with the document of the same title and text stored earlier (its links
/// still applied), so a client may retry after a timeout. Once the document is stored, a later
/// step that fails does not turn the answer into an error: the document comes back with
/// `warnings` naming what failed.
pub async fn add(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(document): JsonBody<NewDocument>,
) -> Result<(StatusCode, Json<AddedDocument>), ApiError> {
    let (status, added) = add_document(&state, &caller, &document).await?;
    Ok((status, Json(added)))
}

/// What `POST /v1/documents` and the MCP `add_document` tool share: scope, checks, the stored
/// document and whether it was new (201) or stored before (200).
pub(crate) async fn add_document(
    state: &AppState,
    caller: &Caller,
    document: &NewDocument,
) -> Result<(StatusCode, AddedDocument), ApiError> {
    caller.require_scopes(ADD_SCOPES)?;
    store_document(
        state,
        caller,
        &document.title,
        &document.text,
        &document.entity_ids,
    )
    .await
}

/// What `POST /v1/documents` and the upload share: the entities checked, then the document
/// stored, linked and indexed in one path (searchable by the field agents at once).
async fn store_document(
    state: &AppState,
    caller: &Caller,
    title: &str,
    text: &str,
    entity_ids: &[String],
) -> Result<(StatusCode, AddedDocument), ApiError> {
    if text.trim().is_empty() {
        return Err(ApiError::new(
            ErrorCode::EmptyInput,
            "text is empty; send the document's text",
        ));
    }
    if title.trim().is_empty() {
        return Err(ApiError::new(
            ErrorCode::InvalidArguments,
            "title is empty; name the document",
        ));
    }
    let store = store(state)?;
    for entity_id in entity_ids {
        if store
            .get_entity(&caller.project_id, entity_id)
            .await?
            .is_none()
        {
            return Err(not_found("entity", entity_id));
        }
    }
    let added = pipeline(state)?
        .documents()
        .add(&caller.project_id, title, text, entity_ids)
        .await
        .map_err(documents_error)?;
    for warning in &added.warnings {
        tracing::warn!(document = %added.document.id, "{warning}");
    }
    let status = if added.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        AddedDocument {
            document: added.document,
            warnings: added.warnings,
        },
    ))
}

fn documents_error(error: DocumentsError) -> ApiError {
    match error {
        DocumentsError::Store(error) => ApiError::from(error),
        DocumentsError::Retrieval(error) => ApiError::new(ErrorCode::IndexError, error.to_string()),
    }
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct UploadQuery {
    /// The document's title (required; serde reads a missing one as `None`, answered with
    /// a 400 naming it).
    #[schemars(with = "String", pattern(r"\S"))]
    title: Option<String>,
    #[serde(default)]
    entity_id: Option<String>,
}

/// `POST /v1/documents/upload?title=&entity_id=` with a raw body of `text/plain`,
/// `text/markdown` or `application/pdf`: the text (a PDF's text layer) stored as by
/// `POST /v1/documents`. Another media type answers 415 `UnsupportedMediaType`; a PDF without a
/// text layer (a scan) 422 `PdfWithoutText`; a damaged one 400 `UnreadablePdf`.
pub async fn upload(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<UploadQuery>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<(StatusCode, Json<AddedDocument>), ApiError> {
    caller.require_scopes(ADD_SCOPES)?;
    let media_type = headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    let Some(format) = DocumentFormat::from_media_type(media_type) else {
        return Err(ApiError::new(
            ErrorCode::UnsupportedMediaType,
            format!(
                "cannot read a document of Content-Type '{media_type}'; upload text/plain, \
                 text/markdown or application/pdf"
            ),
        ));
    };
    let Some(title) = query.title.filter(|t| !t.trim().is_empty()) else {
        return Err(ApiError::new(
            ErrorCode::InvalidArguments,
            "name the document: POST /v1/documents/upload?title=NAME",
        ));
    };
    let entity_ids: Vec<String> = query
        .entity_id
        .filter(|id| !id.trim().is_empty())
        .into_iter()
        .collect();
    // Reading a PDF is CPU work on untrusted input: off the async threads, within the
    // server's extraction slots and byte budget.
    let text = state
        .work
        .admit(body.len())
        .await?
        .run(move || document_text(&body, format))
        .await?
        .map_err(|error| {
            let code = match error {
                DocumentTextError::NotUtf8(_) => ErrorCode::InvalidUtf8,
                DocumentTextError::UnreadablePdf(_) => ErrorCode::UnreadablePdf,
                DocumentTextError::NoTextLayer => ErrorCode::PdfWithoutText,
            };
            ApiError::new(code, format!("{title}: {error}"))
        })?;
    let (status, added) = store_document(&state, &caller, &title, &text, &entity_ids).await?;
    Ok((status, Json(added)))
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ListQuery {
    #[serde(default)]
    q: Option<String>,
    /// Only documents of this kind.
    #[serde(default)]
    #[schemars(extend("enum" = ["file", "episode"]))]
    kind: Option<String>,
    /// Documents per page (1 to 200, default 50).
    #[serde(default)]
    #[schemars(with = "Option<u32>", range(min = 1, max = 200))]
    limit: Option<String>,
    /// Documents to skip.
    #[serde(default)]
    #[schemars(with = "Option<u32>", range(max = u32::MAX))]
    offset: Option<String>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct DocumentList {
    total: i64,
    limit: usize,
    offset: usize,
    documents: Vec<DocumentSummary>,
}

/// `GET /v1/documents?q=&kind=&limit=&offset=`: documents newest first, without their text
/// (`chars`: its length in code points); `q` matches the title case-insensitively, `kind` is
/// `file` or `episode`.
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<ListQuery>,
) -> Result<Json<DocumentList>, ApiError> {
    caller.require_scopes(READ_SCOPES)?;
    let (limit, offset) = paging(query.limit.as_deref(), query.offset.as_deref())?;
    let kind = match query
        .kind
        .as_deref()
        .map(str::trim)
        .filter(|k| !k.is_empty())
    {
        None => None,
        Some(raw) => Some(DocumentKind::parse(raw).ok_or_else(|| {
            ApiError::new(
                ErrorCode::InvalidArguments,
                format!("kind '{raw}' is neither file nor episode"),
            )
        })?),
    };
    let page = store(&state)?
        .document_page(&caller.project_id, query.q.as_deref(), kind, limit, offset)
        .await?;
    Ok(Json(DocumentList {
        total: page.total,
        limit,
        offset,
        documents: page.items,
    }))
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct DocumentWithLinks {
    document: Document,
    entity_ids: Vec<String>,
}

/// `GET /v1/documents/{id}`: the document with its text, and the entities it is linked to.
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<DocumentWithLinks>, ApiError> {
    caller.require_scopes(READ_SCOPES)?;
    let store = store(&state)?;
    let document = store
        .get_document(&caller.project_id, &id)
        .await?
        .ok_or_else(|| not_found("document", &id))?;
    let entity_ids = store.document_entity_ids(&caller.project_id, &id).await?;
    Ok(Json(DocumentWithLinks {
        document,
        entity_ids,
    }))
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinksBody {
    entity_ids: Vec<String>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Links {
    document_id: String,
    /// Every entity the document is linked to now.
    entity_ids: Vec<String>,
}

/// `POST /v1/documents/{id}/links` `{"entity_ids"}`: links the document to the entities (in the
/// store and the search index; linking twice is harmless). 200 with every link it has now.
pub async fn link(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<LinksBody>,
) -> Result<Json<Links>, ApiError> {
    caller.require_scopes(ADD_SCOPES)?;
    let store = store(&state)?;
    let project = caller.project_id.as_str();
    if store.get_document(project, &id).await?.is_none() {
        return Err(not_found("document", &id));
    }
    let found = store.get_entities(project, &body.entity_ids).await?;
    if let Some(missing) = body
        .entity_ids
        .iter()
        .find(|wanted| !found.iter().any(|e| &e.id == *wanted))
    {
        return Err(not_found("entity", missing));
    }
    let documents = pipeline(&state)?.documents();
    for entity_id in &body.entity_ids {
        documents
            .link(project, &id, entity_id)
            .await
            .map_err(documents_error)?;
    }
    Ok(Json(Links {
        entity_ids: store.document_entity_ids(project, &id).await?,
        document_id: id,
    }))
}

const DEFAULT_LIMIT: usize = 10;
const MAX_LIMIT: usize = 100;

/// `GET /v1/documents/search` query and the MCP `search_documents` tool's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchQuery {
    /// What to look for, in words (matched by words and by meaning).
    q: String,
    /// How many passages at most (1 to 100, default 10).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    limit: Option<usize>,
}

/// One passage found: the document and code-point offsets into its text, end exclusive.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Passage {
    document_id: String,
    start: usize,
    end: usize,
    score: f32,
}

/// `GET /v1/documents/search?q=&limit=`: the project's passages best matching `q` by words and
/// meaning (the index the field agents search), best first.
pub async fn search(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<SearchQuery>,
) -> Result<Json<Vec<Passage>>, ApiError> {
    Ok(Json(search_passages(&state, &caller, query).await?))
}

/// What `GET /v1/documents/search` and the MCP `search_documents` tool share.
pub(crate) async fn search_passages(
    state: &AppState,
    caller: &Caller,
    query: SearchQuery,
) -> Result<Vec<Passage>, ApiError> {
    caller.require_scopes(SEARCH_SCOPES)?;
    let limit = query.limit.unwrap_or(DEFAULT_LIMIT);
    if limit == 0 || limit > MAX_LIMIT {
        return Err(ApiError::new(
            ErrorCode::InvalidLimit,
            format!("limit must be between 1 and {MAX_LIMIT}"),
        ));
    }
    store(state)?;
    let Some(retriever) = state.retriever.clone() else {
        return Ok(Vec::new());
    };
    let project = caller.project_id.clone();
    let hits = tokio::task::spawn_blocking(move || {
        retriever.search_documents(&project, &query.q, None, limit)
    })
    .await
    .map_err(|error| ApiError::new(ErrorCode::IndexError, error.to_string()))?
    .map_err(|error| ApiError::new(ErrorCode::IndexError, error.to_string()))?;
    Ok(hits
        .into_iter()
        .map(|hit| Passage {
            document_id: hit.document_id,
            start: hit.start,
            end: hit.end,
            score: hit.score,
        })
        .collect())
}
