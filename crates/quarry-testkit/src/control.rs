//! The scripted server's control routes, for tests in another process (the Python package's
//! pytest suite drives `scripted-model-server` through them):
//!
//! - `POST /_testkit/script`: queue replies. The body is one reply or a list of them, each
//!   `{"content": "…"}`, `{"tool_call": {"name": "…", "arguments": "…"}}` or
//!   `{"status": 500, "body": "…"}`, optionally with `"usage": [prompt, completion]`,
//!   `"delay_ms": N` and `"model": "…"` (queued for that model only).
//! - `GET /_testkit/requests`: the bodies of the chat requests received so far, in order.
//! - `POST /_testkit/reset`: forget the script and the recorded requests.

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::script::{Reply, Script, Scripted, Shared, lock};

impl Scripted {
    /// One reply in the control routes' JSON form (see the module docs).
    pub fn from_json(value: &Value) -> Result<(Option<String>, Scripted), String> {
        let text = |key: &str, within: &Value| {
            within[key]
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("`{key}` must be a string in {within}"))
        };
        let reply = if let Some(content) = value.get("content") {
            Reply::content(text("content", value).map_err(|_| format!("bad content {content}"))?)
        } else if let Some(call) = value.get("tool_call") {
            Reply::tool_call(text("name", call)?, text("arguments", call)?)
        } else if let Some(code) = value.get("status").and_then(Value::as_u64) {
            let code = u16::try_from(code).map_err(|_| format!("status {code} is not HTTP"))?;
            Reply::status(code, value["body"].as_str().unwrap_or_default())
        } else {
            return Err(format!(
                "a reply needs `content`, `tool_call` or `status`; got {value}"
            ));
        };
        let mut scripted = Scripted::from(reply);
        if let Some([prompt, completion]) = value["usage"]
            .as_array()
            .map(|usage| usage.iter().map(Value::as_u64).collect::<Vec<_>>())
            .as_deref()
        {
            scripted = scripted.with_usage(
                prompt.ok_or("usage holds numbers")?,
                completion.ok_or("usage holds numbers")?,
            );
        }
        if let Some(delay) = value["delay_ms"].as_u64() {
            scripted = scripted.after(Duration::from_millis(delay));
        }
        Ok((value["model"].as_str().map(str::to_owned), scripted))
    }
}

pub(crate) async fn push_script(
    State(shared): State<Arc<Shared>>,
    body: Bytes,
) -> (StatusCode, Json<Value>) {
    let parsed: Result<Vec<(Option<String>, Scripted)>, String> =
        match serde_json::from_slice::<Value>(&body) {
            Ok(Value::Array(replies)) => replies.iter().map(Scripted::from_json).collect(),
            Ok(reply) => Scripted::from_json(&reply).map(|one| vec![one]),
            Err(error) => Err(format!("the body is not JSON: {error}")),
        };
    match parsed {
        Ok(replies) => {
            let mut script = lock(&shared.script);
            let queued = replies.len();
            for (model, reply) in replies {
                match model {
                    Some(model) => script.by_model.entry(model).or_default().push_back(reply),
                    None => script.any_model.push_back(reply),
                }
            }
            (StatusCode::OK, Json(json!({"queued": queued})))
        }
        Err(error) => (StatusCode::BAD_REQUEST, Json(json!({"error": error}))),
    }
}

pub(crate) async fn requests(State(shared): State<Arc<Shared>>) -> Json<Value> {
    let recorded = lock(&shared.recorded);
    Json(Value::Array(
        recorded
            .iter()
            .filter(|request| !request.path.ends_with("/embeddings"))
            .map(|request| request.body.clone())
            .collect(),
    ))
}

pub(crate) async fn reset(State(shared): State<Arc<Shared>>) -> StatusCode {
    *lock(&shared.script) = Script::default();
    lock(&shared.recorded).clear();
    StatusCode::NO_CONTENT
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_read_from_json() {
        let (model, scripted) = Scripted::from_json(
            &json!({"tool_call": {"name": "submit", "arguments": "{}"}, "usage": [7, 3], "model": "m"}),
        )
        .unwrap();
        assert_eq!(model.as_deref(), Some("m"));
        assert_eq!(scripted.reply, Reply::tool_call("submit", "{}"));
        assert_eq!(scripted.usage.prompt_tokens, 7);
        let (_, status) = Scripted::from_json(&json!({"status": 503, "body": "busy"})).unwrap();
        assert_eq!(status.reply, Reply::status(503, "busy"));
        assert!(Scripted::from_json(&json!({"nothing": 1})).is_err());
        assert!(Scripted::from_json(&json!({"status": 70000})).is_err());
    }
}
