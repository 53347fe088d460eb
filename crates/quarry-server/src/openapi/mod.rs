//! `GET /openapi.json`: the API described for clients and tools (OpenAPI 3.1), generated from the
//! route table (`routes.rs`) and the handlers' types, once per process.

pub(crate) mod document;
pub(crate) mod operation;

use std::sync::OnceLock;

use axum::http::header;
use axum::response::IntoResponse;

use crate::routes;

/// The OpenAPI 3.1 document of every route, `/mcp` included (what `GET /openapi.json` serves).
pub fn openapi_document() -> serde_json::Value {
    let mut operations = routes::operations();
    operations.push(routes::mcp_operation());
    document::document(&operations)
}

/// `GET /openapi.json`.
pub async fn serve() -> impl IntoResponse {
    static DOCUMENT: OnceLock<String> = OnceLock::new();
    let body = DOCUMENT.get_or_init(|| openapi_document().to_string());
    ([(header::CONTENT_TYPE, "application/json")], body.as_str())
}

#[cfg(test)]
mod tests;
