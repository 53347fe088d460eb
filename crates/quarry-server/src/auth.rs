//! Bearer API keys on `/v1` routes: a missing or unknown key answers 401, a key without the
//! route's scope 403, both in the API's one error shape. A caller only ever acts inside its key's
//! project (tenancy).

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use quarry_core::ErrorCode;
use quarry_core::store::Store;

use crate::AppState;
use crate::error::ApiError;
use crate::keys;

/// An authenticated caller.
#[derive(Debug, Clone)]
pub struct Caller {
    pub project_id: String,
    pub key_name: String,
    scopes: Vec<String>,
}

impl Caller {
    /// 403 unless the key carries `scope`.
    pub fn require(&self, scope: &str) -> Result<(), ApiError> {
        if self.scopes.iter().any(|s| s == scope) {
            Ok(())
        } else {
            Err(ApiError::new(
                ErrorCode::Forbidden,
                format!(
                    "this API key lacks the '{scope}' scope; create one with quarry key create --scopes {scope}"
                ),
            ))
        }
    }

    /// 403 unless the key carries one of `scopes`.
    pub fn require_any(&self, scopes: &[&str]) -> Result<(), ApiError> {
        if scopes
            .iter()
            .any(|scope| self.scopes.iter().any(|s| s == scope))
        {
            Ok(())
        } else {
            Err(ApiError::new(
                ErrorCode::Forbidden,
                format!("this API key needs one of the scopes {}", scopes.join(", ")),
            ))
        }
    }

    /// 403 when a request names a project other than the key's own (`project_id` in a body or
    /// query); a request that names none acts in the key's project.
    pub fn require_project(&self, named: Option<&str>) -> Result<(), ApiError> {
        match named {
            Some(project) if project != self.project_id => Err(ApiError::new(
                ErrorCode::Forbidden,
                format!(
                    "this API key belongs to project '{}', not '{project}'; use a key of that project",
                    self.project_id
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Who to record as reviewer or trigger.
    pub fn actor(&self) -> String {
        format!("key:{}", self.key_name)
    }
}

/// The store, or 503 when the server runs without one.
pub fn store(state: &AppState) -> Result<Arc<dyn Store>, ApiError> {
    state.store.clone().ok_or_else(|| {
        ApiError::new(
            ErrorCode::StoreNotConfigured,
            "this server has no database; start it with quarry serve --db PATH_OR_URL",
        )
    })
}

fn unauthorized(message: &str) -> ApiError {
    ApiError::new(ErrorCode::Unauthorized, message)
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let store = store(state)?;
        let presented = parts
            .headers
            .get(AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "))
            .map(str::trim)
            .ok_or_else(|| {
                unauthorized("missing API key: send Authorization: Bearer qk_… (quarry key create)")
            })?;
        let invalid = || unauthorized("invalid API key");
        let prefix = keys::prefix_of(presented).ok_or_else(invalid)?;
        let stored = store
            .find_api_key(prefix)
            .await
            .map_err(ApiError::from)?
            .ok_or_else(invalid)?;
        if stored.revoked || !keys::matches(presented, &stored.secret_hash) {
            return Err(invalid());
        }
        Ok(Caller {
            project_id: stored.project_id,
            key_name: stored.name,
            scopes: stored.scopes,
        })
    }
}
