//! Who is calling a `/v1` route: an API key (`Authorization: Bearer qk_…`, the scheme in any
//! case), else the web app's session cookie. A missing or unknown key or session answers 401, a
//! key without the route's scope 403, both in the API's one error shape. A caller only ever acts
//! inside its key's project (tenancy).
//!
//! With the cookie, the key behind the session is checked on every request (a revoked key ends
//! its sessions at once), a present `Origin` must be this server's own, and an unsafe method
//! (anything but GET, HEAD, OPTIONS) must carry `X-CSRF-Token` equal to the session's token;
//! else 403 `CsrfRejected`. Bearer requests need neither: a browser never sends a key by itself.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::FromRequestParts;
use axum::http::header::{AUTHORIZATION, COOKIE, HOST};
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method, Uri};
use quarry_core::ErrorCode;
use quarry_core::model::ApiKey;
use quarry_core::store::{ProjectStore, SessionStore, Store, WebSession};
use subtle::ConstantTimeEq;

use crate::AppState;
use crate::error::ApiError;
use crate::keys;
use crate::request_log::RequestProject;

/// The web app's session cookie.
pub const SESSION_COOKIE: &str = "quarry_session";
/// How long a web session lasts.
pub const SESSION_LIFETIME: Duration = Duration::from_secs(12 * 60 * 60);
/// The header that carries the session's CSRF token on unsafe methods.
pub const CSRF_HEADER: &str = "x-csrf-token";

/// An authenticated caller.
#[derive(Debug, Clone)]
pub struct Caller {
    pub project_id: String,
    pub key_name: String,
    scopes: Vec<String>,
}

impl Caller {
    /// The scopes of the caller's key.
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

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

