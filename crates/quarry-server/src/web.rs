//! The web app: `GET /` is `web/index.html`, `GET /assets/{file}` any other file of `web/`, all
//! embedded in the binary at build time (`build.rs` writes the table). Every answer carries
//! `Cache-Control: no-cache` and an `ETag` (a hash of the content), so a browser revalidates and
//! gets 304 while the binary is unchanged. The page runs under a strict Content-Security-Policy:
//! scripts, styles and requests to this origin only, no inline code, no framing.
//!
//! The app is served whether or not the server has a database; without one its `/v1/session`
//! answers 503 `StoreNotConfigured` and the page says the REST API is off.

use std::sync::LazyLock;

use axum::extract::Path;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, ETAG, IF_NONE_MATCH, REFERRER_POLICY,
    X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use quarry_core::ErrorCode;
use sha2::{Digest, Sha256};

use crate::error::ApiError;
use crate::keys;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/web_assets.rs"));
}

/// The policy of the app's pages.
pub const CONTENT_SECURITY_POLICY_VALUE: &str = "default-src 'self'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; \
     base-uri 'none'; form-action 'self'";

struct Asset {
    name: &'static str,
    body: &'static [u8],
    content_type: &'static str,
    etag: String,
}

static ASSETS: LazyLock<Vec<Asset>> = LazyLock::new(|| {
    embedded::ASSETS
        .iter()
        .map(|&(name, body)| {
            let etag = format!("\"{}\"", keys::hex(&Sha256::digest(body)[..12]));
            Asset {
                name,
                body,
                content_type: content_type(name),
                etag,
            }
        })
        .collect()
});

/// The media type of a file, by its extension.
pub fn content_type(name: &str) -> &'static str {
    let extension = name.rsplit_once('.').map_or("", |(_, ext)| ext);
    match extension.to_ascii_lowercase().as_str() {
        "html" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// `GET /`: the app's shell.
pub async fn index(headers: HeaderMap) -> Response {
    serve("index.html", &headers)
}

/// `GET /assets/{file}`: a script, style or other file of the app; 404 in the error shape for
/// an unknown one.
pub async fn asset(Path(file): Path<String>, headers: HeaderMap) -> Response {
    serve(&file, &headers)
}

fn serve(name: &str, headers: &HeaderMap) -> Response {
    let Some(asset) = ASSETS.iter().find(|asset| asset.name == name) else {
        return ApiError::new(
            ErrorCode::NotFound,
            format!("no web asset '{name}'; the app starts at GET /"),
        )
        .into_response();
    };
    let fresh = headers
        .get_all(IF_NONE_MATCH)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(|tag| tag.trim().trim_start_matches("W/"))
        .any(|tag| tag == asset.etag || tag == "*");
    let mut response = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        (
            [(CONTENT_TYPE, HeaderValue::from_static(asset.content_type))],
            asset.body,
        )
            .into_response()
    };
    let answer = response.headers_mut();
    answer.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Ok(etag) = HeaderValue::from_str(&asset.etag) {
        answer.insert(ETAG, etag);
    }
    answer.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    answer.insert(REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    if asset.name.ends_with(".html") {
        answer.insert(
            CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CONTENT_SECURITY_POLICY_VALUE),
        );
        answer.insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_by_extension() {
        assert_eq!(content_type("app.js"), "text/javascript; charset=utf-8");
        assert_eq!(content_type("app.css"), "text/css; charset=utf-8");
        assert_eq!(content_type("index.html"), "text/html; charset=utf-8");
        assert_eq!(content_type("LICENSE"), "application/octet-stream");
    }

    #[test]
    fn assets_revalidate_by_etag() {
        let Some(asset) = ASSETS.first() else {
            return;
        };
        let first = serve(asset.name, &HeaderMap::new());
        assert_eq!(first.status(), StatusCode::OK);
        let etag = first.headers().get(ETAG).unwrap().clone();
        let mut again = HeaderMap::new();
        again.insert(IF_NONE_MATCH, etag);
        assert_eq!(serve(asset.name, &again).status(), StatusCode::NOT_MODIFIED);
        assert_eq!(
            serve("no-such-file.js", &HeaderMap::new()).status(),
            StatusCode::NOT_FOUND
        );
    }
}
