//! Project corrections (`CorrectionStore`): short rules injected into matching prompts.

/// The `CorrectionStore` methods.
macro_rules! corrections_methods {
    () => {
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
                sqlx::query(sql::INSERT_CORRECTION)
                    .bind(&correction.id)
                    .bind(&correction.project_id)
                    .bind(&correction.entity_type)
                    .bind(&correction.field_name)
                    .bind(&correction.text)
                    .bind(&correction.created_by)
                    .bind(&correction.created_at)
                    .execute(&self.pool)
                    .await
                    .map_err(backend)?;
                Ok(correction)
            })
        }

        fn list_corrections<'a>(&'a self, project: &'a str) -> StoreFuture<'a, Vec<Correction>> {
            Box::pin(async move {
                let rows: Vec<CorrectionRow> = sqlx::query_as(sql::CORRECTIONS)
                    .bind(project)
                    .fetch_all(&self.pool)
                    .await
                    .map_err(backend)?;
                Ok(rows.into_iter().map(Correction::from).collect())
            })
        }

        fn remove_correction<'a>(&'a self, project: &'a str, id: &'a str) -> StoreFuture<'a, bool> {
            Box::pin(async move {
                let _writer = self.write_gate().await;
                let removed = sqlx::query(sql::DELETE_CORRECTION)
                    .bind(project)
                    .bind(id)
                    .execute(&self.pool)
                    .await
                    .map_err(backend)?;
                Ok(removed.rows_affected() == 1)
            })
        }
    };
}
pub(crate) use corrections_methods;
