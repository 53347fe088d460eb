//! The `/v1` REST API for teams: entity types, entities, documents, extraction results and their
//! review, workflows, feedback, conversation episodes and the graph built from them. Every route authenticates with an API key and acts inside the
//! key's project only.

pub(crate) mod documents;
pub(crate) mod entities;
pub(crate) mod episodes;
pub(crate) mod extraction;
pub(crate) mod graph;
mod openapi;
pub(crate) mod review;
pub(crate) mod workflows;

use axum::Router;
use axum::routing::{get, patch, post, put};

use crate::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/openapi.json", get(openapi::document))
        .route("/v1/entity-types", get(entities::list_types))
        .route(
            "/v1/entity-types/{slug}",
            put(entities::put_type).get(entities::get_type),
        )
        .route("/v1/entities", post(entities::create).get(entities::list))
        .route("/v1/entities/{id}", get(entities::get))
        .route("/v1/documents", post(documents::add).get(documents::list))
        .route("/v1/documents/search", get(documents::search))
        .route("/v1/episodes", post(episodes::add).get(episodes::list))
        .route("/v1/episodes/{id}", get(episodes::get))
        .route("/v1/episodes/{id}/retry", post(episodes::retry))
        .route("/v1/graph/entities", get(graph::search))
        .route("/v1/graph/entities/{id}", get(graph::get))
        .route(
            "/v1/graph/entities/{id}/neighbors",
            get(graph::neighborhood),
        )
        .route("/v1/extraction/{entity_id}", get(extraction::latest))
        .route(
            "/v1/extraction/{entity_id}/history/{field}",
            get(extraction::history),
        )
        .route(
            "/v1/feedback/{entity_type}/{field}",
            get(extraction::feedback),
        )
        .route("/v1/extraction/results/{id}", patch(extraction::review))
        .route(
            "/v1/extraction/{entity_id}/submit",
            post(extraction::submit),
        )
        .route(
            "/v1/workflows/{entity_id}",
            post(workflows::trigger).get(workflows::status),
        )
        .route("/v1/workflows/{entity_id}/history", get(workflows::history))
        .route("/v1/workflows/{entity_id}/retry", post(workflows::retry))
        // The review workspace of the web app (review.rs; docs/web-app.md).
        .route("/v1/entity-types/{slug}/entities", get(review::entities))
        .route("/v1/review-queue", get(review::queue))
        .route("/v1/entities/{id}/overview", get(review::overview))
        .route(
            "/v1/entities/{id}/locks/{field}",
            put(review::lock).delete(review::unlock),
        )
        .route(
            "/v1/extraction/{entity_id}/fields/{field}",
            put(review::set_value),
        )
        .route("/v1/documents/upload", post(documents::upload))
        .route("/v1/documents/{id}", get(documents::get))
        .route("/v1/documents/{id}/links", post(documents::link))
}
