//! Project corrections: short rules reviewers write ("revenue is always in USD"), scoped to the
//! project, an entity type, or one field of a type. Each is checked here before it is stored
//! (the CLI and the API share this), injected into every matching field prompt
//! (`field_agent::system_prompt`), and listed in the provenance of the results it shaped
//! (`metadata.corrections`).

use quarry_core::model::{Correction, NewCorrection};
use quarry_core::store::{CorrectionStore, EntityStore};

use crate::entity_types::field_spec;
use crate::error::PipelineError;

/// The longest rule, in characters: a correction is a sentence, not a document.
pub const MAX_CORRECTION_CHARS: usize = 500;

/// Checks `new` (non-empty text of at most [`MAX_CORRECTION_CHARS`], a field only with its
/// type, the type and the field defined in the project) and stores it, trimmed.
pub async fn add_correction(
    store: &(impl CorrectionStore + EntityStore + ?Sized),
    project: &str,
    new: &NewCorrection,
) -> Result<Correction, PipelineError> {
    let text = new.text.trim();
    if text.is_empty() {
        return Err(PipelineError::InvalidCorrection(
            "a correction needs its rule, e.g. \"revenue is always in USD\"".to_owned(),
        ));
    }
    let length = text.chars().count();
    if length > MAX_CORRECTION_CHARS {
        return Err(PipelineError::InvalidCorrection(format!(
            "the rule is {length} characters long; keep it to {MAX_CORRECTION_CHARS}"
        )));
    }
    let blank = |value: &Option<String>| {
        value
            .as_deref()
            .map(str::trim)
            .filter(|value| !value.is_empty())
            .map(str::to_owned)
    };
    let entity_type = blank(&new.entity_type);
    let field_name = blank(&new.field_name);
    match (&entity_type, &field_name) {
        (None, Some(field)) => {
            return Err(PipelineError::InvalidCorrection(format!(
                "field '{field}' needs its entity type: field names belong to a type"
            )));
        }
        (Some(slug), field) => {
            let defined = store
                .get_entity_type(project, slug)
                .await?
                .ok_or_else(|| PipelineError::EntityTypeNotFound(slug.clone()))?;
            if let Some(field) = field {
                field_spec(&defined, field)?;
            }
        }
        (None, None) => {}
    }
    let correction = NewCorrection {
        entity_type,
        field_name,
        text: text.to_owned(),
        created_by: new.created_by.clone(),
    };
    Ok(store.add_correction(project, &correction).await?)
}
