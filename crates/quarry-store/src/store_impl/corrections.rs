//! Project corrections (`CorrectionStore`): short rules injected into matching prompts.

use quarry_core::model::{Correction, NewCorrection};
use quarry_core::store::StoreFuture;
use quarry_core::store::prelude::*;

use super::SqlStore;
use crate::clock::{new_id, now};
use crate::db::{query, query_as};
use crate::rows::CorrectionRow;
use crate::sql;

/// The `CorrectionStore` methods.
impl CorrectionStore for SqlStore {
    fn add_correction<'a>(
        &'a self,
        project: &'a str,
        new: &'a NewCorrection,
    ) -> StoreFuture<'a, Correction> {
        Box::pin(async move {
            let correction = Correction {
                id: new_id(),
                project_id: project.to_owned(),
                entity_type: new.entity_type.clone(),
                field_name: new.field_name.clone(),
                text: new.text.clone(),
                created_by: new.created_by.clone(),
                created_at: now(),
            };
            let _writer = self.write_gate().await;
            query(sql::INSERT_CORRECTION)
                .bind(&correction.id)
                .bind(&correction.project_id)
                .bind(&correction.entity_type)
                .bind(&correction.field_name)
                .bind(&correction.text)
                .bind(&correction.created_by)
                .bind(&correction.created_at)
                .execute(&self.pool)
                .await?;
            Ok(correction)
        })
    }

    fn list_corrections<'a>(&'a self, project: &'a str) -> StoreFuture<'a, Vec<Correction>> {
        Box::pin(async move {
            let rows: Vec<CorrectionRow> = query_as(sql::CORRECTIONS)
                .bind(project)
                .fetch_all(&self.pool)
                .await?;
            Ok(rows.into_iter().map(Correction::from).collect())
        })
    }

    fn remove_correction<'a>(&'a self, project: &'a str, id: &'a str) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let _writer = self.write_gate().await;
            let removed = query(sql::DELETE_CORRECTION)
                .bind(project)
                .bind(id)
                .execute(&self.pool)
                .await?;
            Ok(removed == 1)
        })
    }
}
