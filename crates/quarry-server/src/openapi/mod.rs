//! The API described for clients and tools (OpenAPI 3.1): an [`operation`] per route, as the
//! route table (`routes.rs`) declares them from the handlers' types, and the [`document`] built
//! from them (`GET /openapi.json` is served from `routes.rs`, once per process).

pub(crate) mod document;
pub(crate) mod operation;

#[cfg(test)]
mod tests;
