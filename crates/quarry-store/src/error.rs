//! How sqlx failures become `StoreError`s.

use quarry_core::store::StoreError;
use sqlx::error::ErrorKind;

pub(crate) fn backend(error: sqlx::Error) -> StoreError {
    if let sqlx::Error::Database(db) = &error {
        match db.kind() {
            ErrorKind::UniqueViolation => {
                return StoreError::Conflict(format!("already exists: {}", db.message()));
            }
            ErrorKind::ForeignKeyViolation => {
                return StoreError::Conflict(format!(
                    "refers to a row that does not exist: {}",
                    db.message()
                ));
            }
            _ => {}
        }
    }
    StoreError::Backend(error.to_string())
}

pub(crate) fn migration(error: sqlx::migrate::MigrateError) -> StoreError {
    StoreError::Backend(format!("applying migrations failed: {error}"))
}

pub(crate) fn not_found(what: &'static str, id: &str) -> StoreError {
    StoreError::NotFound {
        what,
        id: id.to_owned(),
    }
}
