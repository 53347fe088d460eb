//! quarry-cli's integration tests: one test binary (one link of the crate and its
//! dependencies), a module per area.

mod browser;
mod chaos;
mod chat;
mod commands;
mod common;
mod config;
mod contract;
mod database_scale;
mod detail_and_input;
mod errors;
mod examples;
mod follow;
mod graph;
mod hardening;
mod http;
mod lease_fence;
mod local_model;
mod mcp;
mod models;
mod not_found;
mod observability;
mod process_concurrency;
mod progress;
mod providers;
mod readme;
mod review_api;
mod schema_agent;
mod schema_batch;
mod schemathesis;
mod search_conformance;
mod shared_database;
mod shell_docs;
mod team;
mod web;
mod web_source;