    /// The caller of `quarry mcp` on stdio: the local user, with every scope, in the configured
    /// project; `name` is recorded as reviewer and trigger.
    pub fn local(project_id: &str, name: &str) -> Caller {
        Caller {
            project_id: project_id.to_owned(),
            key_name: name.to_owned(),
            scopes: keys::SCOPES.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    /// 403 unless the key carries one of `scopes` (naming the scope when there is only one): the
    /// check of an operation that REST routes and MCP tools share.
    pub fn require_scopes(&self, scopes: &[&str]) -> Result<(), ApiError> {
        match scopes {
            [scope] => self.require(scope),
            _ => self.require_any(scopes),
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

    /// Who to record as reviewer or trigger: the key's name (`quarry key create --name`), as a
    /// person's hand-set value records it too.
    pub fn actor(&self) -> String {
        self.key_name.clone()
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

/// 401 for a request that names no API key where one is needed (`/mcp`, and a tool or chat
/// without a caller on a server with a database).
pub(crate) fn missing_key() -> ApiError {
    unauthorized("missing API key: send Authorization: Bearer qk_… (quarry key create)")
}

fn csrf_rejected(message: &str) -> ApiError {
    ApiError::new(ErrorCode::CsrfRejected, message)
}

/// The key `presented` (a whole `qk_…` secret), if it is valid and not revoked: 401 otherwise.
pub async fn authenticate_key(
    store: &dyn ProjectStore,
    presented: &str,
) -> Result<(Caller, ApiKey), ApiError> {
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
    Ok((caller_of(&stored), stored))
}

fn caller_of(key: &ApiKey) -> Caller {
    Caller {
        project_id: key.project_id.clone(),
        key_name: key.name.clone(),
        scopes: key.scopes.clone(),
    }
}

/// The token of an `Authorization: Bearer …` header (the scheme in any case); `Some(Err)` for an
/// `Authorization` header of another shape.
pub(crate) fn bearer(headers: &HeaderMap) -> Option<Result<&str, ApiError>> {
    let value = headers.get(AUTHORIZATION)?;
    let parsed = value.to_str().ok().and_then(|value| {
        let (scheme, token) = value.trim().split_once(' ')?;
        let token = token.trim();
        (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
    });
    Some(parsed.ok_or_else(|| {
        unauthorized("malformed Authorization header: send Authorization: Bearer qk_…")
    }))
}

/// The value of cookie `name` among every `Cookie` header (`a=1; b=2`); the first one wins.
pub fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .find_map(|pair| {
            let (key, value) = pair.split_once('=')?;
            (key.trim() == name).then(|| value.trim().trim_matches('"'))
        })
}

/// The session token of the request's cookie, when it has the shape of one (64 hex digits).
pub fn session_token(headers: &HeaderMap) -> Option<&str> {
    cookie(headers, SESSION_COOKIE)
        .filter(|token| token.len() == 64 && token.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The live session of the request's cookie and its caller: 401 when there is no cookie, the
/// session is unknown or expired, or its key was revoked.
pub async fn session_caller(
    store: &(impl ProjectStore + SessionStore + ?Sized),
    headers: &HeaderMap,
) -> Result<(WebSession, Caller), ApiError> {
    let ended = || unauthorized("your session has ended; sign in again with an API key");
    let token = session_token(headers).ok_or_else(|| {
        unauthorized(
            "missing API key: send Authorization: Bearer qk_… (quarry key create) or sign in",
        )
    })?;
    let session = store
        .web_session(&keys::hash(token))
        .await?
        .ok_or_else(ended)?;
    let key = store
        .find_api_key(&session.key_prefix)
        .await?
        .filter(|key| !key.revoked && key.project_id == session.project_id)
        .ok_or_else(ended)?;
    Ok((session, caller_of(&key)))
}

/// 403 `CsrfRejected` unless a present `Origin` names this server (its `Host`, or the
/// `X-Forwarded-Host` a proxy sets).
pub fn check_origin(headers: &HeaderMap, uri: &Uri) -> Result<(), ApiError> {
    let Some(origin) = headers.get(axum::http::header::ORIGIN) else {
        return Ok(());
    };
    let foreign = || csrf_rejected("this request came from another site's page");
    let origin = origin.to_str().map_err(|_| foreign())?;
    let (scheme, authority) = origin.split_once("://").ok_or_else(foreign)?;
    let default_port = match scheme {
        "http" => ":80",
        "https" => ":443",
        _ => return Err(foreign()),
    };
    let same = |host: &str| {
        let host = host.trim();
        host.eq_ignore_ascii_case(authority)
            || host
                .strip_suffix(default_port)
                .is_some_and(|host| host.eq_ignore_ascii_case(authority))
    };
    let header = |name| headers.get(name).and_then(|value| value.to_str().ok());
    let hosts = [
        header(HOST.as_str()),
        header("x-forwarded-host").and_then(|value| value.split(',').next()),
        uri.authority().map(|authority| authority.as_str()),
    ];
    if hosts.into_iter().flatten().any(same) {
        Ok(())
    } else {
        Err(foreign())
    }
}

/// Whether `method` changes things (every method but GET, HEAD and OPTIONS).
pub fn is_unsafe(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// 403 `CsrfRejected` unless `X-CSRF-Token` equals the session's token.
pub fn check_csrf(headers: &HeaderMap, session: &WebSession) -> Result<(), ApiError> {
    let sent = headers
        .get(CSRF_HEADER)
        .map(|value| value.as_bytes())
        .unwrap_or_default();
    if !sent.is_empty() && bool::from(sent.ct_eq(session.csrf_token.as_bytes())) {
        Ok(())
    } else {
        Err(csrf_rejected(
            "this change needs the X-CSRF-Token header of your session",
        ))
    }
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let store = store(state)?;
        let caller = if let Some(presented) = bearer(&parts.headers) {
            authenticate_key(store.as_ref(), presented?).await?.0
        } else {
            let (session, caller) = session_caller(store.as_ref(), &parts.headers).await?;
            check_origin(&parts.headers, &parts.uri)?;
            if is_unsafe(&parts.method) {
                check_csrf(&parts.headers, &session)?;
            }
            caller
        };
        RequestProject::record(&parts.extensions, &caller.project_id);
        Ok(caller)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    #[test]
    fn cookies_are_found_among_several_headers_and_pairs() {
        let token = "ab".repeat(32);
        let with = headers(&[
            ("cookie", "theme=dark; other=1"),
            ("cookie", &format!(" quarry_session={token} ;x=y")),
        ]);
        assert_eq!(cookie(&with, "theme"), Some("dark"));
        assert_eq!(session_token(&with), Some(token.as_str()));
        assert_eq!(cookie(&with, "missing"), None);
        // A cookie whose name merely ends like ours is not ours.
        let lookalike = headers(&[("cookie", &format!("xquarry_session={token}"))]);
        assert_eq!(session_token(&lookalike), None);
        // Quoted values are unquoted; malformed tokens are no session at all.
        let quoted = headers(&[("cookie", &format!("quarry_session=\"{token}\""))]);
        assert_eq!(session_token(&quoted), Some(token.as_str()));
        for bad in ["quarry_session=", "quarry_session=xyz", "quarry_session"] {
            assert_eq!(session_token(&headers(&[("cookie", bad)])), None, "{bad}");
        }
    }

    #[test]
    fn bearer_scheme_is_case_insensitive() {
        for scheme in ["Bearer", "bearer", "BEARER"] {
            let with = headers(&[("authorization", &format!("{scheme} qk_1"))]);
            assert_eq!(bearer(&with).unwrap().unwrap(), "qk_1");
        }
        assert!(
            bearer(&headers(&[("authorization", "Basic abc")]))
                .unwrap()
                .is_err()
        );
        assert!(
            bearer(&headers(&[("authorization", "Bearer ")]))
                .unwrap()
                .is_err()
        );
        assert!(bearer(&HeaderMap::new()).is_none());
    }

    #[test]
    fn origins_must_name_this_server() {
        let uri = Uri::from_static("/v1/session");
        let host = |origin: &str, host: &str| {
            check_origin(&headers(&[("origin", origin), ("host", host)]), &uri)
        };
        assert!(host("http://127.0.0.1:8080", "127.0.0.1:8080").is_ok());
        assert!(host("https://quarry.example", "quarry.example:443").is_ok());
        assert!(host("http://Quarry.Example", "quarry.example").is_ok());
        for (origin, server) in [
            ("http://evil.example", "quarry.example"),
            ("null", "quarry.example"),
            ("http://127.0.0.1:8081", "127.0.0.1:8080"),
            ("http://quarry.example.evil", "quarry.example"),
        ] {
            let error = host(origin, server).unwrap_err();
            assert_eq!(error.code, ErrorCode::CsrfRejected, "{origin}");
        }
        assert!(check_origin(&headers(&[("host", "a")]), &uri).is_ok());
        let proxied = headers(&[
            ("origin", "https://quarry.example"),
            ("host", "127.0.0.1:8080"),
            ("x-forwarded-host", "quarry.example"),
        ]);
        assert!(check_origin(&proxied, &uri).is_ok());
    }

    #[test]
    fn csrf_tokens_must_match() {
        let session = WebSession {
            token_hash: String::new(),
            project_id: "p".into(),
            key_prefix: "qk_1".into(),
            csrf_token: "c".repeat(64),
            created_at: String::new(),
            expires_at: String::new(),
        };
        assert!(check_csrf(&headers(&[("x-csrf-token", &"c".repeat(64))]), &session).is_ok());
        assert!(check_csrf(&headers(&[("x-csrf-token", "c")]), &session).is_err());
        assert!(check_csrf(&HeaderMap::new(), &session).is_err());
        assert!(is_unsafe(&Method::POST) && is_unsafe(&Method::DELETE));
        assert!(!is_unsafe(&Method::GET) && !is_unsafe(&Method::HEAD));
    }
}
