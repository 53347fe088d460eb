//! The `/v1` REST API for teams: entity types, entities, documents, extraction results and their
//! review, workflows, feedback, conversation episodes and the graph built from them. Every route authenticates with an API key and acts inside the
//! key's project only.

pub(crate) mod corrections;
pub(crate) mod deliveries;
pub(crate) mod documents;
pub(crate) mod entities;
pub(crate) mod episodes;
pub(crate) mod extraction;
pub(crate) mod graph;
pub(crate) mod review;
pub(crate) mod workflows;
