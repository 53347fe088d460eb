//! `/v1/session`: the web app signs in with an API key and gets a session cookie
//! (`quarry_session`, `HttpOnly; SameSite=Strict; Path=/`, `Secure` over TLS) that stands in for
//! the key on every `/v1` route, plus a CSRF token its pages send back on mutations. Sessions
//! live in the database (only the token's hash), so every `quarry serve` on it accepts them.

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::header::{CACHE_CONTROL, SET_COOKIE};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use quarry_core::ErrorCode;
use quarry_core::store::{ProjectStore, WebSession};
use serde::{Deserialize, Serialize};

use crate::AppState;
use crate::auth::{
    Caller, SESSION_COOKIE, SESSION_LIFETIME, authenticate_key, check_csrf, check_origin,
    session_caller, session_token, store,
};
use crate::error::ApiError;
use crate::keys;
use crate::skill::json_body;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct SignIn {
    key: String,
}

/// `POST /v1/session` `{"key": "qk_…"}`: 200 with the session and its cookie; 401 for a wrong
/// or revoked key.
pub async fn sign_in(
    State(state): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let store = store(&state)?;
    check_origin(&headers, &uri)?;
    let body = json_body(&headers, body)?;
    let request: SignIn = serde_json::from_slice(&body).map_err(|error| {
        ApiError::new(
            ErrorCode::MalformedRequest,
            format!("expected {{\"key\": \"qk_…\"}}: {error}"),
        )
    })?;
    let (caller, key) = authenticate_key(store.as_ref(), request.key.trim()).await?;
    // Signing in again replaces the session this browser had.
    if let Some(old) = session_token(&headers) {
        store.delete_web_session(&keys::hash(old)).await?;
    }
    let key_error = |error: keys::KeyError| ApiError::new(ErrorCode::KeyError, error.to_string());
    let token = keys::random_hex(32).map_err(key_error)?;
    let csrf_token = keys::random_hex(32).map_err(key_error)?;
    let session = store
        .create_web_session(
            &caller.project_id,
            &keys::hash(&token),
            &key.prefix,
            &csrf_token,
            SESSION_LIFETIME,
        )
        .await?;
    let cookie = session_cookie(&token, SESSION_LIFETIME.as_secs(), secure(&state, &headers));
    Ok((
        [(SET_COOKIE, cookie), (CACHE_CONTROL, "no-store".to_owned())],
        Json(session_body(store.as_ref(), &caller, &session).await?),
    )
        .into_response())
}

/// `GET /v1/session`: the session of the request's cookie (so a reloaded page recovers its CSRF
/// token), or 401.
pub async fn current(
    State(state): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let store = store(&state)?;
    let (session, caller) = session_caller(store.as_ref(), &headers).await?;
    check_origin(&headers, &uri)?;
    Ok((
        [(CACHE_CONTROL, "no-store")],
        Json(session_body(store.as_ref(), &caller, &session).await?),
    )
        .into_response())
}

/// `DELETE /v1/session`: 204, the session deleted and the cookie cleared. A live session needs
/// its CSRF token (a page of another site cannot sign a person out); without one there is
/// nothing to end and the cookie is cleared all the same.
pub async fn sign_out(
    State(state): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let store = store(&state)?;
    if let Some(token) = session_token(&headers) {
        let hash = keys::hash(token);
        if let Some(session) = store.web_session(&hash).await? {
            check_origin(&headers, &uri)?;
            check_csrf(&headers, &session)?;
            store.delete_web_session(&hash).await?;
        }
    }
    let cookie = session_cookie("", 0, secure(&state, &headers));
    Ok((StatusCode::NO_CONTENT, [(SET_COOKIE, cookie)]).into_response())
}

/// The `Set-Cookie` value of the session cookie: `token` for `max_age` seconds (an empty token
/// with 0 clears it), never readable by scripts nor sent by other sites' pages.
fn session_cookie(token: &str, max_age: u64, secure: bool) -> String {
    format!(
        "{SESSION_COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/; Max-Age={max_age}{}",
        if secure { "; Secure" } else { "" }
    )
}

/// Whether the cookie gets `Secure`: the server says so (`--secure-cookies`), or a proxy says
/// the request came over TLS (`X-Forwarded-Proto: https`).
fn secure(state: &AppState, headers: &HeaderMap) -> bool {
    state.secure_cookies
        || headers
            .get("x-forwarded-proto")
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.split(',').next())
            .is_some_and(|proto| proto.trim().eq_ignore_ascii_case("https"))
}

/// What `POST` and `GET /v1/session` answer: who is signed in, into which project, and the
/// CSRF token the page sends back on mutations.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct SessionView {
    pub project_id: String,
    /// The project's name, `null` if it has none.
    pub project_name: Option<String>,
    /// The name of the key signed in with.
    pub key_name: String,
    /// The key's scopes: what the session may do.
    pub scopes: Vec<String>,
    /// What the page sends as `X-CSRF-Token` on every mutation.
    pub csrf_token: String,
    /// When the session ends (RFC 3339).
    pub expires_at: String,
}

/// The session of `caller` as the page sees it.
async fn session_body(
    store: &dyn ProjectStore,
    caller: &Caller,
    session: &WebSession,
) -> Result<SessionView, ApiError> {
    Ok(SessionView {
        project_id: caller.project_id.clone(),
        project_name: store.project_name(&caller.project_id).await?,
        key_name: caller.key_name.clone(),
        scopes: caller.scopes().to_vec(),
        csrf_token: session.csrf_token.clone(),
        expires_at: session.expires_at.clone(),
    })
}
