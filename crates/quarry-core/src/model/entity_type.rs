//! Entity types: a slug, a title field and field specs with the extraction config of the
//! field-extraction reference (instructions, agent, sources, depends_on, required,
//! requires_approval, validation, max_steps, consensus, human_input, connection with cascade)
//! and how its agent works (`mode`).

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// A typed record's schema, as loaded from `quarry.yaml` or `PUT /v1/entity-types/{slug}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct EntityType {
    pub slug: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    /// The agent (model string) used by fields that name none.
    #[serde(default)]
    pub default_agent: Option<String>,
    /// Queue a full extraction run whenever an entity of this type is created (the reference's
    /// `entity/created`): through the API, the CLI or a cascade alike.
    #[serde(default)]
    pub extract_on_create: bool,
    pub fields: Vec<FieldSpec>,
}

/// When a field's action fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ActionEvent {
    /// A value was extracted (a pending result recorded by a workflow).
    Extracted,
    /// A person approved a value.
    Approved,
    /// A person rejected a value.
    Rejected,
}

impl ActionEvent {
    pub fn as_str(self) -> &'static str {
        match self {
            ActionEvent::Extracted => "extracted",
            ActionEvent::Approved => "approved",
            ActionEvent::Rejected => "rejected",
        }
    }
}

/// A field's lifecycle action (the reference's `actions`): on `on`, POST a signed webhook to
/// `webhook` (retried with backoff, logged as a delivery), or start a run of the entity's field
/// `run_field`. Exactly one of the two.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct FieldAction {
    pub on: ActionEvent,
    /// An http(s) URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<String>,
    /// Another field of the type, extracted again for the entity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_field: Option<String>,
}

/// How a value is shown (the reference's `displayType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum DisplayType {
    Text,
    Number,
    Currency,
    Date,
    Url,
    Email,
    Markdown,
    List,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct FieldSpec {
    pub name: String,
    #[serde(default)]
    pub label: Option<String>,
    #[serde(rename = "type", default)]
    pub field_type: FieldType,
    /// What the agent is told to find.
    #[serde(default)]
    pub instructions: String,
    /// Overrides the entity type's default agent.
    #[serde(default)]
    pub agent: Option<String>,
    #[serde(default)]
    pub sources: Vec<Source>,
    #[serde(default)]
    pub depends_on: Vec<String>,
    #[serde(default)]
    pub required: bool,
    /// How the web app shows the value (default: by its type).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_type: Option<DisplayType>,
    /// Webhooks on the field's lifecycle events.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<FieldAction>,
    /// The value is derived (a summary, a category, a computation), not a span of the sources:
    /// it is accepted without grounding, its confidence is at most `medium`, and its inputs are
    /// recorded as its sources.
    #[serde(default)]
    pub derived: bool,
    /// The fields a derived value is computed from: extracted first (they join `depends_on`)
    /// and recorded as its sources.
    #[serde(default)]
    pub derived_from: Vec<String>,
    #[serde(default)]
    pub requires_approval: bool,
    /// Human-readable validation criteria given to the agent and reviewers.
    #[serde(default)]
    pub validation: Option<String>,
    #[serde(default = "default_max_steps")]
    pub max_steps: u32,
    #[serde(default)]
    pub consensus: Option<Consensus>,
    /// A person supplies this value; dependents wait for it.
    #[serde(default)]
    pub human_input: bool,
    #[serde(default)]
    pub connection: Option<Connection>,
    /// How the field's agent works (default: `retrieve` for agents whose client prefers it, the
    /// local models, `tools` for the others).
    #[serde(default)]
    pub mode: Option<ExtractionMode>,
}

/// How a field agent reaches its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum ExtractionMode {
    /// Model turns with the search tools the sources enable, ending with `submit_value`.
    Tools,
    /// The engine runs the field's searches itself and asks once for the value, the passages in
    /// the prompt (retrieve-then-extract): what small models manage.
    Retrieve,
}

fn default_max_steps() -> u32 {
    5
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum FieldType {
    #[default]
    String,
    Number,
    Integer,
    Boolean,
    Date,
    List,
    Object,
}

/// Where a field's agent may look; each enables tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    LinkedDocuments,
    AllDocuments,
    ConnectedEntities,
    AllEntities,
    /// Web search and the pages the agent reads (a provider must be configured:
    /// `QUARRY_WEB_SEARCH`).
    Web,
}

impl Source {
    pub const ALL: [Source; 5] = [
        Source::LinkedDocuments,
        Source::AllDocuments,
        Source::ConnectedEntities,
        Source::AllEntities,
        Source::Web,
    ];

    /// The name a type file writes.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::LinkedDocuments => "linked-documents",
            Source::AllDocuments => "all-documents",
            Source::ConnectedEntities => "connected-entities",
            Source::AllEntities => "all-entities",
            Source::Web => "web",
        }
    }

    pub fn parse(name: &str) -> Option<Source> {
        Source::ALL
            .into_iter()
            .find(|source| source.as_str() == name)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Consensus {
    /// Agents (model strings) run in parallel on the field, in tie-break order.
    pub agents: Vec<String>,
    pub strategy: ConsensusStrategy,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum ConsensusStrategy {
    Majority,
    Unanimous,
    BestConfidence,
}

/// A field whose values are other entities.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Connection {
    /// Slug of the target entity type.
    pub entity_type: String,
    #[serde(default)]
    pub cascade: Option<Cascade>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Cascade {
    pub enabled: bool,
    /// For object items: the property that becomes the created entity's title.
    #[serde(default)]
    pub title_field: Option<String>,
    /// Run extraction on created entities too.
    #[serde(default)]
    pub auto_extract: bool,
}

/// Why an entity type cannot be loaded; each names the fields involved.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EntityTypeError {
    #[error("entity type '{slug}': {message}")]
    Invalid { slug: String, message: String },
    #[error("entity type '{slug}': field '{field}' depends on unknown field '{missing}'")]
    UnknownDependency {
        slug: String,
        field: String,
        missing: String,
    },
    #[error("entity type '{slug}': dependency cycle between fields {}", fields.join(" → "))]
    DependencyCycle { slug: String, fields: Vec<String> },
}

/// Whether `value` counts as a value for `required`: not null, not an empty (or blank) string,
/// not an empty list.
pub fn is_present(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::Null => false,
        serde_json::Value::String(text) => !text.trim().is_empty(),
        serde_json::Value::Array(items) => !items.is_empty(),
        _ => true,
    }
}

impl EntityType {
    /// The `required` fields that have no value: none on the entity (`fields`), and none among
    /// `current`, the entity's current results (those `pending` or `approved` count).
    pub fn missing_required(
        &self,
        fields: &serde_json::Map<String, serde_json::Value>,
        current: &[super::ExtractionResult],
    ) -> Vec<String> {
        self.fields
            .iter()
            .filter(|field| field.required)
            .filter(|field| {
                let on_entity = fields.get(&field.name).is_some_and(is_present);
                let in_result = current.iter().any(|result| {
                    result.field_name == field.name
                        && matches!(
                            result.status,
                            super::ResultStatus::Pending | super::ResultStatus::Approved
                        )
                        && is_present(&result.value)
                });
                !on_entity && !in_result
            })
            .map(|field| field.name.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_names_are_the_serde_names() {
        for source in Source::ALL {
            assert_eq!(
                serde_json::to_value(source).unwrap(),
                serde_json::Value::String(source.as_str().to_owned())
            );
            assert_eq!(Source::parse(source.as_str()), Some(source));
        }
    }
}
